//! Seed 003's heuristic strategy: minimax cut at depth `p`, leaves scored by
//! h = ±(2n + 3) on a won position, else the difference of the two players' open lines.
//!
//! As in the seed, values are from the first player's point of view (here X; J0 in the seed): the
//! first player maximises, the second minimises. The strategy at depth `p` keeps every successor
//! whose value at depth `p − 1` is optimal; the agent plays one of them at random.

use std::collections::HashMap;

use crate::board::{Stone, DIRECTIONS};

use super::grid::{cell_move, move_cell, Grid, Status, CELLS};

/// Side of the board (the seed's `n`).
pub const SIDE: i32 = 3;
/// |h| of a won position: 2n + 3.
pub const WIN_SCORE: i32 = 2 * SIDE + 3;

/// The winning lines (the seed's `rangees`): every run of three cells in a board direction.
pub fn lines() -> Vec<[usize; 3]> {
    let board = Grid::EMPTY.to_board();
    let mut lines = Vec::new();
    for cell in 0..CELLS {
        for dir in DIRECTIONS {
            let cells: Option<Vec<usize>> = (0..3)
                .map(|i| board.step(cell_move(cell), dir, i).map(move_cell))
                .collect();
            if let Some(cells) = cells {
                lines.push([cells[0], cells[1], cells[2]]);
            }
        }
    }
    lines
}

/// g(x, i): the lines holding no stone of `side`'s opponent (lines `side` could still fill).
pub fn open_lines(grid: Grid, side: Stone) -> i32 {
    lines()
        .iter()
        .filter(|line| line.iter().all(|&c| grid.get(c) != Some(side.opponent())))
        .count() as i32
}

/// h(x, i) from `side`'s point of view.
pub fn heuristic(grid: Grid, side: Stone) -> i32 {
    match grid.status() {
        Status::Won(winner) if winner == side => WIN_SCORE,
        Status::Won(_) => -WIN_SCORE,
        _ => open_lines(grid, side) - open_lines(grid, side.opponent()),
    }
}

/// The seed's `minimax_heur(etat, p, n)`, memoised on (position, depth).
#[derive(Default)]
pub struct HeuristicMinimax {
    memo: HashMap<(Grid, u32), i32>,
    /// Positions evaluated without the memo's help.
    pub evaluations: u64,
}

impl HeuristicMinimax {
    pub fn new() -> HeuristicMinimax {
        HeuristicMinimax::default()
    }

    /// V_p(s), from X's (the first player's) point of view.
    pub fn value(&mut self, grid: Grid, depth: u32) -> i32 {
        if let Some(&v) = self.memo.get(&(grid, depth)) {
            return v;
        }
        self.evaluations += 1;
        let value = match grid.to_move() {
            Some(side) if depth > 0 => {
                let values = grid
                    .successors()
                    .into_iter()
                    .map(|(_, next)| self.value(next, depth - 1));
                if side == Stone::Black {
                    values.max()
                } else {
                    values.min()
                }
                .unwrap_or_else(|| heuristic(grid, Stone::Black))
            }
            _ => heuristic(grid, Stone::Black),
        };
        self.memo.insert((grid, depth), value);
        value
    }

    /// The seed's `strategieMiniMax_heur(etat, p, n)`: the cells whose successors are optimal at
    /// depth `p − 1` (max for X, min for O). Empty when the game is over.
    pub fn best_cells(&mut self, grid: Grid, depth: u32) -> Vec<usize> {
        let Some(side) = grid.to_move() else {
            return Vec::new();
        };
        let scored: Vec<(usize, i32)> = grid
            .successors()
            .into_iter()
            .map(|(cell, next)| (cell, self.value(next, depth.saturating_sub(1))))
            .collect();
        let best = if side == Stone::Black {
            scored.iter().map(|&(_, v)| v).max()
        } else {
            scored.iter().map(|&(_, v)| v).min()
        };
        scored
            .into_iter()
            .filter(|&(_, v)| Some(v) == best)
            .map(|(cell, _)| cell)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed writes J0 (who starts) as O; here the first player is X, so its examples are
    /// read with the symbols swapped.
    fn seed_grid(text: &str) -> Grid {
        let swapped: String = text
            .chars()
            .map(|c| match c {
                'X' => 'O',
                'O' => 'X',
                other => other,
            })
            .collect();
        Grid::parse(&swapped).unwrap()
    }

    #[test]
    fn eight_lines_and_the_seed_example() {
        assert_eq!(lines().len(), 8);
        assert_eq!(heuristic(Grid::EMPTY, Stone::Black), 0);
        // Seed: for 'XO..O....' g(x,0) = 5, g(x,1) = 3, h(x,0) = 2 (J0 = O there).
        let grid = seed_grid("XO..O....");
        assert_eq!(open_lines(grid, Stone::Black), 5);
        assert_eq!(open_lines(grid, Stone::White), 3);
        assert_eq!(heuristic(grid, Stone::Black), 2);
        assert_eq!(heuristic(grid, Stone::White), -2);
        let won = seed_grid("OXXOOXO..");
        assert_eq!(heuristic(won, Stone::Black), 9);
        assert_eq!(heuristic(won, Stone::White), -9);
    }

    #[test]
    fn seed_minimax_heur_examples() {
        let mut h = HeuristicMinimax::new();
        assert_eq!(h.value(seed_grid("OOOXX...."), 0), 9);
        assert_eq!(h.value(seed_grid("OOOXX...."), 4), 9);
        assert_eq!(h.value(Grid::parse("X.XOOOX..").unwrap(), 6), -9);
        assert_eq!(h.value(seed_grid("OO.XX...."), 1), 9);
        assert_eq!(h.value(seed_grid("XX.OO.O.."), 1), -9);
        assert_eq!(h.value(seed_grid("..XO....."), 4), 1);
        assert_eq!(h.value(seed_grid("..XO....."), 5), 9);
        assert_eq!(h.value(Grid::EMPTY, 9), 0);
    }

    #[test]
    fn seed_strategy_examples() {
        let mut h = HeuristicMinimax::new();
        // J0 wins at once: the strategy finds it at depth 1.
        assert_eq!(h.best_cells(seed_grid("OO.XX...."), 1), vec![2]);
        assert_eq!(h.best_cells(seed_grid("XX.OO.O.."), 1), vec![2]);
        assert_eq!(h.best_cells(seed_grid("..XO....."), 5), vec![0]);
        // At depth 9 every line of play reaches its end, so the strategy is exact. The seed prints
        // [0, 4, 8] here, but 4 and 8 only draw: the engine's solver agrees that 0 alone wins.
        assert_eq!(h.best_cells(seed_grid("..XO....."), 9), vec![0]);
        let grid = seed_grid("..XO.....");
        let mut perfect = crate::morpion::agents::Perfect::default();
        assert_eq!(perfect.best_cells(grid), vec![0]);
    }
}
