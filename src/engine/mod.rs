//! The player: given a position, a rule and a deadline, choose a move. No I/O, no async.

pub mod bench_positions;
mod deepen;
pub(crate) mod solver;
mod time;
mod tt;
pub(crate) mod types;
mod v1;
mod v2;
mod zobrist;

use crate::board::{Board, ImpossibleCounts, Move, Rule, Stone};
pub use time::{Clock, Deadline};
pub use types::{Score, WIN, WIN_THRESHOLD};
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
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            kind: EngineKind::default(),
            hash_bytes: DEFAULT_HASH_BYTES,
            max_depth: None,
        }
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
