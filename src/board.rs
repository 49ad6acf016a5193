//! The game itself: an L×C grid of stones, the rule that says what wins, whose turn it is.
//!
//! Everything above (protocol, engine, referee, morpion agents) speaks in these types.

use std::fmt;

/// Largest number of rows or columns a board may have; larger requests are refused before any
/// allocation.
pub const MAX_SIDE: usize = 128;

/// A stone colour, the one colour type of the crate (boards, searches, front ends). Black (`N`,
/// "noir") always moves first; white (`B`, "blanc") second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum)]
#[repr(u8)]
pub enum Stone {
    /// `N` on the wire, X in the terminal: moves first.
    Black = 0,
    /// `B` on the wire, O in the terminal: moves second.
    White = 1,
}

impl Stone {
    /// Both colours, black first (the order of [`Stone::index`]).
    pub const BOTH: [Stone; 2] = [Stone::Black, Stone::White];

    #[inline(always)]
    pub const fn opponent(self) -> Stone {
        match self {
            Stone::Black => Stone::White,
            Stone::White => Stone::Black,
        }
    }

    /// The character of the Connect5 wire format: `N` for black, `B` for white.
    pub fn protocol_char(self) -> char {
        match self {
            Stone::Black => 'N',
            Stone::White => 'B',
        }
    }

    /// Dense index (black 0, white 1) for per-colour tables.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            Stone::Black => "black",
            Stone::White => "white",
        }
    }
}

/// A cell, 0-based, row first (the order of the wire format).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move {
    pub row: usize,
    pub col: usize,
}

impl Move {
    pub fn new(row: usize, col: usize) -> Move {
        Move { row, col }
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.row, self.col)
    }
}

/// What makes a winning line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    /// Length of the winning line.
    pub k: usize,
    /// When false (Connect5 as the course defines it), only a line of *exactly* `k` wins; six or
    /// more in a row is no win for either colour. When true, `k` or more wins (freestyle gomoku,
    /// and the 2020 edition of the course referee).
    pub overline_wins: bool,
}

impl Rule {
    /// The rule the protocol implies for an L×C board when no K is given: five in a row, except on
    /// boards whose two sides are both shorter than five, where the shorter side is the length
    /// (3×3 is morpion, tic-tac-toe).
    pub fn for_board(rows: usize, cols: usize) -> Rule {
        let k = if rows < 5 && cols < 5 {
            rows.min(cols)
        } else {
            5
        };
        Rule {
            k,
            overline_wins: false,
        }
    }

    /// The exact rule of an L×C board with the line length `k` when one is given (it must be 1 to
    /// the longer side; the error is that bound), else the one the size implies.
    pub fn for_board_with_k(rows: usize, cols: usize, k: Option<usize>) -> Result<Rule, usize> {
        let longest = rows.max(cols);
        match k {
            None => Ok(Rule::for_board(rows, cols)),
            Some(k) if (1..=longest).contains(&k) => Ok(Rule::exact(k)),
            Some(_) => Err(longest),
        }
    }

    pub fn exact(k: usize) -> Rule {
        Rule {
            k,
            overline_wins: false,
        }
    }

    /// Whether a run of `length` stones of one colour wins under this rule.
    pub fn is_winning_run(&self, length: usize) -> bool {
        if self.overline_wins {
            length >= self.k
        } else {
            length == self.k
        }
    }
}

/// The four line directions, as (row step, column step): horizontal, vertical, both diagonals.
pub const DIRECTIONS: [(isize, isize); 4] = [(0, 1), (1, 0), (1, 1), (1, -1)];

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoardError {
    SizeOutOfRange { rows: usize, cols: usize },
    OutOfBounds(Move),
    Occupied(Move),
}

impl fmt::Display for BoardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoardError::SizeOutOfRange { rows, cols } => write!(
                f,
                "board size {rows}x{cols} out of range (each side must be 1 to {MAX_SIDE})"
            ),
            BoardError::OutOfBounds(mv) => write!(f, "cell {mv} is outside the board"),
            BoardError::Occupied(mv) => write!(f, "cell {mv} is already occupied"),
        }
    }
}

impl std::error::Error for BoardError {}

/// Why the side to move cannot be derived from the stone counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImpossibleCounts {
    pub black: usize,
    pub white: usize,
}

impl fmt::Display for ImpossibleCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "impossible stone counts: {} black (N) and {} white (B); black moves first, so black must have as many stones as white or one more",
            self.black, self.white
        )
    }
}

/// An L×C grid of cells, each empty or holding a stone.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Board {
    rows: usize,
    cols: usize,
    cells: Vec<Option<Stone>>,
}

impl Board {
    /// An empty board; refuses sizes outside 1..=[`MAX_SIDE`] before allocating anything.
    pub fn new(rows: usize, cols: usize) -> Result<Board, BoardError> {
        if !(1..=MAX_SIDE).contains(&rows) || !(1..=MAX_SIDE).contains(&cols) {
            return Err(BoardError::SizeOutOfRange { rows, cols });
        }
        Ok(Board {
            rows,
            cols,
            cells: vec![None; rows * cols],
        })
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn cols(&self) -> usize {
        self.cols
    }

    pub fn contains(&self, mv: Move) -> bool {
        mv.row < self.rows && mv.col < self.cols
    }

    /// The cell's content; `None` for an empty cell or one outside the board.
    pub fn get(&self, mv: Move) -> Option<Stone> {
        if self.contains(mv) {
            self.cells[mv.row * self.cols + mv.col]
        } else {
            None
        }
    }

    pub fn is_empty_cell(&self, mv: Move) -> bool {
        self.contains(mv) && self.cells[mv.row * self.cols + mv.col].is_none()
    }

    /// Sets a cell to any content, without checking turn or occupancy (for building positions).
    pub fn set(&mut self, mv: Move, stone: Option<Stone>) -> Result<(), BoardError> {
        if !self.contains(mv) {
            return Err(BoardError::OutOfBounds(mv));
        }
        self.cells[mv.row * self.cols + mv.col] = stone;
        Ok(())
    }

    /// Places a stone on an empty cell.
    pub fn play(&mut self, mv: Move, stone: Stone) -> Result<(), BoardError> {
        if !self.contains(mv) {
            return Err(BoardError::OutOfBounds(mv));
        }
        let cell = &mut self.cells[mv.row * self.cols + mv.col];
        if cell.is_some() {
            return Err(BoardError::Occupied(mv));
        }
        *cell = Some(stone);
        Ok(())
    }

    /// Number of black and white stones.
    pub fn counts(&self) -> (usize, usize) {
        self.cells.iter().fold((0, 0), |(b, w), c| match c {
            Some(Stone::Black) => (b + 1, w),
            Some(Stone::White) => (b, w + 1),
            None => (b, w),
        })
    }

    pub fn stone_count(&self) -> usize {
        self.cells.iter().filter(|c| c.is_some()).count()
    }

    /// The side to move, derived from the counts: black when they are equal, white when black has
    /// one more.
    pub fn side_to_move(&self) -> Result<Stone, ImpossibleCounts> {
        let (black, white) = self.counts();
        if black == white {
            Ok(Stone::Black)
        } else if black == white + 1 {
            Ok(Stone::White)
        } else {
            Err(ImpossibleCounts { black, white })
        }
    }

    pub fn is_full(&self) -> bool {
        self.cells.iter().all(|c| c.is_some())
    }

    /// Every empty cell, row by row.
    pub fn empty_cells(&self) -> impl Iterator<Item = Move> + '_ {
        self.cells
            .iter()
            .enumerate()
            .filter(|(_, c)| c.is_none())
            .map(|(i, _)| Move::new(i / self.cols, i % self.cols))
    }

    /// Every cell with its content, row by row.
    pub fn cells(&self) -> impl Iterator<Item = (Move, Option<Stone>)> + '_ {
        self.cells
            .iter()
            .enumerate()
            .map(|(i, c)| (Move::new(i / self.cols, i % self.cols), *c))
    }

    /// The cell one step away in a direction, if it is on the board.
    pub fn step(&self, mv: Move, (dr, dc): (isize, isize), times: isize) -> Option<Move> {
        let row = mv.row as isize + dr * times;
        let col = mv.col as isize + dc * times;
        if row < 0 || col < 0 || row >= self.rows as isize || col >= self.cols as isize {
            None
        } else {
            Some(Move::new(row as usize, col as usize))
        }
    }

    /// Length of the run of `stone` through `mv` in one direction, counting `mv` itself as that
    /// stone whatever it holds (so it answers "what if `stone` played here").
    pub fn run_through(&self, mv: Move, stone: Stone, dir: (isize, isize)) -> usize {
        let mut length = 1;
        for sign in [1, -1] {
            let mut i = 1;
            while let Some(next) = self.step(mv, (dir.0 * sign, dir.1 * sign), i) {
                if self.get(next) != Some(stone) {
                    break;
                }
                length += 1;
                i += 1;
            }
        }
        length
    }

    /// Whether `stone` playing at `mv` (or having played there) makes a winning line through it.
    pub fn wins_at(&self, mv: Move, stone: Stone, rule: Rule) -> bool {
        DIRECTIONS
            .iter()
            .any(|&dir| rule.is_winning_run(self.run_through(mv, stone, dir)))
    }

    /// The colour that has a winning line anywhere on the board, if any (black first when both do,
    /// which no legal game reaches).
    pub fn winner(&self, rule: Rule) -> Option<Stone> {
        [Stone::Black, Stone::White]
            .into_iter()
            .find(|&stone| self.winning_line(stone, rule).is_some())
    }

    /// The cells of one winning line of `stone`, if it has one.
    pub fn winning_line(&self, stone: Stone, rule: Rule) -> Option<Vec<Move>> {
        for (mv, cell) in self.cells() {
            if cell != Some(stone) {
                continue;
            }
            for dir in DIRECTIONS {
                // Only start counting at the first stone of a run, so each run is measured once.
                let before = self.step(mv, (-dir.0, -dir.1), 1);
                if before.is_some_and(|b| self.get(b) == Some(stone)) {
                    continue;
                }
                let mut run = vec![mv];
                while let Some(next) = self.step(mv, dir, run.len() as isize) {
                    if self.get(next) != Some(stone) {
                        break;
                    }
                    run.push(next);
                }
                if rule.is_winning_run(run.len()) {
                    return Some(run);
                }
            }
        }
        None
    }

    /// The board as the wire format writes it: one line per row of `0`, `B`, `N`.
    pub fn to_rows(&self) -> Vec<String> {
        (0..self.rows)
            .map(|r| {
                self.cells[r * self.cols..(r + 1) * self.cols]
                    .iter()
                    .map(|c| c.map_or('0', Stone::protocol_char))
                    .collect()
            })
            .collect()
    }

    /// Builds a board from rows of `0`/`.`/`B`/`N` (test and tool convenience; the wire decoder
    /// has its own, stricter, error-reporting parser).
    pub fn from_rows(rows: &[&str]) -> Result<Board, String> {
        let cols = rows.first().map_or(0, |r| r.chars().count());
        let mut board = Board::new(rows.len(), cols).map_err(|e| e.to_string())?;
        for (r, line) in rows.iter().enumerate() {
            if line.chars().count() != cols {
                return Err(format!("row {r} has {} cells, not {cols}", line.len()));
            }
            for (c, ch) in line.chars().enumerate() {
                let stone = match ch {
                    '0' | '.' => None,
                    'N' | 'n' | 'X' | 'x' => Some(Stone::Black),
                    'B' | 'b' | 'O' | 'o' => Some(Stone::White),
                    other => return Err(format!("unknown character {other:?} in row {r}")),
                };
                board.cells[r * cols + c] = stone;
            }
        }
        Ok(board)
    }
}

impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for row in self.to_rows() {
            writeln!(f, "{row}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_five_wins_and_six_does_not() {
        let five = Board::from_rows(&["NNNNN00", "BBBB000", "0000000"]).unwrap();
        assert_eq!(five.winner(Rule::exact(5)), Some(Stone::Black));
        let six = Board::from_rows(&["NNNNNN0", "BBBB000", "0000000"]).unwrap();
        assert_eq!(six.winner(Rule::exact(5)), None);
        let freestyle = Rule {
            k: 5,
            overline_wins: true,
        };
        assert_eq!(six.winner(freestyle), Some(Stone::Black));
    }

    #[test]
    fn filling_the_gap_of_four_and_one_is_no_win() {
        let board = Board::from_rows(&["NNNN0N0", "BBBB000", "0000000"]).unwrap();
        assert!(!board.wins_at(Move::new(0, 4), Stone::Black, Rule::exact(5)));
        assert!(board.wins_at(Move::new(1, 4), Stone::White, Rule::exact(5)));
    }

    #[test]
    fn side_to_move_follows_counts() {
        let board = Board::from_rows(&["N0", "00"]).unwrap();
        assert_eq!(board.side_to_move(), Ok(Stone::White));
        let bad = Board::from_rows(&["NN", "00"]).unwrap();
        assert!(bad.side_to_move().is_err());
    }

    #[test]
    fn small_boards_use_their_short_side() {
        assert_eq!(Rule::for_board(3, 3).k, 3);
        assert_eq!(Rule::for_board(4, 3).k, 3);
        assert_eq!(Rule::for_board(4, 15).k, 5);
        assert!(Board::new(129, 5).is_err());
        assert!(Board::new(0, 5).is_err());
    }
}
