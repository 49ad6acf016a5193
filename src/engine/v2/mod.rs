//! Engine v2: the tournament engine. Pattern-coded positions (incremental line patterns under the
//! exact-k rule), VCF threat-space search, and a PVS/iterative-deepening search with a
//! transposition table and forced-defence pruning. See docs/engine.md for the design.

mod eval;
mod pattern;
mod position;
mod search;
mod threat;

use super::types::{is_mate, mate_in, mated_in, Score};
use super::{Deadline, Decision, EngineConfig};
use crate::board::{Board, Move, Rule, Stone};
use position::Position;
use search::{MoveSet, Searcher, ROOT_VCF_DEPTH};

/// The engine's hot paths outside a search, for the criterion benches.
pub struct Workbench {
    pos: Position,
    history: Vec<[u32; 2]>,
    list: Vec<(usize, i32)>,
    me: Stone,
}

impl Workbench {
    /// `None` when the rule's line is longer than the pattern tables cover (k > 5) or the
    /// position has no side to move.
    pub fn new(board: &Board, rule: Rule) -> Option<Workbench> {
        let table = pattern::table_for(rule.k, rule.overline_wins)?;
        let me = board.side_to_move().ok()?;
        let pos = Position::new(board, table);
        let cells = pos.width * (pos.rows + 2 * position::PAD);
        Some(Workbench {
            pos,
            history: vec![[0; 2]; cells],
            list: Vec::new(),
            me,
        })
    }

    /// Generates and scores the side to move's moves; returns how many.
    pub fn generate(&mut self) -> usize {
        search::generate_moves(&mut self.pos, &self.history, self.me, &mut self.list);
        self.list.len()
    }

    /// Makes and unmakes every empty candidate cell once; returns how many.
    pub fn make_unmake_all(&mut self) -> usize {
        let cells: Vec<usize> = self
            .pos
            .candidates()
            .iter()
            .map(|&c| c as usize)
            .filter(|&c| self.pos.is_empty(c))
            .collect();
        for &cell in &cells {
            self.pos.make(cell, self.me);
            self.pos.unmake(cell);
        }
        cells.len()
    }

    /// Static evaluation from the side to move's point of view.
    pub fn evaluate(&self) -> i32 {
        eval::evaluate(&self.pos, self.me)
    }
}

/// Deepest iteration when no limit is configured (the clock stops the search long before).
const DEFAULT_MAX_DEPTH: u32 = 100;

pub fn search(
    board: &Board,
    rule: Rule,
    side: Stone,
    deadline: &Deadline,
    config: &EngineConfig,
) -> Decision {
    let Some(table) = pattern::table_for(rule.k, rule.overline_wins) else {
        // Lines longer than five do not fit the pattern keys; the generic engine plays them.
        return super::v1::search(board, rule, side, deadline, config);
    };
    let pos = Position::new(board, table);
    let decision = if pos.stones() == 0 {
        let mv = pos.move_of(pos.centre());
        single(mv, 0, 0)
    } else {
        let mut searcher = Searcher::new(pos, deadline, table_bytes(deadline, config.hash_bytes));
        think(&mut searcher, side, config.max_depth)
    };
    if board.is_empty_cell(decision.mv) {
        decision
    } else {
        // Never reached by a correct search; an illegal answer would forfeit the game.
        tracing::error!(mv = %decision.mv, "v2 chose an occupied cell; playing the first empty one");
        let mv = board.empty_cells().next().unwrap_or(decision.mv);
        single(mv, 0, decision.depth)
    }
}

/// Transposition-table bytes per second of search: a little more than the entries a second of
/// search can fill, so short searches do not pay for faulting in and freeing a large table.
const TABLE_BYTES_PER_SECOND: f64 = 32.0 * 1024.0 * 1024.0;
const MIN_TABLE_BYTES: usize = 1 << 20;

fn table_bytes(deadline: &Deadline, configured: usize) -> usize {
    if deadline.is_unlimited() {
        return configured;
    }
    let by_time = (deadline.total().as_secs_f64() * TABLE_BYTES_PER_SECOND) as usize;
    configured.min(by_time.max(MIN_TABLE_BYTES))
}

fn single(mv: Move, score: Score, depth: u32) -> Decision {
    Decision {
        mv,
        score,
        depth,
        nodes: 0,
        pv: vec![mv],
    }
}

fn think(searcher: &mut Searcher<'_>, me: Stone, max_depth: Option<u32>) -> Decision {
    let opp = me.opponent();
    let decide = |s: &Searcher<'_>, cell: usize, score: Score, depth: u32| Decision {
        mv: s.pos.move_of(cell),
        score,
        depth,
        nodes: s.nodes,
        pv: vec![s.pos.move_of(cell)],
    };
    if let Some(five) = searcher.pos.find_win(me) {
        return decide(searcher, five, mate_in(1), 1);
    }
    let mut root = Vec::new();
    let set = searcher.generate(me, &mut root);
    if root.is_empty() && set == MoveSet::Defence {
        // Lost against any defence: block the strongest threat anyway (the opponent may err).
        let mut all = Vec::new();
        searcher
            .pos
            .cells_of_class(opp, pattern::C_WIN_NEXT, &mut all);
        let cell = all
            .first()
            .copied()
            .or_else(|| first_empty_candidate(searcher))
            .unwrap_or_else(|| searcher.pos.centre());
        return decide(searcher, cell, mated_in(4), 0);
    }
    if root.is_empty() {
        // Only on a full board (every empty cell is within reach of a stone otherwise), which
        // `engine::think` never passes; answer something legal all the same.
        let cell = searcher
            .pos
            .first_empty()
            .unwrap_or_else(|| searcher.pos.centre());
        return decide(searcher, cell, 0, 0);
    }
    root.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    if root.len() == 1 || set == MoveSet::ForcedBlock {
        // Two cells that each make the opponent's five: the block of one loses to the other.
        let score = if searcher.pos.count(opp, pattern::C_WIN) >= 2 {
            mated_in(2)
        } else {
            searcher.evaluate(me)
        };
        return decide(searcher, root[0].0, score, 0);
    }
    if searcher.deadline_expired() {
        let score = searcher.evaluate(me);
        return decide(searcher, root[0].0, score, 0);
    }
    if let Some((cell, plies)) = searcher.vcf_root(me, ROOT_VCF_DEPTH) {
        return decide(searcher, cell, mate_in(plies), plies as u32);
    }
    if let Some((cell, plies)) = root_vct(searcher, me) {
        return decide(searcher, cell, mate_in(plies), plies as u32);
    }
    // The main search leaves part of the time to check its choice against the opponent's VCT.
    if !searcher.deadline_is_unlimited() {
        let share = searcher.deadline_remaining().mul_f64(SEARCH_TIME_SHARE);
        searcher.soft_stop = Some(std::time::Instant::now() + share);
    }
    let result = searcher.iterate(me, &mut root, max_depth.unwrap_or(DEFAULT_MAX_DEPTH).max(1));
    searcher.soft_stop = None;
    searcher.aborted = searcher.deadline_expired();
    if is_mate(result.score) || searcher.aborted {
        return decide(searcher, result.cell, result.score, result.depth);
    }
    let cell = safe_choice(searcher, me, result.cell, &root);
    let mut decision = decide(searcher, cell, result.score, result.depth);
    if cell == result.cell {
        let line = searcher.principal_variation(me, cell, result.depth.max(1) as usize);
        decision.pv = line.into_iter().map(|c| searcher.pos.move_of(c)).collect();
    }
    decision
}

/// Share of the time left after the root VCT that the main search may use.
const SEARCH_TIME_SHARE: f64 = 0.9;
/// Root moves checked against the opponent's VCT, and the node cap of one check without a clock.
const SAFETY_CHECKS: usize = 6;
const SAFETY_NODES_UNLIMITED: u64 = 20_000;
const SAFETY_VCT_DEPTH: u32 = 10;

/// The searched move, unless the opponent has a VCT against it; then the first of the next best
/// root moves that survives the same check (or the searched move when none does or time runs
/// out). A safety net for attacks deeper than the main search saw.
fn safe_choice(
    searcher: &mut Searcher<'_>,
    me: Stone,
    chosen: usize,
    root: &[(usize, i32)],
) -> usize {
    let mut candidates = vec![chosen];
    candidates.extend(
        root.iter()
            .map(|&(c, _)| c)
            .filter(|&c| c != chosen)
            .take(SAFETY_CHECKS - 1),
    );
    for (i, &cell) in candidates.iter().enumerate() {
        if searcher.deadline_is_unlimited() {
            searcher.node_limit = searcher.nodes + SAFETY_NODES_UNLIMITED;
        } else {
            // The searched move gets most of the time: it is the one usually played.
            let share = if i == 0 {
                searcher.deadline_remaining().mul_f64(0.6)
            } else {
                searcher.deadline_remaining() / (candidates.len() - i) as u32
            };
            searcher.soft_stop = Some(std::time::Instant::now() + share);
        }
        searcher.pos.make(cell, me);
        let refuted = searcher.vct_root(me.opponent(), SAFETY_VCT_DEPTH).is_some();
        searcher.pos.unmake(cell);
        let timed_out = searcher.aborted;
        searcher.node_limit = u64::MAX;
        searcher.soft_stop = None;
        searcher.aborted = searcher.deadline_expired();
        if searcher.aborted || (i == 0 && timed_out) {
            return chosen;
        }
        if !refuted && !timed_out {
            return cell;
        }
    }
    chosen
}

/// Share of the budget the root VCT may use, and its node cap when the search has no clock.
const VCT_TIME_SHARE: f64 = 0.1;
const VCT_NODES_UNLIMITED: u64 = 200_000;
const VCT_MAX_DEPTH: u32 = 12;

/// A VCT search at the root, bounded by a share of the time (or a node cap without a clock);
/// leaves the searcher ready for the main search.
fn root_vct(searcher: &mut Searcher<'_>, me: Stone) -> Option<(usize, i32)> {
    if searcher.deadline_is_unlimited() {
        searcher.node_limit = searcher.nodes + VCT_NODES_UNLIMITED;
    } else {
        let share = searcher.deadline_remaining().mul_f64(VCT_TIME_SHARE);
        searcher.soft_stop = Some(std::time::Instant::now() + share);
    }
    let found = searcher.vct_root(me, VCT_MAX_DEPTH);
    searcher.node_limit = u64::MAX;
    searcher.soft_stop = None;
    searcher.aborted = searcher.deadline_expired();
    found
}

fn first_empty_candidate(searcher: &Searcher<'_>) -> Option<usize> {
    searcher
        .pos
        .candidates()
        .iter()
        .map(|&c| c as usize)
        .find(|&c| searcher.pos.is_empty(c))
}
