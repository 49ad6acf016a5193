//! Exact solver for small boards (3×3 morpion, 4×4 …). Placeholder until implemented.

use super::{Deadline, Decision};
use crate::board::{Board, Rule, Stone};

/// Solves the position exactly when the board is small enough; `None` hands it to the search.
pub fn solve_small(
    _board: &Board,
    _rule: Rule,
    _side: Stone,
    _deadline: &Deadline,
) -> Option<Decision> {
    None
}
