//! The morpion lab of the web board: 3×3 against the course's agents. The learning agents are
//! trained once, the first time a request needs them, with fixed seeds (so every server plays the
//! same trained agents), and then only play: web games teach them nothing.

use std::sync::{Mutex, OnceLock};

use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};

use crate::morpion::agents::{Agent, AgentKind, Console, Perfect};
use crate::morpion::arena::{play_series, Player};
use crate::morpion::grid::{cell_move, Grid, Status};

use super::api::ApiError;

/// MENACE's training: games in each seat against the perfect player (it stops losing within a
/// few hundred, `docs/morpion.md`).
const MENACE_TRAINING_GAMES: u64 = 2_000;
/// The RL agent's training: games in each seat against the random player, the seed's setting.
const RL_TRAINING_GAMES: u64 = 100_000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MorpionBody {
    /// Nine cells, `X`, `O` or `.`, cell 0 top left.
    grid: String,
    agent: String,
}

#[derive(Debug, Serialize)]
pub struct MorpionAnswer {
    cell: usize,
    row: usize,
    col: usize,
    agent: String,
    /// MENACE's beads per cell for the position it moved from.
    beads: Option<Vec<u32>>,
    /// The perfect player's value of each cell for the side to move (+1 win, 0 draw, -1 loss;
    /// `None` for occupied cells).
    values: Option<Vec<Option<i32>>>,
}

/// The agents of the lab, shared by every request.
#[derive(Default)]
pub struct Lab {
    menace: OnceLock<Mutex<Agent>>,
    rl: OnceLock<Mutex<Agent>>,
    perfect: Mutex<Perfect>,
    rng: Mutex<Option<StdRng>>,
}

/// No agent of the lab is a human: nothing is read, and nothing is written where a server's
/// stdout is.
fn silent_console() -> Console<'static> {
    Console {
        input: Box::new(std::io::empty()),
        output: Box::new(std::io::sink()),
    }
}

fn trained(kind: AgentKind, trainer: AgentKind, games: u64, seed: u64) -> Mutex<Agent> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut console = silent_console();
    let mut learner = Player::new(kind);
    learner.agent.set_training(true);
    let mut opponent = Player::new(trainer);
    // A failed series leaves the agent with what it learnt so far.
    let first = play_series(&mut learner, &mut opponent, games, &mut rng, &mut console);
    let second = play_series(&mut opponent, &mut learner, games, &mut rng, &mut console);
    if let Err(error) = first.and(second) {
        tracing::error!(%error, "morpion lab: training stopped early");
    }
    learner.agent.set_training(false);
    tracing::info!(agent = %kind, games = 2 * games, "morpion lab: agent trained");
    Mutex::new(learner.agent)
}

impl Lab {
    /// The agent's move in the body's position. Blocking (a first MENACE or RL request trains
    /// the agent: under a second): call it off the async threads.
    pub fn answer(&self, body: &[u8]) -> Result<MorpionAnswer, ApiError> {
        let body: MorpionBody =
            serde_json::from_slice(body).map_err(|error| ApiError::BadJson(error.to_string()))?;
        let grid = Grid::parse(&body.grid).map_err(|error| ApiError::BadGrid(error.to_string()))?;
        match grid.status() {
            Status::ToMove(_) => {}
            Status::Won(winner) => {
                return Err(ApiError::BadGrid(format!(
                    "the game is over: {} has three in a row",
                    crate::morpion::grid::symbol(winner)
                )))
            }
            Status::Draw => return Err(ApiError::BadGrid("the grid is full".to_string())),
            Status::Impossible => {
                return Err(ApiError::BadGrid(format!(
                    "{:?} cannot arise in a game: X moves first, then turns alternate",
                    body.grid
                )))
            }
        }
        let kind = AgentKind::parse(&body.agent)
            .ok()
            .filter(|kind| *kind != AgentKind::Human)
            .ok_or_else(|| {
                ApiError::BadAgent(format!(
                    "unknown agent {:?}: perfect, menace, rl, random, heuristic:N or attractor",
                    body.agent
                ))
            })?;
        let mut rng_slot = self.rng.lock().unwrap_or_else(|e| e.into_inner());
        let rng = rng_slot.get_or_insert_with(|| StdRng::seed_from_u64(rand::random()));
        let mut console = silent_console();
        let mut beads = None;
        let chosen = match kind {
            AgentKind::Menace => {
                let menace = self.menace.get_or_init(|| {
                    trained(
                        AgentKind::Menace,
                        AgentKind::Perfect,
                        MENACE_TRAINING_GAMES,
                        1,
                    )
                });
                let mut agent = menace.lock().unwrap_or_else(|e| e.into_inner());
                if let Agent::Menace(menace) = &*agent {
                    beads = Some(menace.beads(grid).to_vec());
                }
                agent.choose(grid, rng, &mut console)
            }
            AgentKind::Rl => {
                let rl = self.rl.get_or_init(|| {
                    trained(AgentKind::Rl, AgentKind::Random, RL_TRAINING_GAMES, 1)
                });
                let mut agent = rl.lock().unwrap_or_else(|e| e.into_inner());
                agent.choose(grid, rng, &mut console)
            }
            other => Agent::new(other).choose(grid, rng, &mut console),
        };
        let cell = chosen.map_err(|error| ApiError::BadGrid(error.to_string()))?;
        let values = (kind == AgentKind::Perfect).then(|| self.values(grid));
        let mv = cell_move(cell);
        Ok(MorpionAnswer {
            cell,
            row: mv.row,
            col: mv.col,
            agent: kind.to_string(),
            beads,
            values,
        })
    }

    /// Each empty cell's exact value for the side to move: +1 a win, 0 a draw, -1 a loss.
    fn values(&self, grid: Grid) -> Vec<Option<i32>> {
        let mut perfect = self.perfect.lock().unwrap_or_else(|e| e.into_inner());
        let mut values = vec![None; 9];
        for &(cell, value) in perfect.move_values(grid) {
            if let Some(slot) = values.get_mut(cell) {
                *slot = Some(value.signum());
            }
        }
        values
    }
}
