//! Morpion (tic-tac-toe): the agents, training and analysis of the course seeds 000, 002, 003
//! and 004, on the rules of `crate::board` (3×3, three in a row) and the engine's exact solver.

pub mod agents;
pub mod analysis;
pub mod arena;
pub mod attractor;
pub mod grid;
pub mod heuristic;
pub mod menace;
pub mod menu;
pub mod persistence;
pub mod rl;
pub mod stats;

use agents::GameError;
use persistence::StateError;

/// Why a run stopped: its state file, or a game that could not go on.
#[derive(Debug, thiserror::Error)]
pub enum MorpionError {
    #[error(transparent)]
    State(#[from] StateError),
    #[error(transparent)]
    Game(#[from] GameError),
}
