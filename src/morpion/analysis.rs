//! `connect5 morpion analyze`: the seeds' facts about the game, computed from the rules.

use std::collections::{HashMap, HashSet};

use crate::board::Stone;
use crate::engine::{solver, Deadline, WIN_THRESHOLD};

use super::attractor::{Attractors, GameGraph};
use super::grid::{rule, Grid, Status};
use super::heuristic::HeuristicMinimax;

/// Depths of the heuristic strategy's evaluation table (seed 003, question 16).
pub const EVALUATION_DEPTHS: [u32; 4] = [1, 3, 5, 9];

/// Counts of moves by their true minimax value: [O wins, draw, X wins] (the seed's
/// [J1 gagne, nul, J0 gagne]).
pub type ValueCounts = [u64; 3];

#[derive(Clone, Debug)]
pub struct Facts {
    pub positions: usize,
    pub terminal: usize,
    pub x_wins: usize,
    pub o_wins: usize,
    pub draws: usize,
    pub attractor_x: usize,
    pub attractor_o: usize,
    pub draw_region: usize,
    /// Positions of minimax value +1, −1, 0 (X's point of view).
    pub minimax_plus: usize,
    pub minimax_minus: usize,
    pub minimax_zero: usize,
    pub empty_board_value: i32,
    pub positions_up_to_symmetry: usize,
    pub games: u64,
    pub games_up_to_symmetry: u64,
    pub x_won_games: u64,
    pub o_won_games: u64,
    pub drawn_games: u64,
    pub minimax_nodes: u64,
    pub minimax_leaves: u64,
    pub alphabeta_nodes: u64,
    pub alphabeta_leaves: u64,
    pub memoised_positions: usize,
    /// Non-terminal positions, and how many of them the engine's solver values like the graph.
    pub solver_checked: usize,
    pub solver_agrees: usize,
    /// Nodes the solver needs for the empty 3×3 board, and for the empty 4×4 board with k = 4
    /// (with the time taken, which depends on the machine).
    pub solver_nodes_3x3: u64,
    pub solver_nodes_4x4: u64,
    pub solver_time_4x4: std::time::Duration,
    /// (depth, chosen moves, all moves) for each of [`EVALUATION_DEPTHS`].
    pub evaluation: Vec<(u32, ValueCounts, ValueCounts)>,
}

/// Minimax value of every graph position from X's point of view (+1, 0, −1).
pub fn minimax_values(graph: &GameGraph) -> Vec<i32> {
    let mut values = vec![0; graph.len()];
    // Breadth-first order puts every position before its successors: fill from the end.
    for id in (0..graph.len()).rev() {
        let grid = graph.positions[id];
        values[id] = match grid.status() {
            Status::Won(Stone::Black) => 1,
            Status::Won(Stone::White) => -1,
            Status::ToMove(side) => {
                let children = graph.successors[id].iter().map(|&c| values[c]);
                if side == Stone::Black {
                    children.max().unwrap_or(0)
                } else {
                    children.min().unwrap_or(0)
                }
            }
            _ => 0,
        };
    }
    values
}

#[derive(Default)]
struct TreeCounts {
    nodes: u64,
    leaves: u64,
}

/// Plain minimax over the game tree, no memo: every node of the tree.
fn minimax_tree(grid: Grid, counts: &mut TreeCounts) -> i32 {
    counts.nodes += 1;
    match grid.status() {
        Status::ToMove(side) => {
            let values = grid
                .successors()
                .into_iter()
                .map(|(_, child)| minimax_tree(child, counts))
                .collect::<Vec<_>>();
            let best = if side == Stone::Black {
                values.iter().max()
            } else {
                values.iter().min()
            };
            best.copied().unwrap_or(0)
        }
        status => {
            counts.leaves += 1;
            terminal_value(status)
        }
    }
}

/// Alpha-beta as seed 002 writes it: moves in cell order, values +1/0/−1 for X.
fn alphabeta_tree(grid: Grid, mut alpha: i32, mut beta: i32, counts: &mut TreeCounts) -> i32 {
    counts.nodes += 1;
    match grid.status() {
        Status::ToMove(side) => {
            let maximising = side == Stone::Black;
            let mut best = if maximising { i32::MIN } else { i32::MAX };
            for (_, child) in grid.successors() {
                let value = alphabeta_tree(child, alpha, beta, counts);
                if maximising {
                    best = best.max(value);
                    alpha = alpha.max(value);
                } else {
                    best = best.min(value);
                    beta = beta.min(value);
                }
                if beta <= alpha {
                    break;
                }
            }
            best
        }
        status => {
            counts.leaves += 1;
            terminal_value(status)
        }
    }
}

fn terminal_value(status: Status) -> i32 {
    match status {
        Status::Won(Stone::Black) => 1,
        Status::Won(Stone::White) => -1,
        _ => 0,
    }
}

/// Games (move sequences to the end) from `grid`, by winner: [X, O, draw].
fn count_games(grid: Grid, memo: &mut HashMap<Grid, [u64; 3]>) -> [u64; 3] {
    if let Some(&c) = memo.get(&grid) {
        return c;
    }
    let counts = match grid.status() {
        Status::Won(Stone::Black) => [1, 0, 0],
        Status::Won(Stone::White) => [0, 1, 0],
        Status::Draw | Status::Impossible => [0, 0, 1],
        Status::ToMove(_) => grid
            .successors()
            .into_iter()
            .fold([0; 3], |acc, (_, child)| {
                let c = count_games(child, memo);
                [acc[0] + c[0], acc[1] + c[1], acc[2] + c[2]]
            }),
    };
    memo.insert(grid, counts);
    counts
}

/// Games up to symmetry: at each position, moves leading to symmetric positions count once.
fn count_games_up_to_symmetry(grid: Grid, memo: &mut HashMap<Grid, u64>) -> u64 {
    let canonical = grid.canonical().0;
    if let Some(&c) = memo.get(&canonical) {
        return c;
    }
    let count = if grid.to_move().is_none() {
        1
    } else {
        let distinct: HashSet<Grid> = grid
            .successors()
            .into_iter()
            .map(|(_, child)| child.canonical().0)
            .collect();
        distinct
            .into_iter()
            .map(|child| count_games_up_to_symmetry(child, memo))
            .sum()
    };
    memo.insert(canonical, count);
    count
}

/// Seed 003's `EvaluerStrategieMiniMax_heur(p, 3)`: over the positions two moves into the game
/// (all 72 move pairs), the true values of the moves the heuristic strategy keeps, and of all moves.
pub fn evaluate_heuristic(
    depth: u32,
    graph: &GameGraph,
    values: &[i32],
    search: &mut HeuristicMinimax,
) -> (ValueCounts, ValueCounts) {
    let value_of = |grid: Grid| -> usize {
        let id = graph.index[&grid];
        (values[id] + 1) as usize
    };
    let mut chosen = [0u64; 3];
    let mut all = [0u64; 3];
    for (_, first) in Grid::EMPTY.successors() {
        for (_, second) in first.successors() {
            let Some(side) = second.to_move() else {
                continue;
            };
            for cell in search.best_cells(second, depth) {
                chosen[value_of(second.with(cell, side))] += 1;
            }
            for (_, next) in second.successors() {
                all[value_of(next)] += 1;
            }
        }
    }
    (chosen, all)
}

pub fn compute() -> Facts {
    let graph = GameGraph::shared();
    let attractors = Attractors::shared();
    let statuses: Vec<Status> = graph.positions.iter().map(|g| g.status()).collect();
    let count = |f: &dyn Fn(&Status) -> bool| statuses.iter().filter(|s| f(s)).count();
    let x_wins = count(&|s| *s == Status::Won(Stone::Black));
    let o_wins = count(&|s| *s == Status::Won(Stone::White));
    let draws = count(&|s| *s == Status::Draw);
    let draw_region = (0..graph.len())
        .filter(|&i| attractors.x[i].is_none() && attractors.o[i].is_none())
        .count();
    let values = minimax_values(graph);
    let canonical: HashSet<Grid> = graph.positions.iter().map(|g| g.canonical().0).collect();
    let games = count_games(Grid::EMPTY, &mut HashMap::new());

    let mut minimax_counts = TreeCounts::default();
    minimax_tree(Grid::EMPTY, &mut minimax_counts);
    let mut alphabeta_counts = TreeCounts::default();
    alphabeta_tree(Grid::EMPTY, i32::MIN, i32::MAX, &mut alphabeta_counts);

    let (solver_checked, solver_agrees) = solver_agreement(graph, &values);
    let (solver_nodes_3x3, _) = solve_empty(3).unwrap_or_default();
    let (solver_nodes_4x4, solver_time_4x4) = solve_empty(4).unwrap_or_default();

    Facts {
        positions: graph.len(),
        terminal: x_wins + o_wins + draws,
        x_wins,
        o_wins,
        draws,
        attractor_x: attractors.x.iter().filter(|r| r.is_some()).count(),
        attractor_o: attractors.o.iter().filter(|r| r.is_some()).count(),
        draw_region,
        minimax_plus: values.iter().filter(|&&v| v == 1).count(),
        minimax_minus: values.iter().filter(|&&v| v == -1).count(),
        minimax_zero: values.iter().filter(|&&v| v == 0).count(),
        empty_board_value: values[0],
        positions_up_to_symmetry: canonical.len(),
        games: games.iter().sum(),
        games_up_to_symmetry: count_games_up_to_symmetry(Grid::EMPTY, &mut HashMap::new()),
        x_won_games: games[0],
        o_won_games: games[1],
        drawn_games: games[2],
        minimax_nodes: minimax_counts.nodes,
        minimax_leaves: minimax_counts.leaves,
        alphabeta_nodes: alphabeta_counts.nodes,
        alphabeta_leaves: alphabeta_counts.leaves,
        memoised_positions: graph.len(),
        solver_checked,
        solver_agrees,
        solver_nodes_3x3,
        solver_nodes_4x4,
        solver_time_4x4,
        evaluation: heuristic_evaluation(graph, &values),
    }
}

/// The perfect player's values come from the engine's solver: how many of the non-terminal
/// positions there are, and on how many the solver agrees with the game graph's minimax.
fn solver_agreement(graph: &GameGraph, values: &[i32]) -> (usize, usize) {
    let mut checked = 0;
    let mut agrees = 0;
    for (id, grid) in graph.positions.iter().enumerate() {
        let Some(side) = grid.to_move() else {
            continue;
        };
        checked += 1;
        let decision = solver::solve_small(&grid.to_board(), rule(), side, &Deadline::unlimited());
        let Some(decision) = decision else {
            continue;
        };
        let solved = if decision.score > WIN_THRESHOLD {
            1
        } else if decision.score < -WIN_THRESHOLD {
            -1
        } else {
            0
        };
        let for_x = if side == Stone::Black {
            solved
        } else {
            -solved
        };
        if for_x == values[id] {
            agrees += 1;
        }
    }
    (checked, agrees)
}

/// The solver's nodes and time for the empty `side`×`side` board (`side` in a row).
fn solve_empty(side: usize) -> Option<(u64, std::time::Duration)> {
    let board = crate::board::Board::new(side, side).ok()?;
    let rule = crate::board::Rule::for_board(side, side);
    let start = std::time::Instant::now();
    let decision = solver::solve_small(&board, rule, Stone::Black, &Deadline::unlimited())?;
    Some((decision.nodes, start.elapsed()))
}

/// [`evaluate_heuristic`] at each of [`EVALUATION_DEPTHS`], one search (and its cache) for all.
fn heuristic_evaluation(graph: &GameGraph, values: &[i32]) -> Vec<(u32, ValueCounts, ValueCounts)> {
    let mut search = HeuristicMinimax::new();
    EVALUATION_DEPTHS
        .iter()
        .map(|&depth| {
            let (chosen, all) = evaluate_heuristic(depth, graph, values, &mut search);
            (depth, chosen, all)
        })
        .collect()
}

/// 5478 → "5,478".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

impl Facts {
    pub fn report(&self) -> String {
        let n = |v: usize| thousands(v as u64);
        let g = thousands;
        let mut out = String::new();
        out.push_str("Morpion (3x3, three in a row, X first), computed from the rules:\n\n");
        out.push_str(&format!(
            "positions reachable from the empty board: {}\n",
            n(self.positions)
        ));
        out.push_str(&format!(
            "terminal positions: {} ({} X wins, {} O wins, {} draws)\n",
            n(self.terminal),
            n(self.x_wins),
            n(self.o_wins),
            n(self.draws)
        ));
        out.push_str(&format!(
            "attractor of X: {}; attractor of O: {}; draw region: {}\n",
            n(self.attractor_x),
            n(self.attractor_o),
            n(self.draw_region)
        ));
        out.push_str(&format!(
            "minimax values (X's view): +1: {}, -1: {}, 0: {}; empty board: {}\n",
            n(self.minimax_plus),
            n(self.minimax_minus),
            n(self.minimax_zero),
            self.empty_board_value
        ));
        out.push_str(&format!(
            "positions up to symmetry: {}\n",
            n(self.positions_up_to_symmetry)
        ));
        out.push_str(&format!(
            "games: {} ({} won by X, {} won by O, {} drawn); up to symmetry: {}\n",
            g(self.games),
            g(self.x_won_games),
            g(self.o_won_games),
            g(self.drawn_games),
            g(self.games_up_to_symmetry)
        ));
        out.push_str(&format!(
            "minimax from the empty board: {} nodes visited, {} sequences (leaves)\n",
            g(self.minimax_nodes),
            g(self.minimax_leaves)
        ));
        out.push_str(&format!(
            "alpha-beta from the empty board (cells in order 0-8): {} nodes visited, {} sequences (leaves)\n",
            g(self.alphabeta_nodes),
            g(self.alphabeta_leaves)
        ));
        out.push_str(&format!(
            "minimax with memoisation: {} positions evaluated\n",
            n(self.memoised_positions)
        ));
        out.push_str(&format!(
            "engine solver agrees with the game-graph minimax on {} of {} non-terminal positions\n",
            n(self.solver_agrees),
            n(self.solver_checked)
        ));
        out.push_str(&format!(
            "engine solver from the empty board: 3x3 in {} nodes; 4x4 (four in a row) in {} nodes, {} ms\n",
            g(self.solver_nodes_3x3),
            g(self.solver_nodes_4x4),
            self.solver_time_4x4.as_millis()
        ));
        out.push_str(
            "\nheuristic strategy evaluation (seed 003, question 16): positions after 2 moves,\n\
             true values of the moves kept, order [O wins, draw, X wins] = [-1, 0, 1]\n",
        );
        for (depth, chosen, all) in &self.evaluation {
            out.push_str(&format!(
                "depth {depth}: chosen {chosen:?}, all moves {all:?}\n"
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(5478), "5,478");
        assert_eq!(thousands(255_168), "255,168");
        assert_eq!(thousands(16), "16");
        assert_eq!(thousands(1_000_000), "1,000,000");
    }
}
