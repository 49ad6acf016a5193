//! The analysis scripts of `scripts/` (the Python ones that give recorded positions to a Gomocup
//! brain: brain-depth.py, brain-speed.py, win-suite.py, choice-suite.py, first-forced.py,
//! label.py, fresh-table-brain.py) end to end: real `python3` processes driving the real `connect5
//! gomocup` brain on the games of a real `connect5 match`, their files read back and checked
//! against those games.
//!
//! They need `python3`. Without it the tests say SKIPPED on stderr and pass, unless
//! `CONNECT5_REQUIRE_PYTHON` is set (as CI does), when they fail.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

use common::{recorded_cell, recorded_stones};
use connect5::board::Move;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_connect5");

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join(name)
}

/// Whether the tests can run: `python3` answers, or the skip is reported (and refused when CI
/// requires the tests).
fn python_present() -> bool {
    match Command::new("python3").arg("--version").output() {
        Ok(output) if output.status.success() => true,
        outcome => {
            let why = match outcome {
                Ok(output) => format!("python3 --version exited with {}", output.status),
                Err(error) => format!("python3 cannot be run: {error}"),
            };
            assert!(
                std::env::var_os("CONNECT5_REQUIRE_PYTHON").is_none(),
                "CONNECT5_REQUIRE_PYTHON is set but the script tests cannot run: {why}"
            );
            // Straight to stderr, past the test harness' capture, so that the skip is seen.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED the analysis script tests: {why}"
            );
            false
        }
    }
}

/// Runs `python3 scripts/NAME ARGS` in `dir` and returns its output; fails the test unless it
/// succeeds.
#[track_caller]
fn run_script(dir: &Path, name: &str, args: &[&str]) -> Output {
    let output = Command::new("python3")
        .arg(script(name))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run python3");
    assert!(
        output.status.success(),
        "{name} {args:?} failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{} not written: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// A recorded game: its players, result and stones in the order played.
struct Game {
    number: u64,
    black: String,
    result: String,
    opening: usize,
    stones: Vec<Move>,
}

fn games_of(summary: &Value) -> Vec<Game> {
    summary["games"]
        .as_array()
        .expect("a games array")
        .iter()
        .map(|game| Game {
            number: game["game"].as_u64().expect("a game number"),
            black: game["black"].as_str().expect("black's name").to_string(),
            result: game["result"].as_str().expect("a result").to_string(),
            opening: game["opening"].as_array().expect("an opening").len(),
            stones: recorded_stones(game),
        })
        .collect()
}

/// `connect5 match` between the connect5 brain (`brain`, driven through `player` when given)
/// and a one-ply builtin (`weak`) that it beats: two games of 0.1 s a move on 15×15 from a
/// fixed random opening, summary in `dir/match.json`.
fn play_match(dir: &Path, player: Option<&str>) -> (PathBuf, Vec<Game>) {
    let json = dir.join("match.json");
    let brain = match player {
        Some(wrapper) => format!(
            "gomocup:python3 {} {BIN} gomocup",
            script(wrapper).display()
        ),
        None => format!("gomocup:{BIN} gomocup"),
    };
    let output = Command::new(BIN)
        .args(["match", "--player1", &brain, "name=brain"])
        .args(["--player2", "builtin:engine=v1,depth=1,name=weak"])
        .args(["--board", "15x15", "--tc", "0/0.1", "--games", "2"])
        .args(["--random-opening", "3", "--seed", "7", "--json"])
        .arg(&json)
        .output()
        .expect("run connect5 match");
    assert!(
        output.status.success(),
        "match failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let games = games_of(&read_json(&json));
    assert_eq!(games.len(), 2, "the match played two games");
    (json, games)
}

/// A fresh directory holding a played match (`play_match`), or `None` when the tests cannot
/// run for want of python3.
fn a_played_match(player: Option<&str>) -> Option<(tempfile::TempDir, PathBuf, Vec<Game>)> {
    if !python_present() {
        return None;
    }
    let dir = tempfile::tempdir().expect("a temp dir");
    let (summary, games) = play_match(dir.path(), player);
    Some((dir, summary, games))
}

/// The games and plies of `games` where `keys` ("game,ply") point, checked to be real
/// positions after the opening.
#[track_caller]
fn assert_positions_of(games: &[Game], keys: impl Iterator<Item = String>) {
    for key in keys {
        let (game, ply) = key
            .split_once(',')
            .and_then(|(g, p)| Some((g.parse::<u64>().ok()?, p.parse::<usize>().ok()?)))
            .unwrap_or_else(|| panic!("{key:?} is not `game,ply`"));
        let game = games
            .iter()
            .find(|g| g.number == game)
            .unwrap_or_else(|| panic!("{key:?}: no game {game} in the match"));
        assert!(
            (game.opening..game.stones.len()).contains(&ply),
            "{key:?}: ply {ply} is not a position after the opening of a game of {} stones",
            game.stones.len()
        );
    }
}

#[test]
fn brain_depth_and_brain_speed_read_the_searches_of_every_position() {
    let Some((dir, summary, games)) = a_played_match(None) else {
        return;
    };
    let summary = summary.to_str().expect("a UTF-8 path");
    for (out, new) in [("kept.json", false), ("new.json", true)] {
        let mut args = vec!["run", "--turn", "100", "--games", "2"];
        if new {
            args.push("--new");
        }
        args.extend([out, summary, BIN, "gomocup"]);
        run_script(dir.path(), "brain-depth.py", &args);
        let measured = read_json(&dir.path().join(out));
        let depths = measured["depths"].as_object().expect("an object of depths");
        assert!(!depths.is_empty(), "{out}: no search measured");
        assert!(
            depths.values().all(|d| d.as_u64().is_some_and(|d| d >= 1)),
            "{out}: a depth that is not a positive number: {depths:?}"
        );
        assert_positions_of(&games, depths.keys().cloned());
        let predicted = measured["predicted"]
            .as_object()
            .expect("an object of predictions");
        assert!(
            !predicted.is_empty() && predicted.values().all(Value::is_boolean),
            "{out}: the predictions are not true or false: {predicted:?}"
        );
        assert_positions_of(&games, predicted.keys().cloned());
    }
    let compared = stdout(&run_script(
        dir.path(),
        "brain-depth.py",
        &["compare", "kept.json", "new.json"],
    ));
    assert!(
        compared.contains("positions in every file") && compared.contains("kept.json: mean depth"),
        "compare: {compared}"
    );

    // Limited in depth, every search counts and its nodes are the measure; the same search of a
    // position in a new brain process takes the same nodes every time.
    for out in ["depth-new.json", "depth-new-again.json"] {
        let args = [
            "run", "--depth", "3", "--games", "1", "--new", out, summary, BIN, "gomocup",
        ];
        run_script(dir.path(), "brain-depth.py", &args);
        let measured = read_json(&dir.path().join(out));
        let depths = measured["depths"].as_object().expect("an object of depths");
        let nodes = measured["nodes"].as_object().expect("an object of nodes");
        assert!(!nodes.is_empty(), "{out}: no nodes counted");
        assert_eq!(
            depths.keys().collect::<HashSet<_>>(),
            nodes.keys().collect::<HashSet<_>>(),
            "{out}: a search without its nodes"
        );
        assert_positions_of(&games, nodes.keys().cloned());
    }
    assert_eq!(
        read_json(&dir.path().join("depth-new.json"))["nodes"],
        read_json(&dir.path().join("depth-new-again.json"))["nodes"],
        "a new brain searches a position to a fixed depth the same way every time"
    );
    let compared = stdout(&run_script(
        dir.path(),
        "brain-depth.py",
        &["compare", "depth-new.json", "depth-new-again.json"],
    ));
    assert!(
        compared.contains("depth-new-again.json: mean depth")
            && compared.contains("nodes (1.000 of the first file's;"),
        "compare: {compared}"
    );

    let speed = stdout(&run_script(
        dir.path(),
        "brain-speed.py",
        &[BIN, summary, "2", "100"],
    ));
    let searches: u64 = speed
        .split(": ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|count| count.parse().ok())
        .unwrap_or_else(|| panic!("brain-speed.py: no search count in {speed:?}"));
    assert!(
        searches > 0 && speed.contains("nodes/s"),
        "brain-speed.py: {speed}"
    );
}

#[test]
fn win_suite_keeps_the_first_position_of_each_lost_game_where_the_analyst_sees_the_loss() {
    let Some((dir, summary, games)) = a_played_match(None) else {
        return;
    };
    let lost_by_weak: Vec<&Game> = games
        .iter()
        .filter(|g| g.result == if g.black == "weak" { "0-1" } else { "1-0" })
        .collect();
    assert!(
        !lost_by_weak.is_empty(),
        "the one-ply builtin lost no game to the brain"
    );
    let summary = summary.to_str().expect("a UTF-8 path");
    run_script(
        dir.path(),
        "win-suite.py",
        &[
            "build",
            summary,
            "weak",
            "100",
            "suite.json",
            BIN,
            "gomocup",
        ],
    );
    let suite = read_json(&dir.path().join("suite.json"));
    let suite = suite.as_array().expect("a suite list");
    assert!(
        !suite.is_empty() && suite.len() <= lost_by_weak.len(),
        "{} positions from {} lost games",
        suite.len(),
        lost_by_weak.len()
    );
    for position in suite {
        let number = position["game"].as_u64().expect("a game number");
        let game = lost_by_weak
            .iter()
            .find(|g| g.number == number)
            .unwrap_or_else(|| panic!("game {number} is not one weak lost"));
        let ply = position["ply"].as_u64().expect("a ply") as usize;
        let weak_moves_at_even_plies = game.black == "weak";
        assert_eq!(
            ply.is_multiple_of(2),
            weak_moves_at_even_plies,
            "ply {ply} is not weak's turn"
        );
        let stones: Vec<Move> = position["stones"]
            .as_array()
            .expect("stones")
            .iter()
            .map(recorded_cell)
            .collect();
        assert_eq!(
            stones,
            game.stones[..ply + 1],
            "the position after weak's move"
        );
        assert!(position["mate"].as_u64().is_some_and(|m| m > 0));
    }
    let ran = stdout(&run_script(
        dir.path(),
        "win-suite.py",
        &["run", "suite.json", "200", BIN, "gomocup"],
    ));
    assert!(
        ran.contains(&format!(" of {}, mean time", suite.len())),
        "run: {ran}"
    );
    assert_eq!(
        ran.lines()
            .filter(|l| l.contains("win found") || l.contains("no win"))
            .count(),
        suite.len(),
        "one line a position: {ran}"
    );
}

/// +1 when a score the brain printed is a forced win for the side to move, -1 a forced loss.
fn forced_sign(score: &str) -> i32 {
    if score.starts_with("win in") {
        1
    } else if score.starts_with("loss in") {
        -1
    } else {
        0
    }
}

#[test]
fn first_forced_scans_each_game_to_its_first_forced_result_and_reports_who_converts() {
    let Some((dir, summary, games)) = a_played_match(None) else {
        return;
    };
    let summary = summary.to_str().expect("a UTF-8 path");
    run_script(
        dir.path(),
        "first-forced.py",
        &["scan", summary, "2", "20000", "scan.jsonl", BIN, "gomocup"],
    );
    let text = std::fs::read_to_string(dir.path().join("scan.jsonl")).expect("the scan");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), games.len(), "one line a game: {text}");
    // Who had the first forced win and whether they won, from the scan and the match record.
    let (mut own, mut own_won, mut theirs, mut theirs_won) = (0, 0, 0, 0);
    for (line, game) in lines.iter().zip(&games) {
        assert_eq!(line["game"].as_u64(), Some(game.number));
        let scores: Vec<&str> = line["scores"]
            .as_array()
            .expect("scores")
            .iter()
            .map(|s| s.as_str().expect("a score as printed"))
            .collect();
        let scanned = game.stones.len() - game.opening;
        assert!(
            !scores.is_empty() && scores.len() <= scanned,
            "{} scores for {scanned} positions",
            scores.len()
        );
        let (last, before) = scores.split_last().expect("a score");
        assert!(
            before.iter().all(|s| forced_sign(s) == 0),
            "the scan goes on past a forced result: {scores:?}"
        );
        let sign = forced_sign(last);
        if sign == 0 {
            assert_eq!(
                scores.len(),
                scanned,
                "a game stopped short of a forced result"
            );
            continue;
        }
        let ply = game.opening + scores.len() - 1;
        let black_wins = ply.is_multiple_of(2) == (sign > 0);
        let winner_is_brain = black_wins == (game.black == "brain");
        let brain_won = game.result == if game.black == "brain" { "1-0" } else { "0-1" };
        if winner_is_brain {
            own += 1;
            own_won += usize::from(brain_won);
        } else {
            theirs += 1;
            theirs_won += usize::from(!brain_won);
        }
    }
    assert!(
        own > 0,
        "the brain never had a forced win against a one-ply engine: {text}"
    );
    let report = stdout(&run_script(
        dir.path(),
        "first-forced.py",
        &["report", "brain", "scan.jsonl"],
    ));
    for (side, games, converted) in [("own", own, own_won), ("opponent's", theirs, theirs_won)] {
        let line = report
            .lines()
            .find(|l| l.contains(&format!("first forced win {side} ")))
            .unwrap_or_else(|| panic!("no line for the {side} wins: {report}"));
        assert!(
            line.contains(&format!(" {games} games"))
                && line.ends_with(&format!("converted in {converted}")),
            "{side}: expected {games} games, {converted} converted: {line}"
        );
    }
    let refused = Command::new("python3")
        .arg(script("first-forced.py"))
        .args(["report", "nobody", "scan.jsonl"])
        .current_dir(dir.path())
        .output()
        .expect("run python3");
    assert!(
        !refused.status.success()
            && String::from_utf8_lossy(&refused.stderr).contains("no player 'nobody'"),
        "a player not in the games is refused: {}",
        String::from_utf8_lossy(&refused.stderr)
    );
}

#[test]
fn choice_suite_runs_a_brain_on_a_suite_and_compares_two_runs() {
    let Some((dir, _, games)) = a_played_match(None) else {
        return;
    };
    // A suite of the brain's positions labelled with the moves it played in the match.
    let mut suite = Vec::new();
    for game in &games {
        let brain_moves_at_even_plies = game.black == "brain";
        for ply in game.opening..game.stones.len() {
            if ply.is_multiple_of(2) == brain_moves_at_even_plies {
                suite.push(serde_json::json!({
                    "source": "match.json", "game": game.number, "ply": ply,
                    "rows": 15, "cols": 15,
                    "stones": game.stones[..ply].iter().map(|m| [m.row, m.col]).collect::<Vec<_>>(),
                    "label": [game.stones[ply].row, game.stones[ply].col],
                    "eval": 0,
                }));
            }
        }
    }
    std::fs::write(
        dir.path().join("suite.json"),
        serde_json::to_string(&suite).expect("JSON"),
    )
    .expect("write the suite");
    let ran = stdout(&run_script(
        dir.path(),
        "choice-suite.py",
        &["run", "suite.json", "50", "choices.json", BIN, "gomocup"],
    ));
    assert!(ran.contains(&format!("of {} (", suite.len())), "run: {ran}");
    let choices = read_json(&dir.path().join("choices.json"));
    let moves = choices["moves"].as_array().expect("moves");
    assert_eq!(moves.len(), suite.len(), "one move a position");
    for (mv, position) in moves.iter().zip(&suite) {
        let cell = recorded_cell(mv);
        let taken: HashSet<Move> = position["stones"]
            .as_array()
            .expect("stones")
            .iter()
            .map(recorded_cell)
            .collect();
        assert!(
            cell.row < 15 && cell.col < 15 && !taken.contains(&cell),
            "{mv} is not an empty cell of the position"
        );
    }
    let compared = stdout(&run_script(
        dir.path(),
        "choice-suite.py",
        &["compare", "suite.json", "choices.json", "choices.json"],
    ));
    assert!(
        compared.contains("only A 0, only B 0")
            && compared.contains(&format!("the same move in {}", suite.len())),
        "a run compared with itself: {compared}"
    );
    // An analyst that cannot start ends the valuation with one line naming it, not a thread's
    // traceback and a silent success.
    let missing_analyst = dir.path().join("no-such-analyst");
    let failed = Command::new("python3")
        .arg(script("choice-suite.py"))
        .args(["value", "suite.json", "values.json", "100"])
        .arg(&missing_analyst)
        .args(["--", "choices.json"])
        .current_dir(dir.path())
        .output()
        .expect("run python3");
    let complaint = String::from_utf8_lossy(&failed.stderr);
    assert!(
        !failed.status.success()
            && complaint.trim().lines().count() == 1
            && complaint.contains("cannot start the brain")
            && complaint.contains("no-such-analyst"),
        "a missing analyst ({}): {complaint}",
        failed.status
    );
    // An analyst that fails beside one that works: the run still fails with one line, but
    // what the working one valued is written (all but at most the one move the failing one
    // had taken when it ended).
    std::fs::write(
        dir.path().join("one-analyst.py"),
        "import os, sys\n\
         try:\n    os.mkdir('an-analyst-started')\n\
         except FileExistsError:\n    sys.exit(1)\n\
         for line in sys.stdin:\n\
         \x20   word = line.strip()\n\
         \x20   if word.startswith('START'):\n        print('OK', flush=True)\n\
         \x20   elif word == 'DONE':\n        print('MESSAGE Eval 10\\n7,7', flush=True)\n\
         \x20   elif word == 'END':\n        break\n",
    )
    .expect("write the analyst");
    let half_failed = Command::new("python3")
        .arg(script("choice-suite.py"))
        .args([
            "value",
            "suite.json",
            "values.json",
            "100",
            "python3",
            "one-analyst.py",
        ])
        .args(["--", "choices.json"])
        .current_dir(dir.path())
        .output()
        .expect("run python3");
    let complaint = String::from_utf8_lossy(&half_failed.stderr);
    let told = stdout(&half_failed);
    let to_value: usize = told
        .split_whitespace()
        .next()
        .and_then(|count| count.parse().ok())
        .unwrap_or_else(|| panic!("no count of moves to value: {told}"));
    let values = read_json(&dir.path().join("values.json"));
    let valued = values.as_object().expect("values by move").len();
    assert!(
        !half_failed.status.success()
            && complaint.trim().lines().count() == 1
            && complaint.contains("the brain closed")
            && to_value > 1
            && valued + 1 >= to_value,
        "one analyst failing ({}): {valued} of {to_value} valued; {told}{complaint}",
        half_failed.status
    );
}

#[test]
fn label_writes_one_scored_board_a_position() {
    let Some((dir, summary, games)) = a_played_match(None) else {
        return;
    };
    let brain = format!("{BIN} gomocup");
    let output = run_script(
        dir.path(),
        "label.py",
        &[
            "--brain",
            &brain,
            "--turn-ms",
            "30",
            "--from-ply",
            "6",
            "--out",
            "labels.txt",
            summary.to_str().expect("a UTF-8 path"),
        ],
    );
    let report = String::from_utf8_lossy(&output.stderr);
    let text = std::fs::read_to_string(dir.path().join("labels.txt")).expect("labels written");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        !lines.is_empty() && report.contains(&format!("{} labels written", lines.len())),
        "{} lines; report: {report}",
        lines.len()
    );
    for line in lines {
        let fields: Vec<&str> = line.split(' ').collect();
        assert_eq!(fields.len(), 4, "{line:?}: GAME K SCORE ROWS");
        let game: u64 = fields[0].parse().expect("a game number");
        assert!(games.iter().any(|g| g.number == game), "{line:?}: game");
        assert_eq!(fields[1], "5", "{line:?}: five in a row");
        fields[2].parse::<i64>().expect("a score");
        let rows: Vec<&str> = fields[3].split('/').collect();
        assert!(
            rows.len() == 15
                && rows
                    .iter()
                    .all(|r| r.len() == 15 && r.bytes().all(|b| b"0NB".contains(&b))),
            "{line:?}: a 15x15 board of 0, N, B"
        );
        let stones = fields[3]
            .bytes()
            .filter(|b| *b != b'0' && *b != b'/')
            .count();
        assert!(stones >= 6, "{line:?}: fewer stones than --from-ply 6");
    }
}

#[test]
fn fresh_table_brain_plays_a_whole_match_as_a_gomocup_brain() {
    let Some((_dir, summary, games)) = a_played_match(Some("fresh-table-brain.py")) else {
        return;
    };
    let summary = read_json(&summary);
    for (game, record) in games
        .iter()
        .zip(summary["games"].as_array().expect("games"))
    {
        assert_eq!(
            record["termination"].as_str(),
            Some("line"),
            "game {} ended by {} ({})",
            game.number,
            record["termination"],
            record["reason"]
        );
    }
}
