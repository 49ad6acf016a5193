//! Match runner (referee): plays any two players against each other, in pairs of games with the
//! colours swapped, and reports as cutechess-cli, fastchess and c-gomoku-cli do. `docs/match.md`
//! is the user's guide.

pub mod game;
pub mod openings;
pub mod player;
pub mod records;
pub mod report;
pub mod review;
pub mod schedule;
pub mod stats;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use rand::SeedableRng;

use crate::board::{Rule, MAX_SIDE};
use game::{GameSettings, TimeControl};
use player::{make_player, parse_player_spec, PlayerContext, DEFAULT_START_TIMEOUT};
use report::Reporter;
use schedule::{run_workers, Openings, Plan};
use stats::Sprt;

/// `connect5 match` options (boxed: the subcommand enum stays small).
#[derive(clap::Args, Debug)]
#[command(after_help = PLAYER_HELP)]
pub struct MatchArgs {
    #[command(flatten)]
    pub options: Box<MatchOptions>,
}

#[derive(clap::Args, Debug)]
pub struct MatchOptions {
    /// The first player: a kind and options, e.g. `builtin:engine=v1,depth=2,name=old`,
    /// `'cmd:./target/release/connect5 stdio' name=mine`, `tcp:127.0.0.1:1199 name=server`.
    #[arg(long, num_args = 1.., required = true, value_name = "SPEC", allow_hyphen_values = false)]
    pub player1: Vec<String>,
    /// The second player (same syntax).
    #[arg(long, num_args = 1.., required = true, value_name = "SPEC")]
    pub player2: Vec<String>,
    /// Games to play, in pairs: each opening twice, colours swapped.
    #[arg(long, default_value_t = 2)]
    pub games: usize,
    /// Games played at once (each with its own processes or connections).
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// Board size, rows x columns (`15x15`, `9x9`, `3x3`; one number for a square).
    #[arg(long, default_value = "15x15", value_name = "LxC")]
    pub board: String,
    /// Length of the winning line (default: 5, or the short side on boards smaller than 5x5).
    #[arg(long)]
    pub k: Option<usize>,
    /// Thinking time per move, in milliseconds.
    #[arg(
        long = "time",
        default_value_t = 1000,
        value_name = "MS",
        conflicts_with = "tc"
    )]
    pub time_ms: u64,
    /// Time control in the field's form, in seconds: `60+0.5` (a clock of 60 s a game for each
    /// player, 0.5 s added after each move), `60`, or c-gomoku-cli's `MATCH/TURN[+INC]` (`0/0.3`:
    /// 0.3 s a move and no match clock; `180/30`: 180 s a game and at most 30 s a move).
    #[arg(long, value_name = "TC", allow_hyphen_values = true)]
    pub tc: Option<String>,
    /// Any overrun loses, for Connect5-protocol players too (default for them: up to 50% late is
    /// tolerated and paid back on the next move; Gomocup brains always lose on any overrun).
    #[arg(long)]
    pub strict: bool,
    /// Taken off every measured reply before judging it: the course referee's 50 ms, the
    /// Gomocup managers' tolerance.
    #[arg(
        long = "tolerance",
        visible_alias = "grace",
        default_value_t = 50,
        value_name = "MS"
    )]
    pub grace_ms: u64,
    /// Openings file: c-gomoku-cli offset lines (`0,0, 1,0, 1,3`) or pos strings (`h8i9j7`).
    #[arg(long, value_name = "FILE", conflicts_with = "random_opening")]
    pub openings: Option<PathBuf>,
    /// Start every pair from this many random stones near the centre.
    #[arg(long, value_name = "N")]
    pub random_opening: Option<usize>,
    /// Seed of the random openings (default: from the clock).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Draw a game after this many moves (opening stones not counted).
    #[arg(long, value_name = "N")]
    pub max_moves: Option<usize>,
    /// Sequential test: `elo0=0 elo1=10 alpha=0.05 beta=0.05`; the match stops at a bound.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    pub sprt: Option<Vec<String>>,
    /// Write a JSON summary of the match (with every game) to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Save every game as a Piskvork file `game-NNNN.psq` in this directory.
    #[arg(long, value_name = "DIR")]
    pub psq: Option<PathBuf>,
    /// Save every game in this SGF collection file, one game tree a line (as c-gomoku-cli's -sgf).
    #[arg(long, value_name = "FILE")]
    pub sgf: Option<PathBuf>,
    /// Directory for the players' stderr logs (default: a connect5-match directory in the
    /// system's temporary directory).
    #[arg(long, value_name = "DIR")]
    pub logs: Option<PathBuf>,
    /// How long a program or server may take to say READY, in milliseconds.
    #[arg(long, default_value_t = DEFAULT_START_TIMEOUT.as_millis() as u64, value_name = "MS")]
    pub start_timeout: u64,
    /// Only the closing lines, no line per game.
    #[arg(long)]
    pub quiet: bool,
}

const PLAYER_HELP: &str = "\
Player specs (--player1, --player2): one kind, then key=value options.
  builtin[:engine=v1|v2,depth=N,hash=MB,name=NAME]   the engine in this process
  cmd:PROGRAM ARGS   a program speaking the Connect5 protocol on stdin/stdout (quote it)
  tcp:HOST:PORT      a Connect5 TCP server (one connection per player, kept for the match)
  gomocup:PROGRAM ARGS   a Gomocup (pbrain) brain on stdin/stdout (quote it)
  name=NAME          the name shown in every report (all kinds)
  time=MS            this player's own time per move, instead of --time (all kinds)
  memory=MB          a Gomocup brain's INFO max_memory (default 350)
Examples:
  connect5 match --player1 builtin:engine=v1,depth=2,name=d2 --player2 builtin:engine=v1,depth=1,name=d1 \\
      --board 9x9 --time 100 --games 100 --random-opening 4 --concurrency 2
  connect5 match --player1 'gomocup:./target/release/connect5 gomocup' --player2 gomocup:./pbrain-rapfi \\
      --tc 0/0.3 --games 40 --random-opening 3";

/// The time control `--tc` describes: (per-move time, match clock, increment).
pub fn parse_tc(text: &str) -> Result<(Option<Duration>, Option<Duration>, Duration), String> {
    let bad = |why: &str| format!("--tc {text:?}: {why} (e.g. 60+0.5, 0/0.3, 180/30)");
    let seconds = |part: &str| -> Result<Duration, String> {
        let value: f64 = part
            .trim()
            .parse()
            .map_err(|_| bad(&format!("{part:?} is not a number of seconds")))?;
        if !value.is_finite() || !(0.0..=1e7).contains(&value) {
            return Err(bad(&format!("{part:?} is out of range")));
        }
        Ok(Duration::from_secs_f64(value))
    };
    let (clocks, increment) = match text.split_once('+') {
        Some((clocks, increment)) => (clocks, seconds(increment)?),
        None => (text, Duration::ZERO),
    };
    let (match_time, per_move) = match clocks.split_once('/') {
        Some((match_time, turn)) => (seconds(match_time)?, Some(seconds(turn)?)),
        None => (seconds(clocks)?, None),
    };
    let match_time = (!match_time.is_zero()).then_some(match_time);
    if match_time.is_none() && per_move.is_none_or(|turn| turn.is_zero()) {
        return Err(bad("no time at all"));
    }
    if match_time.is_none() && !increment.is_zero() {
        return Err(bad("an increment needs a match clock"));
    }
    Ok((per_move, match_time, increment))
}

/// Parses `15x15`, `9X9`, `7*5` or `9`.
pub fn parse_board(text: &str) -> Result<(usize, usize), String> {
    let text = text.trim();
    let (rows, cols) = match text.split_once(['x', 'X', '*']) {
        Some((r, c)) => (r.trim(), c.trim()),
        None => (text, text),
    };
    let parse = |s: &str| {
        s.parse::<usize>()
            .map_err(|_| format!("board {text:?} is not LxC (e.g. 15x15)"))
    };
    let (rows, cols) = (parse(rows)?, parse(cols)?);
    if !(1..=MAX_SIDE).contains(&rows) || !(1..=MAX_SIDE).contains(&cols) {
        return Err(format!(
            "board {rows}x{cols} out of range: 1 to {MAX_SIDE} a side"
        ));
    }
    Ok((rows, cols))
}

/// Everything checked before the first game.
struct Setup {
    plan: Plan,
    sprt: Option<Sprt>,
}

fn setup(args: &MatchOptions) -> Result<Setup, String> {
    let (rows, cols) = parse_board(&args.board)?;
    let rule = Rule::for_board_with_k(rows, cols, args.k).map_err(|longest| {
        format!(
            "--k {} out of range: 1 to {longest} on a {rows}x{cols} board",
            args.k.unwrap_or_default()
        )
    })?;
    if args.games == 0 {
        return Err("--games must be at least 1".to_string());
    }
    if args.concurrency == 0 || args.concurrency > 256 {
        return Err("--concurrency must be 1 to 256".to_string());
    }
    let first = parse_player_spec(&args.player1).map_err(|e| format!("--player1: {e}"))?;
    let mut second = parse_player_spec(&args.player2).map_err(|e| format!("--player2: {e}"))?;
    if first.name == second.name {
        second.name.push_str("-2");
    }
    let openings = if let Some(path) = &args.openings {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read openings {}: {e}", path.display()))?;
        Openings::List(
            openings::parse_openings(&text, rows, cols, rule)
                .map_err(|e| format!("{}: {e}", path.display()))?,
        )
    } else if let Some(stones) = args.random_opening {
        let seed = args.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        });
        // Fails here, before any game, when no such opening exists on this board.
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        openings::random_opening(&mut rng, stones, rows, cols, rule)?;
        Openings::Random {
            stones,
            seed,
            rows,
            cols,
            rule,
        }
    } else {
        Openings::Empty
    };
    let sprt = match &args.sprt {
        Some(tokens) => Some(Sprt::parse(tokens)?),
        None => None,
    };
    let log_dir = args.logs.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("connect5-match-{}", std::process::id()))
    });
    let (per_move, match_time, increment) = match &args.tc {
        Some(tc) => parse_tc(tc)?,
        None => (
            Some(Duration::from_millis(args.time_ms)),
            None,
            Duration::ZERO,
        ),
    };
    let settings = GameSettings {
        rows,
        cols,
        rule,
        time: TimeControl {
            per_move,
            match_time,
            increment,
            strict: args.strict,
            grace: Duration::from_millis(args.grace_ms),
        },
        max_moves: args.max_moves,
    };
    let concurrency = args.concurrency.min(args.games);
    Ok(Setup {
        plan: Plan {
            specs: [first, second],
            settings,
            openings,
            games: args.games,
            concurrency,
            context: PlayerContext {
                log_dir,
                concurrency,
                start_timeout: Duration::from_millis(args.start_timeout.max(1)),
                worker: 0,
            },
        },
        sprt,
    })
}

fn check_output_paths(args: &MatchOptions) -> Result<(), String> {
    if let Some(dir) = &args.psq {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create --psq directory {}: {e}", dir.display()))?;
    }
    if let Some(path) = &args.sgf {
        std::fs::File::create(path)
            .map_err(|e| format!("cannot create --sgf file {}: {e}", path.display()))?;
    }
    if let Some(path) = &args.json {
        std::fs::File::create(path)
            .map_err(|e| format!("cannot create --json file {}: {e}", path.display()))?;
    }
    Ok(())
}

fn save_records(args: &MatchOptions, finished: &schedule::Finished) {
    if let Some(dir) = &args.psq {
        let path = dir.join(format!("game-{:04}.psq", finished.index + 1));
        if let Err(e) = std::fs::write(&path, records::to_psq(&finished.record)) {
            tracing::warn!("cannot write {}: {e}", path.display());
        }
    }
    if let Some(path) = &args.sgf {
        match records::to_sgf(&finished.record, finished.index + 1) {
            Some(text) => {
                let appended = std::fs::OpenOptions::new()
                    .append(true)
                    .open(path)
                    .and_then(|mut file| file.write_all(text.as_bytes()));
                if let Err(e) = appended {
                    tracing::warn!("cannot append to {}: {e}", path.display());
                }
            }
            None => tracing::warn!(
                "game {} not saved as SGF: boards beyond {} a side have no SGF coordinates",
                finished.index + 1,
                records::SGF_MAX_SIDE
            ),
        }
    }
}

pub fn run(args: MatchArgs) -> ExitCode {
    crate::logging::init("warn");
    match run_match(&args.options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("connect5 match: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run_match(args: &MatchOptions) -> Result<(), String> {
    let Setup { plan, sprt } = setup(args)?;
    check_output_paths(args)?;
    // Start both players once before the match: a typo in a command should be one clear error,
    // not a hundred lost games.
    let mut first_players = [
        make_player(&plan.specs[0], &plan.context),
        make_player(&plan.specs[1], &plan.context),
    ];
    for (player, flag) in first_players.iter_mut().zip(["--player1", "--player2"]) {
        player
            .prepare()
            .map_err(|fault| format!("{flag} {}: {fault}", player.name()))?;
    }
    if plan.specs.iter().any(|s| {
        matches!(
            s.kind,
            player::PlayerKind::Process(_) | player::PlayerKind::Gomocup { .. }
        )
    }) {
        eprintln!("Players' stderr goes to {}", plan.context.log_dir.display());
    }
    let names = [plan.specs[0].name.clone(), plan.specs[1].name.clone()];
    let settings = plan.settings;
    let plan = Arc::new(plan);
    let stop = Arc::new(AtomicBool::new(false));
    let (sender, receiver) = mpsc::channel();
    let workers = {
        let plan = Arc::clone(&plan);
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || run_workers(plan, first_players, stop, sender))
    };
    let mut reporter = Reporter::new(names, args.games, sprt, args.quiet);
    interrupt::install();
    let mut interrupted = false;
    loop {
        match receiver.recv_timeout(Duration::from_millis(100)) {
            Ok(finished) => {
                save_records(args, &finished);
                if reporter.add(finished) {
                    stop.store(true, Ordering::Relaxed);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if interrupt::requested() {
            // Games under way are dropped: their players are killed below.
            interrupted = true;
            stop.store(true, Ordering::Relaxed);
            break;
        }
    }
    if !interrupted && workers.join().is_err() {
        return Err("a game thread panicked".to_string());
    }
    if interrupted {
        reporter.note("Interrupted: games under way are not counted");
    }
    reporter.finish();
    if let Some(path) = &args.json {
        let summary = reporter.summary(
            format!("{}x{}", settings.rows, settings.cols),
            settings.rule.k,
            args.tc.is_none().then_some(args.time_ms),
            args.tc.clone(),
            args.strict,
        );
        let text = serde_json::to_string_pretty(&summary)
            .map_err(|e| format!("cannot encode the summary: {e}"))?;
        std::fs::write(path, text + "\n")
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if interrupted {
        // The workers may be waiting on players: end the players (they run in process groups of
        // their own, so the terminal's signal did not reach them) and do not wait for the games.
        player::kill_all_players();
        std::process::exit(130);
    }
    Ok(())
}

/// Ctrl-C (SIGINT) or SIGTERM during a match: the first one ends the match with the closing
/// lines and records of the games finished so far (as cutechess-cli does); a second one ends the
/// process at once.
mod interrupt {
    use std::sync::atomic::{AtomicBool, Ordering};

    static REQUESTED: AtomicBool = AtomicBool::new(false);

    pub fn requested() -> bool {
        REQUESTED.load(Ordering::SeqCst)
    }

    #[cfg(unix)]
    extern "C" fn on_signal(_signal: libc::c_int) {
        // Only async-signal-safe work here: an atomic swap, and _exit on the second signal.
        if REQUESTED.swap(true, Ordering::SeqCst) {
            unsafe { libc::_exit(130) };
        }
    }

    #[cfg(unix)]
    pub fn install() {
        let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: the handler only touches an atomic and calls _exit, both async-signal-safe.
        unsafe {
            libc::signal(libc::SIGINT, handler);
            libc::signal(libc::SIGTERM, handler);
        }
    }

    #[cfg(not(unix))]
    pub fn install() {}
}
