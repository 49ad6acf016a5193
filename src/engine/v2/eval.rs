//! Static evaluation: learned values of the pattern combinations of the empty cells, kept
//! incrementally by the position, plus a learned value of which threat classes each side has.
//!
//! Every empty cell has, for each colour, a combination of four directional patterns (what that
//! colour would make by playing there). The side to move's cells count with the `own` table, the
//! opponent's with the `opp` table: the side to move acts first and realises its threats before
//! the opponent's, and the tables learn how much that is worth. The threat term sees
//! interactions the per-cell sum cannot (a four-three against an opponent with only threes). The
//! tables are `eval_weights.txt`, fitted by `connect5 tune` to a stronger engine's scores of
//! game positions (docs/engine.md, sessions 32 and 33) from the tables of a hand-set formula
//! whose values are tunable constants (`CellTables::from_formula`, tuned by SPSA), which still
//! move them (`--param eval_*`); the idea of per-combination tables and a threat-mask term is
//! Rapfi's classical evaluation (Dai et al., arXiv 2503.13178). The move ordering's
//! per-combination values are a formula of the same form (`order_*`), and live beside the
//! evaluation's in one [`CellTables`] per formula.

use std::sync::{Mutex, OnceLock};

use super::learned::{OPP, ORDER_OPP, ORDER_OWN, OWN, THREAT};
use super::pattern::{self, Class, Pattern, COMBINATIONS};
use super::position::Position;
use crate::board::Stone;
use crate::engine::params::SearchParams;

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

/// The per-combination values the position sums over its empty cells: `own` for the side to
/// move's cells, `opp` for the opponent's; and the move ordering's values of a cell, for what it
/// makes for the side to move (`order_own`) and what it takes from the opponent (`order_opp`).
pub struct CellTables {
    pub own: [i32; COMBINATIONS],
    pub opp: [i32; COMBINATIONS],
    pub order_own: [i32; COMBINATIONS],
    pub order_opp: [i32; COMBINATIONS],
}

/// The values of [`CellTables::from_formula`], from the `eval_*` and `order_*` tunable constants.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Formula {
    /// A line's value, by pattern from `B1` to `F4` (a five's is [`FIVE_VALUE`]).
    lines: [f64; 8],
    /// The bonuses of the win-next, four-three and double-three classes.
    bonuses: [f64; 3],
    /// The side to move's cells of an open three or more count this many times their value.
    own_threat_ratio: f64,
    /// ... and its other cells this many times.
    own_quiet_ratio: f64,
    /// The move ordering's line values from `B1` to `F4` (a five's is [`ORDER_FIVE_VALUE`]) and
    /// class bonuses, for what a move makes; what it takes from the opponent counts this ratio.
    order_lines: [f64; 8],
    order_bonuses: [f64; 3],
    order_block_ratio: f64,
}

/// A five's line is worth this in the formula (a cell that makes five is a proven result at the
/// side to move's nodes, so its value hardly matters).
const FIVE_VALUE: f64 = 800.0;
/// ... and this in the ordering (a five is played before any ordering; the block of one is the
/// only move).
const ORDER_FIVE_VALUE: f64 = 3200.0;

impl Formula {
    fn of(params: &SearchParams) -> Formula {
        Formula {
            lines: [
                params.eval_b1,
                params.eval_f1,
                params.eval_b2,
                params.eval_f2,
                params.eval_b3,
                params.eval_f3,
                params.eval_b4,
                params.eval_f4,
            ],
            bonuses: [
                params.eval_win_next,
                params.eval_four_three,
                params.eval_double_three,
            ],
            own_threat_ratio: params.eval_own_threat_ratio,
            own_quiet_ratio: params.eval_own_quiet_ratio,
            order_lines: [
                params.order_b1,
                params.order_f1,
                params.order_b2,
                params.order_f2,
                params.order_b3,
                params.order_f3,
                params.order_b4,
                params.order_f4,
            ],
            order_bonuses: [
                params.order_win_next,
                params.order_four_three,
                params.order_double_three,
            ],
            order_block_ratio: params.order_block_ratio,
        }
    }
}

impl CellTables {
    /// The tables of `eval_weights.txt`, as the engine was built.
    pub fn shipped() -> &'static CellTables {
        static SHIPPED: OnceLock<CellTables> = OnceLock::new();
        SHIPPED.get_or_init(|| CellTables {
            own: OWN,
            opp: OPP,
            order_own: ORDER_OWN,
            order_opp: ORDER_OPP,
        })
    }

    /// The tables a search with `params` evaluates and orders with: the shipped ones while the
    /// formulas' parameters (`eval_*`, `order_*`) are at their defaults, otherwise the shipped
    /// ones moved, cell by cell, by what the changed values change in the formula's tables
    /// (`from_formula`), so that a tuner's step in `eval_f2` moves the cells with an open two
    /// whether the shipped tables are the formula's or fitted ones. Built once per distinct
    /// formula and kept for the process (a tuner or a match tries a handful).
    pub fn for_params(params: &SearchParams) -> &'static CellTables {
        let wanted = Formula::of(params);
        let defaults = Formula::of(&SearchParams::default());
        if wanted == defaults {
            return CellTables::shipped();
        }
        static BUILT: Mutex<Vec<(Formula, &'static CellTables)>> = Mutex::new(Vec::new());
        let mut built = BUILT
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(&(_, tables)) = built.iter().find(|(f, _)| *f == wanted) {
            return tables;
        }
        let tables: &'static CellTables = Box::leak(Box::new(CellTables::shipped().moved_by(
            &CellTables::from_formula(&defaults),
            &CellTables::from_formula(&wanted),
        )));
        built.push((wanted, tables));
        tables
    }

    /// These tables plus, cell by cell, `to` − `from` (the formula's tables at two settings).
    fn moved_by(&self, from: &FormulaTables, to: &FormulaTables) -> CellTables {
        let moved =
            |base: &[i32; COMBINATIONS], from: &[f64; COMBINATIONS], to: &[f64; COMBINATIONS]| {
                std::array::from_fn(|c| base[c] + (to[c] - from[c]).round() as i32)
            };
        CellTables {
            own: moved(&self.own, &from.own, &to.own),
            opp: moved(&self.opp, &from.opp, &to.opp),
            order_own: moved(&self.order_own, &from.order_own, &to.order_own),
            order_opp: moved(&self.order_opp, &from.order_opp, &to.order_opp),
        }
    }

    /// The hand-set evaluation as a formula (how the tables were first made, and how the
    /// ordering's still are): a cell is worth the sum of its four lines' values plus the bonus
    /// of its class, to the opponent as is and to the side to move times a ratio, larger on the
    /// cells of a three or more (it plays them first). The ordering's tables are the same form
    /// with values of their own: a move scores what it makes for the side to move, and what it
    /// takes from the opponent times a ratio. Unrounded: [`CellTables::moved_by`] takes
    /// differences.
    fn from_formula(f: &Formula) -> FormulaTables {
        let mut tables = FormulaTables {
            own: [0.0; COMBINATIONS],
            opp: [0.0; COMBINATIONS],
            order_own: [0.0; COMBINATIONS],
            order_opp: [0.0; COMBINATIONS],
        };
        for c in 0..COMBINATIONS {
            let Some(codes) = pattern::combination_patterns(c) else {
                continue;
            };
            let class = pattern::combination_class(codes);
            let bonus = |bonuses: [f64; 3]| match class {
                Class::WinNext => bonuses[0],
                Class::FourThree => bonuses[1],
                Class::DoubleThree => bonuses[2],
                _ => 0.0,
            };
            let lines = |values: &[f64; 8], five: f64| {
                codes
                    .iter()
                    .map(|&p| match p {
                        Pattern::Dead => 0.0,
                        Pattern::F5 => five,
                        other => values[other as usize - 1],
                    })
                    .sum::<f64>()
            };
            let value = lines(&f.lines, FIVE_VALUE) + bonus(f.bonuses);
            let ratio = if class >= Class::Three {
                f.own_threat_ratio
            } else {
                f.own_quiet_ratio
            };
            tables.own[c] = value * ratio;
            tables.opp[c] = value;
            let order = lines(&f.order_lines, ORDER_FIVE_VALUE) + bonus(f.order_bonuses);
            tables.order_own[c] = order;
            tables.order_opp[c] = order * f.order_block_ratio;
        }
        tables
    }
}

/// [`CellTables`] as the formula makes them, before rounding.
struct FormulaTables {
    own: [f64; COMBINATIONS],
    opp: [f64; COMBINATIONS],
    order_own: [f64; COMBINATIONS],
    order_opp: [f64; COMBINATIONS],
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both families of tables are fitted (`connect5 tune`, `connect5 tune --ordering`) and only
    /// moved by their formulas: at the formulas' defaults a search plays with the shipped ones.
    #[test]
    fn the_formulas_at_their_defaults_give_the_shipped_tables() {
        assert!(std::ptr::eq(
            CellTables::for_params(&SearchParams::default()),
            CellTables::shipped()
        ));
    }

    #[test]
    fn a_formula_parameter_moves_its_cells_only() {
        let defaults = SearchParams::default();
        // Far more than the tables' rounding, so that every F2 cell moves.
        let params = SearchParams {
            eval_f2: defaults.eval_f2 + 5.0,
            ..defaults
        };
        let tables = CellTables::for_params(&params);
        let shipped = CellTables::shipped();
        let f2 = |c: usize| {
            pattern::combination_patterns(c).is_some_and(|codes| codes.contains(&Pattern::F2))
        };
        for c in 0..COMBINATIONS {
            assert_eq!(tables.opp[c] != shipped.opp[c], f2(c), "combination {c}");
            assert_eq!(tables.own[c] != shipped.own[c], f2(c), "combination {c}");
            assert_eq!(tables.order_own[c], shipped.order_own[c], "combination {c}");
        }
        assert!(std::ptr::eq(tables, CellTables::for_params(&params)));
    }
}
