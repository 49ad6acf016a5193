//! Static evaluation from the incrementally maintained pattern values.
//!
//! Every empty cell carries, for each colour, the value of what that colour would make by playing
//! there (sum of its four line patterns plus a bonus for combinations such as four-three). The
//! position's score is the difference of the two colours' sums; the side to move gets a larger
//! share of its own potential because it acts first (a classical "tempo" weighting, as in the
//! pattern evaluators of Rapfi's and Embryo's early versions).

use super::position::{Colour, Position};

const OWN_WEIGHT: i32 = 6;
const OPP_WEIGHT: i32 = 5;

pub fn evaluate(pos: &Position, me: Colour) -> i32 {
    let own = pos.value_sum(me);
    let opp = pos.value_sum(1 - me);
    (own * OWN_WEIGHT - opp * OPP_WEIGHT) / 5
}
