//! `connect5 bench`: a fixed set of positions searched to a fixed depth. The total node count is a
//! signature of the search (it changes only when the search changes, like Stockfish's `bench`);
//! the speed figures are the machine's.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use connect5::board::{Board, Rule};
use connect5::engine::bench_positions::POSITIONS;
use connect5::engine::params::ParamArgs;
use connect5::engine::{think, Deadline, EngineConfig, EngineKind};

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Depth (plies) of every search.
    #[arg(long, default_value_t = 6)]
    pub depth: u32,
    /// Engine to measure.
    #[arg(long, value_enum, default_value_t = EngineKind::V2)]
    pub engine: EngineKind,
    /// Transposition table of each search, in MiB.
    #[arg(long, default_value_t = 16)]
    pub hash: usize,
    #[command(flatten)]
    pub params: ParamArgs,
}

pub fn run(args: BenchArgs) -> ExitCode {
    let config = EngineConfig {
        kind: args.engine,
        hash_bytes: args.hash.saturating_mul(1 << 20),
        max_depth: Some(args.depth),
        max_nodes: None,
        memory: None,
        progress: None,
        params: args.params.search_params(),
    };
    let mut total_nodes = 0u64;
    let mut total_time = Duration::ZERO;
    for (name, rows) in POSITIONS {
        let board = match Board::from_rows(rows) {
            Ok(board) => board,
            Err(e) => {
                eprintln!("bench position {name}: {e}");
                return ExitCode::FAILURE;
            }
        };
        let rule = Rule::for_board(board.rows(), board.cols());
        let start = Instant::now();
        let decision = match think(&board, rule, &Deadline::unlimited(), &config) {
            Ok(decision) => decision,
            Err(e) => {
                eprintln!("bench position {name}: {e}");
                return ExitCode::FAILURE;
            }
        };
        let elapsed = start.elapsed();
        total_nodes += decision.nodes;
        total_time += elapsed;
        println!(
            "{name:<20} move {:<6} score {:>8} depth {:>2} nodes {:>10} time {:>8.1} ms",
            decision.mv.to_string(),
            decision.score,
            decision.depth,
            decision.nodes,
            elapsed.as_secs_f64() * 1e3,
        );
    }
    let seconds = total_time.as_secs_f64().max(1e-9);
    println!("===========================");
    println!("engine         : {:?}", args.engine);
    println!("depth          : {}", args.depth);
    println!("nodes          : {total_nodes}");
    println!("nodes/second   : {:.0}", total_nodes as f64 / seconds);
    println!("time (ms)      : {:.0}", seconds * 1e3);
    ExitCode::SUCCESS
}
