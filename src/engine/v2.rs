//! Engine v2: placeholder, answers with v1 until the tournament engine lands.

use super::{Deadline, Decision, EngineConfig};
use crate::board::{Board, Rule, Stone};

pub fn search(
    board: &Board,
    rule: Rule,
    side: Stone,
    deadline: &Deadline,
    config: &EngineConfig,
) -> Decision {
    super::v1::search(board, rule, side, deadline, config)
}
