//! Fitting the evaluation's tables to game results: logistic regression of the evaluation against
//! the outcome, the method chess engines call Texel tuning (Peter Österlund's description for
//! Texel, 2014) and Rapfi fits its classical tables with (Dai et al., arXiv 2503.13178).
//!
//! The evaluation is linear in its tables: the side to move's cells add `own[c]` per cell of
//! combination `c`, the opponent's subtract `opp[c]`, and one `threat[mask]` is added. So a
//! position is a sparse feature vector, and the predicted score of the side to move is
//! `sigmoid(eval / scale)`. The fit minimises the cross-entropy against the results with Adam
//! (Kingma and Ba, 2015) on full batches, with an L2 pull towards the starting tables so that
//! combinations seen rarely keep their hand-set values.
//!
//! The targets may also be the scores of the engine's own searches of the positions, as
//! expectations under the same logistic (`search_label`): the static evaluation is then fitted to
//! what a search of a few plies sees from the position (the way NNUE evaluations are trained on
//! search scores, and KnightCap's TD-leaf learned from them: Baxter, Tridgell and Weaver, 1998).

use super::eval::{threat_mask, CellTables};
use super::learned::THREAT;
use super::movegen::table_order_score;
use super::pattern::{self, Class, Pattern, COMBINATIONS};
use super::position::Position;
use super::search::{RootResult, Searcher, TreeSample, CHECK_EVERY};
use crate::board::{Board, Move, Rule, Stone};
use crate::engine::params::SearchParams;
use crate::engine::time::{Deadline, SearchClock};
use crate::engine::tt::Tt;

/// What the evaluation reads of one position, from the side to move's point of view.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalFeatures {
    /// (combination, how many of the side to move's empty cells have it).
    pub own: Vec<(u16, u16)>,
    /// The same for the opponent's cells.
    pub opp: Vec<(u16, u16)>,
    pub threat: u16,
}

/// Which positions a fit of the evaluation reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FitPositions {
    /// Every position where the static evaluation decides.
    All,
    /// Only those where neither side can make a four (no three on the board): Texel tuning fits
    /// on quiet positions, where no tactic is pending and the static evaluation alone judges (a
    /// position whose next moves are forced says more about the tactic than about the tables).
    Quiet,
    /// Only those where the side to move faces an open three (the opponent has a cell that makes
    /// an open four or two fours): the leaves the search's quiescence searches on instead of
    /// evaluating, which an evaluation must judge to replace it.
    FacingOpenThree,
}

/// The features of a position where the static evaluation is what decides (`None` where the
/// search's rules do: a five or an open four to play, a five to block; or no side to move, or a
/// rule the pattern tables do not cover; or where `positions` leaves it out).
pub fn eval_features(board: &Board, rule: Rule, positions: FitPositions) -> Option<EvalFeatures> {
    let (pos, me) = undecided_position(board, rule)?;
    let kept = match positions {
        FitPositions::All => true,
        FitPositions::Quiet => !a_four_can_be_made(&pos, me),
        FitPositions::FacingOpenThree => pos.count(me.opponent(), Class::WinNext) > 0,
    };
    kept.then(|| features_of(&pos, me))
}

/// Whether either side has a cell that makes a four (a three on the board): positions where
/// a tactic is pending, left out of the fits on quiet positions.
fn a_four_can_be_made(pos: &Position, me: Stone) -> bool {
    [me, me.opponent()]
        .iter()
        .any(|&c| pos.count_at_least(c, Class::Four) > 0)
}

/// What the evaluation of `pos` for `me` to move reads.
fn features_of(pos: &Position, me: Stone) -> EvalFeatures {
    let sparse = |counts: Vec<u32>| {
        counts
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n > 0)
            .map(|(c, &n)| (c as u16, n.min(u16::MAX as u32) as u16))
            .collect()
    };
    EvalFeatures {
        own: sparse(pos.combination_counts(me)),
        opp: sparse(pos.combination_counts(me.opponent())),
        threat: threat_mask(pos, me) as u16,
    }
}

/// The position of `board` and its side to move (`None` where the rule or the stone counts
/// leave it without patterns or side to move).
fn position_of(board: &Board, rule: Rule) -> Option<(Position, Stone)> {
    let table = pattern::table_for(rule.k, rule.overline_wins)?;
    let me = board.side_to_move().ok()?;
    Some((Position::new(board, table), me))
}

/// The position and its side to move, unless the search's rules decide it without the
/// evaluation (a five or an open four to play, a five to block) or the rule or the stone counts
/// leave it without patterns or side to move.
fn undecided_position(board: &Board, rule: Rule) -> Option<(Position, Stone)> {
    let (pos, me) = position_of(board, rule)?;
    let decided =
        pos.count_at_least(me, Class::WinNext) > 0 || pos.count(me.opponent(), Class::Win) > 0;
    (!decided).then_some((pos, me))
}

/// Transposition-table bytes of one labelling search: a fixed-depth search of a few plies fills
/// a few megabytes, and labelling runs thousands of them.
const LABEL_TABLE_BYTES: usize = 4 << 20;

/// A main search of `depth` plies for the side to move of `board` (the root's threat searches
/// and safety check left out: what the search itself sees from this position), with the
/// positions of its tree sampled one node in `tree_every` where given. `None` where
/// [`eval_features`] has none. Deterministic: no clock, a fresh table.
fn fixed_depth_search(
    board: &Board,
    rule: Rule,
    depth: u32,
    tree_every: Option<u64>,
) -> Option<(RootResult, Move, Vec<Board>)> {
    let (pos, me) = undecided_position(board, rule)?;
    let mut searcher = Searcher::new(pos, Tt::new(LABEL_TABLE_BYTES), &SearchParams::default());
    searcher.tree_sample = tree_every.map(TreeSample::every);
    let mut root = Vec::new();
    searcher.root_moves(me, &mut root);
    if root.is_empty() {
        return None;
    }
    if tree_every.is_some() && root.len() == 1 {
        // A forced move (a block): the tree below it is its reply's, which the game roots next.
        let result = RootResult::before_search(&root);
        return Some((result, searcher.pos.move_of(result.cell), Vec::new()));
    }
    let mut clock = SearchClock::new(Deadline::unlimited(), CHECK_EVERY);
    let from = (RootResult::before_search(&root), depth);
    let result = searcher.iterate(&mut clock, me, &mut root, from, None);
    let tree = searcher
        .tree_sample
        .take()
        .map_or_else(Vec::new, |sample| sample.boards);
    Some((result, searcher.pos.move_of(result.cell), tree))
}

/// The score a main search of `depth` plies gives the side to move of `board`: a label of the
/// evaluation's fit, in its units (a found win is a mate score).
pub fn search_label(board: &Board, rule: Rule, depth: u32) -> Option<i32> {
    fixed_depth_search(board, rule, depth, None).map(|(result, _, _)| result.score)
}

/// The move a main search of `depth` plies plays for the side to move of `board`: a label of
/// the move ordering's fit.
pub fn search_move(board: &Board, rule: Rule, depth: u32) -> Option<Move> {
    fixed_depth_search(board, rule, depth, None).map(|(_, mv, _)| mv)
}

/// Positions where a search needs its move ordering: one in `every` of the nodes of a main
/// search of `depth` plies from `board` that choose among all their moves (no threat to
/// answer) with two plies or more to go, as often as the search visits them.
pub fn search_tree_positions(board: &Board, rule: Rule, depth: u32, every: u64) -> Vec<Board> {
    fixed_depth_search(board, rule, depth, Some(every)).map_or_else(Vec::new, |(_, _, tree)| tree)
}

/// A position and the result of its game for the side to move (1 won, 0.5 drawn, 0 lost).
#[derive(Clone, Debug)]
pub struct Sample {
    pub features: EvalFeatures,
    pub result: f64,
}

/// The evaluation's tables as the fit moves them.
#[derive(Clone, Debug, PartialEq)]
pub struct Weights {
    pub own: Vec<f64>,
    pub opp: Vec<f64>,
    pub threat: Vec<f64>,
}

impl Weights {
    /// The tables the engine was built with.
    pub fn current() -> Weights {
        Weights::of_tables(CellTables::shipped())
    }

    /// The tables a search with `params` evaluates with (`CellTables::for_params`: the shipped
    /// ones moved by the formula's changed `eval_*` values; the threat term as shipped): what
    /// `connect5 params --eval-table` writes.
    pub fn of_params(params: &SearchParams) -> Weights {
        Weights::of_tables(CellTables::for_params(params))
    }

    fn of_tables(tables: &CellTables) -> Weights {
        Weights {
            own: floats(&tables.own),
            opp: floats(&tables.opp),
            threat: floats(&THREAT),
        }
    }

    pub fn evaluate(&self, features: &EvalFeatures) -> f64 {
        let own: f64 = features
            .own
            .iter()
            .map(|&(c, n)| self.own[c as usize] * f64::from(n))
            .sum();
        let opp: f64 = features
            .opp
            .iter()
            .map(|&(c, n)| self.opp[c as usize] * f64::from(n))
            .sum();
        own - opp + self.threat[features.threat as usize]
    }

    fn len(&self) -> usize {
        self.own.len() + self.opp.len() + self.threat.len()
    }

    /// Adds `slope` times the derivative of [`Weights::evaluate`] of `features` to `gradient`,
    /// laid out as [`Weights::flat`].
    fn add_slope(gradient: &mut [f64], features: &EvalFeatures, slope: f64) {
        for &(c, count) in &features.own {
            gradient[c as usize] += slope * f64::from(count);
        }
        for &(c, count) in &features.opp {
            gradient[COMBINATIONS + c as usize] -= slope * f64::from(count);
        }
        gradient[2 * COMBINATIONS + features.threat as usize] += slope;
    }

    fn flat(&self) -> Vec<f64> {
        [&self.own[..], &self.opp[..], &self.threat[..]].concat()
    }

    fn from_flat(flat: &[f64]) -> Weights {
        let (own, rest) = flat.split_at(COMBINATIONS);
        let (opp, threat) = rest.split_at(COMBINATIONS);
        Weights {
            own: own.to_vec(),
            opp: opp.to_vec(),
            threat: threat.to_vec(),
        }
    }

    /// The tables in the form of `eval_weights.txt` (rounded to integers), with `header` and
    /// then what the lines mean as comment lines on top.
    pub fn to_text(&self, header: &str) -> String {
        tables_text(header, EVAL_FILE_FORMAT, &self.own, &self.opp, &self.threat)
    }
}

/// The engine's integer table as the fits' real numbers.
fn floats(table: &[i32]) -> Vec<f64> {
    table.iter().map(|&v| f64::from(v)).collect()
}

/// Per-combination tables (and threat values, written when not 0) in the form build.rs reads,
/// rounded to integers, under `header` and `format` (what the lines mean) as comment lines.
fn tables_text(header: &str, format: &str, own: &[f64], opp: &[f64], threat: &[f64]) -> String {
    let mut text: String = format!("{header}\n\n{format}")
        .lines()
        .map(|l| format!("{}\n", format!("# {l}").trim_end()))
        .collect();
    for c in 0..COMBINATIONS {
        let names = pattern::combination_patterns(c)
            .map(|p| p.map(pattern_name).join(" "))
            .unwrap_or_default();
        text += &format!(
            "combination {c} {names} own {} opp {}\n",
            own[c].round() as i64,
            opp[c].round() as i64
        );
    }
    for (mask, &value) in threat.iter().enumerate() {
        if value.round() != 0.0 {
            text += &format!("threat {mask} {}\n", value.round() as i64);
        }
    }
    text
}

const EVAL_FILE_FORMAT: &str = "\
combination INDEX P1 P2 P3 P4 own OWN opp OPP: a cell whose four directional patterns
are P1..P4 (weakest first) is worth OWN to the side to move and costs OPP when it is the
opponent's cell; the evaluation sums them over empty cells.
threat MASK VALUE: added for the classes present: bits 0-4 the side to move's Three,
DoubleThree, Four, FourThree, WinNext; bits 5-9 the opponent's. Masks not listed are 0.";

/// What the lines of `ordering_weights.txt` mean.
const ORDERING_FILE_FORMAT: &str = "\
combination INDEX P1 P2 P3 P4 own OWN opp OPP: a candidate cell where the side to move's four
directional patterns make combination P1..P4 (weakest first) scores OWN; where the opponent's
do, OPP. A move's ordering score is the sum (plus the history of the search).";

fn pattern_name(pattern: Pattern) -> String {
    format!("{pattern:?}")
}

/// The logistic: an evaluation over its scale as an expected score.
pub fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Cross-entropy of the prediction `p` against the (possibly soft) target.
fn cross_entropy(p: f64, target: f64) -> f64 {
    let p = p.clamp(1e-9, 1.0 - 1e-9);
    -(target * p.ln() + (1.0 - target) * (1.0 - p).ln())
}

/// The least mean loss any tables can reach on `samples`: their targets' own entropy (zero for
/// game results, more for the soft targets of search scores).
pub fn least_loss(samples: &[Sample]) -> f64 {
    let total: f64 = samples
        .iter()
        .map(|s| cross_entropy(s.result, s.result))
        .sum();
    total / samples.len().max(1) as f64
}

/// Mean cross-entropy of the predictions `sigmoid(eval / scale)` against the results.
pub fn loss(samples: &[Sample], weights: &Weights, scale: f64) -> f64 {
    let total: f64 = samples
        .iter()
        .map(|s| cross_entropy(sigmoid(weights.evaluate(&s.features) / scale), s.result))
        .sum();
    total / samples.len().max(1) as f64
}

/// Golden-section search of the minimum of `f` over `[low, high]`.
fn minimise(mut low: f64, mut high: f64, f: impl Fn(f64) -> f64) -> f64 {
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..40 {
        let a = high - ratio * (high - low);
        let b = low + ratio * (high - low);
        if f(a) < f(b) {
            high = b;
        } else {
            low = a;
        }
    }
    (low + high) / 2.0
}

/// Adds `offset` to every threat value: the threat table holds the evaluation's constant term
/// (every position has exactly one mask).
pub fn shifted(weights: &Weights, offset: f64) -> Weights {
    let mut shifted = weights.clone();
    shifted.threat.iter_mut().for_each(|v| *v += offset);
    shifted
}

/// The logistic scale (10 to 10,000) and the constant offset (±10,000) that best fit the results
/// with `weights` as they are: the fit then starts from an evaluation centred on the results and
/// keeps it in the units the search's margins were set in. The hand-set tables have a large
/// constant part (every empty cell is worth something, the side to move's more), which the
/// search never sees (it compares positions of equal depth) but a logistic would.
pub fn fit_scale(samples: &[Sample], weights: &Weights) -> (f64, f64) {
    let evals: Vec<(f64, f64)> = samples
        .iter()
        .map(|s| (weights.evaluate(&s.features), s.result))
        .collect();
    let loss_at = |scale: f64, offset: f64| {
        evals
            .iter()
            .map(|&(e, r)| cross_entropy(sigmoid((e + offset) / scale), r))
            .sum::<f64>()
    };
    let best_offset = |scale: f64| minimise(-10_000.0, 10_000.0, |o| loss_at(scale, o));
    let log_scale = minimise(10f64.ln(), 10_000f64.ln(), |x| {
        let scale = x.exp();
        loss_at(scale, best_offset(scale))
    });
    let scale = log_scale.exp();
    (scale, best_offset(scale))
}

/// How a fit goes.
#[derive(Clone, Copy, Debug)]
pub struct FitSettings {
    /// The logistic scale of the evaluation, or the softmax temperature of the ordering.
    pub scale: f64,
    pub epochs: usize,
    /// Adam's step, in the tables' units.
    pub learning_rate: f64,
    /// Pull towards the starting tables, per parameter, relative to the mean loss.
    pub l2: f64,
    /// Keep each combination's ratio of `own` to `opp` as in the starting tables (one value per
    /// combination is fitted): the side to move's weight per class is a balance the search's
    /// pruning is set on (docs/engine.md, session 13), which a fit to scores does not see.
    pub keep_ratios: bool,
    /// Fit the threat term too (else it stays as it starts).
    pub fit_threat: bool,
    /// Fit the per-combination tables (else only the threat term moves).
    pub fit_tables: bool,
}

impl FitSettings {
    /// Zeroes the gradient of the parts the fit leaves as they are (the threat term, the
    /// per-combination tables).
    fn hold_fixed_parts(&self, gradient: &mut [f64]) {
        if !self.fit_threat {
            gradient[2 * COMBINATIONS..].fill(0.0);
        }
        if !self.fit_tables {
            gradient[..2 * COMBINATIONS].fill(0.0);
        }
    }
}

/// Fits `start` to `samples`; calls `progress(epoch, loss)` now and then.
pub fn fit(
    samples: &[Sample],
    start: &Weights,
    settings: FitSettings,
    mut progress: impl FnMut(usize, f64),
) -> Weights {
    let origin = start.flat();
    let mut params = origin.clone();
    let mut adam = Adam::new(start.len());
    let n = samples.len().max(1) as f64;
    // own[c] = ratio[c] * opp[c] where the ratios are kept (combinations worth nothing to the
    // opponent keep their `own` value).
    let ratios: Vec<Option<f64>> = (0..COMBINATIONS)
        .map(|c| (settings.keep_ratios && start.opp[c] != 0.0).then(|| start.own[c] / start.opp[c]))
        .collect();
    for epoch in 1..=settings.epochs {
        let weights = Weights::from_flat(&params);
        let mut gradient = vec![0.0; params.len()];
        for sample in samples {
            let features = &sample.features;
            let p = sigmoid(weights.evaluate(features) / settings.scale);
            // d(cross-entropy)/d(eval) for a logistic of scale `scale`.
            let slope = (p - sample.result) / settings.scale / n;
            Weights::add_slope(&mut gradient, features, slope);
        }
        pull_towards(&mut gradient, &params, &origin, settings.l2);
        for (c, ratio) in ratios.iter().enumerate() {
            if let Some(ratio) = ratio {
                gradient[COMBINATIONS + c] += ratio * gradient[c];
                gradient[c] = 0.0;
            } else if settings.keep_ratios {
                gradient[c] = 0.0;
            }
        }
        settings.hold_fixed_parts(&mut gradient);
        adam.step(&mut params, &gradient, settings.learning_rate);
        for (c, ratio) in ratios.iter().enumerate() {
            if let Some(ratio) = ratio {
                params[c] = ratio * params[COMBINATIONS + c];
            }
        }
        if reports_progress(epoch, settings.epochs) {
            progress(
                epoch,
                loss(samples, &Weights::from_flat(&params), settings.scale),
            );
        }
    }
    Weights::from_flat(&params)
}

/// One position of a move-ordering fit: the candidate cells (within reach of a stone, as the
/// search generates them) by their combinations for the side to move and for the opponent, and
/// which of them was played.
#[derive(Clone, Debug)]
pub struct OrderingSample {
    pub cells: Vec<(u16, u16)>,
    pub played: usize,
}

/// The position of `board` and its side to move where the move is a choice (`None` where the
/// search's forced-move rules decide it: a five to play or to block, an open three to answer;
/// or where the rule or the stone counts leave it without patterns or side to move).
fn position_to_choose_in(board: &Board, rule: Rule) -> Option<(Position, Stone)> {
    let (pos, me) = position_of(board, rule)?;
    let forced =
        pos.count(me, Class::Win) > 0 || pos.count_at_least(me.opponent(), Class::WinNext) > 0;
    (!forced).then_some((pos, me))
}

/// The ordering sample of a position where the ordering decides (`None` where the search's
/// forced-move rules do: a five to play or to block, an open three to answer; or where the move
/// played is not a candidate).
pub fn ordering_sample(board: &Board, rule: Rule, played: Move) -> Option<OrderingSample> {
    let (pos, me) = position_to_choose_in(board, rule)?;
    let opp = me.opponent();
    let played_cell = pos.cell_of(played);
    let mut sample = OrderingSample {
        cells: Vec::new(),
        played: usize::MAX,
    };
    for &cell in pos.candidates() {
        let cell = cell as usize;
        if pos.is_empty(cell) {
            if cell == played_cell {
                sample.played = sample.cells.len();
            }
            let combinations = (pos.combination(cell, me), pos.combination(cell, opp));
            sample
                .cells
                .push((combinations.0 as u16, combinations.1 as u16));
        }
    }
    (sample.played != usize::MAX).then_some(sample)
}

/// The ordering tables as the fit moves them.
#[derive(Clone, Debug, PartialEq)]
pub struct OrderingWeights {
    pub own: Vec<f64>,
    pub opp: Vec<f64>,
}

impl OrderingWeights {
    pub fn current() -> OrderingWeights {
        OrderingWeights::of_tables(CellTables::shipped())
    }

    /// The tables a search with `params` orders with (`CellTables::for_params`: the shipped
    /// ones, the formula's at its defaults, moved by the changed `order_*` values): what
    /// `connect5 params --ordering-table` writes.
    pub fn of_params(params: &SearchParams) -> OrderingWeights {
        OrderingWeights::of_tables(CellTables::for_params(params))
    }

    fn of_tables(tables: &CellTables) -> OrderingWeights {
        OrderingWeights {
            own: floats(&tables.order_own),
            opp: floats(&tables.order_opp),
        }
    }

    fn score(&self, cell: (u16, u16)) -> f64 {
        self.own[cell.0 as usize] + self.opp[cell.1 as usize]
    }

    /// The tables in the form of `ordering_weights.txt`.
    pub fn to_text(&self, header: &str) -> String {
        tables_text(header, ORDERING_FILE_FORMAT, &self.own, &self.opp, &[])
    }
}

/// The probabilities the ordering scores give a sample's cells: a softmax of `score / temperature`.
fn move_probabilities(
    sample: &OrderingSample,
    weights: &OrderingWeights,
    temperature: f64,
) -> Vec<f64> {
    softmax(
        sample
            .cells
            .iter()
            .map(|&cell| weights.score(cell) / temperature),
    )
}

/// The probabilities `exp(logit)`, normalised.
fn softmax(logits: impl Iterator<Item = f64>) -> Vec<f64> {
    let logits: Vec<f64> = logits.collect();
    let top = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let exps: Vec<f64> = logits.iter().map(|l| (l - top).exp()).collect();
    let total: f64 = exps.iter().sum();
    exps.into_iter().map(|e| e / total).collect()
}

/// Mean cross-entropy of the moves played under the ordering's softmax.
pub fn ordering_loss(
    samples: &[OrderingSample],
    weights: &OrderingWeights,
    temperature: f64,
) -> f64 {
    let total: f64 = samples
        .iter()
        .map(|s| {
            -move_probabilities(s, weights, temperature)[s.played]
                .max(1e-12)
                .ln()
        })
        .sum();
    total / samples.len().max(1) as f64
}

/// How often the move played is the ordering's first choice, and among its first `n`.
pub fn ordering_hits(
    samples: &[OrderingSample],
    weights: &OrderingWeights,
    n: usize,
) -> (f64, f64) {
    let mut first = 0;
    let mut top_n = 0;
    for sample in samples {
        let played = weights.score(sample.cells[sample.played]);
        let better = sample
            .cells
            .iter()
            .filter(|&&c| weights.score(c) > played)
            .count();
        first += usize::from(better == 0);
        top_n += usize::from(better < n);
    }
    let count = samples.len().max(1) as f64;
    (first as f64 / count, top_n as f64 / count)
}

/// The softmax temperature that best fits the moves played with `weights` as they are.
pub fn fit_temperature(samples: &[OrderingSample], weights: &OrderingWeights) -> f64 {
    minimise(1f64.ln(), 100_000f64.ln(), |x| {
        ordering_loss(samples, weights, x.exp())
    })
    .exp()
}

/// Fits `start` to the moves played (cross-entropy of the softmax, Adam, L2 towards `start`),
/// in the units of `start` (the temperature stays fixed).
pub fn fit_ordering(
    samples: &[OrderingSample],
    start: &OrderingWeights,
    settings: FitSettings,
    mut progress: impl FnMut(usize, f64),
) -> OrderingWeights {
    let origin = [&start.own[..], &start.opp[..]].concat();
    let mut params = origin.clone();
    let mut adam = Adam::new(params.len());
    let n = samples.len().max(1) as f64;
    let split = |params: &[f64]| OrderingWeights {
        own: params[..COMBINATIONS].to_vec(),
        opp: params[COMBINATIONS..].to_vec(),
    };
    for epoch in 1..=settings.epochs {
        let weights = split(&params);
        let mut gradient = vec![0.0; params.len()];
        for sample in samples {
            let probabilities = move_probabilities(sample, &weights, settings.scale);
            for (i, (&(own, opp), p)) in sample.cells.iter().zip(probabilities).enumerate() {
                let slope = (p - f64::from(u8::from(i == sample.played))) / settings.scale / n;
                gradient[own as usize] += slope;
                gradient[COMBINATIONS + opp as usize] += slope;
            }
        }
        pull_towards(&mut gradient, &params, &origin, settings.l2);
        adam.step(&mut params, &gradient, settings.learning_rate);
        if reports_progress(epoch, settings.epochs) {
            progress(
                epoch,
                ordering_loss(samples, &split(&params), settings.scale),
            );
        }
    }
    split(&params)
}

/// One position of a comparison fit: the positions after the candidate moves, the played one
/// first and then the ones the shipped ordering ranks first, each as the evaluation of the
/// opponent, who moves there, reads it.
#[derive(Clone, Debug)]
pub struct ComparisonSample {
    pub children: Vec<EvalFeatures>,
}

impl ComparisonSample {
    /// The index of the move played among the children.
    pub const PLAYED: usize = 0;
}

/// The comparison sample of a position where the evaluation chooses the move (`None` where the
/// search's forced-move rules do, as for [`ordering_sample`], or where the move played is not a
/// candidate): the played move and the `candidates - 1` others the shipped ordering scores
/// highest. With `quiet_only`, only positions where neither side can make a four, and only
/// moves that make no three.
pub fn comparison_sample(
    board: &Board,
    rule: Rule,
    played: Move,
    candidates: usize,
    quiet_only: bool,
) -> Option<ComparisonSample> {
    let (mut pos, me) = position_to_choose_in(board, rule)?;
    let opp = me.opponent();
    if quiet_only && a_four_can_be_made(&pos, me) {
        return None;
    }
    let played_cell = pos.cell_of(played);
    // With `quiet_only`, moves that make a three are neither candidates nor learnt from: the
    // search, not the evaluation, decides between threats.
    let quiet = |cell: usize| !quiet_only || pos.class(cell, me) < Class::Three;
    if !quiet(played_cell) {
        return None;
    }
    let mut cells: Vec<(usize, i32)> = pos
        .candidates()
        .iter()
        .map(|&cell| cell as usize)
        .filter(|&cell| pos.is_empty(cell) && quiet(cell))
        .map(|cell| {
            let score = if cell == played_cell {
                i32::MAX
            } else {
                table_order_score(&pos, cell, me)
            };
            (cell, score)
        })
        .collect();
    if !cells.iter().any(|&(cell, _)| cell == played_cell) {
        return None;
    }
    cells.sort_unstable_by_key(|&(cell, score)| (std::cmp::Reverse(score), cell));
    cells.truncate(candidates.max(2));
    let children = cells
        .iter()
        .map(|&(cell, _)| {
            pos.make(cell, me);
            let features = features_of(&pos, opp);
            pos.unmake(cell);
            features
        })
        .collect();
    Some(ComparisonSample { children })
}

/// The probabilities of a comparison sample's moves: a softmax of what each leaves the opponent,
/// negated, over `temperature`.
fn comparison_probabilities(
    sample: &ComparisonSample,
    weights: &Weights,
    temperature: f64,
) -> Vec<f64> {
    softmax(
        sample
            .children
            .iter()
            .map(|child| -weights.evaluate(child) / temperature),
    )
}

/// Mean cross-entropy of the moves played under the evaluation's softmax, and the share of
/// samples whose played move the evaluation ranks first.
pub fn comparison_loss(
    samples: &[ComparisonSample],
    weights: &Weights,
    temperature: f64,
) -> (f64, f64) {
    let mut total = 0.0;
    let mut first = 0usize;
    for sample in samples {
        let probabilities = comparison_probabilities(sample, weights, temperature);
        total -= probabilities[ComparisonSample::PLAYED].max(1e-12).ln();
        let best = probabilities
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        first += usize::from(probabilities[ComparisonSample::PLAYED] >= best);
    }
    let count = samples.len().max(1) as f64;
    (total / count, first as f64 / count)
}

/// The softmax temperature that best fits the moves played with `weights` as they are.
pub fn fit_comparison_temperature(samples: &[ComparisonSample], weights: &Weights) -> f64 {
    minimise(1f64.ln(), 100_000f64.ln(), |x| {
        comparison_loss(samples, weights, x.exp()).0
    })
    .exp()
}

/// Fits the evaluation's tables so that the moves played are the ones whose positions it
/// prefers (comparison training: Tesauro, "Connectionist learning of expert preferences by
/// comparison training", 1989): cross-entropy of the softmax over the candidates, Adam, L2
/// towards `start`; the temperature stays fixed.
pub fn fit_comparison(
    samples: &[ComparisonSample],
    start: &Weights,
    settings: FitSettings,
    anchor_weight: f64,
    mut progress: impl FnMut(usize, f64),
) -> Weights {
    let origin = start.flat();
    let mut params = origin.clone();
    let mut adam = Adam::new(start.len());
    let n = samples.len().max(1) as f64;
    let anchors: Vec<f64> = samples
        .iter()
        .map(|sample| start.evaluate(&sample.children[ComparisonSample::PLAYED]))
        .collect();
    for epoch in 1..=settings.epochs {
        let weights = Weights::from_flat(&params);
        let mut gradient = vec![0.0; params.len()];
        for (sample, anchor) in samples.iter().zip(&anchors) {
            let probabilities = comparison_probabilities(sample, &weights, settings.scale);
            for (i, (child, p)) in sample.children.iter().zip(probabilities).enumerate() {
                // d(loss)/d(eval of the child): its logit is -eval / temperature; the position
                // of the game (the played move's) is also held near its starting evaluation,
                // which fixes the levels the comparisons leave free.
                let played = i == ComparisonSample::PLAYED;
                let mut slope = -(p - f64::from(u8::from(played))) / settings.scale;
                if played {
                    let drift = (weights.evaluate(child) - anchor) / settings.scale;
                    slope += 2.0 * anchor_weight * drift / settings.scale;
                }
                Weights::add_slope(&mut gradient, child, slope / n);
            }
        }
        pull_towards(&mut gradient, &params, &origin, settings.l2);
        settings.hold_fixed_parts(&mut gradient);
        // A value added to every cell's entry changes no comparison (the candidates' positions
        // have the same empty cells but one): the cells where a side can make nothing stay at
        // their value, which fixes that level.
        gradient[0] = 0.0;
        gradient[COMBINATIONS] = 0.0;
        adam.step(&mut params, &gradient, settings.learning_rate);
        if reports_progress(epoch, settings.epochs) {
            let (loss, _) = comparison_loss(samples, &Weights::from_flat(&params), settings.scale);
            progress(epoch, loss);
        }
    }
    Weights::from_flat(&params)
}

/// Whether a fit reports its loss after `epoch` of `epochs`: the first, every fiftieth and the last.
fn reports_progress(epoch: usize, epochs: usize) -> bool {
    epoch == 1 || epoch.is_multiple_of(50) || epoch == epochs
}

/// Adds to `gradient` the slope of the L2 pull of `params` towards `origin`.
fn pull_towards(gradient: &mut [f64], params: &[f64], origin: &[f64], l2: f64) {
    for ((g, param), start) in gradient.iter_mut().zip(params).zip(origin) {
        *g += 2.0 * l2 * (param - start);
    }
}

/// Adam's moments (Kingma and Ba, 2015).
struct Adam {
    first: Vec<f64>,
    second: Vec<f64>,
    steps: i32,
}

impl Adam {
    fn new(len: usize) -> Adam {
        Adam {
            first: vec![0.0; len],
            second: vec![0.0; len],
            steps: 0,
        }
    }

    fn step(&mut self, params: &mut [f64], gradient: &[f64], learning_rate: f64) {
        let (beta1, beta2, epsilon) = (0.9f64, 0.999f64, 1e-8);
        self.steps += 1;
        let correction1 = 1.0 - beta1.powi(self.steps);
        let correction2 = 1.0 - beta2.powi(self.steps);
        for i in 0..params.len() {
            self.first[i] = beta1 * self.first[i] + (1.0 - beta1) * gradient[i];
            self.second[i] = beta2 * self.second[i] + (1.0 - beta2) * gradient[i] * gradient[i];
            let step =
                (self.first[i] / correction1) / ((self.second[i] / correction2).sqrt() + epsilon);
            params[i] -= learning_rate * step;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Stone;

    #[test]
    fn the_features_reproduce_the_engine_evaluation() {
        let rule = Rule::for_board(15, 15);
        let mut board = Board::new(15, 15).expect("a legal size");
        let moves = [(7, 7), (7, 8), (8, 8), (6, 6), (8, 7), (9, 9), (6, 8)];
        for (i, &(row, col)) in moves.iter().enumerate() {
            let stone = if i % 2 == 0 {
                Stone::Black
            } else {
                Stone::White
            };
            board
                .play(Move::new(row, col), stone)
                .expect("an empty cell");
        }
        let features = eval_features(&board, rule, FitPositions::All).expect("a quiet position");
        let table = pattern::table_for(5, false).expect("exact five is covered");
        let pos = Position::new(&board, table);
        let me = board.side_to_move().expect("legal counts");
        let engine = super::super::eval::evaluate(&pos, me);
        assert_eq!(Weights::current().evaluate(&features), f64::from(engine));
    }

    #[test]
    fn a_fit_moves_the_evaluation_towards_the_results() {
        // Two made-up kinds of position: one combination the side to move has always wins, the
        // other always loses; the fit must separate them from equal starting values.
        let won = EvalFeatures {
            own: vec![(100, 3)],
            opp: vec![],
            threat: 0,
        };
        let lost = EvalFeatures {
            own: vec![(200, 3)],
            opp: vec![],
            threat: 0,
        };
        let samples: Vec<Sample> = (0..50)
            .flat_map(|_| {
                [
                    Sample {
                        features: won.clone(),
                        result: 1.0,
                    },
                    Sample {
                        features: lost.clone(),
                        result: 0.0,
                    },
                ]
            })
            .collect();
        let mut start = Weights::current();
        start.own[100] = 0.0;
        start.own[200] = 0.0;
        let settings = FitSettings {
            scale: 100.0,
            epochs: 200,
            learning_rate: 2.0,
            l2: 0.0,
            keep_ratios: false,
            fit_threat: true,
            fit_tables: true,
        };
        let before = loss(&samples, &start, 100.0);
        let fitted = fit(&samples, &start, settings, |_, _| {});
        assert!(
            fitted.own[100] > 50.0 && fitted.own[200] < -50.0,
            "{:?}",
            (fitted.own[100], fitted.own[200])
        );
        assert!(loss(&samples, &fitted, 100.0) < before / 2.0);
    }

    #[test]
    fn the_written_tables_read_back_as_written() {
        let text = Weights::current().to_text("a header");
        let shipped = include_str!("eval_weights.txt");
        let data = |t: &str| -> Vec<String> {
            t.lines()
                .filter(|l| !l.starts_with('#'))
                .map(str::to_string)
                .collect()
        };
        assert_eq!(data(&text), data(shipped));
    }

    /// A 15x15 board after black (7, 7) and white (8, 8), for the fits to moves played.
    fn two_stones() -> (Rule, Board) {
        let mut board = Board::new(15, 15).expect("a legal size");
        board
            .play(Move::new(7, 7), Stone::Black)
            .expect("an empty cell");
        board
            .play(Move::new(8, 8), Stone::White)
            .expect("an empty cell");
        (Rule::for_board(15, 15), board)
    }

    /// A fit to moves played, fast on a few samples, unbound by the start.
    fn move_fit_settings() -> FitSettings {
        FitSettings {
            scale: 50.0,
            epochs: 300,
            learning_rate: 5.0,
            l2: 0.0,
            keep_ratios: false,
            fit_threat: true,
            fit_tables: true,
        }
    }

    #[test]
    fn an_ordering_fit_learns_which_cells_are_played() {
        let (rule, board) = two_stones();
        // Black always plays the cell that makes a vertical two: the fit must put it first.
        let played = Move::new(6, 7);
        let sample = ordering_sample(&board, rule, played).expect("an ordinary position");
        // Two 5x5 squares around the stones, overlapping on 4x4, less the two stones.
        assert_eq!(sample.cells.len(), 25 + 25 - 16 - 2);
        let samples = vec![sample; 20];
        let start = OrderingWeights::current();
        let settings = move_fit_settings();
        let before = ordering_loss(&samples, &start, 50.0);
        let fitted = fit_ordering(&samples, &start, settings, |_, _| {});
        assert!(ordering_loss(&samples, &fitted, 50.0) < before);
        // (6, 7) and (8, 7) make the same combinations for black: either may be first.
        assert!(ordering_hits(&samples, &fitted, 2).1 == 1.0);
    }

    #[test]
    fn a_comparison_fit_learns_which_moves_are_played() {
        let (rule, board) = two_stones();
        // Black always plays a split two, which the shipped evaluation does not prefer: the fit
        // must come to prefer the position it makes.
        let played = Move::new(7, 9);
        let sample =
            comparison_sample(&board, rule, played, 12, false).expect("an ordinary position");
        assert_eq!(sample.children.len(), 12);
        let samples = vec![sample; 20];
        let start = Weights::current();
        let (before, first_before) = comparison_loss(&samples, &start, 50.0);
        assert_eq!(
            first_before, 0.0,
            "the shipped tables already prefer the move"
        );
        let settings = move_fit_settings();
        let fitted = fit_comparison(&samples, &start, settings, 0.0, |_, _| {});
        let (after, first_after) = comparison_loss(&samples, &fitted, 50.0);
        assert!(after < before, "loss {before} -> {after}");
        assert_eq!(first_after, 1.0);
    }

    #[test]
    fn the_written_ordering_tables_read_back_as_written() {
        let text = OrderingWeights::current().to_text("a header");
        let shipped = include_str!("ordering_weights.txt");
        let data = |t: &str| -> Vec<String> {
            t.lines()
                .filter(|l| !l.starts_with('#'))
                .map(str::to_string)
                .collect()
        };
        assert_eq!(data(&text), data(shipped));
    }
}
