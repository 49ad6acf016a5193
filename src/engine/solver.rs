//! Exact solver for small positions: 3×3 morpion, 4×4 with k = 4, and any board with few empty
//! cells left.
//!
//! Full-width negamax with alpha-beta and a transposition table keyed exactly by which empty cells
//! each colour has filled since the root (no hash collisions). Who wins is asked of
//! [`Board::wins_at`], so the exact-K rule (and `overline_wins`) live in one place, `crate::board`.
//!
//! A win in `n` plies scores `mate_in(n)` and a loss `mated_in(n)`, so the solver takes the quickest
//! win and delays a loss as long as it can; a draw scores 0.
//!
//! Which positions are "small" ([`is_small`]): boards of at most [`MAX_SMALL_CELLS`] cells (every
//! 3×3 and 4×4 position), or any board with at most [`MAX_SMALL_EMPTIES`] empty cells. Beyond that
//! the game tree is too large to finish within a move's budget and the heuristic search answers.

use super::time::SearchClock;
use super::tt::{Entry, Tt};
use super::types::{mate_in, mated_in, score_from_table, score_to_table, Bound, Score, WIN};
use super::zobrist::mix;
use super::{Deadline, Decision};
use crate::board::{Board, Move, Rule, Stone, DIRECTIONS};

/// Boards with at most this many cells are always handed to the solver (4×4 with k = 4 from the
/// empty board: about 121,000 nodes, 150 ms; see `docs/morpion.md`).
pub const MAX_SMALL_CELLS: usize = 16;
/// Larger boards are handed to the solver when at most this many cells are still empty.
pub const MAX_SMALL_EMPTIES: usize = 12;
/// Nodes the solver may always search whatever the deadline: enough to solve any 3×3 position
/// (the empty board needs about 600), so morpion is perfect even with a budget of 0 ms, while
/// bounding the time a hopeless attempt can take to a few milliseconds.
pub const GUARANTEED_NODES: u64 = 5_000;
/// The solver gives up (and leaves the move to the search) once it has spent this fraction of the
/// time left, so that a failed attempt still leaves the search most of the budget.
const SHARE_OF_REMAINING_TIME: f64 = 0.5;
/// The largest transposition table a solve allocates.
const MAX_TABLE_BYTES: usize = 32 << 20;

/// A table about the size of the positions a solve from `empties` empty cells can meet (at most
/// 3^empties; far fewer in practice): small boards are solved many times over by the morpion
/// agents, and a table larger than the tree only costs the faulting-in of its pages.
fn table_bytes(empties: usize) -> usize {
    let positions = 3usize.pow(empties.min(13) as u32);
    (positions * 8).min(MAX_TABLE_BYTES)
}
/// How often (in nodes) the clock is read.
const CLOCK_CHECK_INTERVAL: u64 = 256;

/// Whether `board` is small enough for the solver (see the module documentation).
pub fn is_small(board: &Board) -> bool {
    let cells = board.rows() * board.cols();
    cells <= MAX_SMALL_CELLS || board.empty_cells().count() <= MAX_SMALL_EMPTIES
}

/// Solves the position exactly when the board is small enough; `None` hands it to the search
/// (board not small, game over, or no proof before the deadline).
pub fn solve_small(
    board: &Board,
    rule: Rule,
    side: Stone,
    deadline: &Deadline,
) -> Option<Decision> {
    if !is_small(board) {
        return None;
    }
    // A failed attempt leaves the search most of the budget.
    let clock = SearchClock::new(
        deadline.share(SHARE_OF_REMAINING_TIME),
        CLOCK_CHECK_INTERVAL,
    )
    .guaranteeing(GUARANTEED_NODES);
    let mut solver = Solver::new(board, rule, side, clock)?;
    let root = solver.root_empties();
    let score = solver.negamax(0, -WIN, WIN)?;
    let pv = solver.principal_variation();
    let mv = *pv.first()?;
    Some(Decision {
        mv,
        score,
        depth: root as u32,
        nodes: solver.clock.nodes(),
        pv,
    })
}

/// The exact value of every legal move for `side` (`mate_in(n)`: the mover wins `n` plies from
/// now, counting the move itself; `mated_in(n)`: loses; 0: draw), in board order. `None` when the board
/// is not small (see [`is_small`]) or the game is over. No time limit: meant for small boards.
pub fn move_values(board: &Board, rule: Rule, side: Stone) -> Option<Vec<(Move, Score)>> {
    if !is_small(board) {
        return None;
    }
    let clock = SearchClock::new(Deadline::unlimited(), CLOCK_CHECK_INTERVAL);
    let mut solver = Solver::new(board, rule, side, clock)?;
    let mut values = Vec::with_capacity(solver.empties.len());
    for index in 0..solver.empties.len() {
        let mv = solver.empties[index];
        let value = if solver.board.wins_at(mv, side, rule) {
            mate_in(1)
        } else {
            solver.make(index, side);
            let child = solver.negamax(1, -WIN, WIN);
            solver.unmake(index);
            -child?
        };
        values.push((mv, value));
    }
    Some(values)
}

/// A line of `k` cells that could still become a win: it contains at least one empty cell of the
/// root and no stone of one colour (`pure_for`), so only that colour (or either, when `None`) can
/// ever complete it.
struct Window {
    empties_mask: u64,
    pure_for: Option<Stone>,
}

struct Solver {
    board: Board,
    rule: Rule,
    root_side: Stone,
    /// The root's empty cells, centre first; index `i` is bit `i` of the masks.
    empties: Vec<Move>,
    /// Cells of `empties` filled by black and by white since the root.
    filled: [u64; 2],
    windows: Vec<Window>,
    /// Keyed exactly by `filled` (see `key`: no two positions share a key); scores are
    /// node-relative.
    table: Tt,
    clock: SearchClock,
}

impl Solver {
    /// `None` when there is nothing to solve: no empty cell, a winner already, or too many empties
    /// for the masks.
    fn new(board: &Board, rule: Rule, side: Stone, clock: SearchClock) -> Option<Solver> {
        if board.winner(rule).is_some() {
            return None;
        }
        let mut empties: Vec<Move> = board.empty_cells().collect();
        if empties.is_empty() || empties.len() > 32 {
            return None;
        }
        // Centre first: central cells lie on more lines, so they cut the tree sooner; ties keep
        // board order, which makes the choice among equal moves deterministic.
        let centre = (board.rows() as i64 - 1, board.cols() as i64 - 1);
        empties.sort_by_key(|mv| {
            let dr = 2 * mv.row as i64 - centre.0;
            let dc = 2 * mv.col as i64 - centre.1;
            dr * dr + dc * dc
        });
        let windows = live_windows(board, rule, &empties);
        let table = Tt::new(table_bytes(empties.len()));
        Some(Solver {
            board: board.clone(),
            rule,
            root_side: side,
            empties,
            filled: [0, 0],
            windows,
            table,
            clock,
        })
    }

    fn root_empties(&self) -> usize {
        self.empties.len()
    }

    fn side_at(&self, ply: usize) -> Stone {
        if ply.is_multiple_of(2) {
            self.root_side
        } else {
            self.root_side.opponent()
        }
    }

    /// Exact (the masks fit in 32 bits each, and `mix` is a bijection) and well spread.
    fn key(&self) -> u64 {
        mix(self.filled[0] | (self.filled[1] << 32))
    }

    fn occupied(&self) -> u64 {
        self.filled[0] | self.filled[1]
    }

    fn make(&mut self, index: usize, side: Stone) {
        // The cell is empty by construction (its bit is clear), so `set` cannot fail.
        let _ = self.board.set(self.empties[index], Some(side));
        self.filled[side.index()] |= 1 << index;
    }

    fn unmake(&mut self, index: usize) {
        let _ = self.board.set(self.empties[index], None);
        self.filled[0] &= !(1 << index);
        self.filled[1] &= !(1 << index);
    }

    /// Whether `side` can still complete some line; when neither side can, the game is a draw
    /// whatever is played.
    fn can_still_win(&self, side: Stone) -> bool {
        let theirs = self.filled[side.opponent().index()];
        let occupied = self.occupied();
        self.windows.iter().any(|w| {
            w.pure_for != Some(side.opponent())
                && w.empties_mask & theirs == 0
                && w.empties_mask & !occupied != 0
        })
    }

    /// Value of the position `ply` plies below the root for its side to move, root-relative
    /// (`WIN - p`: the side to move here wins at root ply `p`). `None` when out of time.
    fn negamax(&mut self, ply: usize, mut alpha: Score, mut beta: Score) -> Option<Score> {
        if self.clock.tick() {
            return None;
        }
        let side = self.side_at(ply);
        let free: Vec<usize> = (0..self.empties.len())
            .filter(|&i| self.occupied() & (1 << i) == 0)
            .collect();
        if free.is_empty() {
            return Some(0);
        }
        let order = match self.settle(ply, side, free) {
            Ok(score) => return Some(score),
            Err(moves) => moves,
        };
        let original_alpha = alpha;
        let key = self.key();
        let mut hinted = None;
        if let Some(entry) = self.table.probe(key) {
            let score = score_from_table(entry.score, ply);
            match entry.bound {
                Bound::Exact => return Some(score),
                Bound::Lower => alpha = alpha.max(score),
                Bound::Upper => beta = beta.min(score),
            }
            if alpha >= beta {
                return Some(score);
            }
            hinted = entry.mv;
        }

        let mut order = order;
        if let Some(hint) = hinted {
            if let Some(pos) = order.iter().position(|&i| i == hint) {
                order[..=pos].rotate_right(1);
            }
        }

        let mut best_score = -WIN;
        let mut best_move = order[0];
        for index in order {
            self.make(index, side);
            let child = self.negamax(ply + 1, -beta, -alpha);
            self.unmake(index);
            let score = -child?;
            if score > best_score {
                best_score = score;
                best_move = index;
            }
            alpha = alpha.max(score);
            if alpha >= beta {
                break;
            }
        }
        self.store(
            ply,
            best_score,
            Bound::of(best_score, original_alpha, beta),
            best_move,
        );
        Some(best_score)
    }

    /// The value of a node the rules settle without a search (a win now, no line left for either
    /// side, two threats to stop), stored; otherwise the moves to search: the block when the
    /// opponent threatens once, else every free cell.
    fn settle(&mut self, ply: usize, side: Stone, free: Vec<usize>) -> Result<Score, Vec<usize>> {
        // A win now is the best there is.
        if let Some(&win) = free
            .iter()
            .find(|&&i| self.board.wins_at(self.empties[i], side, self.rule))
        {
            let won = mate_in(ply as i32 + 1);
            self.store(ply, won, Bound::Exact, win);
            return Ok(won);
        }
        if !self.can_still_win(side) && !self.can_still_win(side.opponent()) {
            self.store(ply, 0, Bound::Exact, free[0]);
            return Ok(0);
        }
        // The opponent's immediate wins: two or more cannot both be stopped; exactly one must be.
        let threats: Vec<usize> = free
            .iter()
            .copied()
            .filter(|&i| {
                self.board
                    .wins_at(self.empties[i], side.opponent(), self.rule)
            })
            .collect();
        if threats.len() >= 2 {
            let loss_next = mated_in(ply as i32 + 2);
            self.store(ply, loss_next, Bound::Exact, threats[0]);
            return Ok(loss_next);
        }
        Err(if threats.len() == 1 { threats } else { free })
    }

    fn store(&mut self, ply: usize, score: Score, bound: Bound, best: usize) {
        // Every entry is a search to the end of the game: one depth for all.
        let entry = Entry {
            score: score_to_table(score, ply),
            mv: Some(best),
            depth: 0,
            bound,
            on_pv: false,
        };
        self.table.store(self.key(), entry);
    }

    /// The moves the table remembers from the root on, as far as it remembers them.
    fn principal_variation(&mut self) -> Vec<Move> {
        let mut pv = Vec::new();
        let mut ply = 0;
        let mut played = Vec::new();
        while let Some(entry) = self.table.probe(self.key()) {
            let Some(index) = entry.mv.filter(|&index| index < self.empties.len()) else {
                break;
            };
            if self.occupied() & (1 << index) != 0 {
                break;
            }
            pv.push(self.empties[index]);
            let side = self.side_at(ply);
            let wins = self.board.wins_at(self.empties[index], side, self.rule);
            self.make(index, side);
            played.push(index);
            ply += 1;
            if wins || entry.bound != Bound::Exact {
                break;
            }
        }
        for index in played {
            self.unmake(index);
        }
        pv
    }
}

/// Every line of `k` cells through at least one root empty cell that holds stones of at most one
/// colour. A line holding both colours can never be completed; a line with no empty cell cannot
/// change (had it been a win, the game would be over). The exact-K rule only forbids more lines,
/// so "no live window for either side" soundly proves a draw.
fn live_windows(board: &Board, rule: Rule, empties: &[Move]) -> Vec<Window> {
    let k = rule.k.max(1);
    let index_of = |mv: Move| empties.iter().position(|&e| e == mv);
    let mut windows = Vec::new();
    for (start, _) in board.cells() {
        for dir in DIRECTIONS {
            let Some(cells) = (0..k as isize)
                .map(|i| board.step(start, dir, i))
                .collect::<Option<Vec<Move>>>()
            else {
                continue;
            };
            let mut mask = 0u64;
            let mut colours = [false, false];
            for &cell in &cells {
                match board.get(cell) {
                    Some(stone) => colours[stone.index()] = true,
                    None => {
                        if let Some(i) = index_of(cell) {
                            mask |= 1 << i;
                        }
                    }
                }
            }
            if mask == 0 || (colours[0] && colours[1]) {
                continue;
            }
            let pure_for = if colours[0] {
                Some(Stone::Black)
            } else if colours[1] {
                Some(Stone::White)
            } else {
                None
            };
            windows.push(Window {
                empties_mask: mask,
                pure_for,
            });
        }
    }
    windows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::WIN_THRESHOLD;
    use std::time::{Duration, Instant};

    fn solve(rows: &[&str], rule: Rule) -> Decision {
        let board = Board::from_rows(rows).unwrap();
        let side = board.side_to_move().unwrap();
        solve_small(&board, rule, side, &Deadline::unlimited()).unwrap()
    }

    #[test]
    fn empty_morpion_is_a_draw() {
        let decision = solve(&["000", "000", "000"], Rule::for_board(3, 3));
        assert_eq!(decision.score, 0);
        assert_eq!(decision.depth, 9);
        // The allowance that makes morpion perfect at a 0 ms budget must cover the largest case.
        assert!(
            decision.nodes < GUARANTEED_NODES,
            "{} nodes",
            decision.nodes
        );
    }

    #[test]
    fn takes_the_quickest_win() {
        // Black can win at once (top row) or later; the immediate win scores WIN - 1.
        let decision = solve(&["NN0", "BB0", "000"], Rule::for_board(3, 3));
        assert_eq!(decision.mv, Move::new(0, 2));
        assert_eq!(decision.score, WIN - 1);
    }

    #[test]
    fn blocks_the_only_threat() {
        // White to move must block black's diagonal at 2 2.
        let decision = solve(&["N00", "0N0", "B00"], Rule::for_board(3, 3));
        assert_eq!(decision.mv, Move::new(2, 2));
        assert!(decision.score <= 0);
    }

    #[test]
    fn a_fork_is_a_loss_delayed_as_long_as_possible() {
        // Black threatens both 0 2 (row) and 2 0 (column); white loses two plies from now.
        let decision = solve(&["NN0", "NB0", "00B"], Rule::for_board(3, 3));
        assert_eq!(decision.score, -(WIN - 2));
    }

    #[test]
    fn move_values_match_the_known_opening_values() {
        let board = Board::new(3, 3).unwrap();
        let values = move_values(&board, Rule::for_board(3, 3), Stone::Black).unwrap();
        assert_eq!(values.len(), 9);
        assert!(values.iter().all(|&(_, v)| v == 0), "{values:?}");
        // After X in a corner, only the centre holds the draw for O.
        let board = Board::from_rows(&["N00", "000", "000"]).unwrap();
        let values = move_values(&board, Rule::for_board(3, 3), Stone::White).unwrap();
        for (mv, value) in values {
            if mv == Move::new(1, 1) {
                assert_eq!(value, 0);
            } else {
                assert!(value < -WIN_THRESHOLD, "{mv}: {value}");
            }
        }
    }

    #[test]
    fn exact_k_overline_is_no_win_unless_the_rule_says_so() {
        // 1×4 strip with k = 3 is not reachable by for_board; use explicit rules. Black to play
        // 0 3 would make four in a row: no win under exact three, a win with overline_wins.
        let board = Board::from_rows(&["NNN0", "BB00", "B000", "0000"]).unwrap();
        let exact = Rule::exact(3);
        let values = move_values(&board, exact, Stone::Black);
        // Black already has an exact three: the game is over, nothing to solve.
        assert!(values.is_none());
        let board = Board::from_rows(&["NN0N", "BB00", "B000", "0000"]).unwrap();
        let values = move_values(&board, exact, Stone::Black).unwrap();
        let filling = values
            .iter()
            .find(|(mv, _)| *mv == Move::new(0, 2))
            .unwrap();
        assert!(
            filling.1 < WIN - 1,
            "four in a row must not win under exact three"
        );
        let freestyle = Rule {
            k: 3,
            overline_wins: true,
        };
        let values = move_values(&board, freestyle, Stone::Black).unwrap();
        let filling = values
            .iter()
            .find(|(mv, _)| *mv == Move::new(0, 2))
            .unwrap();
        assert_eq!(filling.1, WIN - 1);
    }

    #[test]
    fn four_by_four_is_solved_as_a_draw() {
        let decision = solve(&["0000", "0000", "0000", "0000"], Rule::for_board(4, 4));
        assert_eq!(decision.score, 0);
    }

    #[test]
    fn zero_budget_still_solves_morpion() {
        let board = Board::new(3, 3).unwrap();
        let deadline = Deadline::for_budget(Instant::now(), Duration::ZERO, 1);
        assert!(deadline.expired());
        let decision = solve_small(&board, Rule::for_board(3, 3), Stone::Black, &deadline);
        assert_eq!(decision.map(|d| d.score), Some(0));
    }

    #[test]
    fn zero_budget_gives_up_on_four_by_four() {
        let board = Board::new(4, 4).unwrap();
        let deadline = Deadline::for_budget(Instant::now(), Duration::ZERO, 1);
        assert!(solve_small(&board, Rule::for_board(4, 4), Stone::Black, &deadline).is_none());
    }

    #[test]
    fn large_boards_are_left_to_the_search() {
        let board = Board::new(15, 15).unwrap();
        assert!(!is_small(&board));
        let rule = Rule::for_board(15, 15);
        assert!(solve_small(&board, rule, Stone::Black, &Deadline::unlimited()).is_none());
    }

    #[test]
    fn nearly_full_large_board_is_solved() {
        // 6×6, five to win, two empty cells: black completes exactly five in the last row.
        let board = Board::from_rows(&["BNBBNB", "BBNNBB", "BNBBNN", "BBNNBB", "NNBBNN", "NNNN00"])
            .unwrap();
        let rule = Rule::for_board(6, 6);
        assert!(is_small(&board));
        assert_eq!(board.winner(rule), None);
        assert_eq!(board.side_to_move(), Ok(Stone::Black));
        let decision = solve_small(&board, rule, Stone::Black, &Deadline::unlimited()).unwrap();
        assert_eq!(decision.mv, Move::new(5, 4));
        assert_eq!(decision.score, WIN - 1);
    }

    /// Plain negamax over the whole tree, no table and no pruning: the reference the solver must
    /// match exactly.
    fn brute_force(board: &mut Board, rule: Rule, side: Stone, ply: i32) -> i32 {
        let empties: Vec<Move> = board.empty_cells().collect();
        if empties.is_empty() {
            return 0;
        }
        let mut best = -WIN;
        for mv in empties {
            let score = if board.wins_at(mv, side, rule) {
                WIN - (ply + 1)
            } else {
                board.set(mv, Some(side)).unwrap();
                let child = -brute_force(board, rule, side.opponent(), ply + 1);
                board.set(mv, None).unwrap();
                child
            };
            best = best.max(score);
        }
        best
    }

    #[test]
    fn matches_plain_negamax_on_random_positions() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(2024);
        let overline = Rule {
            k: 3,
            overline_wins: true,
        };
        let cases = [
            (3, 3, Rule::exact(3)),
            (3, 4, Rule::exact(3)),
            (3, 4, overline),
            (4, 4, Rule::exact(3)),
            (4, 4, Rule::exact(4)),
            (2, 5, Rule::exact(2)),
        ];
        let mut checked = 0;
        for (rows, cols, rule) in cases {
            for _ in 0..40 {
                // Play random moves until at most 8 cells are empty, stopping if someone wins.
                let mut board = Board::new(rows, cols).unwrap();
                let mut side = Stone::Black;
                let mut over = false;
                while board.empty_cells().count() > 8 {
                    let empties: Vec<Move> = board.empty_cells().collect();
                    let mv = empties[rng.gen_range(0..empties.len())];
                    board.play(mv, side).unwrap();
                    side = side.opponent();
                    if board.winner(rule).is_some() {
                        over = true;
                        break;
                    }
                }
                if over || board.is_full() {
                    continue;
                }
                let expected = brute_force(&mut board.clone(), rule, side, 0);
                let decision = solve_small(&board, rule, side, &Deadline::unlimited()).unwrap();
                assert_eq!(decision.score, expected, "{rows}x{cols} {rule:?}\n{board}");
                // The chosen move must itself have the position's value.
                let values = move_values(&board, rule, side).unwrap();
                assert_eq!(values.iter().map(|&(_, v)| v).max(), Some(expected));
                let chosen = values.iter().find(|(mv, _)| *mv == decision.mv).unwrap();
                assert_eq!(chosen.1, expected, "{board}");
                checked += 1;
            }
        }
        assert!(checked > 100, "only {checked} positions checked");
    }
}
