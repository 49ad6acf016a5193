//! The averaged-return learner of seed 004.
//!
//! For each position `b` met and each legal move `m`, Ŝ(b, m) is the average of the scores (+1
//! won, −1 lost, 0 drawn) of the games in which the agent played `m` from `b`. Every Ŝ starts at 0
//! "as if the move had been played once". In training mode the agent plays a random move with
//! probability ε = 0.25 and otherwise the best Ŝ (ties broken at random), and updates the averages
//! of the moves it played when the game ends. In exploitation mode it always plays the best Ŝ
//! (random among ties) and changes nothing. Positions are keyed as they are, without symmetry, as
//! in the seed.

use std::collections::HashMap;

use rand::rngs::StdRng;
use rand::Rng;

use super::grid::{Grid, CELLS};
use super::stats::Outcome;

/// Probability of a random move in training mode.
pub const EPSILON: f64 = 0.25;

/// Ŝ(b, m) as the sum of the scores it averages and their number, the initial "one game" scored
/// 0 included. Scores are whole numbers, so the sum is exact and saves without rounding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Estimate {
    pub total: i64,
    pub count: u64,
}

impl Default for Estimate {
    fn default() -> Self {
        Estimate { total: 0, count: 1 }
    }
}

impl Estimate {
    /// Ŝ(b, m), the average score.
    pub fn mean(&self) -> f64 {
        self.total as f64 / self.count as f64
    }
}

#[derive(Clone, Debug)]
pub struct Rl {
    table: HashMap<Grid, [Estimate; CELLS]>,
    played: Vec<(Grid, usize)>,
    pub training: bool,
    pub epsilon: f64,
}

impl Default for Rl {
    fn default() -> Self {
        Rl::new()
    }
}

impl Rl {
    /// A new agent, in training mode as the seed's `createRlAgent`.
    pub fn new() -> Rl {
        Rl {
            table: HashMap::new(),
            played: Vec::new(),
            training: true,
            epsilon: EPSILON,
        }
    }

    /// Ŝ(b, m) (0 for a position never met).
    pub fn score(&self, grid: Grid, cell: usize) -> f64 {
        self.estimate(grid, cell).mean()
    }

    pub fn estimate(&self, grid: Grid, cell: usize) -> Estimate {
        self.table.get(&grid).map(|e| e[cell]).unwrap_or_default()
    }

    /// Number of positions with an entry.
    pub fn positions(&self) -> usize {
        self.table.len()
    }

    pub fn choose(&mut self, grid: Grid, rng: &mut StdRng) -> usize {
        let empties: Vec<usize> = grid.empty_cells().collect();
        let cell = if self.training && rng.gen_bool(self.epsilon) {
            empties[rng.gen_range(0..empties.len())]
        } else {
            self.greedy(grid, &empties, rng)
        };
        self.record_move(grid, cell);
        cell
    }

    /// Equation (3) of the seed: a move of maximal Ŝ, at random among equals.
    fn greedy(&self, grid: Grid, empties: &[usize], rng: &mut StdRng) -> usize {
        let best = empties
            .iter()
            .map(|&c| self.score(grid, c))
            .fold(f64::NEG_INFINITY, f64::max);
        let ties: Vec<usize> = empties
            .iter()
            .copied()
            .filter(|&c| self.score(grid, c) == best)
            .collect();
        ties[rng.gen_range(0..ties.len())]
    }

    /// Remembers a move for the update at the end of the game (training mode only).
    pub fn record_move(&mut self, grid: Grid, cell: usize) {
        if self.training {
            self.played.push((grid, cell));
        }
    }

    /// The end-of-game update: each played move's average takes in the game's score.
    pub fn finish(&mut self, outcome: Outcome) {
        let score = match outcome {
            Outcome::Won => 1,
            Outcome::Lost => -1,
            Outcome::Drawn => 0,
        };
        for (grid, cell) in std::mem::take(&mut self.played) {
            let estimate = &mut self.table.entry(grid).or_default()[cell];
            estimate.count += 1;
            estimate.total += score;
        }
    }

    pub fn reset(&mut self) {
        self.table.clear();
        self.played.clear();
    }

    /// The learnt averages, for saving: only the moves played at least once.
    pub fn table(&self) -> impl Iterator<Item = (Grid, usize, Estimate)> + '_ {
        self.table.iter().flat_map(|(grid, estimates)| {
            estimates
                .iter()
                .enumerate()
                .filter(|(_, e)| e.count > 1)
                .map(move |(cell, e)| (*grid, cell, *e))
        })
    }

    /// Rebuilds an agent from saved averages, refusing anything no game could have produced.
    pub fn from_table(
        entries: impl IntoIterator<Item = (Grid, usize, Estimate)>,
    ) -> Result<Rl, RlTableError> {
        let mut rl = Rl::new();
        for (grid, cell, estimate) in entries {
            if grid.to_move().is_none() {
                return Err(RlTableError::NoMoveToPlay(grid));
            }
            if !grid.is_empty_cell(cell) {
                return Err(RlTableError::IllegalMove { grid, cell });
            }
            // Each game adds a score of -1, 0 or 1 to the total; the first "game" scored 0.
            if estimate.count < 2 || estimate.total.unsigned_abs() >= estimate.count {
                return Err(RlTableError::ImpossibleAverage {
                    grid,
                    cell,
                    estimate,
                });
            }
            let slot = &mut rl.table.entry(grid).or_default()[cell];
            if slot.count > 1 {
                return Err(RlTableError::Duplicate { grid, cell });
            }
            *slot = estimate;
        }
        Ok(rl)
    }
}

/// A saved average that no game could have produced.
#[derive(Debug, thiserror::Error)]
pub enum RlTableError {
    #[error("position {0} is not one where a move is played")]
    NoMoveToPlay(Grid),
    #[error("move {cell} is not legal in position {grid}")]
    IllegalMove { grid: Grid, cell: usize },
    #[error(
        "total score {} over {} games for move {cell} in {grid} is impossible",
        estimate.total,
        estimate.count
    )]
    ImpossibleAverage {
        grid: Grid,
        cell: usize,
        estimate: Estimate,
    },
    #[error("move {cell} in {grid} appears twice")]
    Duplicate { grid: Grid, cell: usize },
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn averages_start_at_zero_as_if_played_once() {
        let mut rl = Rl::new();
        let grid = Grid::EMPTY;
        assert_eq!(rl.estimate(grid, 4), Estimate::default());
        rl.record_move(grid, 4);
        rl.finish(Outcome::Won);
        // (0 + 1) / 2
        assert_eq!(rl.score(grid, 4), 0.5);
        rl.record_move(grid, 4);
        rl.finish(Outcome::Lost);
        // (0 + 1 - 1) / 3
        assert_eq!(rl.score(grid, 4), 0.0);
        rl.record_move(grid, 4);
        rl.finish(Outcome::Won);
        assert_eq!(rl.score(grid, 4), 0.25);
        assert_eq!(rl.estimate(grid, 4).count, 4);
        // Other moves are untouched.
        assert_eq!(rl.score(grid, 0), 0.0);
    }

    #[test]
    fn every_move_of_the_game_is_updated_with_the_game_score() {
        let mut rl = Rl::new();
        // A hand-made game where the agent is O: it played 0 then 8, and lost.
        let first = Grid::parse("....X....").unwrap();
        let second = Grid::parse("O...X.X.X").unwrap();
        rl.record_move(first, 0);
        rl.record_move(second, 8);
        rl.finish(Outcome::Lost);
        assert_eq!(rl.score(first, 0), -0.5);
        assert_eq!(rl.score(second, 8), -0.5);
        rl.record_move(first, 0);
        rl.finish(Outcome::Drawn);
        assert!((rl.score(first, 0) - (-1.0 / 3.0)).abs() < 1e-12);
    }

    #[test]
    fn exploitation_is_greedy_and_learns_nothing() {
        let mut rl = Rl::new();
        let grid = Grid::EMPTY;
        rl.record_move(grid, 2);
        rl.finish(Outcome::Won);
        rl.training = false;
        let mut rng = StdRng::seed_from_u64(7);
        for _ in 0..50 {
            assert_eq!(rl.choose(grid, &mut rng), 2);
            rl.finish(Outcome::Lost);
        }
        assert_eq!(rl.score(grid, 2), 0.5);
    }

    #[test]
    fn ties_are_broken_at_random() {
        let mut rl = Rl::new();
        rl.training = false;
        let mut rng = StdRng::seed_from_u64(1);
        let seen: std::collections::HashSet<usize> =
            (0..200).map(|_| rl.choose(Grid::EMPTY, &mut rng)).collect();
        assert_eq!(seen.len(), 9);
    }
}
