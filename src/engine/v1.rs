//! Engine v1: placeholder.

use super::{Deadline, Decision, EngineConfig};
use crate::board::{Board, Rule, Stone};

pub fn search(
    board: &Board,
    _rule: Rule,
    _side: Stone,
    _deadline: &Deadline,
    _config: &EngineConfig,
) -> Decision {
    let mv = board
        .empty_cells()
        .next()
        .unwrap_or(crate::board::Move::new(0, 0));
    Decision {
        mv,
        score: 0,
        depth: 0,
        nodes: 0,
        pv: vec![mv],
    }
}
