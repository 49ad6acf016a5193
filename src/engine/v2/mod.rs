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
use super::{Deadline, Decision, EngineConfig, SearchParams, TableUse};
use crate::board::{Board, Move, Rule, Stone};
use eval::CellTables;
use movegen::MoveSet;
use pattern::Class;
use position::Position;
use search::{RootResult, Searcher, CHECK_EVERY, ROOT_VCF_DEPTH};

/// The engine's hot paths outside a search, for the criterion benches.
pub struct Workbench {
    pos: Position,
    history: Vec<[i32; 2]>,
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
        let mut clock =
            SearchClock::new(deadline.clone(), CHECK_EVERY).with_node_budget(config.max_nodes);
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
    // The reply to a lone stone is one of its neighbours: positions of fewer than four stones
    // are outside the data the evaluation was fitted to, and Rapfi rates the replies two cells
    // away that it leads to 150 to 330 worse (docs/engine.md, "session 33").
    if searcher.pos.stones() == 1 && root.iter().any(|&(c, _)| searcher.pos.touches_a_stone(c)) {
        root.retain(|&(c, _)| searcher.pos.touches_a_stone(c));
    }
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
    let params = &config.params;
    // A search limited in depth (`INFO max_depth`) bounds its threat searches by the node caps
    // of a search without a clock, whatever its turn: with their shares of a 600 s turn they
    // took 78 million nodes (55 s) where the whole search now takes under a million
    // (docs/engine.md, session 80).
    let depth_limited = config.max_depth.is_some();
    let vct_cap = depth_limited.then_some(VCT_NODES_UNLIMITED);
    if let Some((cell, plies)) = root_vct(searcher, clock, me, params, vct_cap) {
        return decide(searcher, clock.nodes(), cell, mate_in(plies), plies as u32);
    }
    let safety_cap = depth_limited.then_some(SAFETY_NODES_UNLIMITED);
    let threat = opponent_threat(searcher, clock, me, params, safety_cap);
    let (result, cell) = checked_search(searcher, clock, me, &mut root, threat, config);
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
    searcher: &mut Searcher,
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
        let cell = root[0].0;
        let score = if searcher.pos.count(opp, Class::Win) >= 2 {
            mated_in(2)
        } else {
            // The position the move leaves, valued as the search values a child (a result its
            // patterns prove, else its static evaluation): the evaluation of the one before it,
            // where the opponent has a four to complete, is no judgement of it (+2,537 in a
            // position lost in four plies; docs/engine.md, session 80).
            searcher.pos.make(cell, me);
            let after = searcher
                .proven_result(opp, 1)
                .unwrap_or_else(|| searcher.evaluate(opp));
            searcher.pos.unmake(cell);
            -after
        };
        return Some((cell, score));
    }
    None
}

/// Most checks of root moves against the opponent's VCT in one search.
const SAFETY_CHECKS: usize = 6;

/// Node cap of one of the opponent's VCT searches without a clock, so that a fixed-depth search
/// (`connect5 bench`) is mostly its main search.
const SAFETY_NODES_UNLIMITED: u64 = 20_000;

/// What a search of the opponent's VCT found: one, none (searched to the check's depth), or
/// nothing known (out of time, or not searched).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OpponentVct {
    Found,
    None,
    Unknown,
}

/// Searches the opponent's VCT in the current position as if it were to move, within `share`
/// of the time left (and `most_nodes`, if given).
fn opponent_vct(
    searcher: &mut Searcher,
    clock: &mut SearchClock,
    me: Stone,
    (share, most_nodes): (f64, Option<u64>),
    params: &SearchParams,
) -> OpponentVct {
    let mut part = limited_part(clock, share, SAFETY_NODES_UNLIMITED).with_node_budget(most_nodes);
    let depth = params.safety_vct_depth.round() as u32;
    let found = searcher
        .threats
        .vct_root(&mut searcher.pos, &mut part, me.opponent(), depth)
        .is_some();
    let timed_out = clock.rejoin(part);
    if found {
        OpponentVct::Found
    } else if timed_out {
        OpponentVct::Unknown
    } else {
        OpponentVct::None
    }
}

/// The opponent's VCT after our `cell`.
fn check_move(
    searcher: &mut Searcher,
    clock: &mut SearchClock,
    me: Stone,
    cell: usize,
    params: &SearchParams,
) -> OpponentVct {
    searcher.pos.make(cell, me);
    // The searched move gets most of the time left: it is the one usually played. But never
    // more nodes than the search has taken so far: a VCT search of the check's depth can run
    // for minutes where the opponent has many threats and no win (173 million nodes after a
    // depth-10 search of 208 thousand, docs/engine.md, session 79).
    let most_nodes = clock.nodes().max(SAFETY_NODES_UNLIMITED);
    let check = opponent_vct(searcher, clock, me, (0.6, Some(most_nodes)), params);
    searcher.pos.unmake(cell);
    check
}

/// The main search when the opponent may have a VCT: the chosen move is checked against it; a
/// refuted move leaves the root moves and the same depth is searched again without it; a safe
/// one is kept while the search goes on deeper with the time left, and is played unless the
/// search's last choice is safe too (or the search found a forced result). When the moves left
/// are all proved lost, the first refuted move is played instead: the search did not see its
/// loss, so the opponent has a longer win to find there than the one the search proved.
/// Returns the search's last result and the move to play. Without a threat the search has the
/// whole time.
fn checked_search(
    searcher: &mut Searcher,
    clock: &mut SearchClock,
    me: Stone,
    root: &mut Vec<(usize, i32)>,
    threat: OpponentVct,
    config: &EngineConfig,
) -> (RootResult, usize) {
    let params = &config.params;
    let max_depth = config.max_depth.unwrap_or(DEFAULT_MAX_DEPTH).max(1);
    let search_share = match threat {
        OpponentVct::None => 1.0,
        OpponentVct::Found => params.threatened_search_share,
        OpponentVct::Unknown => params.search_time_share,
    };
    let mut from = RootResult::before_search(root);
    let mut share = search_share;
    let mut verified = None;
    let mut first_refuted = None;
    let mut checks = 0;
    loop {
        let mut part = clock.share(share);
        let result = searcher.iterate(
            &mut part,
            me,
            root,
            (from, max_depth),
            config.progress.as_ref(),
        );
        clock.rejoin(part);
        if threat == OpponentVct::None || is_mate(result.score) {
            // Only a checked search has refuted moves; its branch here means a proved result.
            let proved_lost = is_mate(result.score) && result.score < 0 && verified.is_none();
            return (
                result,
                first_refuted.filter(|_| proved_lost).unwrap_or(result.cell),
            );
        }
        if clock.stopped() || verified == Some(result.cell) || checks == SAFETY_CHECKS {
            return (result, verified.unwrap_or(result.cell));
        }
        checks += 1;
        match check_move(searcher, clock, me, result.cell, params) {
            OpponentVct::Unknown => return (result, verified.unwrap_or(result.cell)),
            OpponentVct::None => {
                verified = Some(result.cell);
                from = result;
                share = 1.0;
            }
            OpponentVct::Found => {
                first_refuted.get_or_insert(result.cell);
                root.retain(|&(cell, _)| cell != result.cell);
                if root.len() < 2 {
                    let cell = root.first().map_or(result.cell, |&(cell, _)| cell);
                    return (result, cell);
                }
                from = RootResult {
                    cell: root[0].0,
                    score: result.score,
                    depth: result.depth.saturating_sub(1),
                };
                share = search_share;
            }
        }
    }
}

/// What the opponent could do with a free move. A stone of ours only takes patterns from the
/// opponent, so without a VCT now it has none after any of our moves, and the check of our move
/// can be skipped. Bounded by its share of the time and by `most_nodes`, if given.
fn opponent_threat(
    searcher: &mut Searcher,
    clock: &mut SearchClock,
    me: Stone,
    params: &SearchParams,
    most_nodes: Option<u64>,
) -> OpponentVct {
    // With a five or an open four of ours to make, the opponent's VCT search has nothing to say.
    if params.threat_time_share <= 0.0 || searcher.pos.count_at_least(me, Class::WinNext) > 0 {
        return OpponentVct::Unknown;
    }
    opponent_vct(
        searcher,
        clock,
        me,
        (params.threat_time_share, most_nodes),
        params,
    )
}

/// A part of the search bounded by `share` of the time (and of the node budget) left, or by
/// `nodes_unlimited` nodes when the search has neither a clock nor a node budget.
fn limited_part(clock: &SearchClock, share: f64, nodes_unlimited: u64) -> SearchClock {
    if clock.deadline().is_unlimited() && !clock.has_node_budget() {
        clock.part(clock.deadline().clone(), Some(nodes_unlimited))
    } else {
        clock.share(share)
    }
}

/// Node cap of the root VCT without a clock.
const VCT_NODES_UNLIMITED: u64 = 200_000;

/// A VCT search at the root, bounded by a share of the time (or a node cap without a clock)
/// and by `most_nodes`, if given.
fn root_vct(
    searcher: &mut Searcher,
    clock: &mut SearchClock,
    me: Stone,
    params: &SearchParams,
    most_nodes: Option<u64>,
) -> Option<(usize, i32)> {
    let mut part = limited_part(clock, params.vct_time_share, VCT_NODES_UNLIMITED)
        .with_node_budget(most_nodes);
    let depth = params.vct_max_depth.round() as u32;
    let found = searcher
        .threats
        .vct_root(&mut searcher.pos, &mut part, me, depth);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Move;
    use crate::engine::EngineKind;

    /// Black (`N`) to move, four stones each. In `CROSSING`, white (`B`) has two open twos
    /// whose lines cross on an empty cell (a free white move there makes two open threes), and
    /// a VCT after all but three of black's moves (7 7, 5 9 and 9 5, by the VCT search).
    const CROSSING: [&str; 15] = [
        "N.............N",
        "...............",
        "...............",
        "...............",
        "...............",
        ".......B.......",
        ".......BN......",
        ".....BB........",
        "......N........",
        "...............",
        "...............",
        "...............",
        "...............",
        "...............",
        "...............",
    ];
    /// Four stones each, scattered: no two of a colour share a line within reach.
    const SCATTERED: [&str; 15] = [
        "N.............N",
        "...............",
        "...............",
        "...B...........",
        "...............",
        "...............",
        "...........B...",
        "...............",
        "...............",
        "..B............",
        "...............",
        "...............",
        "..........B....",
        "...............",
        "N.............N",
    ];

    fn searcher_for(rows: &[&str]) -> Searcher {
        searcher_of(&Board::from_rows(rows).unwrap())
    }

    fn searcher_of(board: &Board) -> Searcher {
        let table = pattern::table_for(5, false).unwrap();
        let pos = Position::new(board, table);
        Searcher::new(pos, Tt::new(1 << 20), &SearchParams::default())
    }

    fn threat_of(rows: &[&str], params: &SearchParams) -> OpponentVct {
        let mut searcher = searcher_for(rows);
        let mut clock = SearchClock::new(Deadline::unlimited(), CHECK_EVERY);
        opponent_threat(&mut searcher, &mut clock, Stone::Black, params, None)
    }

    #[test]
    fn the_opponent_threat_is_found_proved_absent_or_not_searched() {
        let params = SearchParams::default();
        assert_eq!(
            threat_of(&CROSSING, &params),
            OpponentVct::Found,
            "white's free move at the crossing makes two open threes"
        );
        assert_eq!(threat_of(&SCATTERED, &params), OpponentVct::None);
        let no_threat_search = SearchParams {
            threat_time_share: 0.0,
            ..params
        };
        assert_eq!(
            threat_of(&CROSSING, &no_threat_search),
            OpponentVct::Unknown,
            "a share of 0 searches nothing"
        );
    }

    #[test]
    fn the_checked_search_plays_a_move_the_opponent_has_no_vct_against() {
        let board = Board::from_rows(&CROSSING).unwrap();
        let rule = Rule::exact(5);
        let config = EngineConfig {
            kind: EngineKind::V2,
            max_depth: Some(2),
            ..EngineConfig::default()
        };
        let decision = crate::engine::think(&board, rule, &Deadline::unlimited(), &config).unwrap();
        assert!(
            !white_wins_after(&board, decision.mv),
            "black played {} and white still wins",
            decision.mv
        );
    }

    /// A position of a game connect5 lost as black against Rapfi (black to move): white has a VCT
    /// after all but 13 of black's moves (by the VCT search): after 7 7, but not after 6 5.
    const GAME_POSITION: [&str; 15] = [
        "...............",
        "...............",
        "...............",
        "...............",
        "...............",
        "...............",
        ".......B.N.....",
        ".....BN.BBN....",
        "......NBN......",
        "......BN.......",
        ".......BN......",
        "...............",
        "...............",
        "...............",
        "...............",
    ];

    /// Whether white, to move after black's `mv`, has a VCT (the check's depth).
    fn white_wins_after(board: &Board, mv: Move) -> bool {
        let mut after = board.clone();
        after.play(mv, Stone::Black).unwrap();
        let mut searcher = searcher_of(&after);
        let mut clock = SearchClock::new(Deadline::unlimited(), CHECK_EVERY);
        searcher
            .threats
            .vct_root(&mut searcher.pos, &mut clock, Stone::White, 10)
            .is_some()
    }

    #[test]
    fn a_refuted_move_leaves_the_root_and_the_search_goes_on_without_it() {
        let board = Board::from_rows(&GAME_POSITION).unwrap();
        let safe = Move::new(6, 5);
        // One ply: the search itself sees no loss, only the checks do.
        let config = EngineConfig {
            max_depth: Some(1),
            ..EngineConfig::default()
        };
        let search = |moves: &[Move], threat: OpponentVct| {
            let mut searcher = searcher_for(&GAME_POSITION);
            let mut root: Vec<(usize, i32)> = moves
                .iter()
                .map(|&mv| (searcher.pos.cell_of(mv), 0))
                .collect();
            let mut clock = SearchClock::new(Deadline::unlimited(), CHECK_EVERY);
            let (_, played) = checked_search(
                &mut searcher,
                &mut clock,
                Stone::Black,
                &mut root,
                threat,
                &config,
            );
            let root: Vec<Move> = root.iter().map(|&(c, _)| searcher.pos.move_of(c)).collect();
            (searcher.pos.move_of(played), root)
        };
        // The move one ply prefers among the safe one and those near the stones that are not,
        // whatever the evaluation.
        let others_safe = [
            (4, 7),
            (5, 8),
            (7, 4),
            (8, 5),
            (8, 11),
            (9, 5),
            (9, 8),
            (9, 12),
            (11, 8),
            (11, 9),
            (12, 8),
            (12, 10),
        ]
        .map(|(r, c)| Move::new(r, c));
        let candidates: Vec<Move> = (4..13)
            .flat_map(|r| (3..13).map(move |c| Move::new(r, c)))
            .filter(|&mv| board.is_empty_cell(mv) && !others_safe.contains(&mv))
            .collect();
        let (preferred, _) = search(&candidates, OpponentVct::None);
        assert_ne!(preferred, safe, "the premise: one ply prefers another move");
        assert!(
            white_wins_after(&board, preferred),
            "{preferred} is refuted"
        );
        assert!(!white_wins_after(&board, safe));
        let (played, root) = search(&[preferred, safe], OpponentVct::Found);
        assert_eq!(played, safe);
        assert!(
            !root.contains(&preferred),
            "the refuted move {preferred} left the root: {root:?}"
        );
    }

    #[test]
    fn the_reply_to_a_lone_stone_is_next_to_it() {
        for (rows, cols, stone) in [
            (15, 15, (7, 7)),
            (15, 15, (0, 0)),
            (20, 20, (9, 12)),
            (12, 30, (6, 29)),
        ] {
            let mut board = Board::new(rows, cols).unwrap();
            board
                .play(Move::new(stone.0, stone.1), Stone::Black)
                .unwrap();
            let config = EngineConfig {
                kind: EngineKind::V2,
                max_depth: Some(6),
                ..EngineConfig::default()
            };
            let decision =
                crate::engine::think(&board, Rule::exact(5), &Deadline::unlimited(), &config)
                    .unwrap();
            let (dr, dc) = (
                decision.mv.row.abs_diff(stone.0),
                decision.mv.col.abs_diff(stone.1),
            );
            assert!(
                dr.max(dc) == 1,
                "{rows}x{cols}, lone stone at {stone:?}: replied {}",
                decision.mv
            );
        }
    }
}
