//! Games between two players, one at a time or in series, with each player's record.

use rand::rngs::StdRng;

use crate::board::Stone;

use super::agents::{Agent, AgentKind, Console, GameError};
use super::grid::{symbol, Grid, Status};
use super::stats::{Outcome, Record};

pub struct Player {
    pub agent: Agent,
    pub record: Record,
}

impl Player {
    pub fn new(kind: AgentKind) -> Player {
        Player {
            agent: Agent::new(kind),
            record: Record::default(),
        }
    }

    pub fn kind(&self) -> AgentKind {
        self.agent.kind()
    }
}

/// The end of a game: `Some(winner)` or `None` for a draw.
pub type Winner = Option<Stone>;

/// Plays one game, `x` first. With `show`, every position is written to the console (empty cells
/// numbered when a human plays). Both agents are told the result and both records updated.
pub fn play_game(
    x: &mut Player,
    o: &mut Player,
    rng: &mut StdRng,
    console: &mut Console,
    show: bool,
) -> Result<Winner, GameError> {
    let numbers = x.kind() == AgentKind::Human || o.kind() == AgentKind::Human;
    let mut grid = Grid::EMPTY;
    if show {
        console.say(&grid.render(numbers));
    }
    let winner = loop {
        match grid.status() {
            Status::ToMove(side) => {
                let player = if side == Stone::Black {
                    &mut *x
                } else {
                    &mut *o
                };
                let cell = player.agent.choose(grid, rng, console)?;
                if !grid.is_empty_cell(cell) {
                    return Err(GameError::IllegalMove {
                        agent: player.kind(),
                        cell,
                        grid,
                    });
                }
                grid = grid.with(cell, side);
                if show {
                    console.say(&format!(
                        "\n{} ({}) plays {cell}\n{}",
                        symbol(side),
                        player.kind(),
                        grid.render(numbers)
                    ));
                }
            }
            Status::Won(winner) => break Some(winner),
            Status::Draw => break None,
            Status::Impossible => return Err(GameError::ImpossiblePosition(grid)),
        }
    };
    x.agent.game_over(winner, Stone::Black);
    o.agent.game_over(winner, Stone::White);
    x.record.add(Outcome::for_side(winner, Stone::Black));
    o.record.add(Outcome::for_side(winner, Stone::White));
    if show {
        console.say(&format!("\nResult: {}\n", result_word(winner)));
    }
    Ok(winner)
}

/// The seed's result words: XWIN, OWIN, DRAW.
pub fn result_word(winner: Winner) -> &'static str {
    match winner {
        Some(Stone::Black) => "XWIN",
        Some(Stone::White) => "OWIN",
        None => "DRAW",
    }
}

/// Plays `games` games, `x` always first.
pub fn play_series(
    x: &mut Player,
    o: &mut Player,
    games: u64,
    rng: &mut StdRng,
    console: &mut Console,
) -> Result<(), GameError> {
    for _ in 0..games {
        play_game(x, o, rng, console, false)?;
    }
    Ok(())
}
