//! The search's tunable constants and the values of its evaluation and move-ordering formulas
//! (`eval_*`, `order_*`, see `v2/eval.rs`), one place for their names, defaults and ranges, so
//! that a tuner (`scripts/spsa.py`, docs/engine.md "sessions 17 to 19") can move them from the command line
//! (`--param NAME=VALUE`, a builtin player's `NAME=VALUE`) without a rebuild. The defaults are
//! the values the engine plays with; engine v1 ignores them.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// One tunable constant: its name on the command line, its default, the range a value must lie
/// in, and what it does.
pub struct ParamSpec {
    pub name: &'static str,
    pub default: f64,
    pub min: f64,
    pub max: f64,
    pub help: &'static str,
}

macro_rules! params {
    ($($field:ident: $default:expr, $min:expr, $max:expr, $help:expr;)*) => {
        /// Values of the tunable constants, by field; [`SearchParams::default`] plays as shipped.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct SearchParams {
            $(pub $field: f64,)*
        }

        impl Default for SearchParams {
            fn default() -> Self {
                SearchParams { $($field: $default,)* }
            }
        }

        /// Every tunable constant, in the order of [`SearchParams`]' fields.
        pub const PARAMS: &[ParamSpec] = &[
            $(ParamSpec {
                name: stringify!($field),
                default: $default,
                min: $min,
                max: $max,
                help: $help,
            },)*
        ];

        impl SearchParams {
            fn slot(&mut self, name: &str) -> Option<&mut f64> {
                match name {
                    $(stringify!($field) => Some(&mut self.$field),)*
                    _ => None,
                }
            }

            /// The values as `NAME=VALUE` pairs, in the order of [`PARAMS`].
            pub fn pairs(&self) -> Vec<(&'static str, f64)> {
                vec![$((stringify!($field), self.$field),)*]
            }
        }
    };
}

params! {
    reverse_futility_margin: 40.0, 0.0, 2000.0,
        "reverse futility pruning: evaluation margin above beta per ply of depth";
    reverse_futility_depth: 3.0, 0.0, 16.0,
        "reverse futility pruning: deepest node it applies to (plies, rounded)";
    lmr_base: 0.45, -2.0, 4.0,
        "late-move reduction: base + ln(depth) ln(move number) / divisor plies";
    lmr_divisor: 1.66, 0.5, 10.0,
        "late-move reduction: divisor of ln(depth) ln(move number)";
    lmr_first_move: 2.0, 1.0, 32.0,
        "late-move reduction: index of the first quiet move reduced (rounded)";
    quiet_limit_base: 1.9, 1.0, 64.0,
        "late-move pruning: quiet moves searched = base + slope * depth (twice at PV nodes)";
    quiet_limit_slope: 2.05, 0.0, 16.0,
        "late-move pruning: quiet moves added per ply of depth";
    move_count_base: 3.36, 1.0, 64.0,
        "move-count pruning of threats at non-PV nodes: base + depth^exponent moves";
    move_count_exponent: 1.49, 0.5, 3.0,
        "move-count pruning: exponent of depth";
    singular_depth: 6.0, 2.0, 64.0,
        "singular extension: shallowest node it is tried at (plies, rounded)";
    singular_margin: 178.0, 0.0, 2000.0,
        "singular extension: margin below the table's score per eight plies of depth";
    aspiration_window: 36.0, 1.0, 2000.0,
        "aspiration window's first half-width around the last iteration's score";
    killer_first: 78.0, 0.0, 50000.0,
        "ordering bonus of the first killer move";
    killer_second: 120.0, 0.0, 50000.0,
        "ordering bonus of the second killer move";
    quiescence_plies: 2.0, 0.0, 16.0,
        "plies a leaf facing an open three is searched beyond the nominal depth (rounded)";
    block_extension: 1.0, 0.0, 2.0,
        "plies given back to the forced block of a four (multiples of an eighth; 1: a four and its block cost one ply)";
    defence_reduction: 0.0, 0.0, 3.0,
        "plies taken off the first search of the third and later moves of a non-PV node that defends against an open three, but a four-three or better (multiples of an eighth; 0: off; at 1 ply level at 1 s over four sets, session 77)";
    lmr_deeper_margin: 0.0, 0.0, 2000.0,
        "a reduced move whose first search beats alpha by this plus 11 a ply of its reduction is searched again a ply deeper (0: off; Stockfish's and Rapfi's deeper re-search; session 81)";
    leaf_table: 0.0, 0.0, 1.0,
        "1: a leaf takes a stored result of at least a ply of search whose bound settles it, at any node (0: off; Rapfi's leaf search reads its table; session 82)";
    lagging_pv_reduction: 0.0, 0.0, 2.0,
        "plies taken off a PV node (not the root) per ply its table's move was stored shallower than the node's depth less one, at most 3.6 plies (0: off; Rapfi's reduction of a PV table move not chosen for some iterations, 0.28 there; session 82)";
    singular_extension: 1.0, 0.0, 3.0,
        "plies added to the table's move when the singular test finds it alone (multiples of an eighth)";
    shared_reduction: 1.0, 0.0, 3.0,
        "plies taken off the table's move when another move reaches its margin and it failed high (multiples of an eighth)";
    pv_before_relief: 1.0, 0.0, 3.0,
        "plies less of late-move reduction at a non-PV node that has been on the PV (multiples of an eighth)";
    raised_reduction: 1.0, 0.0, 3.0,
        "plies off the later moves of a PV node (depth 3 to 11) once a move raised alpha (multiples of an eighth)";
    history_malus: 0.5, 0.0, 4.0,
        "history: the moves searched before a cut lose this times the bonus of the move that cut";
    behind_limit_factor: 1.0, 0.25, 8.0,
        "quiet-move and move-count limits of a node whose static evaluation is below -behind_margin, times this (1: off; session 55)";
    behind_margin: 100.0, 0.0, 4000.0,
        "how far below zero a node's static evaluation must be for behind_limit_factor";
    probcut_depth: 5.0, 0.0, 64.0,
        "ProbCut: shallowest non-PV node where a shallow search of the first moves against beta + margin may cut (plies, rounded; 0: off)";
    probcut_margin: 100.0, 0.0, 4000.0,
        "ProbCut: margin above beta that the shallow search must reach";
    probcut_moves: 3.0, 1.0, 64.0,
        "ProbCut: first moves of the ordering tried (rounded)";
    probcut_reduction: 4.0, 1.0, 16.0,
        "ProbCut: plies less than the node's depth for the shallow search (rounded)";
    table_eval: 0.0, 0.0, 1.0,
        "reverse futility pruning: 1 takes the table's score for the evaluation where its bound is sharper (0: off; level over four sets at 1 s and two at 0.3 s, sessions 75 and 76)";
    root_reduction_from: 6.0, 1.0, 256.0,
        "index of the first quiet root move searched a ply shallower first (rounded)";
    vct_time_share: 0.1, 0.0, 0.9,
        "share of the budget the root VCT (the side to move's threat sequences) may use";
    vct_max_depth: 12.0, 2.0, 40.0,
        "root VCT: most attacker threats of a sequence (rounded)";
    search_time_share: 0.9, 0.3, 1.0,
        "share of the time left after the root VCT that the main search may use (the rest checks its move)";
    safety_vct_depth: 10.0, 2.0, 40.0,
        "check of the chosen move: most threats of the opponent's VCT against it (rounded)";
    threat_time_share: 0.15, 0.0, 0.9,
        "share of the time left after the root VCT for the opponent's VCT as if it were to move (0: not searched)";
    threatened_search_share: 0.6, 0.3, 1.0,
        "main search's share when the opponent has such a VCT (the rest checks the chosen move against it)";
    eval_b1: 2.165, 0.0, 2000.0,
        "evaluation formula: value of a cell's B1 line (one stone, one way to grow)";
    eval_f1: 0.5674, 0.0, 2000.0,
        "evaluation formula: value of a cell's F1 line";
    eval_b2: 3.401, 0.0, 2000.0,
        "evaluation formula: value of a cell's B2 line (a blocked two)";
    eval_f2: 11.34, 0.0, 2000.0,
        "evaluation formula: value of a cell's F2 line (an open two)";
    eval_b3: 10.72, 0.0, 2000.0,
        "evaluation formula: value of a cell's B3 line (makes a four)";
    eval_f3: 42.55, 0.0, 2000.0,
        "evaluation formula: value of a cell's F3 line (makes an open three)";
    eval_b4: 43.1, 0.0, 2000.0,
        "evaluation formula: value of a cell's B4 line (makes a four)";
    eval_f4: 157.0, 0.0, 4000.0,
        "evaluation formula: value of a cell's F4 line (makes an open four)";
    eval_win_next: 325.2, 0.0, 4000.0,
        "evaluation formula: bonus of a cell that makes an open four or two fours";
    eval_four_three: 160.1, 0.0, 4000.0,
        "evaluation formula: bonus of a cell that makes a four and an open three";
    eval_double_three: 78.57, 0.0, 4000.0,
        "evaluation formula: bonus of a cell that makes two open threes";
    eval_own_threat_ratio: 2.469, 0.25, 8.0,
        "evaluation formula: the side to move's cells of an open three or more, times this";
    eval_own_quiet_ratio: 0.9745, 0.25, 8.0,
        "evaluation formula: the side to move's other cells, times this";
    order_b1: 4.0, 0.0, 20000.0,
        "ordering formula: value of a B1 line the move makes (one stone, one way to grow)";
    order_f1: 12.0, 0.0, 20000.0,
        "ordering formula: value of an F1 line the move makes";
    order_b2: 20.0, 0.0, 20000.0,
        "ordering formula: value of a B2 line the move makes (a blocked two)";
    order_f2: 40.0, 0.0, 20000.0,
        "ordering formula: value of an F2 line the move makes (an open two)";
    order_b3: 56.0, 0.0, 20000.0,
        "ordering formula: value of a B3 line the move makes (a blocked three)";
    order_f3: 160.0, 0.0, 20000.0,
        "ordering formula: value of an F3 line the move makes (an open three)";
    order_b4: 180.0, 0.0, 20000.0,
        "ordering formula: value of a B4 line the move makes (a four)";
    order_f4: 560.0, 0.0, 20000.0,
        "ordering formula: value of an F4 line the move makes (an open four)";
    order_win_next: 1200.0, 0.0, 20000.0,
        "ordering formula: bonus of a move that makes an open four or two fours";
    order_four_three: 600.0, 0.0, 20000.0,
        "ordering formula: bonus of a move that makes a four and an open three";
    order_double_three: 320.0, 0.0, 20000.0,
        "ordering formula: bonus of a move that makes two open threes";
    order_block_ratio: 0.75, 0.0, 8.0,
        "ordering formula: what a move takes from the opponent, times this";
}

/// Why a `NAME=VALUE` was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    #[error("parameter {0:?} is not NAME=VALUE")]
    NotAPair(String),
    #[error("unknown parameter {name:?} (known: {known})")]
    Unknown { name: String, known: String },
    #[error("parameter {name}: {value:?} is not a number")]
    NotANumber { name: String, value: String },
    #[error("parameter {name}: {value} is outside {range}")]
    OutOfRange {
        name: String,
        value: String,
        range: String,
    },
}

impl SearchParams {
    /// Sets one constant by name, within its range.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), ParamError> {
        let pair = ParamPair::new(name, value)?;
        self.assign(&pair);
        Ok(())
    }

    fn assign(&mut self, pair: &ParamPair) {
        if let Some(slot) = self.slot(pair.name) {
            *slot = pair.value;
        }
    }

    /// Whether `name` is a tunable constant.
    pub fn is_known(name: &str) -> bool {
        PARAMS.iter().any(|spec| spec.name == name)
    }
}

/// One `NAME=VALUE` whose name is known and whose value lies in its range (what `--param` takes).
#[derive(Clone, Debug, PartialEq)]
pub struct ParamPair {
    name: &'static str,
    value: f64,
}

impl ParamPair {
    fn new(name: &str, value: &str) -> Result<ParamPair, ParamError> {
        let name = name.trim();
        let Some(spec) = PARAMS.iter().find(|spec| spec.name == name) else {
            return Err(ParamError::Unknown {
                name: name.to_string(),
                known: PARAMS
                    .iter()
                    .map(|spec| spec.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        let number: f64 = value
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| ParamError::NotANumber {
                name: name.to_string(),
                value: value.to_string(),
            })?;
        if !(spec.min..=spec.max).contains(&number) {
            return Err(ParamError::OutOfRange {
                name: name.to_string(),
                value: value.trim().to_string(),
                range: format!("{} to {}", spec.min, spec.max),
            });
        }
        Ok(ParamPair {
            name: spec.name,
            value: number,
        })
    }
}

impl FromStr for ParamPair {
    type Err = ParamError;

    fn from_str(pair: &str) -> Result<ParamPair, ParamError> {
        let (name, value) = pair
            .split_once('=')
            .ok_or_else(|| ParamError::NotAPair(pair.to_string()))?;
        ParamPair::new(name, value)
    }
}

/// The `--param` option of every front end that runs engine v2.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ParamArgs {
    /// Set one of the search's tunable constants, NAME=VALUE (repeat for several; `connect5
    /// params` lists them). For tuning and experiments: the defaults are the engine.
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<ParamPair>,
}

impl ParamArgs {
    /// The defaults with every `--param` applied in turn.
    pub fn search_params(&self) -> Arc<SearchParams> {
        let mut params = SearchParams::default();
        for pair in &self.params {
            params.assign(pair);
        }
        Arc::new(params)
    }
}

impl fmt::Display for SearchParams {
    /// The constants that differ from their defaults, as `NAME=VALUE` pairs (`defaults` if none).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let changed: Vec<String> = self
            .pairs()
            .into_iter()
            .zip(PARAMS)
            .filter(|((_, value), spec)| *value != spec.default)
            .map(|((name, value), _)| format!("{name}={value}"))
            .collect();
        if changed.is_empty() {
            write!(f, "defaults")
        } else {
            write!(f, "{}", changed.join(" "))
        }
    }
}

/// Every tunable constant, one a line: name, default, least and largest value (the first four
/// columns, separated by spaces, for scripts), then what it does.
pub fn table() -> String {
    let mut text = String::from("# name default min max  meaning\n");
    for spec in PARAMS {
        text.push_str(&format!(
            "{} {} {} {}  {}\n",
            spec.name, spec.default, spec.min, spec.max, spec.help
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spec_matches_its_field_and_default() {
        let defaults = SearchParams::default().pairs();
        assert_eq!(defaults.len(), PARAMS.len());
        for ((name, value), spec) in defaults.iter().zip(PARAMS) {
            assert_eq!(*name, spec.name);
            assert_eq!(*value, spec.default);
            assert!(
                spec.min <= spec.default && spec.default <= spec.max,
                "{name}"
            );
        }
    }

    /// What `--param` makes of these pairs, as the command line parses them.
    fn from_pairs(pairs: &[&str]) -> Result<SearchParams, ParamError> {
        let params = pairs
            .iter()
            .map(|pair| pair.parse())
            .collect::<Result<_, _>>()?;
        Ok(*ParamArgs { params }.search_params())
    }

    #[test]
    fn pairs_set_values_and_bad_ones_name_the_problem() {
        let params = from_pairs(&["lmr_divisor=2.5", " killer_first = 90"]).unwrap();
        assert_eq!(params.lmr_divisor, 2.5);
        assert_eq!(params.killer_first, 90.0);
        assert_eq!(params.to_string(), "lmr_divisor=2.5 killer_first=90");
        assert_eq!(SearchParams::default().to_string(), "defaults");
        assert!(matches!(
            from_pairs(&["nope=1"]),
            Err(ParamError::Unknown { .. })
        ));
        assert!(matches!(
            from_pairs(&["lmr_base"]),
            Err(ParamError::NotAPair(_))
        ));
        assert!(matches!(
            from_pairs(&["lmr_base=x"]),
            Err(ParamError::NotANumber { .. })
        ));
        assert!(matches!(
            from_pairs(&["lmr_base=NaN"]),
            Err(ParamError::NotANumber { .. })
        ));
        let err = from_pairs(&["aspiration_window=0"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "parameter aspiration_window: 0 is outside 1 to 2000"
        );
    }
}
