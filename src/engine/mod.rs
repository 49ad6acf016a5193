//! The player: given a position, a rule and a deadline, choose a move. No I/O, no async.

pub mod bench_positions;
mod deepen;
pub mod params;
pub(crate) mod solver;
mod time;
mod tt;
pub(crate) mod types;
mod v1;
mod v2;
mod zobrist;

use crate::board::{Board, ImpossibleCounts, Move, Rule, Stone};
pub use params::SearchParams;
use std::sync::{Arc, Mutex};
pub use time::{Clock, Deadline};
pub use types::{is_mate, Score, WIN, WIN_THRESHOLD};
pub use v2::{tuning, Workbench};

/// Which search answers. `V1` is the baseline alpha-beta the stronger engine is measured against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize)]
pub enum EngineKind {
    V1,
    #[default]
    V2,
}

impl std::str::FromStr for EngineKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "v1" => Ok(EngineKind::V1),
            "v2" => Ok(EngineKind::V2),
            other => Err(format!("unknown engine {other:?} (expected v1 or v2)")),
        }
    }
}

/// Default transposition-table size of one search.
pub const DEFAULT_HASH_BYTES: usize = 64 << 20;

#[derive(Clone, Debug)]
pub struct EngineConfig {
    pub kind: EngineKind,
    /// Bytes the search may use for its transposition table.
    pub hash_bytes: usize,
    /// Stop deepening after this depth (plies), whatever time is left.
    pub max_depth: Option<u32>,
    /// Stop the search after about this many nodes, whatever time is left (Yixin's `max_node`):
    /// a search that stops at a node count repeats itself whatever the machine's load.
    pub max_nodes: Option<u64>,
    /// Where the searches of one game keep their table from move to move (`None`: every search
    /// starts afresh, as a Connect5 request must).
    pub memory: Option<Arc<GameMemory>>,
    /// Told of every completed iteration (an analysis front end streams them); `None` for a
    /// search whose caller only wants its decision.
    pub progress: Option<ProgressSink>,
    /// The search's tunable constants (engine v2; the defaults are the engine as shipped).
    /// (Shared: every search of a session or match reads the same values.)
    pub params: Arc<SearchParams>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            kind: EngineKind::default(),
            hash_bytes: DEFAULT_HASH_BYTES,
            max_depth: None,
            max_nodes: None,
            memory: None,
            progress: None,
            params: Arc::default(),
        }
    }
}

/// Where a search stands after a completed iteration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The iteration's depth (plies).
    pub depth: u32,
    /// From the side to move's point of view, as [`Decision::score`].
    pub score: Score,
    pub mv: Move,
    pub pv: Vec<Move>,
    /// Nodes searched since the search began.
    pub nodes: u64,
    /// Time since the search's deadline started.
    pub elapsed: std::time::Duration,
}

/// A receiver of [`Progress`], called on the search's thread: it must return quickly.
#[derive(Clone)]
pub struct ProgressSink(Arc<dyn Fn(&Progress) + Send + Sync>);

impl ProgressSink {
    pub fn new(report: impl Fn(&Progress) + Send + Sync + 'static) -> ProgressSink {
        ProgressSink(Arc::new(report))
    }

    pub(crate) fn report(&self, progress: &Progress) {
        (self.0)(progress)
    }
}

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressSink")
    }
}

/// What the searches of a game hand on to the next one: v2's transposition table, with the rule
/// and board size its keys were made for. The Gomocup protocol lets a brain keep it between
/// moves (its next search starts from what the last one learnt about the positions two plies
/// on); a Connect5 request must be answered from its own board alone.
#[derive(Default)]
pub struct GameMemory {
    kept: Mutex<Option<KeptTable>>,
}

/// What a kept table's keys and size were made for: another rule or board size means other
/// positions under the same keys, and another size a table the budget no longer grants.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct TableUse {
    pub rule: Rule,
    pub rows: usize,
    pub cols: usize,
    pub bytes: usize,
}

struct KeptTable {
    made_for: TableUse,
    table: tt::Tt,
}

impl GameMemory {
    pub fn new() -> GameMemory {
        GameMemory::default()
    }

    /// The kept table, if it was made for this use.
    pub(crate) fn take(&self, made_for: TableUse) -> Option<tt::Tt> {
        let kept = self.kept.lock().ok()?.take()?;
        (kept.made_for == made_for).then_some(kept.table)
    }

    /// Forgets the kept table: the next search starts empty (Yixin's `YXHASHCLEAR`).
    pub fn clear(&self) {
        if let Ok(mut kept) = self.kept.lock() {
            *kept = None;
        }
    }

    pub(crate) fn keep(&self, made_for: TableUse, table: tt::Tt) {
        if let Ok(mut kept) = self.kept.lock() {
            *kept = Some(KeptTable { made_for, table });
        }
    }
}

impl std::fmt::Debug for GameMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bytes = self
            .kept
            .lock()
            .ok()
            .and_then(|kept| kept.as_ref().map(|k| k.table.bytes()));
        f.debug_struct("GameMemory")
            .field("kept_table_bytes", &bytes)
            .finish()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub mv: Move,
    /// From the side to move's point of view; [`types::mate_in`]`(n)` is a win in n plies.
    pub score: Score,
    /// Deepest fully searched iteration (plies).
    pub depth: u32,
    pub nodes: u64,
    pub pv: Vec<Move>,
}

/// Why a position has no move to choose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoMove {
    ImpossibleCounts(ImpossibleCounts),
    AlreadyWon(Stone),
    BoardFull,
}

impl std::fmt::Display for NoMove {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoMove::ImpossibleCounts(c) => c.fmt(f),
            NoMove::AlreadyWon(s) => write!(
                f,
                "game already won: {} ({}) has a winning line",
                s.name(),
                s.protocol_char()
            ),
            NoMove::BoardFull => write!(f, "board full: no empty cell to play"),
        }
    }
}

/// The checks every front end makes before asking for a move: whose turn it is, and whether the
/// game is still going.
pub fn side_to_move(board: &Board, rule: Rule) -> Result<Stone, NoMove> {
    let side = board.side_to_move().map_err(NoMove::ImpossibleCounts)?;
    if let Some(winner) = board.winner(rule) {
        return Err(NoMove::AlreadyWon(winner));
    }
    if board.is_full() {
        return Err(NoMove::BoardFull);
    }
    Ok(side)
}

/// A move chosen without searching: an immediate win, else a forced block, else the best move by
/// the baseline's move ordering. What a budget of 0 gets, and the session's answer when a search
/// overruns.
pub fn instant_move(board: &Board, rule: Rule) -> Result<Move, NoMove> {
    let side = side_to_move(board, rule)?;
    let now = std::time::Instant::now();
    let config = EngineConfig {
        kind: EngineKind::V1,
        hash_bytes: 0,
        max_depth: Some(1),
        ..EngineConfig::default()
    };
    Ok(v1::search(board, rule, side, &Deadline::at(now, now), &config).mv)
}

/// A move no search can improve on, found without one: an immediate win, else the block of the
/// opponent's five (the only move that does not lose at once; with several to block the game is
/// lost whatever), else the last empty cell. `None` when the position needs a search.
pub fn certain_move(board: &Board, rule: Rule) -> Result<Option<Move>, NoMove> {
    let side = side_to_move(board, rule)?;
    let mut block = None;
    let mut empty_cells = 0;
    let mut last_empty = None;
    for mv in board.empty_cells() {
        if board.wins_at(mv, side, rule) {
            return Ok(Some(mv));
        }
        if block.is_none() && board.wins_at(mv, side.opponent(), rule) {
            block = Some(mv);
        }
        empty_cells += 1;
        last_empty = Some(mv);
    }
    Ok(block.or(if empty_cells == 1 { last_empty } else { None }))
}

/// Chooses a move for the side to move. Small boards go to the exact solver; everything else to
/// the configured search. Always answers with a legal move when the position has one.
pub fn think(
    board: &Board,
    rule: Rule,
    deadline: &Deadline,
    config: &EngineConfig,
) -> Result<Decision, NoMove> {
    let side = side_to_move(board, rule)?;
    if let Some(decision) = solver::solve_small(board, rule, side, deadline) {
        return Ok(decision);
    }
    let decision = match config.kind {
        EngineKind::V1 => v1::search(board, rule, side, deadline, config),
        EngineKind::V2 => v2::search(board, rule, side, deadline, config),
    };
    Ok(decision)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search_with(board: &Board, rule: Rule, memory: &Option<Arc<GameMemory>>) -> Decision {
        let config = EngineConfig {
            hash_bytes: 4 << 20,
            max_depth: Some(5),
            memory: memory.clone(),
            ..EngineConfig::default()
        };
        think(board, rule, &Deadline::unlimited(), &config).expect("a move to play")
    }

    #[test]
    fn a_kept_table_makes_the_next_search_of_a_known_position_shorter() {
        let (_, rows) = bench_positions::POSITIONS[1];
        let board = Board::from_rows(rows).expect("a bench position");
        let rule = Rule::for_board(board.rows(), board.cols());
        let afresh = search_with(&board, rule, &None);
        assert_eq!(
            search_with(&board, rule, &None),
            afresh,
            "a search is repeatable"
        );
        let memory = Some(Arc::new(GameMemory::new()));
        let first = search_with(&board, rule, &memory);
        assert_eq!(
            first.nodes, afresh.nodes,
            "an empty kept table is a new table"
        );
        let second = search_with(&board, rule, &memory);
        assert!(
            second.nodes < first.nodes,
            "second search {} nodes, first {}",
            second.nodes,
            first.nodes
        );
        // Another rule's keys mean other positions: its search starts afresh.
        let freestyle = Rule {
            overline_wins: true,
            ..rule
        };
        assert_eq!(
            search_with(&board, freestyle, &memory).nodes,
            search_with(&board, freestyle, &None).nodes
        );
    }
}
