//! `connect5 review`: where were the games a player lost already lost? Replays them from a match's
//! JSON summary and searches every position the player faced, with far more time than the match
//! gave, until one is proven lost. A game proven lost at the player's first move was lost by the
//! opening; one proven lost later was lost by a move the long search would not have played, or by
//! an attack deeper than even the long search sees before it lands.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use connect5::board::{Move, Stone};
use connect5::engine::{think, Deadline, EngineConfig, EngineKind, WIN_THRESHOLD};
use connect5::referee::{
    load_summary, GameRecord, Outcome, ReplayedMove, SummaryGame, Termination,
};

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
    crate::command_status("review", review(&args))
}

fn review(args: &ReviewArgs) -> Result<(), String> {
    let summary = load_summary(&args.file)?;
    let reviewer = Reviewer {
        player: summary.player_named(args.player.as_deref())?,
        budget: Duration::from_millis(args.time),
        config: EngineConfig {
            kind: args.engine,
            hash_bytes: args.hash.saturating_mul(1 << 20),
            max_depth: None,
            ..EngineConfig::default()
        },
    };
    let mut tally = LossTally::default();
    for game in &summary.games {
        if let Some(colour) = reviewer.colour_that_lost(&game.record) {
            let review = reviewer.review_loss(game, colour);
            tally.count(colour, review);
        }
    }
    println!(
        "{}",
        tally.summary(&reviewer.player, summary.games.len(), args.time)
    );
    if tally.unreplayable > 0 {
        return Err(format!(
            "{} of the lost games could not be replayed (see above)",
            tally.unreplayable
        ));
    }
    Ok(())
}

/// The player `--player` names, or the first player, checked to be in the match.
/// The reviewed player and the search that reviews its losses.
struct Reviewer {
    player: String,
    budget: Duration,
    config: EngineConfig,
}

/// What became of one lost game.
enum LossReview {
    /// Lost by a fault (time, crash, illegal move …) rather than a line: nothing to search.
    ByFault,
    Reviewed(Verdict),
    /// The record could not be replayed.
    Unreplayable,
}

impl Reviewer {
    /// The colour the player had in a game it lost.
    fn colour_that_lost(&self, record: &GameRecord) -> Option<Stone> {
        let colour = colour_of(record, &self.player)?;
        (record.outcome == Outcome::win_for(colour.opponent())).then_some(colour)
    }

    /// Reviews one lost game and prints a line about it.
    fn review_loss(&self, game: &SummaryGame, colour: Stone) -> LossReview {
        let record = &game.record;
        let heading = format!(
            "game {}: {} ({}) lost at ply {}",
            game.game,
            self.player,
            colour.name(),
            record.opening.len() + record.moves.len()
        );
        if record.termination != Termination::Line {
            println!(
                "{heading} by {} ({}): not reviewed",
                record.termination.name(),
                record.reason
            );
            return LossReview::ByFault;
        }
        match review_game(record, colour, self.budget, &self.config) {
            Ok(verdict) => {
                println!("{heading}: {}", verdict.describe());
                LossReview::Reviewed(verdict)
            }
            Err(error) => {
                // One broken record should not cost the review of the others.
                eprintln!("connect5 review: game {}: {error}", game.game);
                LossReview::Unreplayable
            }
        }
    }
}

impl Verdict {
    /// What the long searches found, as the end of a game's line.
    fn describe(&self) -> String {
        match self {
            Verdict::ProvenLost { nth: 1, ply, .. } => {
                format!("proven lost from its first move (ply {ply}), the opening's doing")
            }
            Verdict::ProvenLost { nth, ply, before } => {
                let proven = format!("proven lost from its move {nth} (ply {ply})");
                match before {
                    Some(before) => format!("{proven}; {}", before.describe()),
                    None => proven,
                }
            }
            Verdict::NotProven => "no position it faced proven lost".to_string(),
        }
    }
}

impl Searched {
    /// The player's move beside the long search's.
    fn describe(&self) -> String {
        let Searched {
            ply,
            played,
            preferred,
            score,
        } = self;
        if played == preferred {
            format!("at ply {ply} it played {played}, as the long search does (score {score})")
        } else {
            format!(
                "at ply {ply} it played {played}, the long search plays {preferred} (score {score})"
            )
        }
    }
}

/// The player's losses, by what the review made of them.
#[derive(Default)]
struct LossTally {
    lost: usize,
    lost_as_white: usize,
    by_fault: usize,
    first_move: usize,
    /// The player's move number from which each of the other proven losses was lost.
    later: Vec<usize>,
    not_proven: usize,
    unreplayable: usize,
}

impl LossTally {
    fn count(&mut self, colour: Stone, review: LossReview) {
        self.lost += 1;
        self.lost_as_white += usize::from(colour == Stone::White);
        match review {
            LossReview::ByFault => self.by_fault += 1,
            LossReview::Unreplayable => self.unreplayable += 1,
            LossReview::Reviewed(Verdict::ProvenLost { nth: 1, .. }) => self.first_move += 1,
            LossReview::Reviewed(Verdict::ProvenLost { nth, .. }) => self.later.push(nth),
            LossReview::Reviewed(Verdict::NotProven) => self.not_proven += 1,
        }
    }

    /// The closing line.
    fn summary(&self, player: &str, games: usize, time_ms: u64) -> String {
        let mut later = self.later.clone();
        later.sort_unstable();
        let later_moves = if later.is_empty() {
            String::new()
        } else {
            let moves: Vec<String> = later.iter().map(usize::to_string).collect();
            format!(" (at its move {})", moves.join(", "))
        };
        let unreplayable = if self.unreplayable > 0 {
            format!(", {} not replayable", self.unreplayable)
        } else {
            String::new()
        };
        format!(
            "{player} lost {} of {games} games ({} as white), reviewed at {time_ms} ms a position: \
             {} proven lost from its first move, {} later{later_moves}, {} never proven lost, \
             {} lost by a fault{unreplayable}",
            self.lost,
            self.lost_as_white,
            self.first_move,
            later.len(),
            self.not_proven,
            self.by_fault,
        )
    }
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
    let rule = record.rule()?;
    let mut nth = 0;
    let mut before = None;
    for ReplayedMove {
        ply,
        board,
        side,
        played,
    } in record.replay()?
    {
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
                played,
                preferred: decision.mv,
                score: decision.score,
            });
        }
    }
    Ok(Verdict::NotProven)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closing_line_counts_every_kind_of_loss() {
        let mut tally = LossTally::default();
        let proven = |nth| Verdict::ProvenLost {
            nth,
            ply: 9,
            before: None,
        };
        tally.count(Stone::Black, LossReview::Reviewed(proven(1)));
        tally.count(Stone::White, LossReview::Reviewed(proven(4)));
        tally.count(Stone::White, LossReview::Reviewed(proven(2)));
        tally.count(Stone::Black, LossReview::Reviewed(Verdict::NotProven));
        tally.count(Stone::Black, LossReview::ByFault);
        tally.count(Stone::White, LossReview::Unreplayable);
        assert_eq!(
            tally.summary("mine", 10, 500),
            "mine lost 6 of 10 games (3 as white), reviewed at 500 ms a position: 1 proven lost \
             from its first move, 2 later (at its move 2, 4), 1 never proven lost, 1 lost by a \
             fault, 1 not replayable"
        );
        assert_eq!(
            LossTally::default().summary("mine", 2, 500),
            "mine lost 0 of 2 games (0 as white), reviewed at 500 ms a position: 0 proven lost \
             from its first move, 0 later, 0 never proven lost, 0 lost by a fault"
        );
    }

    #[test]
    fn a_later_loss_names_the_move_before_it() {
        let searched = |played, preferred| Searched {
            ply: 8,
            played,
            preferred,
            score: -40,
        };
        let verdict = Verdict::ProvenLost {
            nth: 3,
            ply: 10,
            before: Some(searched(Move::new(1, 2), Move::new(3, 4))),
        };
        assert_eq!(
            verdict.describe(),
            "proven lost from its move 3 (ply 10); at ply 8 it played 1 2, the long search plays \
             3 4 (score -40)"
        );
        assert_eq!(
            searched(Move::new(1, 2), Move::new(1, 2)).describe(),
            "at ply 8 it played 1 2, as the long search does (score -40)"
        );
    }
}
