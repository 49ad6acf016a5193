//! Principal-variation search with iterative deepening, aspiration windows, a transposition
//! table, threat-aware move generation (forced-defence pruning), killer/history ordering and
//! late-move reductions. Leaves run a short VCF probe before the static evaluation.

use super::eval::evaluate;
use super::movegen::{generate_moves, MoveSet};
use super::pattern::Class;
use super::position::Position;
use super::threat::ThreatSearch;
use crate::board::Stone;
use crate::engine::deepen::{deepen, Choice, Iteration};
use crate::engine::params::SearchParams;
use crate::engine::time::SearchClock;
use crate::engine::tt::{Entry, Tt};
use crate::engine::types::{
    is_mate, mate_in, mated_in, score_from_table, score_to_table, Bound, Score, INFINITE,
    WIN_THRESHOLD,
};
use crate::engine::zobrist::{zobrist, WHITE_TO_MOVE};
use crate::engine::{Progress, ProgressSink};

pub const MAX_PLY: usize = 128;
/// Clock polled every this many nodes (a node costs well under a microsecond).
pub const CHECK_EVERY: u64 = 256;
/// Units of depth in a ply: the main search counts depth in eighths of a ply, so that an extension
/// or a reduction may be a fraction of one (Rapfi's search counts depth in fractions: its forced
/// block of a four is extended 1.3 plies). A node's depth is compared with the constants in plies
/// through [`plies`], and the transposition table keeps whole plies, rounded down.
pub const PLY: i32 = 8;

/// Whole plies of a depth in units, rounded down (a node at a fraction of a ply below zero is
/// one ply below zero).
fn plies(depth: i32) -> i32 {
    depth.div_euclid(PLY)
}

/// Plies of a depth in units, with its fraction.
fn plies_with_fraction(depth: i32) -> f64 {
    f64::from(depth) / f64::from(PLY)
}

/// Fours tried in a row by the VCF probe at the leaves of the main search.
const LEAF_VCF_DEPTH: u32 = 8;
/// Fours tried in a row by the VCF search at the root.
pub const ROOT_VCF_DEPTH: u32 = 24;

/// What the search keeps across its nodes and iterations: the position, the table, the ordering
/// heuristics and the threat searches' memory. The limits come with each call, as a
/// [`SearchClock`].
pub struct Searcher {
    pub pos: Position,
    tt: Tt,
    tuning: Tuning,
    killers: Vec<[usize; 2]>,
    history: Vec<[i32; 2]>,
    move_lists: Vec<Vec<(usize, i32)>>,
    pub threats: ThreatSearch,
    /// Whether the move searched at each ply made an open three or better for its player: the
    /// node two plies down reads it to tell an attack going on from a new threat.
    attacking: Vec<bool>,
    /// Positions of the tree kept for a fit of the move ordering (none in play).
    pub tree_sample: Option<TreeSample>,
}

/// One in `every` of the nodes a search chooses among all its moves at, with two plies or more
/// to go: the positions whose move ordering shapes the tree (`connect5 tune --ordering
/// --tree-depth`), kept as often as the search visits them.
pub struct TreeSample {
    every: u64,
    seen: u64,
    pub boards: Vec<crate::board::Board>,
}

impl TreeSample {
    pub fn every(every: u64) -> TreeSample {
        TreeSample {
            every: every.max(1),
            seen: 0,
            boards: Vec::new(),
        }
    }

    fn visit(&mut self, pos: &Position) {
        self.seen += 1;
        if self.seen.is_multiple_of(self.every) {
            self.boards.extend(pos.to_board());
        }
    }
}

/// The tunable constants ([`SearchParams`]) as the search reads them, whole numbers rounded.
/// The defaults of the margins, reductions, limits and killer bonuses come from an SPSA tuning
/// (docs/engine.md, "session 17: tuning the search"); by hand, killers at +3,000 and +2,000
/// (ahead of every threat but the four-threes) measured 13 Elo weaker than among the threes and
/// fours, as chess engines order killers after captures (session 16).
struct Tuning {
    reverse_futility_margin: i32,
    reverse_futility_depth: i32,
    lmr_base: f64,
    lmr_divisor: f64,
    lmr_first_move: usize,
    quiet_limit_base: f64,
    quiet_limit_slope: f64,
    move_count_base: f64,
    move_count_exponent: f64,
    singular_depth: i32,
    /// Margin below the table's score per eighth of a ply of depth.
    singular_margin: f64,
    aspiration_window: i32,
    killer_bonus: [i32; 2],
    /// Plies a leaf facing an open three is searched beyond the nominal depth.
    quiescence_plies: i32,
    root_reduction_from: usize,
    history_malus: f64,
    /// The late-move limits of a node whose static evaluation is below `-behind_margin`, times
    /// this (1: the limits of every node).
    behind_limit_factor: f64,
    behind_margin: i32,
    /// Units of depth given back to the forced block of a four (a four and its block then cost
    /// a ply less this).
    block_extension: i32,
    /// Units of depth added to a singular table move, and taken off one that shares its margin
    /// and failed high ([`Singularity`]).
    singular_extension: i32,
    shared_reduction: i32,
    /// Units of late-move reduction spared at a non-PV node that has been on the PV.
    pv_before_relief: i32,
    /// Units taken off the later moves of a PV node once one raised alpha.
    raised_reduction: i32,
    /// Units taken off the later moves of a non-PV defence node.
    defence_reduction: i32,
    /// How far a reduced move's first search must beat alpha (plus [`DEEPER_MARGIN_PER_PLY`] a
    /// ply of its reduction) for its re-search to go a ply deeper; 0: never.
    lmr_deeper_margin: i32,
    /// A leaf reads the table ([`Searcher::stored_leaf_score`]).
    leaf_table: bool,
    /// Share of a PV node's lag behind its table entry's depth taken off its depth.
    lagging_pv_reduction: f64,
    probcut_depth: i32,
    probcut_margin: i32,
    probcut_moves: usize,
    probcut_reduction: i32,
    /// Reverse futility pruning reads the table's score where its bound is sharper than the
    /// static evaluation (Rapfi's and Stockfish's "ttValue as a better eval"); off by default,
    /// measured level at 1 s and at 0.3 s (docs/engine.md, sessions 75 and 76).
    table_eval: bool,
}

impl Tuning {
    fn new(params: &SearchParams) -> Tuning {
        let whole = |value: f64| value.round() as i32;
        let units = |plies: f64| (plies * f64::from(PLY)).round() as i32;
        Tuning {
            reverse_futility_margin: whole(params.reverse_futility_margin),
            reverse_futility_depth: whole(params.reverse_futility_depth),
            lmr_base: params.lmr_base,
            lmr_divisor: params.lmr_divisor,
            lmr_first_move: whole(params.lmr_first_move).max(1) as usize,
            quiet_limit_base: params.quiet_limit_base,
            quiet_limit_slope: params.quiet_limit_slope,
            move_count_base: params.move_count_base,
            move_count_exponent: params.move_count_exponent,
            singular_depth: whole(params.singular_depth),
            singular_margin: params.singular_margin,
            aspiration_window: whole(params.aspiration_window).max(1),
            killer_bonus: [whole(params.killer_first), whole(params.killer_second)],
            quiescence_plies: whole(params.quiescence_plies),
            root_reduction_from: whole(params.root_reduction_from).max(1) as usize,
            history_malus: params.history_malus,
            behind_limit_factor: params.behind_limit_factor,
            behind_margin: whole(params.behind_margin),
            block_extension: units(params.block_extension),
            singular_extension: units(params.singular_extension),
            shared_reduction: units(params.shared_reduction),
            pv_before_relief: units(params.pv_before_relief),
            raised_reduction: units(params.raised_reduction),
            defence_reduction: units(params.defence_reduction),
            lmr_deeper_margin: whole(params.lmr_deeper_margin),
            leaf_table: params.leaf_table >= 0.5,
            lagging_pv_reduction: params.lagging_pv_reduction,
            probcut_depth: whole(params.probcut_depth),
            probcut_margin: whole(params.probcut_margin),
            probcut_moves: whole(params.probcut_moves).max(1) as usize,
            probcut_reduction: whole(params.probcut_reduction).max(1),
            table_eval: params.table_eval >= 0.5,
        }
    }

    /// Units added to the re-search of a reduced move whose first search beat alpha by
    /// `excess`: a ply when it beat it by far more than the reduction's usual error, since such
    /// a move is likely the node's best and its line is worth seeing deeper (Stockfish's and
    /// Rapfi's "do deeper" re-search; measured in docs/engine.md, sessions 80 and 81).
    fn deeper_research(&self, excess: i32, reduction: i32) -> i32 {
        let needed = self.lmr_deeper_margin + DEEPER_MARGIN_PER_PLY * reduction / PLY;
        if self.lmr_deeper_margin > 0 && excess > needed {
            PLY
        } else {
            0
        }
    }

    /// Units taken off a PV node of `depth` whose table entry has a move: a share of how far the
    /// entry's depth lags behind the one ply less an entry of the last iteration has, at most
    /// [`LAGGING_PV_MAX`]. Such a node's line was not the principal one in the iterations
    /// before (a move that failed high, a line the last search of the game left early), so its
    /// full depth buys little the shallower entry did not see (Rapfi's reduction of a PV table
    /// move not chosen for some iterations, credited with about 32 Elo in its sources).
    fn lagging_pv(&self, depth: i32, entry: Option<Entry>) -> i32 {
        let Some(entry) = entry.filter(|entry| entry.mv.is_some()) else {
            return 0;
        };
        if self.lagging_pv_reduction <= 0.0 || depth <= PLY {
            return 0;
        }
        let lag = depth - PLY - entry.depth * PLY;
        ((f64::from(lag) * self.lagging_pv_reduction) as i32).clamp(0, LAGGING_PV_MAX)
    }

    /// Units of depth taken off the first search of the `i`-th (quiet) move at a node of this
    /// depth, in whole plies that leave at least the move's own ply: growing with both, as the
    /// logarithmic formula of chess engines (Stockfish's reductions table).
    fn late_move_reduction(&self, depth: i32, i: usize) -> i32 {
        // Whole plies: keeping the fraction measured −8.7 ± 34.2 Elo (docs/engine.md, session 52).
        let r = (self.lmr_base
            + plies_with_fraction(depth).ln() * (i as f64).ln() / self.lmr_divisor)
            as i32;
        r.clamp(0, plies(depth - PLY).max(0)) * PLY
    }

    /// Moves searched at a non-PV node of this depth before the later threats and defences are
    /// pruned: Rapfi's move-count pruning (3 + depth^1.32 there; our base and exponent are tuned),
    /// which Rapfi applies to every move (its sources credit it with about 155 Elo). In a tactical
    /// middle game nearly every move makes a three or four or blocks one, so the quiet-move limit
    /// below hardly ever applies there.
    fn move_count_limit(&self, depth: i32) -> usize {
        (self.move_count_base + plies_with_fraction(depth.max(0)).powf(self.move_count_exponent))
            as usize
    }

    /// The quiet-move and move-count limits of a node (a PV node has no move-count limit), both
    /// times `behind_limit_factor` where the side to move is `behind`.
    fn pruning_limits(&self, depth: i32, pv_node: bool, behind: bool) -> (usize, usize) {
        let scale = |limit: usize| {
            if behind {
                ((limit as f64 * self.behind_limit_factor).round() as usize).max(1)
            } else {
                limit
            }
        };
        let quiet = scale(self.late_move_limit(depth, pv_node));
        let threats = if pv_node {
            usize::MAX
        } else {
            scale(self.move_count_limit(depth))
        };
        (quiet, threats)
    }

    /// Quiet moves searched at a node of this depth before the rest are pruned.
    fn late_move_limit(&self, depth: i32, pv_node: bool) -> usize {
        let base = (self.quiet_limit_base
            + self.quiet_limit_slope * plies_with_fraction(depth.max(0)))
            as usize;
        if pv_node {
            2 * base
        } else {
            base
        }
    }
}

/// What the singular test says of the table's move, and so of its depth.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Singularity {
    /// No test, or one the clock cut short: no table move, a shallow node, a score too old or
    /// a bound that cannot tell.
    Untested,
    /// Every other move stays below the margin: the line rests on that one move, where an
    /// error costs most, so it is searched deeper (`singular_extension`, a ply; singular extension: chess engines'
    /// idea, Anantharaman, Campbell and Hsu 1988; Rapfi's sources credit it with about 52 Elo).
    Singular,
    /// Another move reaches the margin too. When the table's score is at or above beta
    /// (`fails_high`), the node is expected to cut whichever of them it plays, so the table's
    /// move is searched shallower (`shared_reduction`, a ply; the negative extension of chess engines, Rapfi's
    /// "reduce if we are likely to fail high"); measured in docs/engine.md, session 30.
    Shared { fails_high: bool },
}

impl Singularity {
    /// Units of depth added to the table's move.
    fn extension(self, tuning: &Tuning) -> i32 {
        match self {
            Singularity::Singular => tuning.singular_extension,
            Singularity::Shared { fails_high: true } => -tuning.shared_reduction,
            Singularity::Untested | Singularity::Shared { fails_high: false } => 0,
        }
    }
}

/// One move of a node, as [`Searcher::search_move`] searches it.
struct Child {
    cell: usize,
    /// The first move gets the full window.
    first: bool,
    /// The depth after the move, in units of [`PLY`] (with the extension of a forced block).
    depth: i32,
    /// Units of depth taken off its first, null-window search.
    reduction: i32,
}

impl Child {
    /// The `i`-th move of a node of `depth`: late `reducible` moves are first searched
    /// shallower, less so (`pv_before_relief`, a ply) at a non-PV node that has been on the principal variation
    /// (`pv_before`; chess engines' "ttPv" rule, which Rapfi's search has too): such a node is
    /// where the line may come back, so its late moves get a closer look.
    fn new(
        tuning: &Tuning,
        cell: usize,
        i: usize,
        reducible: bool,
        depth: i32,
        new_depth: i32,
        pv_before: bool,
    ) -> Child {
        let reduction = if reducible && depth >= 2 * PLY && i >= tuning.lmr_first_move {
            tuning.late_move_reduction(depth, i) - tuning.pv_before_relief * i32::from(pv_before)
        } else {
            0
        };
        Child {
            cell,
            first: i == 0,
            depth: new_depth,
            reduction: reduction.max(0),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RootResult {
    pub cell: usize,
    pub score: i32,
    pub depth: u32,
}

impl RootResult {
    /// Where a new search of the ordered `root` starts: its first move, no iteration done.
    pub fn before_search(root: &[(usize, i32)]) -> RootResult {
        RootResult {
            cell: root[0].0,
            score: 0,
            depth: 0,
        }
    }
}

/// A move that makes no three of ours and takes no double three (or better) from the opponent:
/// what reductions and pruning may touch. Taking a single three's cell from the opponent only
/// blocks a two, and such moves were most of every node's list.
fn is_quiet(pos: &Position, cell: usize, me: Stone) -> bool {
    !makes_attack(pos, cell, me) && pos.class(cell, me.opponent()) < Class::DoubleThree
}

/// Whether `me` playing `cell` makes an open three or better: an attack the opponent must answer.
fn makes_attack(pos: &Position, cell: usize, me: Stone) -> bool {
    pos.class(cell, me) >= Class::Three
}

/// A move the late-move reduction may shorten besides the quiet ones, at a non-PV node where every
/// move is open: a single open three of ours that takes no double three from the opponent, unless
/// our move two plies up made an open three or better too. Rapfi reduces every late move and less
/// for a continuous attack (its sources' `CONTINUOUS_ATTACK_EXT`); here a new three is reduced
/// and a three that carries an attack on is not, since the attacker's long wins are chains of such
/// threes. Reducing every late three measured weaker (session 21).
fn is_reducible_threat(
    pos: &Position,
    cell: usize,
    me: Stone,
    pv_node: bool,
    attack_going_on: bool,
) -> bool {
    !pv_node
        && !attack_going_on
        && pos.class(cell, me) == Class::Three
        && pos.class(cell, me.opponent()) < Class::DoubleThree
}

/// The order of moves as one integer, largest first: by ordering score, equal scores by cell
/// (the lower first), so that the order is reproducible (cells are far below 2^32).
fn order_key(&(cell, score): &(usize, i32)) -> i64 {
    (i64::from(score) << 32) - cell as i64
}

fn sort_by_score(list: &mut [(usize, i32)]) {
    list.sort_unstable_by_key(|entry| std::cmp::Reverse(order_key(entry)));
}

/// The most units [`Tuning::lagging_pv`] takes off (Rapfi's bound, 3.6 plies).
const LAGGING_PV_MAX: i32 = 29;

/// What each ply of a reduced move's reduction adds to `lmr_deeper_margin` (Stockfish's form: the
/// deeper the reduction, the larger the error its shallow score may carry).
const DEEPER_MARGIN_PER_PLY: i32 = 11;

/// Index of the first move of a defence node that `defence_reduction` shortens.
const DEFENCE_REDUCTION_FROM: usize = 2;

/// Depths of a PV node whose later moves are searched shallower (`raised_reduction`, a ply) once a move has raised
/// alpha (Rapfi's search does so from depth 3 to 11): with a move that holds the window, the
/// others need only show they are no better. Measured against Rapfi with the reducible threats
/// above (docs/engine.md, session 28).
const PV_RAISED_REDUCTION_DEPTHS: std::ops::RangeInclusive<i32> = 3..=11;

/// Bound of a history value (raw units: the ordering adds a sixteenth of it).
const HISTORY_MAX: i32 = 32_000;

/// Moves of a node remembered for the history malus of a cut; later ones are rare.
const MAX_TRIED: usize = 64;

/// Moves a node picks one at a time (selection) before it sorts the rest: most nodes cut off or
/// prune after a few moves, and sorting every list of some 80 candidates cost an eighth of the
/// search's time. Either way the moves come in the order of [`sort_by_score`].
const PICKED_BEFORE_SORT: usize = 10;

/// Brings the best of `list[i..]` to `i`, in the order of [`sort_by_score`].
fn pick_next(list: &mut [(usize, i32)], i: usize) {
    let mut best = i;
    let mut best_key = order_key(&list[i]);
    for (j, entry) in list.iter().enumerate().skip(i + 1) {
        let k = order_key(entry);
        if k > best_key {
            best = j;
            best_key = k;
        }
    }
    list.swap(i, best);
}

/// A table key: the stones' hash and the side to move.
fn side_key(hash: u64, me: Stone) -> u64 {
    hash ^ if me == Stone::Black { 0 } else { WHITE_TO_MOVE }
}

impl Searcher {
    pub fn new(pos: Position, tt: Tt, params: &SearchParams) -> Searcher {
        let cells = pos.width * (pos.rows + 2 * super::position::PAD);
        Searcher {
            pos,
            tt,
            tuning: Tuning::new(params),
            killers: vec![[usize::MAX; 2]; MAX_PLY + 1],
            history: vec![[0; 2]; cells],
            move_lists: (0..=MAX_PLY).map(|_| Vec::new()).collect(),
            threats: ThreatSearch::new(MAX_PLY + 64),
            attacking: vec![false; MAX_PLY + 1],
            tree_sample: None,
        }
    }

    /// The transposition table, for the next search of the game.
    pub fn into_table(self) -> Tt {
        self.tt
    }

    fn key(&self, me: Stone) -> u64 {
        side_key(self.pos.hash(), me)
    }

    /// The key of the position after `me` plays `cell`, without playing it.
    fn child_key(&self, cell: usize, me: Stone) -> u64 {
        side_key(self.pos.hash() ^ zobrist(cell, me), me.opponent())
    }

    /// Fills `list` with the moves worth searching for `me`, scored for ordering.
    pub fn generate(&mut self, me: Stone, list: &mut Vec<(usize, i32)>) -> MoveSet {
        generate_moves(&mut self.pos, &self.history, me, list)
    }

    pub fn evaluate(&self, me: Stone) -> i32 {
        evaluate(&self.pos, me)
    }

    /// With `leaf_table`, what the table knows of a leaf from a search of at least a ply, where
    /// its bound settles the window, at any node: a principal variation that ends where an
    /// earlier search (of this move or, with the table kept, of the game's last one) went
    /// deeper takes that deeper result instead of a fresh evaluation, as Rapfi's leaf search
    /// does, so the scores of successive iterations agree and the bounds stored under their
    /// windows cut (docs/engine.md, session 82).
    fn stored_leaf_score(&self, me: Stone, alpha: i32, beta: i32, ply: usize) -> Option<i32> {
        if !self.tuning.leaf_table {
            return None;
        }
        let entry = self.tt.probe(self.key(me))?;
        let score = score_from_table(entry.score, ply);
        (entry.depth >= 1 && entry.bound.cuts(score, alpha, beta)).then_some(score)
    }

    /// Static evaluation with a VCF probe: a leaf where the side to move has a VCF is a win.
    /// The probe needs a four-three: a lone broken three almost never starts a VCF (3 in 3,469
    /// such leaves of a measured search), and probing every leaf with three or more four cells
    /// (session 2's rule) cost more than its wins gave: without those probes the engine scored
    /// +50.7 ± 34.5 Elo head to head (docs/engine.md, "session 46").
    fn leaf(&mut self, clock: &mut SearchClock, me: Stone, ply: usize) -> i32 {
        if self.pos.count(me, Class::FourThree) > 0 {
            let plies = self
                .threats
                .vcf(&mut self.pos, clock, me, LEAF_VCF_DEPTH, ply);
            if plies > 0 {
                return mate_in(ply as i32 + plies);
            }
        }
        self.evaluate(me)
    }

    /// The score of the node for `me`, searched `depth` units of [`PLY`] deep.
    pub fn negamax(
        &mut self,
        clock: &mut SearchClock,
        me: Stone,
        depth: i32,
        mut alpha: i32,
        beta: i32,
        ply: usize,
    ) -> i32 {
        if clock.tick() {
            return 0;
        }
        if let Some(proven) = self.proven_result(me, ply) {
            return proven;
        }
        if ply >= MAX_PLY - 2 {
            return self.evaluate(me);
        }
        if self.is_leaf(me, depth) {
            if let Some(score) = self.stored_leaf_score(me, alpha, beta, ply) {
                return score;
            }
            return self.leaf(clock, me, ply);
        }
        if let Some(block) = self.pos.find_win(me.opponent()) {
            // The opponent has a four: the block is the one move, played at once without the
            // table, the move list or the history. A fifth of a 1 s search's nodes are such
            // blocks (docs/engine.md, session 66): their table entries repeated their child's
            // score and took slots from other nodes, and each cut they made credited the block's
            // cell in the history that orders the open nodes' moves (session 67 measures it).
            let child_depth = depth - PLY + self.tuning.block_extension;
            return self.score_of_move(clock, me, block, child_depth, alpha, beta, ply);
        }
        let pv_node = beta - alpha > 1;
        let key = self.key(me);
        let (stored, entry) = self.probe(key, depth, alpha, beta, ply, pv_node);
        if let Some(score) = stored {
            return score;
        }
        let on_pv = pv_node || entry.is_some_and(|entry| entry.on_pv);
        let lag_reduction = if pv_node {
            self.tuning.lagging_pv(depth, entry)
        } else {
            0
        };
        let depth = depth - lag_reduction;
        if lag_reduction > 0 && self.is_leaf(me, depth) {
            return self.leaf(clock, me, ply);
        }

        let table_score = entry.map(|entry| (score_from_table(entry.score, ply), entry.bound));
        if let Some(score) = self.reverse_futility(me, depth, alpha, beta, pv_node, table_score) {
            return score;
        }

        let mut list = std::mem::take(&mut self.move_lists[ply]);
        let set = self.generate(me, &mut list);
        if list.is_empty() {
            self.move_lists[ply] = list;
            // No four and no defence: the opponent's open four comes next, then its five.
            return mated_in(ply as i32 + 4);
        }
        if let Some(sample) = &mut self.tree_sample {
            if set == MoveSet::All && depth >= 2 * PLY && list.len() >= 2 {
                sample.visit(&self.pos);
            }
        }
        self.score_for_order(&mut list, entry.and_then(|entry| entry.mv), ply);
        if set == MoveSet::All && !pv_node {
            if let Some(score) = self.probcut(clock, me, depth, beta, ply, entry, &mut list) {
                self.move_lists[ply] = list;
                return score;
            }
            if clock.stopped() {
                self.move_lists[ply] = list;
                return 0;
            }
        }
        // The singular test walks the whole list in order.
        let mut sorted = depth >= self.tuning.singular_depth * PLY;
        if sorted {
            sort_by_score(&mut list);
        }
        // (A forced block never comes here: it was played at once above.)
        let new_depth = depth - PLY;
        let singularity = match entry {
            Some(entry) if set == MoveSet::All => {
                self.singularity(clock, me, depth, ply, beta, entry, &list)
            }
            _ => Singularity::Untested,
        };
        if clock.stopped() {
            self.move_lists[ply] = list;
            return 0;
        }
        let original_alpha = alpha;
        let mut best = -INFINITE;
        let mut best_move = None;
        // The side behind defends: its good replies are often quiet and late in the ordering,
        // and pruning them makes the attacker's lines look won (docs/engine.md, session 55).
        let behind = self.tuning.behind_limit_factor != 1.0
            && set == MoveSet::All
            && self.evaluate(me) < -self.tuning.behind_margin;
        let (quiet_limit, threat_limit) = self.tuning.pruning_limits(depth, pv_node, behind);
        // Past both limits every move is late (never at a PV node, whose threat limit is none).
        let all_late = quiet_limit.max(threat_limit);
        let attack_going_on = ply >= 2 && self.attacking[ply - 2];
        let pv_before = on_pv && !pv_node;
        let mut raised_reduction = 0;
        let mut tried = [0usize; MAX_TRIED];
        let mut tried_count = 0;
        for i in 0..list.len() {
            if i >= all_late && best > -WIN_THRESHOLD {
                break;
            }
            if !sorted {
                if i < PICKED_BEFORE_SORT {
                    pick_next(&mut list, i);
                } else {
                    sort_by_score(&mut list[i..]);
                    sorted = true;
                }
            }
            let (cell, _) = list[i];
            let quiet = set == MoveSet::All && is_quiet(&self.pos, cell, me);
            // Late-move pruning: moves far down the ordering are not searched at all (the
            // ordering puts every threat and every defence first), once a move has been found
            // that does not lose: quiet moves past their limit, and at non-PV nodes threats and
            // defences past the move-count limit (never a forced block: it is the only move, and
            // the limit is at least 3).
            let late = i >= if quiet { quiet_limit } else { threat_limit };
            if late && best > -WIN_THRESHOLD {
                continue;
            }
            let reducible = quiet
                || set == MoveSet::All
                    && is_reducible_threat(&self.pos, cell, me, pv_node, attack_going_on);
            self.attacking[ply] = makes_attack(&self.pos, cell, me);
            let child_depth = new_depth - raised_reduction;
            let mut child = Child::new(
                &self.tuning,
                cell,
                i,
                reducible,
                depth,
                child_depth,
                pv_before,
            );
            if i == 0 {
                child.depth += singularity.extension(&self.tuning);
            }
            if set == MoveSet::Defence && !pv_node && i >= DEFENCE_REDUCTION_FROM {
                child.reduction = self.defence_reduction(cell, me, child.depth);
            }
            if child.depth - child.reduction > 0 {
                self.tt.prefetch(self.child_key(cell, me));
            }
            let score = self.search_move(clock, me, &child, alpha, beta, ply);
            if clock.stopped() {
                self.move_lists[ply] = list;
                return 0;
            }
            if score > best {
                best = score;
                best_move = Some(cell);
                if score > alpha {
                    alpha = score;
                    if score >= beta {
                        let tried = &tried[..tried_count];
                        self.reward_cutoff(me, cell, quiet, plies(depth), ply, tried);
                        break;
                    }
                    if pv_node
                        && PV_RAISED_REDUCTION_DEPTHS.contains(&plies(depth))
                        && !is_mate(score)
                    {
                        raised_reduction = self.tuning.raised_reduction;
                    }
                }
            }
            if tried_count < MAX_TRIED {
                tried[tried_count] = cell;
                tried_count += 1;
            }
        }
        self.move_lists[ply] = list;
        let entry = Entry {
            score: score_to_table(best, ply),
            mv: best_move,
            depth: plies(depth),
            bound: Bound::of(best, original_alpha, beta),
            on_pv,
        };
        self.tt.store(key, entry);
        best
    }

    /// The singular test of the table's move (`entry`'s, first in `list`), when it stored a
    /// score that is no upper bound from nearly this depth: every other move the node would
    /// search is searched at half the depth against a margin below that score.
    #[allow(clippy::too_many_arguments)]
    fn singularity(
        &mut self,
        clock: &mut SearchClock,
        me: Stone,
        depth: i32,
        ply: usize,
        beta: i32,
        entry: Entry,
        list: &[(usize, i32)],
    ) -> Singularity {
        if depth < self.tuning.singular_depth * PLY || list.len() < 2 {
            return Singularity::Untested;
        }
        let score = score_from_table(entry.score, ply);
        if entry.mv != Some(list[0].0)
            || entry.bound == Bound::Upper
            || entry.depth * PLY < depth - 3 * PLY
            || score.abs() >= WIN_THRESHOLD
        {
            return Singularity::Untested;
        }
        let singular_beta =
            score - (self.tuning.singular_margin * plies_with_fraction(depth) / 8.0) as i32;
        let reduced = plies(depth - PLY).div_euclid(2) * PLY;
        for (i, &(cell, _)) in list.iter().enumerate().skip(1) {
            // The quiet moves late-move pruning would skip are not alternatives either; the
            // threats past the move-count limit are still tried (the version measured).
            if i >= self.tuning.late_move_limit(depth, false) && is_quiet(&self.pos, cell, me) {
                continue;
            }
            let value = self.null_window_score(clock, me, cell, reduced, singular_beta, ply);
            if clock.stopped() {
                return Singularity::Untested;
            }
            if value >= singular_beta {
                return Singularity::Shared {
                    fails_high: score >= beta,
                };
            }
        }
        Singularity::Singular
    }

    /// The score for `me` of playing `cell`, searched `depth` deep with a null window at `bound`:
    /// at least `bound` when the move reaches it (the probe of the singular test and ProbCut).
    fn null_window_score(
        &mut self,
        clock: &mut SearchClock,
        me: Stone,
        cell: usize,
        depth: i32,
        bound: i32,
        ply: usize,
    ) -> i32 {
        self.score_of_move(clock, me, cell, depth, bound - 1, bound, ply)
    }

    /// The score for `me` of playing `cell`, searched `depth` deep in the window (`alpha`,
    /// `beta`), with no search of the node's other moves.
    #[allow(clippy::too_many_arguments)]
    fn score_of_move(
        &mut self,
        clock: &mut SearchClock,
        me: Stone,
        cell: usize,
        depth: i32,
        alpha: i32,
        beta: i32,
        ply: usize,
    ) -> i32 {
        self.attacking[ply] = makes_attack(&self.pos, cell, me);
        self.pos.make(cell, me);
        let value = -self.negamax(clock, me.opponent(), depth, -beta, -alpha, ply + 1);
        self.pos.unmake(cell);
        value
    }

    /// ProbCut (Buro 1995; Stockfish's form): at a deep non-PV node, the first moves of the
    /// ordering searched a few plies shallower against a bound a margin above beta; one that
    /// reaches it is taken as the node's cut, since the full-depth search would very likely
    /// fail high too. +15 Elo head to head over 800 game pairs, and +17 more for a margin of 100
    /// instead of 150 over 600 (docs/engine.md, sessions 60 and 61).
    #[allow(clippy::too_many_arguments)]
    fn probcut(
        &mut self,
        clock: &mut SearchClock,
        me: Stone,
        depth: i32,
        beta: i32,
        ply: usize,
        entry: Option<Entry>,
        list: &mut [(usize, i32)],
    ) -> Option<i32> {
        if self.tuning.probcut_depth == 0
            || depth < self.tuning.probcut_depth * PLY
            || beta.abs() >= WIN_THRESHOLD
        {
            return None;
        }
        let probcut_beta = beta + self.tuning.probcut_margin;
        let shallow = depth - self.tuning.probcut_reduction * PLY;
        // A stored score below the bound from nearly this depth says the cut would not come.
        if let Some(entry) = entry {
            let score = score_from_table(entry.score, ply);
            if entry.depth * PLY >= shallow && score < probcut_beta && entry.bound != Bound::Lower {
                return None;
            }
        }
        for i in 0..self.tuning.probcut_moves.min(list.len()) {
            pick_next(list, i);
            let (cell, _) = list[i];
            let value = self.null_window_score(clock, me, cell, shallow, probcut_beta, ply);
            if clock.stopped() {
                return None;
            }
            if value >= probcut_beta {
                self.tt.store(
                    self.key(me),
                    Entry {
                        score: score_to_table(value, ply),
                        mv: Some(cell),
                        depth: plies(shallow) + 1,
                        bound: Bound::Lower,
                        on_pv: false,
                    },
                );
                // A mate the shallow search proved is the node's score, not a margin below it.
                return Some(if is_mate(value) {
                    value
                } else {
                    value - self.tuning.probcut_margin
                });
            }
        }
        None
    }

    /// Reverse futility pruning (Rapfi's child futility pruning, about 121 Elo by its sources'
    /// comments; "static null move pruning" in chess engines): at a shallow non-PV node where the
    /// opponent threatens nothing faster than a four, a static evaluation a margin per ply above
    /// beta is taken as the node's cut. With `table_eval`, a table entry's exact score, or a bound
    /// beyond the evaluation on its side, stands for the evaluation (never a proved result: those
    /// are the table cut's).
    fn reverse_futility(
        &self,
        me: Stone,
        depth: i32,
        alpha: i32,
        beta: i32,
        pv_node: bool,
        table_score: Option<(i32, Bound)>,
    ) -> Option<i32> {
        if pv_node
            || depth > self.tuning.reverse_futility_depth * PLY
            || beta.abs() >= WIN_THRESHOLD
            || alpha.abs() >= WIN_THRESHOLD
            || self.pos.count_at_least(me.opponent(), Class::FourThree) > 0
        {
            return None;
        }
        let mut eval = self.evaluate(me);
        if self.tuning.table_eval {
            if let Some((stored, bound)) = table_score {
                let sharper = match bound {
                    Bound::Exact => true,
                    Bound::Lower => stored > eval,
                    Bound::Upper => stored < eval,
                };
                if sharper && !is_mate(stored) {
                    eval = stored;
                }
            }
        }
        (eval - self.tuning.reverse_futility_margin * depth / PLY >= beta).then_some(eval)
    }

    /// Quiescence: a node past the nominal depth is a leaf unless it faces a four, or (down to a
    /// few plies) an open three or double four: those are searched on through their forced
    /// replies instead of being evaluated.
    fn is_leaf(&self, me: Stone, depth: i32) -> bool {
        let opp = me.opponent();
        depth <= 0
            && self.pos.count(opp, Class::Win) == 0
            && (depth <= -self.tuning.quiescence_plies * PLY
                || self.pos.count(opp, Class::WinNext) == 0)
    }

    /// The score of a node whose outcome the patterns already prove (a five to play, two of the
    /// opponent's to stop, a full board, an open four, a double three against no four).
    pub(super) fn proven_result(&self, me: Stone, ply: usize) -> Option<i32> {
        let opp = me.opponent();
        if self.pos.count(me, Class::Win) > 0 {
            return Some(mate_in(ply as i32 + 1));
        }
        let opp_fives = self.pos.count(opp, Class::Win);
        if opp_fives >= 2 {
            return Some(mated_in(ply as i32 + 2));
        }
        if self.pos.empties() == 0 {
            return Some(0);
        }
        if opp_fives == 0 && self.pos.count(me, Class::WinNext) > 0 {
            return Some(mate_in(ply as i32 + 3));
        }
        // Two open threes at once win when the opponent cannot answer with a four: it blocks one
        // three, the other becomes an open four (no stone of the block lies on its line).
        if self.pos.count_at_least(opp, Class::Four) == 0
            && self.pos.count(me, Class::DoubleThree) > 0
        {
            return Some(mate_in(ply as i32 + 5));
        }
        None
    }

    /// What the table knows of this node: a score that settles it (never at a PV node, whose
    /// line must be searched), and the entry (its best move orders the moves).
    fn probe(
        &self,
        key: u64,
        depth: i32,
        alpha: i32,
        beta: i32,
        ply: usize,
        pv_node: bool,
    ) -> (Option<i32>, Option<Entry>) {
        let Some(entry) = self.tt.probe(key) else {
            return (None, None);
        };
        let score = score_from_table(entry.score, ply);
        let settles =
            !pv_node && entry.depth * PLY >= depth && entry.bound.cuts(score, alpha, beta);
        (settles.then_some(score), Some(entry))
    }

    /// Searches one move of a node (principal-variation search): the first with the full window,
    /// the others with a null window first, reduced when late and quiet, and searched again when
    /// they beat alpha.
    fn search_move(
        &mut self,
        clock: &mut SearchClock,
        me: Stone,
        child: &Child,
        alpha: i32,
        beta: i32,
        ply: usize,
    ) -> i32 {
        let opp = me.opponent();
        let depth = child.depth;
        self.pos.make(child.cell, me);
        let mut score;
        if child.first {
            score = -self.negamax(clock, opp, depth, -beta, -alpha, ply + 1);
        } else {
            let reduced = depth - child.reduction;
            score = -self.negamax(clock, opp, reduced, -alpha - 1, -alpha, ply + 1);
            let mut full = depth;
            if score > alpha && child.reduction > 0 {
                full += self.tuning.deeper_research(score - alpha, child.reduction);
                score = -self.negamax(clock, opp, full, -alpha - 1, -alpha, ply + 1);
            }
            if score > alpha && score < beta {
                score = -self.negamax(clock, opp, full, -beta, -alpha, ply + 1);
            }
        }
        self.pos.unmake(child.cell);
        score
    }

    /// Units taken off a late move of a non-PV defence node (`defence_reduction`, off by
    /// default): nine in ten of a defence node's cuts come from its first move (docs/engine.md,
    /// session 58), yet its moves are never reduced, and defences and forced blocks are three
    /// quarters of the nodes of a 1 s tree that generate moves (session 66). The later moves
    /// are searched shallower first, as an open node's late moves are, and again at full depth
    /// when they beat alpha; a move that makes a four-three or better keeps its depth.
    /// Measured in session 77.
    fn defence_reduction(&self, cell: usize, me: Stone, child_depth: i32) -> i32 {
        // Off (the default): no pattern lookup in the defence nodes' loop.
        if self.tuning.defence_reduction == 0
            || child_depth < PLY
            || self.pos.class(cell, me) >= Class::FourThree
        {
            return 0;
        }
        self.tuning.defence_reduction.min(child_depth)
    }

    /// A move that refuted the node: a killer if quiet, and history credit by depth (in whole
    /// plies); the moves
    /// `tried` before it without refuting the node lose some.
    fn reward_cutoff(
        &mut self,
        me: Stone,
        cell: usize,
        quiet: bool,
        depth_plies: i32,
        ply: usize,
        tried: &[usize],
    ) {
        if quiet {
            let k = &mut self.killers[ply];
            if k[0] != cell {
                k[1] = k[0];
                k[0] = cell;
            }
        }
        let bonus = (depth_plies * depth_plies).min(HISTORY_MAX / 8);
        let malus = (f64::from(bonus) * self.tuning.history_malus) as i32;
        self.update_history(cell, me, bonus);
        for &other in tried {
            self.update_history(other, me, -malus);
        }
    }

    /// Moves a history value towards its bound in proportion to the distance left (chess
    /// engines' "history gravity", e.g. Stockfish's): the values stay within +-HISTORY_MAX and
    /// keep ordering the moves after any number of updates, as a search's length grows.
    fn update_history(&mut self, cell: usize, me: Stone, change: i32) {
        let history = &mut self.history[cell][me.index()];
        *history += change - *history * change.abs() / HISTORY_MAX;
    }

    /// Adds the table's move and the killers to the moves' ordering scores.
    fn score_for_order(&self, list: &mut [(usize, i32)], tt_move: Option<usize>, ply: usize) {
        let killers = self.killers[ply];
        for entry in list.iter_mut() {
            if Some(entry.0) == tt_move {
                entry.1 = i32::MAX;
            } else if entry.0 == killers[0] {
                entry.1 += self.tuning.killer_bonus[0];
            } else if entry.0 == killers[1] {
                entry.1 += self.tuning.killer_bonus[1];
            }
        }
    }

    /// Fills `list` with the root's moves for `me`, best-scored first.
    pub fn root_moves(&mut self, me: Stone, list: &mut Vec<(usize, i32)>) -> MoveSet {
        let set = self.generate(me, list);
        sort_by_score(list);
        set
    }

    /// Iterative deepening at the root, from the iteration after `from`'s depth (0: a new
    /// search, whose score is 0). `root` holds the ordered root moves (at least two), `from`'s
    /// move first.
    pub fn iterate(
        &mut self,
        clock: &mut SearchClock,
        me: Stone,
        root: &mut Vec<(usize, i32)>,
        (from, max_depth): (RootResult, u32),
        progress: Option<&ProgressSink>,
    ) -> RootResult {
        let start = Choice {
            mv: from.cell,
            score: from.score,
            depth: from.depth,
        };
        let deadline = clock.deadline().clone();
        let depths = from.depth + 1..=max_depth.min(MAX_PLY as u32 - 8);
        let choice = deepen(&deadline, depths, start, |depth, choice| {
            // Before any complete iteration the choice's score is 0, the full window's centre.
            let (score, best_index, failed_high) =
                self.aspiration(clock, me, root, depth, choice.score);
            if clock.stopped() {
                // A move other than the previous choice is trusted when it completed its search
                // with a better score in the last attempt, or failed high in an earlier one.
                let improved = best_index
                    .map(|i| (root[i].0, score))
                    .or(failed_high)
                    .filter(|&(cell, _)| cell != choice.mv);
                return Iteration::CutShort { improved };
            }
            let best = root.remove(best_index.unwrap_or(0));
            root.insert(0, best);
            if let Some(sink) = progress {
                let line = self.principal_variation(me, best.0, depth as usize);
                let mv = self.pos.move_of(best.0);
                sink.report(&Progress {
                    depth,
                    score,
                    mv,
                    pv: line.into_iter().map(|c| self.pos.move_of(c)).collect(),
                    nodes: clock.nodes(),
                    elapsed: deadline.elapsed(),
                });
            }
            Iteration::Complete {
                mv: root[0].0,
                score,
            }
        });
        RootResult {
            cell: choice.mv,
            score: choice.score,
            depth: choice.depth,
        }
    }

    /// One root iteration in an aspiration window around the previous iteration's score,
    /// widened (four times, then to the edge of the proven scores, then to the full window)
    /// while the score falls outside it. Returns the score, the index in `root` of the best move
    /// when one completed its search, and the move that last failed high with its score (a
    /// lower bound), if one did.
    ///
    /// A window bounded by the proven scores leaves a win found in it a lower bound: the
    /// winner's nodes cut at the first win they see instead of proving the shortest, and the
    /// loser's at the first escape, which is all the choice of a move needs (a win at the edge
    /// ends the iteration). The full window, whose mates are exact, is searched only when every
    /// move is proved lost, for the longest resistance; in a 1 s search it cost ten times the
    /// nodes that had found the win (docs/engine.md, session 70).
    ///
    /// A move that fails high is moved to the front of `root`, so the wider window searches it
    /// first and a clock that stops during that search still leaves the move that beat the
    /// window (chess engines keep their root moves sorted so, e.g. Stockfish): in a replay of
    /// 89 searches at 0.3 s, 5 of 104 cut-short iterations ended during such a re-search with a
    /// move other than the previous choice (docs/engine.md, session 59).
    fn aspiration(
        &mut self,
        clock: &mut SearchClock,
        me: Stone,
        root: &mut [(usize, i32)],
        depth: u32,
        previous: Score,
    ) -> (i32, Option<usize>, Option<(usize, i32)>) {
        let mut window = self.tuning.aspiration_window;
        let mut failed_high = None;
        let (mut alpha, mut beta) = if depth >= 4 && previous.abs() < WIN_THRESHOLD {
            (previous - window, previous + window)
        } else {
            (-INFINITE, INFINITE)
        };
        loop {
            let (score, best_index) =
                self.root_search(clock, me, me.opponent(), root, depth as i32, alpha, beta);
            if clock.stopped() {
                return (score, best_index, failed_high);
            }
            if score <= alpha && alpha > -INFINITE {
                window *= 4;
                alpha = if score > -WIN_THRESHOLD {
                    (score - window).max(-WIN_THRESHOLD)
                } else {
                    -INFINITE
                };
            } else if score >= beta && beta < INFINITE {
                if let Some(i) = best_index {
                    failed_high = Some((root[i].0, score));
                    root[..=i].rotate_right(1);
                }
                if is_mate(score) {
                    return (score, best_index.map(|_| 0), failed_high);
                }
                window *= 4;
                beta = (score + window).min(WIN_THRESHOLD);
            } else {
                return (score, best_index, failed_high);
            }
        }
    }

    /// One root iteration of `plies` plies: returns the best score and the index of the best
    /// move when a move completed its search and raised alpha.
    #[allow(clippy::too_many_arguments)]
    fn root_search(
        &mut self,
        clock: &mut SearchClock,
        me: Stone,
        opp: Stone,
        root: &[(usize, i32)],
        plies: i32,
        mut alpha: i32,
        beta: i32,
    ) -> (i32, Option<usize>) {
        let mut best = -INFINITE;
        let mut best_index = None;
        let child_depth = (plies - 1) * PLY;
        for (i, &(cell, _)) in root.iter().enumerate() {
            let quiet = is_quiet(&self.pos, cell, me);
            self.attacking[0] = makes_attack(&self.pos, cell, me);
            self.pos.make(cell, me);
            let mut score;
            if i == 0 {
                score = -self.negamax(clock, opp, child_depth, -beta, -alpha, 1);
            } else {
                // Late quiet root moves are first searched a ply shallower.
                let reduction =
                    PLY * i32::from(quiet && plies >= 3 && i >= self.tuning.root_reduction_from);
                let reduced = child_depth - reduction;
                score = -self.negamax(clock, opp, reduced, -alpha - 1, -alpha, 1);
                if score > alpha && reduction > 0 && !clock.stopped() {
                    score = -self.negamax(clock, opp, child_depth, -alpha - 1, -alpha, 1);
                }
                if score > alpha && score < beta && !clock.stopped() {
                    score = -self.negamax(clock, opp, child_depth, -beta, -alpha, 1);
                }
            }
            self.pos.unmake(cell);
            if clock.stopped() {
                break;
            }
            if score > best {
                best = score;
                if score > alpha {
                    best_index = Some(i);
                    alpha = score;
                    if score >= beta {
                        break;
                    }
                }
            }
        }
        if best_index.is_none() && !clock.stopped() {
            best_index = Some(0);
        }
        (best, best_index)
    }
}

impl Searcher {
    /// The expected line of play from the root move `first`: the table's best move of each
    /// position in turn, while it has one that is legal, no stone has won, and `max_len` moves.
    pub fn principal_variation(&mut self, me: Stone, first: usize, max_len: usize) -> Vec<usize> {
        let mut line = Vec::new();
        let mut side = me;
        let mut cell = first;
        while line.len() < max_len && self.pos.is_playable(cell) {
            let wins = self.pos.class(cell, side) == Class::Win;
            self.pos.make(cell, side);
            line.push(cell);
            side = side.opponent();
            if wins {
                break;
            }
            let forced = self.pos.find_win(side.opponent());
            match forced.or_else(|| self.tt.probe(self.key(side)).and_then(|entry| entry.mv)) {
                Some(next) => cell = next,
                None => break,
            }
        }
        for &played in line.iter().rev() {
            self.pos.unmake(played);
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Board;
    use crate::engine::v2::pattern;

    fn position_of(rows: &[&str]) -> Position {
        let board = Board::from_rows(rows).unwrap();
        Position::new(&board, pattern::table_for(5, false).unwrap())
    }

    /// Black's open two on row 3 and open three on row 9; white's stones far from both.
    const ROWS: [&str; 13] = [
        ".............",
        ".............",
        ".............",
        "....NN.......",
        ".............",
        ".............",
        "B...........B",
        ".............",
        ".............",
        "....NNN......",
        ".............",
        ".............",
        "B...........B",
    ];

    #[test]
    fn only_a_new_single_three_at_a_non_pv_node_is_a_reducible_threat() {
        let pos = position_of(&ROWS);
        let cell = |row: usize, col: usize| pos.cell_of(crate::board::Move::new(row, col));
        let three = cell(3, 6);
        let four = cell(9, 7);
        let nothing = cell(0, 0);
        assert_eq!(pos.class(three, Stone::Black), Class::Three);
        assert!(pos.class(four, Stone::Black) >= Class::Four);
        assert!(is_reducible_threat(&pos, three, Stone::Black, false, false));
        assert!(
            !is_reducible_threat(&pos, three, Stone::Black, false, true),
            "a three that carries an attack on keeps its depth"
        );
        assert!(
            !is_reducible_threat(&pos, three, Stone::Black, true, false),
            "PV nodes reduce no threat"
        );
        assert!(!is_reducible_threat(&pos, four, Stone::Black, false, false));
        assert!(!is_reducible_threat(
            &pos,
            nothing,
            Stone::Black,
            false,
            false
        ));
    }

    #[test]
    fn probcut_returns_a_proved_win_as_it_is() {
        // Black, to move, makes an open four from its open three: the shallow search proves the
        // win in 3 plies (the four, any reply, the five), and the cut returns that mate, not one
        // a margin's worth of plies longer.
        let rows = [
            ".............",
            ".............",
            ".............",
            ".............",
            ".............",
            ".............",
            "....NNN......",
            ".............",
            ".............",
            "..B.........B",
            ".............",
            ".............",
            ".............",
        ];
        let (_, cut, stored) = probcut_at(&rows, &SearchParams::default(), 1_000);
        let cut = cut.expect("the open four reaches any bound");
        let entry = stored.expect("the cut is stored");
        assert_eq!(cut, score_from_table(entry.score, 0));
        assert_eq!(crate::engine::types::mate_distance(cut), Some(3), "{cut}");
    }

    #[test]
    fn a_root_move_that_fails_high_is_moved_first_and_reported() {
        let pos = position_of(&ROWS);
        let cell = |row: usize, col: usize| pos.cell_of(crate::board::Move::new(row, col));
        let (corner, open_four) = (cell(0, 0), cell(9, 7));
        let mut searcher = Searcher::new(pos, Tt::new(1 << 20), &SearchParams::default());
        let mut clock = SearchClock::new(crate::engine::time::Deadline::unlimited(), CHECK_EVERY);
        let mut root = vec![(corner, 0), (open_four, 0)];
        // A previous score far above what the corner is worth and far below the open four's
        // win: the corner fails low, the four fails high.
        let (score, best_index, failed_high) =
            searcher.aspiration(&mut clock, Stone::Black, &mut root, 4, 1_500);
        assert!(is_mate(score) && score > 0, "the open four wins: {score}");
        assert_eq!(
            root,
            [(open_four, 0), (corner, 0)],
            "searched first after it failed high"
        );
        assert_eq!(best_index, Some(0));
        let (moved, bound) = failed_high.expect("the four failed high");
        assert_eq!(moved, open_four);
        assert!(bound > 1_500 + searcher.tuning.aspiration_window, "{bound}");
    }

    /// ProbCut at a depth-6 node where black, to move, has every move open, against a beta this
    /// far above the static evaluation: the beta, the cut if any, and what the table then holds.
    fn probcut_at(
        rows: &[&str],
        params: &SearchParams,
        beta_above_eval: i32,
    ) -> (i32, Option<i32>, Option<Entry>) {
        let mut searcher = Searcher::new(position_of(rows), Tt::new(1 << 20), params);
        let mut clock = SearchClock::new(crate::engine::time::Deadline::unlimited(), CHECK_EVERY);
        let me = Stone::Black;
        let beta = searcher.evaluate(me) + beta_above_eval;
        let mut list = Vec::new();
        assert_eq!(searcher.generate(me, &mut list), MoveSet::All);
        searcher.score_for_order(&mut list, None, 0);
        let cut = searcher.probcut(&mut clock, me, 6 * PLY, beta, 0, None, &mut list);
        let stored = searcher.tt.probe(searcher.key(me));
        (beta, cut, stored)
    }

    #[test]
    fn probcut_cuts_only_far_above_beta_and_leaves_a_lower_bound() {
        // Black's open two and a lone stone, white's two far stones: black, to move, is better
        // but nowhere near a forced win.
        let rows = [
            ".............",
            ".............",
            ".............",
            "....NN.......",
            ".............",
            ".............",
            "B...........B",
            ".............",
            "......N......",
            ".............",
            ".............",
            ".............",
            ".............",
        ];
        let params = SearchParams::default();
        let (beta, cut, stored) = probcut_at(&rows, &params, -1_000);
        let score = cut.expect("a bound far below the evaluation is reached at once");
        assert!(score >= beta, "{score} against beta {beta}");
        let entry = stored.expect("the cut is stored");
        assert_eq!(entry.bound, Bound::Lower);
        assert_eq!(
            entry.depth, 3,
            "the shallow search's depth, 6 - 4 plies, plus one"
        );

        let (_, cut, stored) = probcut_at(&rows, &params, 1_000);
        assert_eq!(cut, None, "a bound far above the evaluation is not reached");
        assert!(stored.is_none());

        let off = SearchParams {
            probcut_depth: 0.0,
            ..SearchParams::default()
        };
        assert_eq!(
            probcut_at(&rows, &off, -1_000).1,
            None,
            "probcut_depth=0 turns it off"
        );
    }

    #[test]
    fn reverse_futility_takes_a_table_bound_sharper_than_the_evaluation() {
        let with = |table_eval: f64| {
            let params = SearchParams {
                table_eval,
                ..SearchParams::default()
            };
            Searcher::new(position_of(&ROWS), Tt::new(1 << 20), &params)
        };
        let searcher = with(1.0);
        let me = Stone::Black;
        let eval = searcher.evaluate(me);
        let entry = |score: i32, bound: Bound| Some((score, bound));
        let prune = |s: &Searcher, beta: i32, stored: Option<(i32, Bound)>| {
            s.reverse_futility(me, PLY, beta - 1, beta, false, stored)
        };
        let above = eval + 10;
        assert_eq!(prune(&searcher, above, None), None, "the evaluation alone");
        assert_eq!(
            prune(&searcher, above, entry(eval + 500, Bound::Lower)),
            Some(eval + 500),
            "a lower bound above the evaluation"
        );
        assert_eq!(
            prune(&searcher, above, entry(eval + 500, Bound::Upper)),
            None,
            "an upper bound above the evaluation says nothing"
        );
        assert_eq!(
            prune(&searcher, above, entry(mate_in(9), Bound::Lower)),
            None,
            "a proved win is the table cut's to use, not the pruning's"
        );
        assert_eq!(
            prune(&with(0.0), above, entry(eval + 500, Bound::Lower)),
            None,
            "table_eval=0: the static evaluation only"
        );
        let below = eval - 100;
        assert_eq!(prune(&searcher, below, None), Some(eval));
        assert_eq!(
            prune(&searcher, below, entry(eval - 500, Bound::Exact)),
            None,
            "an exact score below beta keeps the node"
        );
    }

    #[test]
    fn a_late_defence_is_reduced_unless_it_makes_a_four_three() {
        // White's open three on row 5 threatens an open four; black, to defend, has a block at
        // (5, 7), a four at (1, 3) and a four with an open three at (3, 10).
        let rows = [
            "NNN.......N..",
            "NNN.......N..",
            "..........N..",
            "........NN...",
            ".............",
            "....BBB......",
            ".............",
            ".............",
            ".............",
            ".............",
            ".............",
            ".............",
            ".............",
        ];
        let pos = position_of(&rows);
        let cell = |row: usize, col: usize| pos.cell_of(crate::board::Move::new(row, col));
        let (block, four, four_three) = (cell(5, 7), cell(1, 3), cell(3, 10));
        assert_eq!(pos.class(block, Stone::White), Class::WinNext);
        assert_eq!(pos.class(four, Stone::Black), Class::Four);
        assert_eq!(pos.class(four_three, Stone::Black), Class::FourThree);
        let reducing = SearchParams {
            defence_reduction: 1.0,
            ..SearchParams::default()
        };
        let searcher = Searcher::new(pos, Tt::new(0), &reducing);
        let reduction =
            |cell, child_depth| searcher.defence_reduction(cell, Stone::Black, child_depth);
        assert_eq!(reduction(block, 6 * PLY), PLY);
        assert_eq!(reduction(four, 6 * PLY), PLY);
        assert_eq!(
            reduction(four_three, 6 * PLY),
            0,
            "a four-three keeps its depth"
        );
        assert_eq!(
            reduction(block, PLY / 2),
            0,
            "a move less than a ply from the horizon"
        );
        assert_eq!(reduction(block, PLY + PLY / 2), PLY);
        let shipped = Searcher::new(position_of(&rows), Tt::new(0), &SearchParams::default());
        assert_eq!(
            shipped.defence_reduction(block, Stone::Black, 6 * PLY),
            0,
            "off by default"
        );
    }

    #[test]
    fn depth_units_round_down_to_whole_plies() {
        assert_eq!(plies(3 * PLY), 3);
        assert_eq!(plies(3 * PLY + PLY / 2), 3);
        assert_eq!(plies(-1), -1, "a fraction below zero is a ply below zero");
        assert_eq!(plies(-PLY), -1);
        assert_eq!(plies_with_fraction(3 * PLY + PLY / 2), 3.5);
    }

    #[test]
    fn a_late_move_reduction_is_whole_plies_within_the_depth() {
        let tuning = Tuning::new(&SearchParams::default());
        for depth in [2 * PLY, 5 * PLY + 3, 12 * PLY] {
            for i in 2..40 {
                let r = tuning.late_move_reduction(depth, i);
                assert_eq!(r % PLY, 0, "depth {depth}, move {i}: {r}");
                assert!(r >= 0 && r <= depth - PLY, "depth {depth}, move {i}: {r}");
            }
        }
    }

    #[test]
    fn a_reduced_move_far_above_alpha_is_searched_again_a_ply_deeper() {
        let with_margin = |margin: f64| {
            Tuning::new(&SearchParams {
                lmr_deeper_margin: margin,
                ..SearchParams::default()
            })
        };
        let tuning = with_margin(40.0);
        // Two plies of reduction: the first search must beat alpha by more than 40 + 2 * 11.
        assert_eq!(tuning.deeper_research(63, 2 * PLY), PLY);
        assert_eq!(tuning.deeper_research(62, 2 * PLY), 0);
        assert_eq!(tuning.deeper_research(52, PLY), PLY);
        assert_eq!(
            with_margin(0.0).deeper_research(10_000, 2 * PLY),
            0,
            "a margin of 0 is off"
        );
    }

    #[test]
    fn a_leaf_takes_a_stored_search_result_that_settles_its_window_only_when_asked() {
        let params = SearchParams {
            leaf_table: 1.0,
            ..SearchParams::default()
        };
        let mut searcher = Searcher::new(position_of(&ROWS), Tt::new(1 << 20), &params);
        let key = searcher.key(Stone::Black);
        let store = |searcher: &mut Searcher, depth, bound| {
            let entry = Entry {
                score: score_to_table(50, 3),
                mv: None,
                depth,
                bound,
                on_pv: false,
            };
            searcher.tt.store(key, entry);
        };
        assert_eq!(searcher.stored_leaf_score(Stone::Black, 0, 100, 3), None);
        store(&mut searcher, 0, Bound::Exact);
        assert_eq!(
            searcher.stored_leaf_score(Stone::Black, 0, 100, 3),
            None,
            "a leaf's own result is no search"
        );
        store(&mut searcher, 4, Bound::Lower);
        assert_eq!(searcher.stored_leaf_score(Stone::Black, 0, 40, 3), Some(50));
        assert_eq!(
            searcher.stored_leaf_score(Stone::Black, 0, 100, 3),
            None,
            "a lower bound inside the window settles nothing"
        );
        store(&mut searcher, 4, Bound::Exact);
        assert_eq!(
            searcher.stored_leaf_score(Stone::Black, 0, 100, 3),
            Some(50)
        );
        let mut off = Searcher::new(
            position_of(&ROWS),
            Tt::new(1 << 20),
            &SearchParams::default(),
        );
        store(&mut off, 4, Bound::Exact);
        assert_eq!(
            off.stored_leaf_score(Stone::Black, 0, 100, 3),
            None,
            "off by default"
        );
    }

    #[test]
    fn a_pv_node_whose_table_move_lags_is_searched_shallower() {
        let tuning = Tuning::new(&SearchParams {
            lagging_pv_reduction: 0.25,
            ..SearchParams::default()
        });
        let stored = |depth, mv| {
            Some(Entry {
                score: 0,
                mv,
                depth,
                bound: Bound::Exact,
                on_pv: true,
            })
        };
        // An entry of the last iteration lags by the one ply expected: nothing taken off.
        assert_eq!(tuning.lagging_pv(10 * PLY, stored(9, Some(1))), 0);
        // Four plies behind that: a quarter of them.
        assert_eq!(tuning.lagging_pv(10 * PLY, stored(5, Some(1))), PLY);
        assert_eq!(
            tuning.lagging_pv(10 * PLY, stored(-20, Some(1))),
            LAGGING_PV_MAX
        );
        assert_eq!(
            tuning.lagging_pv(10 * PLY, stored(5, None)),
            0,
            "no table move"
        );
        assert_eq!(tuning.lagging_pv(10 * PLY, None), 0);
        assert_eq!(
            tuning.lagging_pv(PLY, stored(-20, Some(1))),
            0,
            "a ply or less"
        );
        let off = Tuning::new(&SearchParams::default());
        assert_eq!(
            off.lagging_pv(10 * PLY, stored(5, Some(1))),
            0,
            "off by default"
        );
    }

    #[test]
    fn a_late_move_where_the_line_has_been_is_reduced_a_ply_less() {
        let tuning = Tuning::new(&SearchParams::default());
        let reduction = |i, reducible, pv_before| {
            Child::new(&tuning, 0, i, reducible, 8 * PLY, 7 * PLY, pv_before).reduction
        };
        let late = 20;
        assert!(reduction(late, true, false) >= 2 * PLY);
        assert_eq!(
            reduction(late, true, true),
            reduction(late, true, false) - PLY
        );
        assert_eq!(reduction(late, false, true), 0, "only reducible moves");
        assert_eq!(reduction(0, true, true), 0, "never the first move");
    }
}
