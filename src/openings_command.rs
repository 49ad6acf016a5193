//! `connect5 openings`: random openings searched by the engine, the balanced ones kept. A match
//! from openings that one colour nearly always wins measures little: both players win the same
//! side of each pair, and only the rare upset counts (the Gomocup's and the chess testers' books
//! are chosen the same way, by an engine's score near even).

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use rand::rngs::StdRng;
use rand::SeedableRng;

use connect5::board::{Move, Rule};
use connect5::engine::params::ParamArgs;
use connect5::engine::{is_mate, think, Deadline, EngineConfig, EngineKind, Score};
use connect5::referee::{offset_line, opening_board, parse_board, random_opening, symmetry_key};

#[derive(clap::Args, Debug)]
pub struct OpeningsArgs {
    /// Board size, rows x columns (`15x15`, `20x20`; one number for a square).
    #[arg(long, default_value = "15x15")]
    pub board: String,
    /// Stones in each opening, black first, alternating.
    #[arg(long, default_value_t = 3)]
    pub stones: usize,
    /// Draw the stones from the square of this radius around the centre (the 7×7 square by
    /// default: from the 3×3 one, `connect5 match`'s default for three stones, black wins nearly
    /// every opening, and it holds only 38 up to the board's symmetries).
    #[arg(long, default_value_t = 3)]
    pub opening_radius: usize,
    /// Openings to keep.
    #[arg(long, default_value_t = 50)]
    pub count: usize,
    /// Keep an opening when the search scores it within this of even, for the side to move (the
    /// evaluation's units, as `connect5 bench` prints them; a proven win is 1,000,000 less its
    /// length, and is never kept).
    #[arg(long, default_value_t = 100)]
    pub margin: Score,
    /// Depth of each search, in plies: the same seed and depth keep the same openings.
    #[arg(long, default_value_t = 12)]
    pub depth: u32,
    /// Candidates drawn at most (default: 50 a kept opening); the command fails if too few are
    /// kept.
    #[arg(long)]
    pub candidates: Option<usize>,
    /// Seed of the random candidates.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Searches run at once, one thread each.
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// Transposition table of each search, in MiB (a larger one costs more to clear than a
    /// search of this kind gains from it).
    #[arg(long, default_value_t = 16)]
    pub hash: usize,
    /// Write the kept openings here, one offset line each (`0,0, 1,0, 1,3`: what `connect5 match
    /// --openings` and c-gomoku-cli's `-openings` read).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    #[command(flatten)]
    pub params: ParamArgs,
}

/// One candidate after its search.
struct Scored {
    moves: Vec<Move>,
    score: Score,
    depth: u32,
}

pub fn run(args: OpeningsArgs) -> ExitCode {
    crate::command_status("openings", select(&args))
}

fn select(args: &OpeningsArgs) -> Result<(), String> {
    let (rows, cols) = parse_board(&args.board)?;
    let rule = Rule::for_board(rows, cols);
    if args.count == 0 {
        return Err("--count 0: nothing to select".into());
    }
    if args.margin < 0 {
        return Err(format!("--margin {} is negative", args.margin));
    }
    let budget = args.candidates.unwrap_or(args.count.saturating_mul(50));
    let candidates = draw_candidates(args, rows, cols, rule, budget)?;
    let config = EngineConfig {
        kind: EngineKind::V2,
        hash_bytes: args.hash.saturating_mul(1 << 20),
        max_depth: Some(args.depth),
        max_nodes: None,
        memory: None,
        progress: None,
        params: args.params.search_params(),
    };
    println!(
        "{} candidates of {} stones on {rows}x{cols} drawn (seed {}), searched in turn to depth \
         {} until {} are kept: those whose score for the side to move is within ±{}",
        candidates.len(),
        args.stones,
        args.seed,
        args.depth,
        args.count,
        args.margin
    );
    let (kept, searched) = search_in_order(args, &candidates, rows, cols, rule, &config)?;
    if kept.len() < args.count {
        return Err(format!(
            "kept {} of the {} asked for from {searched} candidates: widen --margin or allow \
             more --candidates",
            kept.len(),
            args.count,
        ));
    }
    let mut text = String::new();
    for opening in &kept {
        text.push_str(&offset_line(&opening.moves, rows, cols));
        text.push('\n');
    }
    std::fs::write(&args.out, text)
        .map_err(|error| format!("cannot write {}: {error}", args.out.display()))?;
    let mean = kept.iter().map(|o| o.score as f64).sum::<f64>() / kept.len() as f64;
    println!(
        "kept {} of {searched} openings searched in {} (mean score {mean:+.0} for the side to move)",
        kept.len(),
        args.out.display()
    );
    Ok(())
}

/// Up to `budget` random openings, each new up to the board's symmetries, in the seed's order.
fn draw_candidates(
    args: &OpeningsArgs,
    rows: usize,
    cols: usize,
    rule: Rule,
    budget: usize,
) -> Result<Vec<Vec<Move>>, String> {
    let mut rng = StdRng::seed_from_u64(args.seed);
    let mut seen = HashSet::new();
    let mut candidates = Vec::new();
    // Small squares hold few distinct openings: stop drawing once new ones have become rare.
    let mut misses = 0;
    while candidates.len() < budget && misses < 1000 + budget {
        let moves = random_opening(
            &mut rng,
            args.stones,
            Some(args.opening_radius),
            rows,
            cols,
            rule,
        )
        .map_err(|error| error.to_string())?;
        if seen.insert(symmetry_key(&moves, rows, cols)) {
            candidates.push(moves);
        } else {
            misses += 1;
        }
    }
    Ok(candidates)
}

/// The candidates searched `concurrency` at a time: the first `count` balanced ones in the
/// candidates' order (the same whatever the concurrency), and how many candidates that took.
fn search_in_order(
    args: &OpeningsArgs,
    candidates: &[Vec<Move>],
    rows: usize,
    cols: usize,
    rule: Rule,
    config: &EngineConfig,
) -> Result<(Vec<Scored>, usize), String> {
    let results: Mutex<Vec<Option<Result<Scored, String>>>> =
        Mutex::new((0..candidates.len()).map(|_| None).collect());
    let next = AtomicUsize::new(0);
    let kept_before = |results: &[Option<Result<Scored, String>>], upto: usize| {
        results[..upto]
            .iter()
            .filter(|r| matches!(r, Some(Ok(s)) if balanced(s, args.margin)))
            .count()
    };
    let mut kept = Vec::new();
    std::thread::scope(|scope| {
        for _ in 0..args.concurrency.max(1) {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::SeqCst);
                if index >= candidates.len() {
                    return;
                }
                {
                    // Enough kept among the candidates finished without a gap from the first:
                    // this one and the later ones are not needed.
                    let results = results.lock().unwrap_or_else(|e| e.into_inner());
                    let finished = results.iter().take_while(|r| r.is_some()).count();
                    if kept_before(&results, finished) >= args.count {
                        return;
                    }
                }
                let scored = score_opening(&candidates[index], rows, cols, rule, config);
                let mut results = results.lock().unwrap_or_else(|e| e.into_inner());
                results[index] = Some(scored);
            });
        }
    });
    let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut searched = 0;
    for (index, result) in results.into_iter().enumerate() {
        let Some(result) = result else { break };
        let scored = result?;
        searched += 1;
        let keep = balanced(&scored, args.margin) && kept.len() < args.count;
        println!(
            "{:>5}  {:<28} score {:>+8} depth {:>2}  {}",
            index + 1,
            offset_line(&scored.moves, rows, cols),
            scored.score,
            scored.depth,
            if keep { "kept" } else { "-" }
        );
        if keep {
            kept.push(scored);
            if kept.len() == args.count {
                break;
            }
        }
    }
    Ok((kept, searched))
}

fn balanced(scored: &Scored, margin: Score) -> bool {
    !is_mate(scored.score) && scored.score.abs() <= margin
}

fn score_opening(
    moves: &[Move],
    rows: usize,
    cols: usize,
    rule: Rule,
    config: &EngineConfig,
) -> Result<Scored, String> {
    let board = opening_board(moves, rows, cols).map_err(|error| error.to_string())?;
    let decision = think(&board, rule, &Deadline::unlimited(), config)
        .map_err(|error| format!("opening {}: {error}", offset_line(moves, rows, cols)))?;
    Ok(Scored {
        moves: moves.to_vec(),
        score: decision.score,
        depth: decision.depth,
    })
}
