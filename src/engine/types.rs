//! The words every search of the engine speaks (v1, v2, the exact solver): scores and the bounds
//! a transposition table keeps them with. The colour of a stone is [`crate::board::Stone`], the
//! one colour type of the crate; the v2 search's line patterns are in `v2/pattern.rs`.
//!
//! Scores follow the usual convention of game-tree search (Rapfi's `core/types.h` calls it
//! `Value`): from the side to move's point of view, a proven win in `n` plies is
//! [`mate_in`]`(n)`, just below [`WIN`], so the quickest win and the slowest loss are preferred;
//! anything closer to zero is a heuristic evaluation.

/// A search score, from the side to move's point of view.
pub type Score = i32;

/// The score of a win on the spot; a win in `n` plies scores `WIN - n`.
pub const WIN: Score = 1_000_000;
/// Scores beyond this magnitude are proven wins or losses, counted in plies from `WIN`.
pub const WIN_THRESHOLD: Score = WIN - 10_000;
/// Above every score a search returns: the open window's edges.
pub const INFINITE: Score = WIN + 1;

/// The score of a win `plies` plies from the node scored (the winning move counts as one).
pub const fn mate_in(plies: i32) -> Score {
    WIN - plies
}

/// The score of a loss `plies` plies from the node scored.
pub const fn mated_in(plies: i32) -> Score {
    -(WIN - plies)
}

/// Whether `score` is a proven win or loss rather than an evaluation.
pub const fn is_mate(score: Score) -> bool {
    score > WIN_THRESHOLD || score < -WIN_THRESHOLD
}

/// Plies to the end of a proven game: positive for a win, negative for a loss; `None` for an
/// evaluation.
pub const fn mate_distance(score: Score) -> Option<i32> {
    if score > WIN_THRESHOLD {
        Some(WIN - score)
    } else if score < -WIN_THRESHOLD {
        Some(-(WIN + score))
    } else {
        None
    }
}

/// A score as a transposition table keeps it: a proven win or loss counted from the node where it
/// is stored rather than from the root, so that it stays right when the same position is reached
/// at another ply.
pub const fn score_to_table(score: Score, ply: usize) -> Score {
    if score > WIN_THRESHOLD {
        score + ply as i32
    } else if score < -WIN_THRESHOLD {
        score - ply as i32
    } else {
        score
    }
}

/// The inverse of [`score_to_table`] for a node at `ply`.
pub const fn score_from_table(score: Score, ply: usize) -> Score {
    if score > WIN_THRESHOLD {
        score - ply as i32
    } else if score < -WIN_THRESHOLD {
        score + ply as i32
    } else {
        score
    }
}

/// What a stored score says about the position's true value. The discriminants are what a
/// packed table entry keeps (0 marks an empty slot).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Bound {
    /// The true value.
    Exact = 1,
    /// At least the score (the search failed high: a move reached beta).
    Lower = 2,
    /// At most the score (every move failed low).
    Upper = 3,
}

impl Bound {
    /// The bound of a search's best score, given the window it was searched with.
    pub const fn of(best: Score, alpha: Score, beta: Score) -> Bound {
        if best >= beta {
            Bound::Lower
        } else if best > alpha {
            Bound::Exact
        } else {
            Bound::Upper
        }
    }

    /// Whether a stored score with this bound settles a node searched with `(alpha, beta)`.
    pub const fn cuts(self, score: Score, alpha: Score, beta: Score) -> bool {
        match self {
            Bound::Exact => true,
            Bound::Lower => score >= beta,
            Bound::Upper => score <= alpha,
        }
    }

    /// The bound a packed entry holds; `None` for an empty slot (or a value no bound has).
    pub const fn from_packed(bits: u8) -> Option<Bound> {
        match bits {
            1 => Some(Bound::Exact),
            2 => Some(Bound::Lower),
            3 => Some(Bound::Upper),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mate_scores_round_trip_through_the_table_at_any_ply() {
        for plies in [1, 2, 7, 99] {
            for score in [mate_in(plies), mated_in(plies), 0, 1234, -1234] {
                for ply in [0usize, 3, 60] {
                    assert_eq!(score_from_table(score_to_table(score, ply), ply), score);
                }
            }
            assert!(is_mate(mate_in(plies)) && is_mate(mated_in(plies)));
            assert_eq!(mate_distance(mate_in(plies)), Some(plies));
            assert_eq!(mate_distance(mated_in(plies)), Some(-plies));
        }
        assert!(!is_mate(WIN_THRESHOLD) && mate_distance(-WIN_THRESHOLD).is_none());
        // A win found 3 plies below a node at ply 5 is a win in 8 from the root, in 3 from there.
        assert_eq!(score_to_table(mate_in(8), 5), mate_in(3));
    }

    #[test]
    fn bounds_classify_and_cut_as_their_window_says() {
        assert_eq!(Bound::of(50, 10, 40), Bound::Lower);
        assert_eq!(Bound::of(20, 10, 40), Bound::Exact);
        assert_eq!(Bound::of(10, 10, 40), Bound::Upper);
        assert!(Bound::Lower.cuts(50, 10, 40) && !Bound::Lower.cuts(30, 10, 40));
        assert!(Bound::Upper.cuts(5, 10, 40) && !Bound::Upper.cuts(30, 10, 40));
        assert!(Bound::Exact.cuts(30, 10, 40));
        for bound in [Bound::Exact, Bound::Lower, Bound::Upper] {
            assert_eq!(Bound::from_packed(bound as u8), Some(bound));
        }
        assert_eq!(Bound::from_packed(0), None);
    }
}
