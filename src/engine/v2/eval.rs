//! Static evaluation from the incrementally maintained pattern values.
//!
//! Every empty cell carries, for each colour, the value of what that colour would make by playing
//! there (sum of its four line patterns plus a bonus for combinations such as four-three). The
//! position's score is the difference of the two colours' sums; the side to move's own potential
//! counts double, because it acts first and realises its threats before the opponent's (a
//! "tempo" weighting). The weight was chosen by matches against v1 (docs/engine.md): 100 games
//! each at 100 ms on 15x15 gave 62% for equal weights, 76% for 6:5, 78% for 8:5, 84.5% for 10:5,
//! 79% for 15:5 and 78% for 25:5.

use super::position::Position;
use crate::board::Stone;

const OWN_WEIGHT: i32 = 10;
const OPP_WEIGHT: i32 = 5;

pub fn evaluate(pos: &Position, me: Stone) -> i32 {
    let own = pos.value_sum(me);
    let opp = pos.value_sum(me.opponent());
    (own * OWN_WEIGHT - opp * OPP_WEIGHT) / 5
}
