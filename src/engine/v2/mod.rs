//! Engine v2: the tournament engine. Pattern-coded positions (incremental line patterns under the
//! exact-k rule), VCF threat-space search, and a PVS/iterative-deepening search with a
//! transposition table and forced-defence pruning. See docs/engine.md for the design.

mod eval;
/// The fitted tables (`eval_weights.txt`, `ordering_weights.txt`) as build.rs wrote them.
mod learned {
    include!(concat!(env!("OUT_DIR"), "/eval_weights.rs"));
}
mod movegen;
mod pattern;
mod position;
mod search;
mod threat;
pub mod tuning;

use super::time::SearchClock;
use super::tt::Tt;
use super::types::{is_mate, mate_in, mated_in, Score};
use super::{Deadline, Decision, EngineConfig, TableUse};
use crate::board::{Board, Move, Rule, Stone};
use eval::CellTables;
use movegen::MoveSet;
use pattern::Class;
use position::Position;
use search::{Searcher, CHECK_EVERY, ROOT_VCF_DEPTH};

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
        movegen::generate_moves(&mut self.pos, &self.history, self.me, &mut self.list);
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
    let pos = Position::with_tables(board, table, CellTables::for_params(&config.params));
    let decision = if pos.stones() == 0 {
        let mv = pos.move_of(pos.centre());
        single(mv, 0, 0)
    } else {
        // A table kept for the game's next searches is worth its full size; one used once only
        // what the budget's nodes can fill.
        let made_for = TableUse {
            rule,
            rows: board.rows(),
            cols: board.cols(),
            bytes: match &config.memory {
                Some(_) => config.hash_bytes,
                None => table_bytes(deadline, config.hash_bytes),
            },
        };
        let mut tt = config
            .memory
            .as_ref()
            .and_then(|memory| memory.take(made_for))
            .unwrap_or_else(|| Tt::new(made_for.bytes));
        tt.next_search();
        let mut searcher = Searcher::new(pos, tt, &config.params);
        let mut clock = SearchClock::new(deadline.clone(), CHECK_EVERY);
        let decision = think(&mut searcher, &mut clock, side, config);
        if let Some(memory) = &config.memory {
            memory.keep(made_for, searcher.into_table());
        }
        decision
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

fn think(
    searcher: &mut Searcher,
    clock: &mut SearchClock,
    me: Stone,
    config: &EngineConfig,
) -> Decision {
    let decide = |s: &Searcher, nodes: u64, cell: usize, score: Score, depth: u32| Decision {
        mv: s.pos.move_of(cell),
        score,
        depth,
        nodes,
        pv: vec![s.pos.move_of(cell)],
    };
    if let Some(five) = searcher.pos.find_win(me) {
        return decide(searcher, clock.nodes(), five, mate_in(1), 1);
    }
    let mut root = Vec::new();
    let set = searcher.root_moves(me, &mut root);
    if let Some((cell, score)) = forced_answer(searcher, me, &root, set) {
        return decide(searcher, clock.nodes(), cell, score, 0);
    }
    if clock.deadline().expired() {
        let score = searcher.evaluate(me);
        return decide(searcher, clock.nodes(), root[0].0, score, 0);
    }
    if let Some((cell, plies)) =
        searcher
            .threats
            .vcf_root(&mut searcher.pos, clock, me, ROOT_VCF_DEPTH)
    {
        return decide(searcher, clock.nodes(), cell, mate_in(plies), plies as u32);
    }
    if let Some((cell, plies)) = root_vct(searcher, clock, me) {
        return decide(searcher, clock.nodes(), cell, mate_in(plies), plies as u32);
    }
    // The main search leaves part of the time to check its choice against the opponent's VCT.
    let mut main = clock.part(clock.deadline().share(SEARCH_TIME_SHARE), None);
    let result = searcher.iterate(
        &mut main,
        me,
        &mut root,
        config.max_depth.unwrap_or(DEFAULT_MAX_DEPTH).max(1),
        config.progress.as_ref(),
    );
    clock.rejoin(main);
    if is_mate(result.score) || clock.stopped() {
        return decide(
            searcher,
            clock.nodes(),
            result.cell,
            result.score,
            result.depth,
        );
    }
    let cell = safe_choice(searcher, clock, me, result.cell, &root);
    let mut decision = decide(searcher, clock.nodes(), cell, result.score, result.depth);
    if cell == result.cell {
        let line = searcher.principal_variation(me, cell, result.depth.max(1) as usize);
        decision.pv = line.into_iter().map(|c| searcher.pos.move_of(c)).collect();
    }
    decision
}

/// The answer when the position leaves no choice worth searching: every defence loses (block the
/// strongest threat anyway: the opponent may err), no move at all (a full board, which
/// `engine::think` never passes), a single move, or the block of a four.
fn forced_answer(
    searcher: &Searcher,
    me: Stone,
    root: &[(usize, i32)],
    set: MoveSet,
) -> Option<(usize, Score)> {
    let opp = me.opponent();
    if root.is_empty() && set == MoveSet::Defence {
        let mut all = Vec::new();
        searcher.pos.cells_of_class(opp, Class::WinNext, &mut all);
        let cell = all
            .first()
            .copied()
            .or_else(|| first_empty_candidate(searcher))
            .unwrap_or_else(|| searcher.pos.centre());
        return Some((cell, mated_in(4)));
    }
    if root.is_empty() {
        let cell = searcher
            .pos
            .first_empty()
            .unwrap_or_else(|| searcher.pos.centre());
        return Some((cell, 0));
    }
    if root.len() == 1 || set == MoveSet::ForcedBlock {
        // Two cells that each make the opponent's five: the block of one loses to the other.
        let score = if searcher.pos.count(opp, Class::Win) >= 2 {
            mated_in(2)
        } else {
            searcher.evaluate(me)
        };
        return Some((root[0].0, score));
    }
    None
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
    searcher: &mut Searcher,
    clock: &mut SearchClock,
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
        // The searched move gets most of the time: it is the one usually played.
        let share = if i == 0 {
            0.6
        } else {
            1.0 / (candidates.len() - i) as f64
        };
        let mut check = limited_part(clock, share, SAFETY_NODES_UNLIMITED);
        searcher.pos.make(cell, me);
        let refuted = searcher
            .threats
            .vct_root(
                &mut searcher.pos,
                &mut check,
                me.opponent(),
                SAFETY_VCT_DEPTH,
            )
            .is_some();
        searcher.pos.unmake(cell);
        let timed_out = clock.rejoin(check);
        if clock.stopped() || (i == 0 && timed_out) {
            return chosen;
        }
        if !refuted && !timed_out {
            return cell;
        }
    }
    chosen
}

/// A part of the search bounded by `share` of the time left, or by `nodes_unlimited` nodes when
/// the search has no clock.
fn limited_part(clock: &SearchClock, share: f64, nodes_unlimited: u64) -> SearchClock {
    if clock.deadline().is_unlimited() {
        clock.part(clock.deadline().clone(), Some(nodes_unlimited))
    } else {
        clock.part(clock.deadline().share(share), None)
    }
}

/// Share of the budget the root VCT may use, and its node cap when the search has no clock.
const VCT_TIME_SHARE: f64 = 0.1;
const VCT_NODES_UNLIMITED: u64 = 200_000;
const VCT_MAX_DEPTH: u32 = 12;

/// A VCT search at the root, bounded by a share of the time (or a node cap without a clock).
fn root_vct(searcher: &mut Searcher, clock: &mut SearchClock, me: Stone) -> Option<(usize, i32)> {
    let mut part = limited_part(clock, VCT_TIME_SHARE, VCT_NODES_UNLIMITED);
    let found = searcher
        .threats
        .vct_root(&mut searcher.pos, &mut part, me, VCT_MAX_DEPTH);
    clock.rejoin(part);
    found
}

fn first_empty_candidate(searcher: &Searcher) -> Option<usize> {
    searcher
        .pos
        .candidates()
        .iter()
        .map(|&c| c as usize)
        .find(|&c| searcher.pos.is_empty(c))
}
