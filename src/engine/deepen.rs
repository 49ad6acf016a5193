//! Iterative deepening, the one loop of v1 and v2 (the solver searches to the end and needs none):
//! search to depth 1, 2, 3 … while the clock allows, keep the last complete iteration's choice,
//! stop at a proven result, and trust a move of a cut-short iteration only when its search showed
//! it beats that choice: it completed with a better score (the searches order the previous best
//! first, so a move searched after it that scores better is a real improvement), or, in v2, it
//! failed high above the aspiration window around that choice's score.

use std::ops::RangeInclusive;
use std::time::Instant;

use super::time::Deadline;
use super::types::{is_mate, Score};

/// The choice of the deepest iteration so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice<M> {
    pub mv: M,
    pub score: Score,
    /// The depth of the last complete iteration (0 before any).
    pub depth: u32,
}

/// What one iteration found.
pub enum Iteration<M> {
    /// Every root move was searched: the best one and its score.
    Complete { mv: M, score: Score },
    /// The clock stopped the iteration; `improved` is a move whose search showed it beats the
    /// choice so far (completed with a better score, or failed high above it), if there was one.
    CutShort { improved: Option<(M, Score)> },
}

/// Runs `iteration` at each depth of `depths`, starting from the choice `start` (what to answer
/// when no iteration completes), until the range ends, an iteration is cut short, a result is
/// proven, or `deadline` says the next iteration is not worth starting.
pub fn deepen<M: Copy>(
    deadline: &Deadline,
    depths: RangeInclusive<u32>,
    start: Choice<M>,
    mut iteration: impl FnMut(u32, &Choice<M>) -> Iteration<M>,
) -> Choice<M> {
    let mut choice = start;
    for depth in depths {
        let started = Instant::now();
        match iteration(depth, &choice) {
            Iteration::Complete { mv, score } => {
                choice = Choice { mv, score, depth };
                if is_mate(score) || !deadline.worth_another_iteration(started.elapsed()) {
                    break;
                }
            }
            Iteration::CutShort { improved } => {
                if let Some((mv, score)) = improved {
                    choice.mv = mv;
                    choice.score = score;
                }
                break;
            }
        }
    }
    choice
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::types::mate_in;

    #[test]
    fn keeps_the_last_complete_choice_and_a_trusted_improvement_of_a_cut_short_one() {
        let start = Choice {
            mv: 0,
            score: 0,
            depth: 0,
        };
        let mut seen = Vec::new();
        let end = deepen(&Deadline::unlimited(), 1..=10, start, |depth, choice| {
            seen.push((depth, choice.mv));
            match depth {
                1 | 2 => Iteration::Complete {
                    mv: depth as usize,
                    score: 10,
                },
                _ => Iteration::CutShort {
                    improved: Some((7, 20)),
                },
            }
        });
        assert_eq!(seen, [(1, 0), (2, 1), (3, 2)]);
        assert_eq!(
            end,
            Choice {
                mv: 7,
                score: 20,
                depth: 2
            }
        );
        let proven = deepen(&Deadline::unlimited(), 1..=10, start, |depth, _| {
            Iteration::Complete {
                mv: depth as usize,
                score: if depth == 3 { mate_in(5) } else { 0 },
            }
        });
        assert_eq!(proven.depth, 3, "a proven result ends the deepening");
        let nothing = deepen(&Deadline::unlimited(), 1..=3, start, |_, _| {
            Iteration::CutShort { improved: None }
        });
        assert_eq!(nothing, start);
    }
}
