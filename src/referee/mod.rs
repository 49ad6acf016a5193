//! Match runner (referee): plays any two players against each other, in pairs of games with the
//! colours swapped, and reports as cutechess-cli, fastchess and c-gomoku-cli do. `docs/match.md`
//! is the user's guide.

mod game;
mod openings;
mod player;
mod records;
mod report;
mod schedule;
pub mod stats;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use rand::SeedableRng;

use crate::board::{Rule, Stone, MAX_SIDE};
pub use game::{GameRecord, Outcome, Termination};
use game::{GameSettings, TimeControl};
pub use openings::{offset_line, opening_board, random_opening, symmetry_key};
use openings::{OpeningsFileError, RandomOpeningError};
use player::{
    make_player, parse_player_spec, PlayerContext, PlayerSpec, PlayerSpecError,
    DEFAULT_START_TIMEOUT,
};
pub use records::{load_summary, MatchSummary, ReplayedMove, SummaryGame};
use report::Reporter;
use schedule::{run_workers, Colours, Openings, OpeningsSource, Plan};
use stats::{Sprt, SprtError};

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
    /// Games to play, in pairs: each opening twice, colours swapped (one game per opening with
    /// --first-colour).
    #[arg(long, default_value_t = 2)]
    pub games: usize,
    /// Give the first player this colour in every game and play each opening once, instead of
    /// pairs with colours swapped: measures one side alone (how often an engine converts
    /// black's start, say). Game n starts from the opening of pair n of the same seed; there
    /// are no pairs, so no pentanomial and no --sprt.
    #[arg(long, value_enum, value_name = "COLOUR", conflicts_with = "sprt")]
    pub first_colour: Option<Stone>,
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
    /// Draw the random openings' stones from the square of this radius around the centre
    /// (default: the smallest with three cells per stone, 1 for 3 stones: 252 openings).
    #[arg(long, value_name = "R", requires = "random_opening")]
    pub opening_radius: Option<usize>,
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
  builtin[:engine=v1|v2,depth=N,nodes=N,hash=MB,name=NAME]   the engine in this process
                     (nodes=N: each search stops after N nodes; and PARAM=VALUE, a search
                     parameter: docs/engine.md)
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

/// The clocks `--tc` describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeLimits {
    /// Thinking time of every move, when moves have a limit of their own.
    pub per_move: Option<Duration>,
    /// Each player's clock for a whole game, when there is one.
    pub match_time: Option<Duration>,
    /// Added to a player's match clock after each of its moves.
    pub increment: Duration,
}

/// Why `--tc` was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("--tc {text:?}: {problem} (e.g. 60+0.5, 0/0.3, 180/30)")]
pub struct TimeControlError {
    pub text: String,
    pub problem: TimeControlProblem,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TimeControlProblem {
    #[error("{0:?} is not a number of seconds")]
    NotSeconds(String),
    #[error("{0:?} is out of range")]
    OutOfRange(String),
    #[error("no time at all")]
    NoTime,
    #[error("an increment needs a match clock")]
    IncrementWithoutClock,
}

/// The time control `--tc` describes.
pub fn parse_tc(text: &str) -> Result<TimeLimits, TimeControlError> {
    parse_tc_parts(text).map_err(|problem| TimeControlError {
        text: text.to_string(),
        problem,
    })
}

fn parse_tc_parts(text: &str) -> Result<TimeLimits, TimeControlProblem> {
    let (clocks, increment) = match text.split_once('+') {
        Some((clocks, increment)) => (clocks, parse_seconds(increment)?),
        None => (text, Duration::ZERO),
    };
    let (match_time, per_move) = match clocks.split_once('/') {
        Some((match_time, turn)) => (parse_seconds(match_time)?, Some(parse_seconds(turn)?)),
        None => (parse_seconds(clocks)?, None),
    };
    let match_time = (!match_time.is_zero()).then_some(match_time);
    if match_time.is_none() && per_move.is_none_or(|turn| turn.is_zero()) {
        return Err(TimeControlProblem::NoTime);
    }
    if match_time.is_none() && !increment.is_zero() {
        return Err(TimeControlProblem::IncrementWithoutClock);
    }
    Ok(TimeLimits {
        per_move,
        match_time,
        increment,
    })
}

/// One number of seconds of `--tc`.
fn parse_seconds(part: &str) -> Result<Duration, TimeControlProblem> {
    let value: f64 = part
        .trim()
        .parse()
        .map_err(|_| TimeControlProblem::NotSeconds(part.to_string()))?;
    // The upper bound keeps Duration::from_secs_f64 from panicking; no game lasts 115 days.
    if !value.is_finite() || !(0.0..=1e7).contains(&value) {
        return Err(TimeControlProblem::OutOfRange(part.to_string()));
    }
    Ok(Duration::from_secs_f64(value))
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

/// Why a match could not start: every check made before the first game.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// `--board`, as [`parse_board`] words it.
    #[error("{0}")]
    Board(String),
    #[error("--k {k} out of range: 1 to {longest} on a {rows}x{cols} board")]
    LineLength {
        k: usize,
        longest: usize,
        rows: usize,
        cols: usize,
    },
    #[error("--games must be at least 1")]
    NoGames,
    #[error("--concurrency must be 1 to 256")]
    Concurrency,
    /// `--player1` or `--player2` (the `flag`).
    #[error("{flag}: {error}")]
    Player {
        flag: &'static str,
        error: PlayerSpecError,
    },
    #[error("cannot read openings {}: {error}", .path.display())]
    ReadOpenings {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{}: {error}", .path.display())]
    Openings {
        path: PathBuf,
        error: OpeningsFileError,
    },
    #[error(transparent)]
    RandomOpening(#[from] RandomOpeningError),
    #[error(transparent)]
    Sprt(#[from] SprtError),
    #[error(transparent)]
    TimeControl(#[from] TimeControlError),
    /// `--psq`, `--sgf` or `--json` (`what` names which) cannot be written.
    #[error("cannot create {what} {}: {error}", .path.display())]
    Output {
        what: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },
}

/// Everything checked before the first game.
struct Setup {
    plan: Plan,
    sprt: Option<Sprt>,
}

fn setup(args: &MatchOptions) -> Result<Setup, SetupError> {
    let (rows, cols, rule) = args.board_and_rule()?;
    args.check_game_counts()?;
    let specs = args.player_specs()?;
    let openings = args.openings(rows, cols, rule)?;
    let sprt = args.sprt.as_deref().map(Sprt::parse).transpose()?;
    let settings = GameSettings {
        rows,
        cols,
        rule,
        time: args.time_control()?,
        max_moves: args.max_moves,
    };
    let concurrency = args.concurrency.min(args.games);
    Ok(Setup {
        plan: Plan {
            specs,
            settings,
            openings,
            games: args.games,
            colours: args.colours(),
            concurrency,
            context: PlayerContext {
                log_dir: args.log_dir(),
                concurrency,
                start_timeout: Duration::from_millis(args.start_timeout.max(1)),
                worker: 0,
            },
        },
        sprt,
    })
}

impl MatchOptions {
    fn colours(&self) -> Colours {
        self.first_colour.map_or(Colours::Swapped, Colours::Fixed)
    }

    fn board_and_rule(&self) -> Result<(usize, usize, Rule), SetupError> {
        let (rows, cols) = parse_board(&self.board).map_err(SetupError::Board)?;
        let rule = Rule::for_board_with_k(rows, cols, self.k).map_err(|longest| {
            SetupError::LineLength {
                k: self.k.unwrap_or_default(),
                longest,
                rows,
                cols,
            }
        })?;
        Ok((rows, cols, rule))
    }

    fn check_game_counts(&self) -> Result<(), SetupError> {
        if self.games == 0 {
            return Err(SetupError::NoGames);
        }
        if self.concurrency == 0 || self.concurrency > 256 {
            return Err(SetupError::Concurrency);
        }
        Ok(())
    }

    fn player_specs(&self) -> Result<[PlayerSpec; 2], SetupError> {
        let parse = |tokens: &[String], flag| {
            parse_player_spec(tokens).map_err(|error| SetupError::Player { flag, error })
        };
        let first = parse(&self.player1, "--player1")?;
        let mut second = parse(&self.player2, "--player2")?;
        // Reports, logs and records tell the players apart by name.
        if first.name == second.name {
            second.name.push_str("-2");
        }
        Ok([first, second])
    }

    fn openings(&self, rows: usize, cols: usize, rule: Rule) -> Result<Openings, SetupError> {
        if let Some(path) = &self.openings {
            let text = std::fs::read_to_string(path).map_err(|error| SetupError::ReadOpenings {
                path: path.clone(),
                error,
            })?;
            let list = openings::parse_openings(&text, rows, cols, rule).map_err(|error| {
                SetupError::Openings {
                    path: path.clone(),
                    error,
                }
            })?;
            Ok(Openings::List {
                path: path.clone(),
                openings: list,
            })
        } else if let Some(stones) = self.random_opening {
            let seed = self.seed.unwrap_or_else(seed_from_clock);
            // Fails here, before any game, when no such opening exists on this board.
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            openings::random_opening(&mut rng, stones, self.opening_radius, rows, cols, rule)?;
            Ok(Openings::Random {
                stones,
                radius: self.opening_radius,
                seed,
                rows,
                cols,
                rule,
            })
        } else {
            Ok(Openings::Empty)
        }
    }

    fn time_control(&self) -> Result<TimeControl, SetupError> {
        let limits = match &self.tc {
            Some(tc) => parse_tc(tc)?,
            None => TimeLimits {
                per_move: Some(Duration::from_millis(self.time_ms)),
                match_time: None,
                increment: Duration::ZERO,
            },
        };
        Ok(TimeControl {
            per_move: limits.per_move,
            match_time: limits.match_time,
            increment: limits.increment,
            strict: self.strict,
            grace: Duration::from_millis(self.grace_ms),
        })
    }

    fn log_dir(&self) -> PathBuf {
        self.logs.clone().unwrap_or_else(|| {
            std::env::temp_dir().join(format!("connect5-match-{}", std::process::id()))
        })
    }

    /// Creates the record files and directory up front: a typo in a path should stop the match
    /// before it starts, not lose its records at the end.
    fn check_output_paths(&self) -> Result<(), SetupError> {
        let failed = |what, path: &Path| {
            let path = path.to_path_buf();
            move |error| SetupError::Output { what, path, error }
        };
        if let Some(dir) = &self.psq {
            std::fs::create_dir_all(dir).map_err(failed("--psq directory", dir))?;
        }
        if let Some(path) = &self.sgf {
            std::fs::File::create(path).map_err(failed("--sgf file", path))?;
        }
        if let Some(path) = &self.json {
            std::fs::File::create(path).map_err(failed("--json file", path))?;
        }
        Ok(())
    }
}

fn seed_from_clock() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
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

/// Why a match stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum MatchError {
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// A player could not be started before the first game (`flag` says which).
    #[error("{flag} {name}: {fault}")]
    Unavailable {
        flag: &'static str,
        name: String,
        fault: player::Fault,
    },
    #[error("a game thread panicked")]
    GameThreadPanicked,
    #[error("cannot encode the summary: {0}")]
    EncodeSummary(serde_json::Error),
    #[error("cannot write {}: {error}", .path.display())]
    WriteSummary {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// Whether every game was played (or an SPRT bound stopped the match), or the user stopped it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchEnd {
    Finished,
    Interrupted,
}

/// Plays the match `args` describes and reports it; returns early, with the closing lines and
/// records of the games finished so far, once `interrupted` is raised (the binary raises it on
/// Ctrl-C). The players of unfinished games are killed before it returns.
pub fn run_match(args: &MatchOptions, interrupted: &AtomicBool) -> Result<MatchEnd, MatchError> {
    let Setup { plan, sprt } = setup(args)?;
    args.check_output_paths()?;
    let first_players = start_first_players(&plan)?;
    if plan.specs.iter().any(|spec| spec.kind.runs_a_program()) {
        eprintln!("Players' stderr goes to {}", plan.context.log_dir.display());
    }
    let openings = plan.openings.source();
    eprintln!("Openings: {openings}");
    let names = plan.specs.each_ref().map(|spec| spec.name.clone());
    let settings = plan.settings;
    let mut reporter = Reporter::new(names, args.games, args.colours(), sprt, args.quiet);
    let end = run_games(args, plan, first_players, &mut reporter, interrupted)?;
    if end == MatchEnd::Interrupted {
        reporter.note("Interrupted: games under way are not counted");
    }
    reporter.finish();
    if let Some(path) = &args.json {
        write_summary(args, path, reporter, &settings, openings)?;
    }
    if end == MatchEnd::Interrupted {
        player::kill_all_players();
    }
    Ok(end)
}

/// Starts both players once before the match: a typo in a command should be one clear error,
/// not a hundred lost games.
fn start_first_players(plan: &Plan) -> Result<[Box<dyn player::Player>; 2], MatchError> {
    let mut players = plan
        .specs
        .each_ref()
        .map(|spec| make_player(spec, &plan.context));
    for (player, flag) in players.iter_mut().zip(["--player1", "--player2"]) {
        player.prepare().map_err(|fault| MatchError::Unavailable {
            flag,
            name: player.name().to_string(),
            fault,
        })?;
    }
    Ok(players)
}

/// Plays the match on worker threads, handing each finished game to `reporter` as it comes.
fn run_games(
    args: &MatchOptions,
    plan: Plan,
    first_players: [Box<dyn player::Player>; 2],
    reporter: &mut Reporter,
    interrupted: &AtomicBool,
) -> Result<MatchEnd, MatchError> {
    let plan = Arc::new(plan);
    let stop = Arc::new(AtomicBool::new(false));
    let (sender, receiver) = mpsc::channel();
    let workers = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || run_workers(plan, first_players, stop, sender))
    };
    let end = collect_games(args, &receiver, reporter, &stop, interrupted);
    // After an interrupt the workers may be stuck on a player: they are not waited for.
    if end == MatchEnd::Finished && workers.join().is_err() {
        return Err(MatchError::GameThreadPanicked);
    }
    Ok(end)
}

/// Receives finished games until the workers are done or the user interrupts; raises `stop`
/// when the reporter's SPRT reaches a bound or on an interrupt.
fn collect_games(
    args: &MatchOptions,
    receiver: &mpsc::Receiver<schedule::Finished>,
    reporter: &mut Reporter,
    stop: &AtomicBool,
    interrupted: &AtomicBool,
) -> MatchEnd {
    loop {
        // A timeout rather than a blocking receive, so that an interrupt is seen between games.
        match receiver.recv_timeout(Duration::from_millis(100)) {
            Ok(finished) => {
                save_records(args, &finished);
                if reporter.add(finished) {
                    stop.store(true, Ordering::Relaxed);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return MatchEnd::Finished,
        }
        if interrupted.load(Ordering::SeqCst) {
            // Games under way are dropped: their players are killed by the caller.
            stop.store(true, Ordering::Relaxed);
            return MatchEnd::Interrupted;
        }
    }
}

fn write_summary(
    args: &MatchOptions,
    path: &Path,
    reporter: Reporter,
    settings: &GameSettings,
    openings: OpeningsSource,
) -> Result<(), MatchError> {
    let summary = reporter.summary(
        format!("{}x{}", settings.rows, settings.cols),
        settings.rule.k,
        args.tc.is_none().then_some(args.time_ms),
        args.tc.clone(),
        args.strict,
        openings,
    );
    let text = serde_json::to_string_pretty(&summary).map_err(MatchError::EncodeSummary)?;
    std::fs::write(path, text + "\n").map_err(|error| MatchError::WriteSummary {
        path: path.to_path_buf(),
        error,
    })
}
