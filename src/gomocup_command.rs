//! `connect5 gomocup`: the engine as a Gomocup (pbrain) brain on stdin/stdout, for the field's
//! managers (Piskvork, c-gomoku-cli, GomocupJudge, Yixin board). `docs/gomocup.md` is the
//! contract. The protocol's pure part is the library's [`connect5::gomocup`]; this file reads the
//! lines, runs the searches and writes the replies.

use std::io::{BufReader, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};

use connect5::engine::params::ParamArgs;
use connect5::engine::{self, Deadline, EngineConfig, EngineKind, GameMemory};
use connect5::gomocup::{Brain, BrainConfig, Step, Think};
use connect5::pool::{SearchFailure, SearchPool};
use connect5::protocol::read_bounded_line;

/// `connect5 gomocup` options.
#[derive(clap::Args, Debug, Clone)]
pub struct GomocupArgs {
    /// Which search answers: v2 (the tournament engine) or v1 (the baseline).
    #[arg(long, value_enum, default_value_t = EngineKind::default())]
    pub engine: EngineKind,
    /// Transposition-table size of a search, in MiB (`INFO max_memory` lowers it).
    #[arg(long, value_name = "MB", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    pub hash: u64,
    /// Time of a move until the manager sends `INFO timeout_turn`, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 5_000)]
    pub timeout_turn: u64,
    /// Five or more in a row wins until the manager sends `INFO rule` (default: exactly five).
    #[arg(long)]
    pub overline_wins: bool,
    /// No `MESSAGE` line with the search's depth, score, nodes, speed and line after each move.
    #[arg(long)]
    pub no_messages: bool,
    #[command(flatten)]
    pub params: ParamArgs,
}

impl GomocupArgs {
    fn brain_config(&self) -> BrainConfig {
        BrainConfig {
            engine: EngineConfig {
                kind: self.engine,
                hash_bytes: (self.hash as usize) << 20,
                max_depth: None,
                max_nodes: None,
                // A brain plays one game at a time: its table is kept from move to move.
                memory: Some(Arc::new(GameMemory::new())),
                progress: None,
                params: self.params.search_params(),
            },
            messages: !self.no_messages,
            default_turn: Duration::from_millis(self.timeout_turn),
            overline_wins: self.overline_wins,
        }
    }
}

/// A manager's line as the reader passes it on.
struct ReadLine {
    text: String,
    /// When it was read: a move's time runs from there.
    at: Instant,
    /// Raised when a later line asks the search this line may start to stop.
    stop: Arc<AtomicBool>,
}

/// Whether a line asks a brain that is thinking to answer at once.
fn stops_the_search(line: &str) -> bool {
    let word = line.split_whitespace().next().unwrap_or("");
    ["END", "YXSTOP", "STOP"]
        .iter()
        .any(|stop| word.eq_ignore_ascii_case(stop))
}

/// Whether a line may start a search: a stop read after it is meant for that search.
fn may_start_a_search(line: &str) -> bool {
    let word = line.split_whitespace().next().unwrap_or("");
    ["BEGIN", "TURN", "DONE"]
        .iter()
        .any(|start| word.eq_ignore_ascii_case(start))
}

/// Reads stdin on its own thread, so that `END` or `YXSTOP` reach a search that is running: each
/// line that may start a search gets a stop flag of its own, which a later stop line (or the end
/// of input) raises. A stop typed ahead never cuts short a search of an earlier command.
fn spawn_reader() -> Receiver<ReadLine> {
    let (sender, receiver) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("gomocup-reader".to_string())
        .spawn(move || {
            let mut reader = BufReader::new(std::io::stdin());
            let mut buf = Vec::new();
            let mut latest = Arc::new(AtomicBool::new(false));
            loop {
                buf.clear();
                match read_bounded_line(&mut reader, &mut buf) {
                    Ok(true) => {
                        let at = Instant::now();
                        let text = String::from_utf8_lossy(&buf).into_owned();
                        if may_start_a_search(&text) {
                            latest = Arc::new(AtomicBool::new(false));
                        } else if stops_the_search(&text) {
                            latest.store(true, Ordering::Relaxed);
                        }
                        let line = ReadLine {
                            text,
                            at,
                            stop: Arc::clone(&latest),
                        };
                        if sender.send(line).is_err() {
                            return;
                        }
                    }
                    Ok(false) | Err(_) => {
                        latest.store(true, Ordering::Relaxed);
                        return;
                    }
                }
            }
        });
    if let Err(why) = spawned {
        tracing::error!("cannot start the stdin reader: {why}");
    }
    receiver
}

/// Runs the brain until `END` or the end of input.
pub fn run(args: GomocupArgs) -> ExitCode {
    let lines = spawn_reader();
    let config = args.brain_config();
    // One search at a time, on this thread; `INFO max_memory` can only make its table smaller.
    let pool = SearchPool::with_slots(config.engine.hash_bytes, 1);
    let mut brain = Brain::new(config);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in lines {
        tracing::debug!(line = %line.text.trim_end(), "manager");
        let replies = match brain.handle(&line.text) {
            Step::Say(replies) => replies,
            Step::Think(think) => {
                let decision = search(&pool, &think, line.at, &line.stop);
                match decision {
                    Ok(decision) => brain.played(&decision, line.at.elapsed()),
                    Err(why) => vec![format!("ERROR {why}")],
                }
            }
            Step::Quit => break,
        };
        if write_lines(&mut out, &replies).is_err() {
            // The manager is gone: nobody is left to answer.
            break;
        }
    }
    let _ = out.flush();
    // The reader thread may be blocked reading stdin: returning from `main` ends the process
    // without waiting for it.
    ExitCode::SUCCESS
}

fn write_lines(out: &mut impl Write, lines: &[String]) -> std::io::Result<()> {
    for line in lines {
        tracing::debug!(line = %line, "brain");
        writeln!(out, "{line}")?;
    }
    out.flush()
}

/// Searches a position on the brain's clock, from the instant the command arrived.
fn search(
    pool: &SearchPool,
    think: &Think,
    at: Instant,
    stop: &Arc<AtomicBool>,
) -> Result<engine::Decision, String> {
    let deadline = Deadline::for_own_clock(at, think.budget).with_stop(Arc::clone(stop));
    match pool.search_here(&think.board, think.rule, &deadline, &think.engine) {
        Ok(decision) => Ok(decision),
        Err(SearchFailure::NoMove(no_move)) => Err(format!("no move to play: {no_move}")),
        Err(_) => {
            // The engine failed on this position; a legal move still keeps the game going.
            engine::instant_move(&think.board, think.rule)
                .map(|mv| engine::Decision {
                    mv,
                    score: 0,
                    depth: 0,
                    nodes: 0,
                    pv: vec![mv],
                })
                .map_err(|why| format!("no move to play: {why}"))
        }
    }
}
