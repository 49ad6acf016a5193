//! `connect5 match` end to end: the real binary, real player processes, a real TCP server, real
//! files. Small boards and short budgets keep it quick.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{recorded_cell, recorded_stones};
use connect5::board::{Board, Move, Rule, Stone};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_connect5");

fn scripted(mode: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/players/scripted.sh");
    format!("cmd:bash {} {mode}", script.display())
}

/// A fast, engine-independent builtin player.
const ENGINE: &str = "builtin:engine=v1,depth=1,name=engine";

struct Run {
    output: Output,
    summary: Value,
    dir: tempfile::TempDir,
}

impl Run {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }
    fn games(&self) -> &Vec<Value> {
        self.summary["games"].as_array().expect("games array")
    }
}

/// Runs a match with a JSON summary and records in a fresh directory.
fn run_match(player1: &[&str], player2: &[&str], extra: &[&str]) -> Run {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("summary.json");
    let mut command = Command::new(BIN);
    command.arg("match").arg("--player1").args(player1);
    command.arg("--player2").args(player2);
    command
        .args(["--json"])
        .arg(&json)
        .arg("--logs")
        .arg(dir.path().join("logs"))
        .args(extra);
    let output = command.output().expect("run connect5 match");
    assert!(
        output.status.success(),
        "match failed: {}\n{}",
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout)
    );
    let text = std::fs::read_to_string(&json).expect("summary written");
    let summary: Value = serde_json::from_str(&text).expect("summary is JSON");
    Run {
        output,
        summary,
        dir,
    }
}

/// Replays a game of the summary on a real board: every stone legal, and a win by a line really
/// is one, made by the last move.
fn replay(game: &Value) -> Board {
    let rows = game["rows"].as_u64().unwrap() as usize;
    let cols = game["cols"].as_u64().unwrap() as usize;
    let rule = Rule::exact(game["k"].as_u64().unwrap() as usize);
    let mut board = Board::new(rows, cols).unwrap();
    let mut stone = Stone::Black;
    let stones = recorded_stones(game);
    for (i, &mv) in stones.iter().enumerate() {
        board.play(mv, stone).expect("recorded move is legal");
        let last = i + 1 == stones.len();
        let wins = board.wins_at(mv, stone, rule);
        if game["termination"] == "line" && last {
            assert!(wins, "recorded win is a real line: {game}");
            let expected = if stone == Stone::Black {
                "blackwins"
            } else {
                "whitewins"
            };
            assert_eq!(game["outcome"], expected);
        } else {
            assert!(!wins, "game went on after a win: {game}");
        }
        stone = stone.opponent();
    }
    board
}

/// Asserts the match played `count` games that all ended on the board (a line, a full board),
/// each replaying as legal.
fn assert_regular_games(run: &Run, count: usize) {
    assert_eq!(run.games().len(), count, "{}", run.stdout());
    for game in run.games() {
        assert!(
            ["line", "board-full"].contains(&game["termination"].as_str().unwrap()),
            "{game}"
        );
        replay(game);
    }
}

fn terminations(run: &Run) -> Vec<String> {
    run.games()
        .iter()
        .map(|g| g["termination"].as_str().unwrap().to_string())
        .collect()
}

/// Asserts every game was lost by the player named `loser` with `termination`, and returns the
/// reasons.
fn all_lost_by(run: &Run, loser: &str, termination: &str) -> Vec<String> {
    let games = run.games();
    assert!(!games.is_empty());
    games
        .iter()
        .map(|game| {
            assert_eq!(game["termination"], termination, "{game}");
            let loser_colour = if game["black"] == loser {
                "whitewins"
            } else {
                "blackwins"
            };
            assert_eq!(game["outcome"], loser_colour, "{game}");
            game["reason"].as_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn builtin_against_builtin_plays_pairs_and_reports() {
    let run = run_match(
        &["builtin:engine=v1,depth=2,name=deep"],
        &["builtin:engine=v1,depth=1,name=shallow"],
        &[
            "--board",
            "7x7",
            "--time",
            "50",
            "--games",
            "4",
            "--random-opening",
            "2",
            "--seed",
            "7",
            "--concurrency",
            "2",
        ],
    );
    let stdout = run.stdout();
    assert_eq!(stdout.matches("Finished game ").count(), 4, "{stdout}");
    assert!(stdout.contains("Score of deep vs shallow: "), "{stdout}");
    assert!(stdout.contains("Elo difference: "), "{stdout}");
    assert!(stdout.contains("LOS: ") && stdout.contains("DrawRatio: "));
    let s = &run.summary;
    assert_eq!(s["games_played"], 4);
    let total = s["wins"].as_u64().unwrap() + s["losses"].as_u64().unwrap();
    assert_eq!(total + s["draws"].as_u64().unwrap(), 4);
    let pairs: u64 = s["pentanomial"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(pairs, 2);
    // Pairs share their opening, colours swapped.
    let games = run.games();
    for pair in games.chunks(2) {
        assert_eq!(pair[0]["opening"], pair[1]["opening"]);
        assert_eq!(pair[0]["opening"].as_array().unwrap().len(), 2);
        assert_eq!(pair[0]["black"], pair[1]["white"]);
    }
    for game in games {
        assert_ne!(game["termination"], "time", "{game}");
        replay(game);
    }
}

#[test]
fn builtin_players_limited_in_nodes_play_the_same_games_again() {
    // A minute a move that no search reaches: the node limits alone stop the searches, so the
    // games do not depend on the machine's speed or load and a second run repeats them.
    let play = || {
        let run = run_match(
            &["builtin:nodes=2000,name=small"],
            &["builtin:nodes=20000,name=large"],
            &[
                "--board",
                "15x15",
                "--time",
                "60000",
                "--games",
                "2",
                "--random-opening",
                "3",
                "--seed",
                "11",
                "--concurrency",
                "2",
            ],
        );
        let moves: Vec<Vec<(u64, u64)>> = run
            .games()
            .iter()
            .map(|game| {
                replay(game);
                game["moves"]
                    .as_array()
                    .expect("moves")
                    .iter()
                    .map(|m| (m["row"].as_u64().unwrap(), m["col"].as_u64().unwrap()))
                    .collect()
            })
            .collect();
        moves
    };
    let first = play();
    assert_eq!(first.len(), 2);
    assert!(first.iter().all(|moves| moves.len() >= 4), "{first:?}");
    assert_eq!(
        play(),
        first,
        "the same node limits should give the same games"
    );
}

#[test]
fn the_summary_says_where_the_openings_came_from_and_a_clock_seed_plays_them_again() {
    let players: [&[&str]; 2] = [
        &["builtin:engine=v1,depth=1,name=first"],
        &["builtin:engine=v1,depth=1,name=second"],
    ];
    let settings = ["--board", "9x9", "--time", "30", "--games", "4"];
    let random = ["--random-opening", "3", "--opening-radius", "2"];
    let from_the_clock = run_match(players[0], players[1], &[&settings[..], &random].concat());
    let source = &from_the_clock.summary["openings"];
    assert_eq!(source["kind"], "random", "{source}");
    assert_eq!(source["stones"], 3);
    assert_eq!(source["radius"], 2);
    let seed = source["seed"]
        .as_u64()
        .expect("the seed drawn from the clock");
    let stderr = String::from_utf8_lossy(&from_the_clock.output.stderr);
    assert!(stderr.contains(&format!("--seed {seed}")), "{stderr}");

    let seed = seed.to_string();
    let again = run_match(
        players[0],
        players[1],
        &[&settings[..], &random, &["--seed", &seed]].concat(),
    );
    assert_eq!(again.summary["openings"], *source);
    let openings =
        |run: &Run| -> Vec<Value> { run.games().iter().map(|g| g["opening"].clone()).collect() };
    assert_eq!(openings(&again), openings(&from_the_clock));
    for opening in openings(&again) {
        for stone in opening.as_array().unwrap() {
            let mv = recorded_cell(stone);
            assert!(mv.row.abs_diff(4) <= 2 && mv.col.abs_diff(4) <= 2, "{mv}");
        }
    }

    let file = from_the_clock.dir.path().join("openings.txt");
    std::fs::write(&file, "0,0, 1,0, 1,1\n-1,-1, 0,1, 2,2\n").unwrap();
    let listed = run_match(
        players[0],
        players[1],
        &[&settings[..], &["--openings", file.to_str().unwrap()]].concat(),
    );
    let source = &listed.summary["openings"];
    assert_eq!(source["kind"], "file", "{source}");
    assert_eq!(source["count"], 2);
    assert_eq!(source["path"], file.to_str().unwrap());
    let empty = run_match(players[0], players[1], &settings);
    assert_eq!(empty.summary["openings"]["kind"], "empty");
}

#[test]
fn an_opening_radius_too_small_for_the_stones_is_one_clear_error() {
    let output = Command::new(BIN)
        .args(["match", "--player1", ENGINE, "--player2", "builtin"])
        .args([
            "--board",
            "9x9",
            "--random-opening",
            "3",
            "--opening-radius",
            "0",
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--opening-radius 0") && stderr.contains("3 stones"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

#[test]
fn a_fixed_colour_plays_each_pairs_opening_once_with_that_colour() {
    let settings = [
        "--board",
        "7x7",
        "--time",
        "30",
        "--random-opening",
        "2",
        "--seed",
        "11",
    ];
    let players: [&[&str]; 2] = [
        &["builtin:engine=v1,depth=1,name=first"],
        &["builtin:engine=v1,depth=1,name=second"],
    ];
    let paired = run_match(
        players[0],
        players[1],
        &[&settings[..], &["--games", "6"]].concat(),
    );
    for colour in ["black", "white"] {
        let fixed = run_match(
            players[0],
            players[1],
            &[&settings[..], &["--games", "3", "--first-colour", colour]].concat(),
        );
        let summary = &fixed.summary;
        assert_eq!(summary["first_colour"], colour);
        assert_eq!(summary["games_played"], 3);
        assert_eq!(summary["pentanomial"], serde_json::json!([0, 0, 0, 0, 0]));
        let stdout = fixed.stdout();
        assert!(
            stdout.contains(&format!("first had {colour} in every game")),
            "{stdout}"
        );
        assert!(!stdout.contains("Ptnml"), "{stdout}");
        let games = fixed.games();
        for (number, game) in games.iter().enumerate() {
            assert_eq!(game[colour], "first", "{game}");
            // Game n starts where pair n of the same seed starts.
            assert_eq!(game["opening"], paired.games()[2 * number]["opening"]);
            replay(game);
        }
        assert_ne!(games[0]["opening"], games[1]["opening"]);
    }
    assert_eq!(paired.summary["first_colour"], Value::Null);

    let output = Command::new(BIN)
        .args(["match", "--player1", ENGINE, "--player2", "builtin"])
        .args(["--first-colour", "white", "--sprt", "elo0=0", "elo1=10"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--first-colour") && stderr.contains("--sprt"),
        "{stderr}"
    );
}

#[test]
fn builtin_against_our_own_binary_in_stdio_mode() {
    let own = format!("cmd:{BIN} stdio --engine v1");
    let run = run_match(
        &[ENGINE],
        &[own.as_str(), "name=stdio"],
        &["--board", "9x9", "--time", "100", "--games", "2"],
    );
    assert_regular_games(&run, 2);
    assert!(run.stdout().contains("(engine vs stdio)"));
    assert!(run.stdout().contains("(stdio vs engine)"));
}

/// `connect5 serve` on a port the system picks, its stderr (where it logs) read by a thread.
struct Server {
    child: Child,
    address: String,
    log: std::thread::JoinHandle<Vec<String>>,
}

fn start_server() -> Server {
    let mut child = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--engine", "v1"])
        .env("RUST_LOG", "debug")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start connect5 serve");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut address = None;
    for line in lines.by_ref() {
        let line = line.expect("server log line");
        if let Some(at) = line.find("listening on ") {
            address = Some(line[at + "listening on ".len()..].trim().to_string());
            break;
        }
    }
    let address = address.expect("server says where it listens");
    let log = std::thread::spawn(move || lines.map_while(Result::ok).collect());
    Server {
        child,
        address,
        log,
    }
}

#[test]
fn tcp_player_keeps_one_connection_for_the_whole_match() {
    let mut server = start_server();
    let tcp = format!("tcp:{}", server.address);
    let run = run_match(
        &[tcp.as_str(), "name=server"],
        &[ENGINE],
        &["--board", "7x7", "--time", "100", "--games", "4"],
    );
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let log = server.log.join().unwrap();
    let connections = log.iter().filter(|l| l.contains("connected")).count();
    assert_eq!(connections, 1, "one connection for four games: {log:?}");
    assert_regular_games(&run, 4);
}

#[test]
fn an_unreachable_server_or_program_is_one_clear_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    for player in [
        format!("tcp:127.0.0.1:{port}"),
        "cmd:/nonexistent/player".to_string(),
    ] {
        let output = Command::new(BIN)
            .args(["match", "--player1", ENGINE, "--player2", &player])
            .args(["--board", "7x7", "--games", "2"])
            .output()
            .unwrap();
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("--player2"), "{stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    }
}

const MISBEHAVING: &[&str] = &["--board", "7x7", "--time", "100", "--games", "2"];

#[test]
fn an_illegal_move_loses() {
    for (mode, says) in [
        ("illegal", "outside the 7x7 board"),
        ("occupied", "occupied"),
    ] {
        let bad = scripted(mode);
        let run = run_match(&[ENGINE], &[bad.as_str(), "name=bad"], MISBEHAVING);
        for reason in all_lost_by(&run, "bad", "illegal-move") {
            assert!(reason.contains(says), "{reason}");
        }
    }
}

#[test]
fn a_garbage_line_loses() {
    let bad = scripted("garbage");
    let run = run_match(&[ENGINE], &[bad.as_str(), "name=bad"], MISBEHAVING);
    for reason in all_lost_by(&run, "bad", "unparsable") {
        assert!(reason.contains("hello referee"), "{reason}");
    }
}

#[test]
fn a_crash_loses_and_the_next_game_gets_a_fresh_process() {
    let bad = scripted("crash");
    let run = run_match(&[ENGINE], &[bad.as_str(), "name=bad"], MISBEHAVING);
    // Both games reach the player's first move: the second was played by a new process.
    let reasons = all_lost_by(&run, "bad", "crash");
    assert_eq!(reasons.len(), 2);
    for reason in reasons {
        assert!(reason.contains("exit code 3"), "{reason}");
        assert!(
            reason.contains("crashing on purpose"),
            "stderr kept: {reason}"
        );
    }
    let log = std::fs::read_to_string(run.dir.path().join("logs/bad.0.stderr.log")).unwrap();
    assert_eq!(log.matches("crashing on purpose").count(), 2);
}

#[test]
fn a_player_sleeping_past_the_budget_is_killed_and_loses_on_time() {
    let bad = scripted("sleep 30");
    let started = Instant::now();
    let run = run_match(&[ENGINE], &[bad.as_str(), "name=bad"], MISBEHAVING);
    // Two 30-second sleeps were cut short: the runner does not wait for a hung player.
    assert!(started.elapsed() < Duration::from_secs(25));
    for reason in all_lost_by(&run, "bad", "time") {
        assert!(reason.contains("on time"), "{reason}");
    }
}

#[test]
fn half_the_budget_late_is_tolerated_unless_strict() {
    // 400 ms budget, 50 ms grace: a 520 ms first answer is 70 ms over, within the 200 ms the
    // course rule tolerates, and a loss under --strict.
    let late = scripted("sleep-once 0.52");
    let common = [
        "--board",
        "7x7",
        "--time",
        "400",
        "--games",
        "1",
        "--max-moves",
        "6",
    ];
    let tolerant = run_match(&[ENGINE], &[late.as_str(), "name=late"], &common);
    assert_eq!(terminations(&tolerant), vec!["move-limit"]);
    let first_late_move = &tolerant.games()[0]["moves"][1];
    assert!(first_late_move["ms"].as_u64().unwrap() >= 500);

    let mut strict_args = common.to_vec();
    strict_args.push("--strict");
    let strict = run_match(&[ENGINE], &[late.as_str(), "name=late"], &strict_args);
    for reason in all_lost_by(&strict, "late", "time") {
        assert!(reason.contains("budget 400 ms"), "{reason}");
    }
}

fn read_psq(path: &PathBuf) -> (usize, usize, Vec<Move>, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let size = header
        .strip_prefix("Piskvorky ")
        .and_then(|rest| rest.split(',').next())
        .unwrap();
    let (width, height) = size.split_once('x').unwrap();
    let mut moves = Vec::new();
    let mut rest = Vec::new();
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        match fields.as_slice() {
            [x, y, _] if x.parse::<usize>().is_ok() => moves.push(Move::new(
                y.parse::<usize>().unwrap() - 1,
                x.parse::<usize>().unwrap() - 1,
            )),
            _ => rest.push(line.to_string()),
        }
    }
    (height.parse().unwrap(), width.parse().unwrap(), moves, rest)
}

#[test]
fn records_replay_as_the_games_that_were_played() {
    let dir = tempfile::tempdir().unwrap();
    let psq = dir.path().join("psq");
    let sgf = dir.path().join("games.sgf");
    let run = run_match(
        &["builtin:engine=v1,depth=1,name=one"],
        &["builtin:engine=v1,depth=2,name=two"],
        &[
            "--board",
            "9x7",
            "--time",
            "50",
            "--games",
            "2",
            "--random-opening",
            "3",
            "--psq",
            psq.to_str().unwrap(),
            "--sgf",
            sgf.to_str().unwrap(),
        ],
    );
    let sgf_text = std::fs::read_to_string(&sgf).unwrap();
    let trees: Vec<&str> = sgf_text.lines().collect();
    assert_eq!(trees.len(), 2);
    for game in run.games() {
        let number = game["game"].as_u64().unwrap();
        let (rows, cols, moves, trailer) = read_psq(&psq.join(format!("game-{number:04}.psq")));
        assert_eq!((rows, cols), (9, 7));
        let board = replay(game);
        let mut from_file = Board::new(rows, cols).unwrap();
        let mut stone = Stone::Black;
        for mv in &moves {
            from_file.play(*mv, stone).unwrap();
            stone = stone.opponent();
        }
        assert_eq!(from_file, board, "psq replays to the final position");
        assert_eq!(trailer[0], game["black"].as_str().unwrap());
        assert_eq!(trailer[1], game["white"].as_str().unwrap());
        // The SGF tree of this game: same players, one node per stone, SZ as columns:rows.
        let tree = trees
            .iter()
            .find(|t| t.contains(&format!("RO[{number}]")))
            .unwrap();
        assert!(tree.starts_with("(;FF[4]GM[4]"));
        assert!(tree.contains("SZ[7:9]"));
        assert!(tree.contains(&format!("PB[{}]", game["black"].as_str().unwrap())));
        assert_eq!(
            tree.matches(";B[").count() + tree.matches(";W[").count(),
            moves.len()
        );
    }
}

#[test]
fn openings_file_is_used_pair_by_pair() {
    let dir = tempfile::tempdir().unwrap();
    let openings = dir.path().join("openings.txt");
    std::fs::write(&openings, "# two openings\n0,0, 1,0, 1,1\nd4e5\n").unwrap();
    let run = run_match(
        &[ENGINE],
        &["builtin:engine=v1,depth=1,name=other"],
        &[
            "--board",
            "9x9",
            "--time",
            "50",
            "--games",
            "4",
            "--openings",
            openings.to_str().unwrap(),
        ],
    );
    let games = run.games();
    let first: Vec<Move> = games[0]["opening"]
        .as_array()
        .unwrap()
        .iter()
        .map(recorded_cell)
        .collect();
    assert_eq!(
        first,
        vec![Move::new(4, 4), Move::new(4, 5), Move::new(5, 5)]
    );
    assert_eq!(games[1]["opening"], games[0]["opening"]);
    let second: Vec<Move> = games[2]["opening"]
        .as_array()
        .unwrap()
        .iter()
        .map(recorded_cell)
        .collect();
    assert_eq!(second, vec![Move::new(3, 3), Move::new(4, 4)]);

    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "0,0, 9,9\n").unwrap();
    let output = Command::new(BIN)
        .args(["match", "--player1", ENGINE, "--player2", "builtin"])
        .args(["--board", "9x9", "--openings", bad.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("line 1"));
}

#[test]
fn sprt_stops_the_match_at_a_bound() {
    let bad = scripted("garbage");
    let run = run_match(
        &[ENGINE],
        &[bad.as_str(), "name=bad"],
        &[
            "--board",
            "7x7",
            "--time",
            "50",
            "--games",
            "200",
            "--sprt",
            "elo0=0",
            "elo1=20",
            "alpha=0.05",
            "beta=0.05",
        ],
    );
    let played = run.summary["games_played"].as_u64().unwrap();
    assert!(played < 200, "stopped early, after {played}");
    assert_eq!(run.summary["sprt"]["status"], "h1");
    // Decided on finished pairs only.
    let decided = run.summary["sprt"]["decided_after_games"].as_u64().unwrap();
    assert!(decided.is_multiple_of(2) && decided <= played, "{decided}");
    assert!(run.summary["sprt"]["llr"].as_f64().unwrap() >= 2.94);
    let stdout = run.stdout();
    assert!(stdout.contains("H1 was accepted"), "{stdout}");
    assert!(stdout.contains("Match stopped after"), "{stdout}");
}

/// A TCP player that answers one move per connection, then hangs up.
fn start_forgetful_server() -> (String, std::thread::JoinHandle<usize>) {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let handle = std::thread::spawn(move || {
        let mut accepted = 0;
        // Ends when the match is over: the test connects once more with `stop`.
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            accepted += 1;
            writeln!(stream, "forgetful test server\nREADY").unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut first = String::new();
            if reader.read_line(&mut first).unwrap() == 0 || first.trim() == "stop" {
                return accepted - 1;
            }
            let rows: usize = first.split_whitespace().next().unwrap().parse().unwrap();
            let mut answer = None;
            for r in 0..rows {
                let mut row = String::new();
                reader.read_line(&mut row).unwrap();
                if answer.is_none() {
                    answer = row.trim_end().find('0').map(|c| format!("{r} {c}"));
                }
            }
            let mut time = String::new();
            reader.read_line(&mut time).unwrap();
            writeln!(stream, "{}", answer.unwrap()).unwrap();
        }
        accepted
    });
    (address, handle)
}

#[test]
fn a_closed_connection_loses_and_the_next_game_reconnects() {
    use std::io::Write;
    let (address, server) = start_forgetful_server();
    let tcp = format!("tcp:{address}");
    let run = run_match(
        &[tcp.as_str(), "name=forgetful"],
        &[ENGINE],
        &["--board", "7x7", "--time", "100", "--games", "2"],
    );
    for reason in all_lost_by(&run, "forgetful", "crash") {
        assert!(reason.contains("closed"), "{reason}");
    }
    // Each game made its own connection, after the check connection before the match.
    let mut stop = std::net::TcpStream::connect(&address).unwrap();
    writeln!(stop, "stop").unwrap();
    assert_eq!(server.join().unwrap(), 2);
}

#[test]
fn concurrent_games_each_have_their_own_processes() {
    // Thinking 50 ms a move, one worker cannot finish all four games before the other starts.
    let thinker = scripted("sleep 0.05");
    let run = run_match(
        &[thinker.as_str(), "name=script"],
        &[ENGINE],
        &[
            "--board",
            "7x7",
            "--time",
            "100",
            "--games",
            "4",
            "--concurrency",
            "2",
            "--random-opening",
            "2",
        ],
    );
    assert_regular_games(&run, 4);
    // One stderr log per worker: two processes of the same player ran side by side.
    for worker in 0..2 {
        let log = run
            .dir
            .path()
            .join(format!("logs/script.{worker}.stderr.log"));
        assert!(log.exists(), "{}", log.display());
    }
}

#[test]
fn an_interrupted_match_still_reports_the_games_it_finished() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("summary.json");
    let thinker = scripted("sleep 0.02");
    let mut child = Command::new(BIN)
        .args([
            "match",
            "--player1",
            ENGINE,
            "--player2",
            &thinker,
            "name=script",
        ])
        .args(["--board", "7x7", "--time", "100", "--games", "1000"])
        .arg("--json")
        .arg(&json)
        .arg("--logs")
        .arg(dir.path().join("logs"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut transcript = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        let finished = line.starts_with("Finished game");
        transcript.push(line);
        if finished {
            break;
        }
    }
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    transcript.extend(lines.map_while(Result::ok));
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let transcript = transcript.join("\n");
    assert!(transcript.contains("Interrupted"), "{transcript}");
    assert!(transcript.contains("Elo difference: "), "{transcript}");
    assert!(transcript.contains("Match stopped after"), "{transcript}");
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let played = summary["games_played"].as_u64().unwrap();
    assert!((1..1000).contains(&played), "{played}");
    assert_eq!(summary["games"].as_array().unwrap().len() as u64, played);
}

// ---------------------------------------------------------------------------------------------
// Gomocup brains

fn scripted_brain(mode: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/players/gomocup_scripted.sh");
    format!("gomocup:bash {} {mode}", script.display())
}

/// Runs a match of the scripted brain in `mode` (named `brain`) against `opponent`, and returns
/// the run and every command the brain read, in order.
fn run_logged_brain(mode: &str, opponent: &str, extra: &[&str]) -> (Run, Vec<String>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("commands.log");
    let brain = format!("{} {}", scripted_brain(mode), log.display());
    let run = run_match(&[brain.as_str(), "name=brain"], &[opponent], extra);
    let commands = std::fs::read_to_string(&log)
        .expect("the brain's log")
        .lines()
        .map(str::to_string)
        .collect();
    (run, commands)
}

#[test]
fn our_gomocup_brain_plays_whole_games_against_the_builtin_engine() {
    let brain = format!("gomocup:{BIN} gomocup");
    let run = run_match(
        &[brain.as_str(), "name=brain"],
        &[ENGINE],
        &[
            "--board",
            "9x9",
            "--time",
            "150",
            "--games",
            "4",
            "--random-opening",
            "2",
            "--seed",
            "5",
        ],
    );
    assert_regular_games(&run, 4);
    // No game was lost on time (the terminations above); the report says how much of each turn
    // the brain used. How close to the turn it came is a figure of the machine's load, measured
    // by matches (docs/gomocup.md), not asserted here.
    let time_use = &run.summary["time_use"][0];
    assert!(time_use["moves"].as_u64().unwrap() > 0, "{time_use}");
    assert!(time_use["max_share"].as_f64().unwrap() > 0.0, "{time_use}");
    assert!(
        run.stdout().contains("Time used by brain"),
        "{}",
        run.stdout()
    );
}

#[test]
fn a_misbehaving_brain_loses_every_game_with_the_reason() {
    for (mode, termination, words) in [
        ("crash", "crash", "exit code 3"),
        ("hang", "time", "lost on time"),
        ("illegal", "illegal-move", "outside"),
        ("occupied", "illegal-move", "occupied"),
        ("garbage", "unparsable", "hello manager"),
        ("error", "refused", "ERROR scripted brain refuses to move"),
        ("refuse-start", "unavailable", "START 7 answered"),
    ] {
        let brain = scripted_brain(mode);
        let run = run_match(
            &[brain.as_str(), "name=brain"],
            &[ENGINE],
            &["--board", "7x7", "--time", "100", "--games", "2"],
        );
        for reason in all_lost_by(&run, "brain", termination) {
            assert!(reason.contains(words), "{mode}: {reason}");
        }
    }
}

#[test]
fn a_brain_hears_the_whole_dialogue_and_its_messages_are_not_moves() {
    let (run, commands) = run_logged_brain(
        "good",
        ENGINE,
        &[
            "--board",
            "9x9",
            "--time",
            "200",
            "--games",
            "2",
            "--random-opening",
            "3",
            "--seed",
            "3",
        ],
    );
    assert_regular_games(&run, 2);
    let count = |word: &str| commands.iter().filter(|c| c.starts_with(word)).count();
    assert_eq!(commands[0], "START 9", "{commands:?}");
    for info in [
        "INFO rule 1",
        "INFO timeout_turn 200",
        "INFO timeout_match 0",
        "INFO max_memory 367001600",
        "ABOUT",
    ] {
        assert!(commands.iter().any(|c| c == info), "{info}: {commands:?}");
    }
    // The second game on the same brain opens with RESTART; both open from a 3-stone position.
    assert_eq!(count("START"), 1, "{commands:?}");
    assert_eq!(count("RESTART"), 1, "{commands:?}");
    assert_eq!(count("BOARD"), 2, "{commands:?}");
    assert_eq!(
        commands.last().map(String::as_str),
        Some("END"),
        "{commands:?}"
    );
    // INFO time_left comes right before every move request.
    for (i, command) in commands.iter().enumerate() {
        if command.starts_with("TURN") || command == "BOARD" || command == "BEGIN" {
            assert!(
                commands[i - 1].starts_with("INFO time_left"),
                "{command} after {:?}",
                commands[i - 1]
            );
        }
    }
    let brain_moves: usize = run
        .games()
        .iter()
        .map(|game| {
            let brain_is_black = game["black"] == "brain";
            let moves = game["moves"].as_array().unwrap().len();
            // 3 opening stones: white moves first.
            if brain_is_black {
                moves / 2
            } else {
                moves.div_ceil(2)
            }
        })
        .sum();
    assert_eq!(count("TURN") + count("BOARD"), brain_moves, "{commands:?}");
}

#[test]
fn a_brain_that_refuses_restart_is_started_afresh() {
    let (run, commands) = run_logged_brain(
        "no-restart",
        ENGINE,
        &["--board", "7x7", "--time", "100", "--games", "2"],
    );
    assert_regular_games(&run, 2);
    let starts = commands.iter().filter(|c| *c == "START 7").count();
    assert_eq!(starts, 2, "{commands:?}");
}

#[test]
fn gomocup_brains_meet_every_other_kind() {
    let brain = scripted_brain("good");
    let run = run_match(
        &[brain.as_str(), "name=brain"],
        &[scripted("good").as_str(), "name=program"],
        &["--board", "7x7", "--time", "100", "--games", "2"],
    );
    assert_regular_games(&run, 2);

    let mut server = start_server();
    let tcp = format!("tcp:{}", server.address);
    let run = run_match(
        &[tcp.as_str(), "name=server"],
        &[brain.as_str(), "name=brain"],
        &["--board", "7x9", "--time", "100", "--games", "2"],
    );
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    assert_regular_games(&run, 2);
}

#[test]
fn a_match_clock_with_increment_is_told_to_brains_and_spent_over_the_game() {
    let ours = format!("gomocup:{BIN} gomocup");
    let (run, commands) = run_logged_brain(
        "good",
        &ours,
        &["--board", "9x9", "--tc", "3+0.1", "--games", "2"],
    );
    assert_regular_games(&run, 2);
    assert_eq!(run.summary["tc"], "3+0.1");
    let has = |line: &str| commands.iter().any(|c| c == line);
    assert!(has("INFO timeout_match 3000"), "{commands:?}");
    // No per-move limit: the brain may use up to the whole match time on a move.
    assert!(has("INFO timeout_turn 3000"), "{commands:?}");
    let lefts: Vec<u64> = commands
        .iter()
        .filter_map(|c| c.strip_prefix("INFO time_left "))
        .map(|ms| ms.parse().expect("time_left in ms"))
        .collect();
    assert!(lefts.iter().all(|&ms| ms <= 3000 + 100 * 40), "{lefts:?}");
    assert!(
        lefts.contains(&3000),
        "the first move of a game has the whole clock: {lefts:?}"
    );
    // Our brain spent its clock as a share of what was left: never a time loss.
    for game in run.games() {
        assert_ne!(game["termination"], "time", "{game}");
    }
}

#[test]
fn bad_time_controls_are_one_clear_error() {
    for tc in ["soon", "0", "0/0", "60+x", "0/0.3+1", "-5"] {
        let output = Command::new(BIN)
            .args([
                "match",
                "--player1",
                ENGINE,
                "--player2",
                ENGINE,
                "--tc",
                tc,
            ])
            .output()
            .expect("run connect5 match");
        assert!(!output.status.success(), "{tc}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("--tc"), "{tc}: {stderr}");
    }
}
