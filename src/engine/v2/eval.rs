//! Static evaluation: learned values of the pattern combinations of the empty cells, kept
//! incrementally by the position, plus a learned value of which threat classes each side has.
//!
//! Every empty cell has, for each colour, a combination of four directional patterns (what that
//! colour would make by playing there). The side to move's cells count with the `own` table, the
//! opponent's with the `opp` table: the side to move acts first and realises its threats before
//! the opponent's, and the tables learn how much that is worth. The threat term sees
//! interactions the per-cell sum cannot (a four-three against an opponent with only threes). The
//! tables are `eval_weights.txt`, fitted by `connect5 tune` to game results (docs/engine.md); the
//! idea of per-combination tables and a threat-mask term is Rapfi's classical evaluation (Dai et
//! al., arXiv 2503.13178).

use super::pattern::Class;
use super::position::Position;
use crate::board::Stone;

use super::learned::THREAT;

/// The classes whose presence the threat term sees, one bit each, per side.
pub const THREAT_CLASSES: [Class; 5] = [
    Class::Three,
    Class::DoubleThree,
    Class::Four,
    Class::FourThree,
    Class::WinNext,
];

/// Bits 0-4: which [`THREAT_CLASSES`] `me` has somewhere; bits 5-9: the opponent's.
pub fn threat_mask(pos: &Position, me: Stone) -> usize {
    let bits = |colour: Stone| {
        THREAT_CLASSES
            .iter()
            .enumerate()
            .map(|(i, &class)| usize::from(pos.count(colour, class) > 0) << i)
            .sum::<usize>()
    };
    bits(me) | bits(me.opponent()) << THREAT_CLASSES.len()
}

pub fn evaluate(pos: &Position, me: Stone) -> i32 {
    pos.own_sum(me) - pos.opp_sum(me.opponent()) + THREAT[threat_mask(pos, me)]
}
