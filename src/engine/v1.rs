//! Engine v1, the baseline: iterative-deepening negamax alpha-beta with a transposition table,
//! candidate moves near the stones, an immediate win first and a forced block next, and a
//! line-window evaluation that knows the exact-five rule.
//!
//! The evaluation is the classic window count (every K cells of a line that hold stones of one
//! colour only are a potential line for that colour, worth more the fuller it is); under the
//! exact rule a window whose flanking cell holds the same colour is worthless, because completing
//! it would make an overline.

use std::time::Instant;

use super::deepen::{deepen, Choice, Iteration};
use super::time::SearchClock;
use super::tt::{Entry, Tt};
use super::types::{mate_in, score_from_table, score_to_table, Bound, Score, WIN, WIN_THRESHOLD};
use super::zobrist::zobrist;
use super::{Deadline, Decision, EngineConfig, Progress};
use crate::board::{Board, Move, Rule, Stone, DIRECTIONS};

const EMPTY: u8 = 0;
/// Interior nodes search only this many of their best-ordered moves (v1 is a beam search; the
/// root searches every candidate).
const BEAM: usize = 14;
/// How often (in nodes) the clock is read.
const CLOCK_INTERVAL: u64 = 16;
const MAX_PLY: usize = 128;

/// How a cell of the grid holds a stone: 0 empty, 1 black, 2 white.
fn colour_code(stone: Stone) -> u8 {
    stone.index() as u8 + 1
}

/// Value of a window holding `n` stones of one colour and nothing else, for a rule of length `k`.
fn window_weight(n: usize, k: usize) -> i64 {
    const BY_MISSING: [i64; 6] = [100_000, 5_000, 400, 30, 4, 1];
    if n == 0 {
        return 0;
    }
    BY_MISSING[(k - n).min(BY_MISSING.len() - 1)]
}

struct Searcher {
    rows: usize,
    cols: usize,
    k: usize,
    overline_wins: bool,
    cells: Vec<u8>,
    /// Stones within two cells (king distance); an empty cell with a neighbour is a candidate.
    near: Vec<u16>,
    hash: u64,
    /// Window score, black minus white.
    score: i64,
    stones: usize,
    /// Bounding box of the stones (min row, max row, min col, max col).
    bounds: (usize, usize, usize, usize),
    bounds_stack: Vec<(usize, usize, usize, usize)>,
    table: Tt,
    killers: Vec<[Option<usize>; 2]>,
    clock: SearchClock,
}

impl Searcher {
    fn new(board: &Board, rule: Rule, deadline: &Deadline, config: &EngineConfig) -> Searcher {
        let hash_bytes = config.hash_bytes;
        let (rows, cols) = (board.rows(), board.cols());
        // Smaller boards never fill a large table: do not allocate more than they can use.
        let useful = (rows * cols).saturating_mul(rows * cols).saturating_mul(64);
        let mut searcher = Searcher {
            rows,
            cols,
            k: rule.k,
            overline_wins: rule.overline_wins,
            cells: vec![EMPTY; rows * cols],
            near: vec![0; rows * cols],
            hash: 0,
            score: 0,
            stones: 0,
            bounds: (usize::MAX, 0, usize::MAX, 0),
            bounds_stack: Vec::new(),
            table: Tt::new(hash_bytes.min(useful).min(256 << 20)),
            killers: vec![[None; 2]; MAX_PLY + 2],
            clock: SearchClock::new(deadline.clone(), CLOCK_INTERVAL)
                .with_node_budget(config.max_nodes),
        };
        for (mv, stone) in board.cells() {
            if let Some(stone) = stone {
                searcher.make(mv.row * cols + mv.col, stone);
            }
        }
        searcher.bounds_stack.clear();
        searcher
    }

    fn at(&self, row: isize, col: isize) -> Option<u8> {
        if row < 0 || col < 0 || row >= self.rows as isize || col >= self.cols as isize {
            None
        } else {
            Some(self.cells[row as usize * self.cols + col as usize])
        }
    }

    /// Signed value (black positive) of the window of K cells starting at (row, col) in `dir`.
    fn window(&self, row: isize, col: isize, (dr, dc): (isize, isize)) -> i64 {
        let mut counts = [0usize; 3];
        for i in 0..self.k as isize {
            match self.at(row + dr * i, col + dc * i) {
                Some(cell) => counts[cell as usize] += 1,
                None => return 0,
            }
        }
        let (colour, n) = match (counts[1], counts[2]) {
            (0, 0) => return 0,
            (n, 0) => (1u8, n),
            (0, n) => (2u8, n),
            _ => return 0,
        };
        if !self.overline_wins {
            let before = self.at(row - dr, col - dc);
            let after = self.at(row + dr * self.k as isize, col + dc * self.k as isize);
            if before == Some(colour) || after == Some(colour) {
                return 0;
            }
        }
        let value = window_weight(n, self.k);
        if colour == 1 {
            value
        } else {
            -value
        }
    }

    /// Sum of the windows a change at `cell` can affect: those containing it and those it flanks.
    fn windows_around(&self, cell: usize) -> i64 {
        let (row, col) = ((cell / self.cols) as isize, (cell % self.cols) as isize);
        let k = self.k as isize;
        let mut total = 0;
        for dir in DIRECTIONS {
            for offset in -k..=1 {
                total += self.window(row + dir.0 * offset, col + dir.1 * offset, dir);
            }
        }
        total
    }

    fn for_neighbours(&mut self, cell: usize, delta: i16) {
        let (row, col) = (cell / self.cols, cell % self.cols);
        for r in row.saturating_sub(2)..=(row + 2).min(self.rows - 1) {
            for c in col.saturating_sub(2)..=(col + 2).min(self.cols - 1) {
                let n = &mut self.near[r * self.cols + c];
                *n = (*n as i16 + delta) as u16;
            }
        }
    }

    fn make(&mut self, cell: usize, colour: Stone) {
        let before = self.windows_around(cell);
        self.cells[cell] = colour_code(colour);
        self.score += self.windows_around(cell) - before;
        self.hash ^= zobrist(cell, colour);
        self.for_neighbours(cell, 1);
        self.stones += 1;
        self.bounds_stack.push(self.bounds);
        let (row, col) = (cell / self.cols, cell % self.cols);
        let b = &mut self.bounds;
        *b = (b.0.min(row), b.1.max(row), b.2.min(col), b.3.max(col));
    }

    fn unmake(&mut self, cell: usize) {
        let colour = if self.cells[cell] == colour_code(Stone::Black) {
            Stone::Black
        } else {
            Stone::White
        };
        let before = self.windows_around(cell);
        self.cells[cell] = EMPTY;
        self.score += self.windows_around(cell) - before;
        self.hash ^= zobrist(cell, colour);
        self.for_neighbours(cell, -1);
        self.stones -= 1;
        if let Some(bounds) = self.bounds_stack.pop() {
            self.bounds = bounds;
        }
    }

    /// Whether `colour` playing at the empty `cell` makes a winning line.
    fn wins_at(&self, cell: usize, colour: Stone) -> bool {
        let colour = colour_code(colour);
        let (row, col) = ((cell / self.cols) as isize, (cell % self.cols) as isize);
        DIRECTIONS.iter().any(|&(dr, dc)| {
            let mut run = 1;
            for sign in [1, -1] {
                let mut i = 1;
                while self.at(row + dr * sign * i, col + dc * sign * i) == Some(colour) {
                    run += 1;
                    i += 1;
                }
            }
            if self.overline_wins {
                run >= self.k
            } else {
                run == self.k
            }
        })
    }

    /// How much a stone at `cell` would add for `colour` (attack) and take from the opponent
    /// (defence): the ordering score of a move.
    fn move_score(&self, cell: usize, colour: Stone) -> i64 {
        let (row, col) = ((cell / self.cols) as isize, (cell % self.cols) as isize);
        let k = self.k as isize;
        let mut attack = 0;
        let mut defence = 0;
        for (dr, dc) in DIRECTIONS {
            for offset in -(k - 1)..=0 {
                let (r0, c0) = (row + dr * offset, col + dc * offset);
                let mut counts = [0usize; 3];
                let mut on_board = true;
                for i in 0..k {
                    match self.at(r0 + dr * i, c0 + dc * i) {
                        Some(cell) => counts[cell as usize] += 1,
                        None => {
                            on_board = false;
                            break;
                        }
                    }
                }
                if !on_board {
                    continue;
                }
                for side in [Stone::Black, Stone::White] {
                    if counts[colour_code(side.opponent()) as usize] > 0 {
                        continue;
                    }
                    if !self.overline_wins {
                        let before = self.at(r0 - dr, c0 - dc);
                        let after = self.at(r0 + dr * k, c0 + dc * k);
                        let own = Some(colour_code(side));
                        if before == own || after == own {
                            continue;
                        }
                    }
                    let gain = window_weight(counts[colour_code(side) as usize] + 1, self.k);
                    if side == colour {
                        attack += gain;
                    } else {
                        defence += gain;
                    }
                }
            }
        }
        attack + defence * 9 / 10
    }

    fn candidates(&self) -> Vec<usize> {
        if self.stones == 0 {
            return vec![(self.rows / 2) * self.cols + self.cols / 2];
        }
        let (r0, r1, c0, c1) = self.bounds;
        let mut moves = Vec::new();
        for r in r0.saturating_sub(2)..=(r1 + 2).min(self.rows - 1) {
            for c in c0.saturating_sub(2)..=(c1 + 2).min(self.cols - 1) {
                let cell = r * self.cols + c;
                if self.cells[cell] == EMPTY && self.near[cell] > 0 {
                    moves.push(cell);
                }
            }
        }
        if moves.is_empty() {
            // Stones fill their neighbourhood: any empty cell will do.
            moves.extend((0..self.cells.len()).filter(|&c| self.cells[c] == EMPTY));
        }
        moves
    }

    /// The moves worth searching, best first, and whether the side to move wins at once.
    fn ordered_moves(
        &self,
        colour: Stone,
        ply: usize,
        tt_move: Option<usize>,
    ) -> Result<Vec<usize>, usize> {
        let all = self.candidates();
        if let Some(&win) = all.iter().find(|&&c| self.wins_at(c, colour)) {
            return Err(win);
        }
        let threats: Vec<usize> = all
            .iter()
            .copied()
            .filter(|&c| self.wins_at(c, colour.opponent()))
            .collect();
        // Facing a five-in-waiting: only blocking it matters.
        let pool = if threats.is_empty() { all } else { threats };
        let killers = self.killers[ply.min(MAX_PLY)];
        let mut scored: Vec<(i64, usize)> = pool
            .into_iter()
            .map(|c| {
                let mut s = self.move_score(c, colour);
                if Some(c) == tt_move {
                    s += 1 << 40;
                } else if killers.contains(&Some(c)) {
                    s += 1 << 30;
                }
                (s, c)
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        Ok(scored.into_iter().map(|(_, c)| c).collect())
    }

    fn evaluate(&self, colour: Stone) -> Score {
        let signed = if colour == Stone::Black {
            self.score
        } else {
            -self.score
        };
        signed.clamp(-(WIN_THRESHOLD as i64 - 1), WIN_THRESHOLD as i64 - 1) as i32
    }

    fn negamax(
        &mut self,
        depth: u32,
        ply: usize,
        mut alpha: Score,
        beta: Score,
        colour: Stone,
    ) -> Score {
        if self.clock.tick() {
            return 0;
        }
        if self.stones == self.cells.len() {
            return 0;
        }
        let entry = self.table.probe(self.hash);
        let tt_move = entry.as_ref().and_then(|e| e.mv);
        if let Some(entry) = &entry {
            if entry.depth >= depth as i32 {
                let score = score_from_table(entry.score, ply);
                if entry.bound.cuts(score, alpha, beta) {
                    return score;
                }
            }
        }
        let moves = match self.ordered_moves(colour, ply, tt_move) {
            Err(_win) => return mate_in(ply as i32 + 1),
            Ok(moves) => moves,
        };
        if depth == 0 || ply >= MAX_PLY {
            return self.evaluate(colour);
        }
        let original_alpha = alpha;
        let mut best = -WIN;
        let mut best_move = None;
        for &mv in moves.iter().take(BEAM) {
            self.make(mv, colour);
            let score = -self.negamax(depth - 1, ply + 1, -beta, -alpha, colour.opponent());
            self.unmake(mv);
            if self.clock.stopped() {
                return 0;
            }
            if score > best {
                best = score;
                best_move = Some(mv);
            }
            if score > alpha {
                alpha = score;
            }
            if alpha >= beta {
                let slot = &mut self.killers[ply.min(MAX_PLY)];
                if slot[0] != Some(mv) {
                    slot[1] = slot[0];
                    slot[0] = Some(mv);
                }
                break;
            }
        }
        self.table.store(
            self.hash,
            Entry {
                score: score_to_table(best, ply),
                mv: best_move,
                depth: depth as i32,
                bound: Bound::of(best, original_alpha, beta),
                on_pv: false,
            },
        );
        best
    }

    fn principal_variation(&mut self, first: usize, colour: Stone) -> Vec<Move> {
        let mut line = vec![first];
        self.make(first, colour);
        let mut side = colour.opponent();
        while line.len() < 16 {
            let Some(next) = self.table.probe(self.hash).and_then(|e| e.mv) else {
                break;
            };
            if next >= self.cells.len() || self.cells[next] != EMPTY {
                break;
            }
            self.make(next, side);
            line.push(next);
            side = side.opponent();
        }
        for &cell in line.iter().rev() {
            self.unmake(cell);
        }
        line.into_iter().map(|c| self.to_move(c)).collect()
    }

    /// One iteration over the root moves at `depth`: the best move and its score (`None` only
    /// when the clock stopped before the first move was searched). The best so far moves to the
    /// front of `order`, for the next iteration.
    fn root_iteration(
        &mut self,
        order: &mut Vec<usize>,
        colour: Stone,
        depth: u32,
    ) -> Option<(usize, Score)> {
        let mut alpha = -WIN;
        let mut iteration_best: Option<(usize, Score)> = None;
        for index in 0..order.len() {
            let mv = order[index];
            self.make(mv, colour);
            let score = -self.negamax(depth - 1, 1, -WIN, -alpha, colour.opponent());
            self.unmake(mv);
            if self.clock.stopped() {
                break;
            }
            if iteration_best.is_none_or(|(_, s)| score > s) {
                iteration_best = Some((mv, score));
                alpha = alpha.max(score);
                let moved = order.remove(index);
                order.insert(0, moved);
            }
        }
        iteration_best
    }

    fn to_move(&self, cell: usize) -> Move {
        Move::new(cell / self.cols, cell % self.cols)
    }
}

pub fn search(
    board: &Board,
    rule: Rule,
    side: Stone,
    deadline: &Deadline,
    config: &EngineConfig,
) -> Decision {
    let started = Instant::now();
    let mut searcher = Searcher::new(board, rule, deadline, config);
    let colour = side;
    let root_moves = match searcher.ordered_moves(colour, 0, None) {
        Err(win) => {
            let mv = searcher.to_move(win);
            return Decision {
                mv,
                score: mate_in(1),
                depth: 1,
                nodes: 1,
                pv: vec![mv],
            };
        }
        Ok(moves) => moves,
    };
    // Before any iteration completes, the best-ordered move is the answer (budget 0 included).
    let first = Choice {
        mv: root_moves[0],
        score: 0,
        depth: 0,
    };
    if root_moves.len() == 1 || deadline.expired() {
        return decision(&searcher, first, vec![searcher.to_move(first.mv)]);
    }
    let empties = searcher.cells.len() - searcher.stones;
    let max_depth = config.max_depth.unwrap_or(64).min(empties as u32).max(1);
    let mut order = root_moves;
    // The expected line of the last complete iteration, read from the table when it completed.
    let mut line: Option<(usize, Vec<Move>)> = None;
    let best = deepen(deadline, 1..=max_depth, first, |depth, choice| {
        let iteration_best = searcher.root_iteration(&mut order, colour, depth);
        let Some((mv, score)) = iteration_best else {
            return Iteration::CutShort { improved: None };
        };
        if searcher.clock.stopped() {
            // The previous best move was searched first: a partial iteration's best counts if
            // it is another move that beats it.
            let improved = (mv != choice.mv && score > choice.score).then_some((mv, score));
            return Iteration::CutShort { improved };
        }
        let pv = searcher.principal_variation(mv, colour);
        if let Some(sink) = &config.progress {
            sink.report(&Progress {
                depth,
                score,
                mv: searcher.to_move(mv),
                pv: pv.clone(),
                nodes: searcher.clock.nodes(),
                elapsed: deadline.elapsed(),
            });
        }
        line = Some((mv, pv));
        Iteration::Complete { mv, score }
    });
    let pv = match line {
        Some((mv, pv)) if mv == best.mv => pv,
        _ => vec![searcher.to_move(best.mv)],
    };
    let best = decision(&searcher, best, pv);
    tracing::trace!(elapsed = ?started.elapsed(), depth = best.depth, "v1 search done");
    best
}

fn decision(searcher: &Searcher, choice: Choice<usize>, pv: Vec<Move>) -> Decision {
    Decision {
        mv: searcher.to_move(choice.mv),
        score: choice.score,
        depth: choice.depth,
        nodes: searcher.clock.nodes(),
        pv,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn best(rows: &[&str], depth: u32) -> Move {
        let board = Board::from_rows(rows).unwrap();
        let rule = Rule::for_board(board.rows(), board.cols());
        let side = board.side_to_move().unwrap();
        let config = EngineConfig {
            max_depth: Some(depth),
            hash_bytes: 1 << 20,
            ..EngineConfig::default()
        };
        search(&board, rule, side, &Deadline::unlimited(), &config).mv
    }

    #[test]
    fn wins_with_exactly_five() {
        let mv = best(
            &[
                "0000000", "0NNNN00", "0000000", "0BBB000", "0000000", "000B000", "0000000",
            ],
            2,
        );
        assert!(mv == Move::new(1, 0) || mv == Move::new(1, 5));
    }

    #[test]
    fn does_not_fill_an_overline_gap() {
        // Filling (0, 4) would make six for black: no win, so black must block white's four.
        let mv = best(
            &[
                "NNNN0N00", "00000000", "0BBBB000", "00000000", "00000000", "0000000B", "00000000",
                "00000000",
            ],
            2,
        );
        assert!(mv == Move::new(2, 0) || mv == Move::new(2, 5), "got {mv}");
    }
}
