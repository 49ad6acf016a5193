//! `connect5 review`: where were the games a player lost already lost? Replays them from a match's
//! JSON summary and searches every position the player faced, with far more time than the match
//! gave, until one is proven lost. A game proven lost at the player's first move was lost by the
//! opening; one proven lost later was lost by a move the long search would not have played, or by
//! an attack deeper than even the long search sees before it lands.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::game::{GameRecord, Outcome, Termination};
use crate::board::{Board, Move, Rule, Stone};
use crate::engine::{think, Deadline, EngineConfig, EngineKind, WIN_THRESHOLD};

#[derive(clap::Args, Debug)]
pub struct ReviewArgs {
    /// JSON summary written by `connect5 match --json`.
    #[arg(value_name = "MATCH_JSON")]
    pub file: PathBuf,
    /// The player whose losses are reviewed, by its name in the match (default: the first player).
    #[arg(long, value_name = "NAME")]
    pub player: Option<String>,
    /// Thinking time of the search at each position, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    pub time: u64,
    /// The search that reviews.
    #[arg(long, value_enum, default_value_t = EngineKind::default())]
    pub engine: EngineKind,
    /// Transposition table of each search, in MiB.
    #[arg(long, value_name = "MB", default_value_t = 64)]
    pub hash: usize,
}

/// The parts of a match summary a review reads.
#[derive(Deserialize)]
struct MatchFile {
    player1: String,
    player2: String,
    games: Vec<ReviewedGame>,
}

#[derive(Deserialize)]
struct ReviewedGame {
    game: usize,
    #[serde(flatten)]
    record: GameRecord,
}

/// A position the player faced that the long search did not find lost.
#[derive(Debug, PartialEq)]
struct Searched {
    ply: usize,
    /// What the player played there.
    played: Move,
    /// What the long search plays, and its score.
    preferred: Move,
    score: i32,
}

/// What the long searches found in one lost game.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// The player's `nth` move (1-based), at `ply`, faced a proven loss; `before` is the
    /// player's previous move, when there was one.
    ProvenLost {
        nth: usize,
        ply: usize,
        before: Option<Searched>,
    },
    /// No position the player faced was proven lost within the time.
    NotProven,
}

pub fn run(args: ReviewArgs) -> ExitCode {
    crate::logging::init("warn");
    match review(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("connect5 review: {error}");
            ExitCode::FAILURE
        }
    }
}

fn review(args: &ReviewArgs) -> Result<(), String> {
    let text = std::fs::read_to_string(&args.file)
        .map_err(|e| format!("cannot read {}: {e}", args.file.display()))?;
    let summary: MatchFile = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{} is not a `connect5 match --json` summary: {e}",
            args.file.display()
        )
    })?;
    let player = args.player.clone().unwrap_or(summary.player1.clone());
    if player != summary.player1 && player != summary.player2 {
        return Err(format!(
            "no player {player:?} in this match (its players are {:?} and {:?})",
            summary.player1, summary.player2
        ));
    }
    let config = EngineConfig {
        kind: args.engine,
        hash_bytes: args.hash.saturating_mul(1 << 20),
        max_depth: None,
    };
    let budget = Duration::from_millis(args.time);
    let mut lost = 0;
    let mut lost_as_white = 0;
    let mut by_fault = 0;
    let mut first_move = 0;
    let mut later: Vec<usize> = Vec::new();
    let mut not_proven = 0;
    let mut unreadable = 0;
    for game in &summary.games {
        let record = &game.record;
        let Some(colour) = colour_of(record, &player) else {
            continue;
        };
        if record.outcome != Outcome::win_for(colour.opponent()) {
            continue;
        }
        lost += 1;
        lost_as_white += usize::from(colour == Stone::White);
        let heading = format!(
            "game {}: {player} ({}) lost at ply {}",
            game.game,
            colour.name(),
            record.opening.len() + record.moves.len()
        );
        if record.termination != Termination::Line {
            by_fault += 1;
            println!(
                "{heading} by {} ({}): not reviewed",
                record.termination.name(),
                record.reason
            );
            continue;
        }
        match review_game(record, colour, budget, &config) {
            Err(error) => {
                // One broken record should not cost the review of the others.
                eprintln!("connect5 review: game {}: {error}", game.game);
                unreadable += 1;
            }
            Ok(Verdict::ProvenLost { nth: 1, ply, .. }) => {
                first_move += 1;
                println!(
                    "{heading}: proven lost from its first move (ply {ply}), the opening's doing"
                );
            }
            Ok(Verdict::ProvenLost { nth, ply, before }) => {
                later.push(nth);
                let mut line = format!("{heading}: proven lost from its move {nth} (ply {ply})");
                if let Some(Searched {
                    ply: before_ply,
                    played,
                    preferred,
                    score,
                }) = before
                {
                    if played == preferred {
                        line += &format!(
                            "; at ply {before_ply} it played {played}, as the long search does (score {score})"
                        );
                    } else {
                        line += &format!(
                            "; at ply {before_ply} it played {played}, the long search plays {preferred} (score {score})"
                        );
                    }
                }
                println!("{line}");
            }
            Ok(Verdict::NotProven) => {
                not_proven += 1;
                println!("{heading}: no position it faced proven lost");
            }
        }
    }
    later.sort_unstable();
    println!(
        "{player} lost {lost} of {} games ({lost_as_white} as white), reviewed at {} ms a position: \
         {first_move} proven lost from its first move, {} later{}, {not_proven} never proven lost, \
         {by_fault} lost by a fault{}",
        summary.games.len(),
        args.time,
        later.len(),
        if later.is_empty() {
            String::new()
        } else {
            format!(
                " (at its move {})",
                later
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
        if unreadable > 0 {
            format!(", {unreadable} not replayable")
        } else {
            String::new()
        }
    );
    if unreadable > 0 {
        return Err(format!(
            "{unreadable} of the lost games could not be replayed (see above)"
        ));
    }
    Ok(())
}

fn colour_of(record: &GameRecord, player: &str) -> Option<Stone> {
    if record.black == player {
        Some(Stone::Black)
    } else if record.white == player {
        Some(Stone::White)
    } else {
        None
    }
}

/// Replays `record` and searches each position where `colour` is to move, until one is proven
/// lost for it.
fn review_game(
    record: &GameRecord,
    colour: Stone,
    budget: Duration,
    config: &EngineConfig,
) -> Result<Verdict, String> {
    let mut board = Board::new(record.rows, record.cols).map_err(|e| e.to_string())?;
    let rule =
        Rule::for_board_with_k(record.rows, record.cols, Some(record.k)).map_err(|longest| {
            format!(
                "line length {} out of range (1 to {longest} on this board)",
                record.k
            )
        })?;
    let mut side = Stone::Black;
    for &(row, col) in &record.opening {
        board
            .play(Move::new(row, col), side)
            .map_err(|e| format!("opening stone {row} {col}: {e}"))?;
        side = side.opponent();
    }
    let mut nth = 0;
    let mut before = None;
    for (index, played) in record.moves.iter().enumerate() {
        let mv = Move::new(played.row, played.col);
        let ply = record.opening.len() + index + 1;
        if side == colour {
            nth += 1;
            let start = Instant::now();
            let decision = think(&board, rule, &Deadline::at(start, start + budget), config)
                .map_err(|e| format!("ply {ply}: {e}"))?;
            if decision.score < -WIN_THRESHOLD {
                return Ok(Verdict::ProvenLost { nth, ply, before });
            }
            before = Some(Searched {
                ply,
                played: mv,
                preferred: decision.mv,
                score: decision.score,
            });
        }
        board
            .play(mv, side)
            .map_err(|e| format!("move {mv} at ply {ply}: {e}"))?;
        side = side.opponent();
    }
    Ok(Verdict::NotProven)
}
