//! The players: human, random, perfect, MENACE, RL, heuristic, attractor.

use std::collections::HashMap;
use std::fmt;
use std::io::{BufRead, Write};

use rand::rngs::StdRng;
use rand::Rng;

use crate::board::Stone;
use crate::engine::solver;

use super::attractor;
use super::grid::{move_cell, rule, symbol, Grid};
use super::heuristic::HeuristicMinimax;
use super::menace::Menace;
use super::rl::Rl;
use super::stats::Outcome;

/// What the command line names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentKind {
    Human,
    Random,
    Perfect,
    Menace,
    Rl,
    Heuristic(u32),
    Attractor,
}

/// Deepest useful heuristic search: the game has nine moves.
pub const MAX_HEURISTIC_DEPTH: u32 = 9;

/// Why a word of the command line names no agent.
#[derive(Debug, thiserror::Error)]
pub enum AgentNameError {
    #[error("heuristic depth {0:?} is not a number (expected heuristic:P with P from 1 to {MAX_HEURISTIC_DEPTH})")]
    DepthNotANumber(String),
    #[error("heuristic depth {0} out of range (1 to {MAX_HEURISTIC_DEPTH})")]
    DepthOutOfRange(u32),
    #[error("unknown agent {0:?} (expected human, random, perfect (or ai), menace, rl, heuristic:P or attractor)")]
    Unknown(String),
}

/// Why a game stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum GameError {
    #[error("no move to play in {0}")]
    NoMove(Grid),
    #[error("the solver has no value for {0}")]
    NoSolverValue(Grid),
    #[error("the input ended before the human played")]
    InputEnded,
    #[error("cannot read the standard input: {0}")]
    ReadInput(std::io::Error),
    #[error("{agent} played cell {cell}, which is not free in {grid}")]
    IllegalMove {
        agent: AgentKind,
        cell: usize,
        grid: Grid,
    },
    #[error("impossible position {0}")]
    ImpossiblePosition(Grid),
}

impl AgentKind {
    pub fn parse(text: &str) -> Result<AgentKind, AgentNameError> {
        let lower = text.to_ascii_lowercase();
        let kind = match lower.as_str() {
            "human" => AgentKind::Human,
            "random" => AgentKind::Random,
            "perfect" | "ai" => AgentKind::Perfect,
            "menace" => AgentKind::Menace,
            "rl" => AgentKind::Rl,
            "attractor" => AgentKind::Attractor,
            _ => {
                if let Some(depth) = lower.strip_prefix("heuristic:") {
                    let depth: u32 = depth
                        .parse()
                        .map_err(|_| AgentNameError::DepthNotANumber(depth.to_string()))?;
                    if !(1..=MAX_HEURISTIC_DEPTH).contains(&depth) {
                        return Err(AgentNameError::DepthOutOfRange(depth));
                    }
                    AgentKind::Heuristic(depth)
                } else {
                    return Err(AgentNameError::Unknown(text.to_string()));
                }
            }
        };
        Ok(kind)
    }

    /// Whether the agent learns from its games (and has a table to save).
    pub fn learns(self) -> bool {
        matches!(self, AgentKind::Menace | AgentKind::Rl)
    }
}

impl fmt::Display for AgentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentKind::Human => f.write_str("human"),
            AgentKind::Random => f.write_str("random"),
            AgentKind::Perfect => f.write_str("perfect"),
            AgentKind::Menace => f.write_str("menace"),
            AgentKind::Rl => f.write_str("rl"),
            AgentKind::Heuristic(p) => write!(f, "heuristic:{p}"),
            AgentKind::Attractor => f.write_str("attractor"),
        }
    }
}

/// The perfect player: the engine's exact solver values every move; the agent plays one of the
/// best at random (best = the quickest win, else a draw, else the slowest loss).
#[derive(Default)]
pub struct Perfect {
    cache: HashMap<Grid, Vec<(usize, i32)>>,
}

impl Perfect {
    /// The exact value of each legal move (`WIN - n`: win in n plies; 0: draw; negative: loss).
    pub fn move_values(&mut self, grid: Grid) -> &[(usize, i32)] {
        self.cache.entry(grid).or_insert_with(|| {
            let Some(side) = grid.to_move() else {
                return Vec::new();
            };
            solver::move_values(&grid.to_board(), rule(), side)
                .unwrap_or_default()
                .into_iter()
                .map(|(mv, value)| (move_cell(mv), value))
                .collect()
        })
    }

    pub fn best_cells(&mut self, grid: Grid) -> Vec<usize> {
        let values = self.move_values(grid);
        let best = values.iter().map(|&(_, v)| v).max();
        values
            .iter()
            .filter(|&&(_, v)| Some(v) == best)
            .map(|&(c, _)| c)
            .collect()
    }
}

pub enum Agent {
    Human,
    Random,
    Perfect(Perfect),
    Menace(Menace),
    Rl(Rl),
    Heuristic {
        depth: u32,
        search: HeuristicMinimax,
    },
    Attractor,
}

impl Agent {
    pub fn new(kind: AgentKind) -> Agent {
        match kind {
            AgentKind::Human => Agent::Human,
            AgentKind::Random => Agent::Random,
            AgentKind::Perfect => Agent::Perfect(Perfect::default()),
            AgentKind::Menace => Agent::Menace(Menace::new()),
            AgentKind::Rl => Agent::Rl(Rl::new()),
            AgentKind::Heuristic(depth) => Agent::Heuristic {
                depth,
                search: HeuristicMinimax::new(),
            },
            AgentKind::Attractor => Agent::Attractor,
        }
    }

    pub fn kind(&self) -> AgentKind {
        match self {
            Agent::Human => AgentKind::Human,
            Agent::Random => AgentKind::Random,
            Agent::Perfect(_) => AgentKind::Perfect,
            Agent::Menace(_) => AgentKind::Menace,
            Agent::Rl(_) => AgentKind::Rl,
            Agent::Heuristic { depth, .. } => AgentKind::Heuristic(*depth),
            Agent::Attractor => AgentKind::Attractor,
        }
    }

    /// Training mode (learning agents update their tables) or exploitation mode.
    pub fn set_training(&mut self, training: bool) {
        match self {
            Agent::Menace(menace) => menace.learning = training,
            Agent::Rl(rl) => rl.training = training,
            _ => {}
        }
    }

    /// The cell to play in `grid`, where it is the agent's turn. A human is asked on `console`.
    pub fn choose(
        &mut self,
        grid: Grid,
        rng: &mut StdRng,
        console: &mut Console,
    ) -> Result<usize, GameError> {
        let empties: Vec<usize> = grid.empty_cells().collect();
        if empties.is_empty() || grid.to_move().is_none() {
            return Err(GameError::NoMove(grid));
        }
        let random = |rng: &mut StdRng, cells: &[usize]| cells[rng.gen_range(0..cells.len())];
        let cell = match self {
            Agent::Human => console.ask_cell(grid)?,
            Agent::Random => random(rng, &empties),
            Agent::Perfect(perfect) => {
                let best = perfect.best_cells(grid);
                if best.is_empty() {
                    return Err(GameError::NoSolverValue(grid));
                }
                random(rng, &best)
            }
            Agent::Menace(menace) => menace.choose(grid, rng),
            Agent::Rl(rl) => rl.choose(grid, rng),
            Agent::Heuristic { depth, search } => {
                let best = search.best_cells(grid, *depth);
                random(rng, &best)
            }
            Agent::Attractor => match attractor::choose(grid, rng) {
                Some((cell, _)) => cell,
                None => random(rng, &empties),
            },
        };
        Ok(cell)
    }

    /// Tells the agent how the game it played as `side` ended.
    pub fn game_over(&mut self, winner: Option<Stone>, side: Stone) {
        let outcome = Outcome::for_side(winner, side);
        match self {
            Agent::Menace(menace) => menace.finish(outcome),
            Agent::Rl(rl) => rl.finish(outcome),
            _ => {}
        }
    }
}

/// Where a human player reads its moves and the games are shown.
pub struct Console<'a> {
    pub input: Box<dyn BufRead + 'a>,
    pub output: Box<dyn Write + 'a>,
}

impl<'a> Console<'a> {
    pub fn stdio() -> Console<'static> {
        Console {
            input: Box::new(std::io::BufReader::new(std::io::stdin())),
            output: Box::new(std::io::stdout()),
        }
    }

    /// Reads one line; `None` at the end of the input.
    pub fn read_line(&mut self) -> Result<Option<String>, GameError> {
        let mut line = String::new();
        match self.input.read_line(&mut line) {
            Ok(0) => Ok(None),
            Ok(_) => Ok(Some(line.trim().to_string())),
            Err(e) => Err(GameError::ReadInput(e)),
        }
    }

    pub fn say(&mut self, text: &str) {
        // A closed stdout (a pipe to `head`) is no reason to stop the games.
        let _ = self.output.write_all(text.as_bytes());
        let _ = self.output.flush();
    }

    /// Asks the human for a cell until a legal one is given.
    fn ask_cell(&mut self, grid: Grid) -> Result<usize, GameError> {
        let side = grid.to_move().ok_or(GameError::NoMove(grid))?;
        loop {
            self.say(&format!("{} to play: ", symbol(side)));
            let Some(line) = self.read_line()? else {
                return Err(GameError::InputEnded);
            };
            match line.parse::<usize>() {
                Ok(cell) if grid.is_empty_cell(cell) => return Ok(cell),
                Ok(cell) if cell < 9 => self.say(&format!("cell {cell} is taken\n")),
                _ => self.say(&format!(
                    "{line:?} is not a free cell: type a number from 0 to 8 among the free cells\n"
                )),
            }
        }
    }
}
