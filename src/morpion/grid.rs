//! The 3×3 morpion position in a compact form, with its rules taken from `crate::board`.
//!
//! A position is a base-3 number (one digit per cell 0–8, row by row: 0 empty, 1 X, 2 O), so the
//! whole game fits in a table of 3^9 = 19,683 entries. Who has won and whose turn it is are asked
//! of [`Board`] once per code, when the table is built; nothing here re-implements the rules.
//! X is the first player, the engine's black stone; O is white.

use std::fmt;
use std::sync::OnceLock;

use crate::board::{Board, Move, Rule, Stone};

pub const CELLS: usize = 9;
/// Number of base-3 codes (not all are reachable positions).
pub const CODES: usize = 19_683;

const POWERS: [u16; CELLS] = [1, 3, 9, 27, 81, 243, 729, 2187, 6561];

/// The digit of a cell holding `stone`. The digits are fixed for good: codes order positions, a
/// MENACE box is the smallest-code image of its position, and a state file whose boxes are not
/// those images is refused, so other digits would make every saved MENACE unreadable.
const fn stone_digit(stone: Stone) -> u16 {
    match stone {
        Stone::Black => 1,
        Stone::White => 2,
    }
}

const fn digit_stone(digit: u16) -> Option<Stone> {
    match digit {
        1 => Some(Stone::Black),
        2 => Some(Stone::White),
        _ => None,
    }
}

/// The eight symmetries of the square, as cell permutations: `SYMMETRIES[s][i]` is where cell `i`
/// goes under symmetry `s` (identity first).
pub const SYMMETRIES: [[usize; CELLS]; 8] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8], // identity
    [2, 5, 8, 1, 4, 7, 0, 3, 6], // rotation 90°
    [8, 7, 6, 5, 4, 3, 2, 1, 0], // rotation 180°
    [6, 3, 0, 7, 4, 1, 8, 5, 2], // rotation 270°
    [2, 1, 0, 5, 4, 3, 8, 7, 6], // mirror left-right
    [6, 7, 8, 3, 4, 5, 0, 1, 2], // mirror top-bottom
    [0, 3, 6, 1, 4, 7, 2, 5, 8], // main diagonal
    [8, 5, 2, 7, 4, 1, 6, 3, 0], // anti-diagonal
];

/// The morpion rule: three in a row on a 3×3 board, as the protocol derives it.
pub fn rule() -> Rule {
    Rule::for_board(3, 3)
}

/// How a position stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The game goes on; this side plays next.
    ToMove(Stone),
    Won(Stone),
    Draw,
    /// Stone counts no game can reach (more O than X, or two X too many).
    Impossible,
}

fn status_table() -> &'static [Status; CODES] {
    static TABLE: OnceLock<Box<[Status; CODES]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = Box::new([Status::Impossible; CODES]);
        for (code, slot) in table.iter_mut().enumerate() {
            let grid = Grid(code as u16);
            let board = grid.to_board();
            *slot = match board.side_to_move() {
                Err(_) => Status::Impossible,
                Ok(side) => match board.winner(rule()) {
                    Some(winner) => Status::Won(winner),
                    None if board.is_full() => Status::Draw,
                    None => Status::ToMove(side),
                },
            };
        }
        table
    })
}

/// Why a text is not a morpion grid (state files store positions as text).
#[derive(Debug, thiserror::Error)]
pub enum GridParseError {
    #[error("a morpion grid has 9 cells, {text:?} has {cells}")]
    CellCount { text: String, cells: usize },
    #[error("unknown cell {cell:?} in grid {text:?}")]
    UnknownCell { cell: char, text: String },
}

/// A morpion position (see the module documentation for the encoding).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Grid(u16);

impl Grid {
    pub const EMPTY: Grid = Grid(0);

    /// The position of a base-3 code; `None` when the code is out of range.
    pub fn from_code(code: u16) -> Option<Grid> {
        (usize::from(code) < CODES).then_some(Grid(code))
    }

    pub fn code(self) -> u16 {
        self.0
    }

    fn digit(self, cell: usize) -> u16 {
        (self.0 / POWERS[cell]) % 3
    }

    pub fn get(self, cell: usize) -> Option<Stone> {
        digit_stone(self.digit(cell))
    }

    /// The position after `stone` is placed on `cell`, which must be empty.
    pub fn with(self, cell: usize, stone: Stone) -> Grid {
        debug_assert!(self.get(cell).is_none());
        Grid(self.0 + stone_digit(stone) * POWERS[cell])
    }

    pub fn is_empty_cell(self, cell: usize) -> bool {
        cell < CELLS && self.get(cell).is_none()
    }

    pub fn empty_cells(self) -> impl Iterator<Item = usize> {
        (0..CELLS).filter(move |&c| self.get(c).is_none())
    }

    pub fn stones(self) -> usize {
        (0..CELLS).filter(|&c| self.get(c).is_some()).count()
    }

    pub fn status(self) -> Status {
        status_table()[usize::from(self.0)]
    }

    pub fn is_terminal(self) -> bool {
        matches!(self.status(), Status::Won(_) | Status::Draw)
    }

    /// The side to move, when the game goes on.
    pub fn to_move(self) -> Option<Stone> {
        match self.status() {
            Status::ToMove(side) => Some(side),
            _ => None,
        }
    }

    /// The positions one move later (empty when the game is over).
    pub fn successors(self) -> Vec<(usize, Grid)> {
        match self.to_move() {
            Some(side) => self
                .empty_cells()
                .map(|cell| (cell, self.with(cell, side)))
                .collect(),
            None => Vec::new(),
        }
    }

    /// The position under symmetry `s` (cell `i` moves to `SYMMETRIES[s][i]`).
    pub fn transformed(self, s: usize) -> Grid {
        let mut code = 0u16;
        for cell in 0..CELLS {
            code += self.digit(cell) * POWERS[SYMMETRIES[s][cell]];
        }
        Grid(code)
    }

    /// The representative of the position's symmetry class (smallest code) and the symmetry that
    /// maps this position onto it.
    pub fn canonical(self) -> (Grid, usize) {
        (0..8)
            .map(|s| (self.transformed(s), s))
            .min()
            .unwrap_or((self, 0))
    }

    pub fn to_board(self) -> Board {
        let mut board = Board::new(3, 3).unwrap_or_else(|_| unreachable!("3×3 is a valid size"));
        for cell in 0..CELLS {
            if let Some(stone) = self.get(cell) {
                let _ = board.set(cell_move(cell), Some(stone));
            }
        }
        board
    }

    /// The position of a 3×3 board (`None` for any other size).
    pub fn from_board(board: &Board) -> Option<Grid> {
        if board.rows() != 3 || board.cols() != 3 {
            return None;
        }
        let mut grid = Grid::EMPTY;
        for cell in 0..CELLS {
            if let Some(stone) = board.get(cell_move(cell)) {
                grid = grid.with(cell, stone);
            }
        }
        Some(grid)
    }

    /// Nine characters, `X`, `O` or `.`, cell 0 first (the seeds' string form).
    pub fn to_text(self) -> String {
        (0..CELLS)
            .map(|c| match self.get(c) {
                Some(stone) => symbol(stone),
                None => '.',
            })
            .collect()
    }

    /// Parses the nine-character form (`X`/`x`, `O`/`o`/`0`, `.`/`-`/space for empty).
    pub fn parse(text: &str) -> Result<Grid, GridParseError> {
        let chars: Vec<char> = text.chars().collect();
        if chars.len() != CELLS {
            return Err(GridParseError::CellCount {
                text: text.to_string(),
                cells: chars.len(),
            });
        }
        let mut grid = Grid::EMPTY;
        for (cell, ch) in chars.into_iter().enumerate() {
            match ch {
                'X' | 'x' => grid = grid.with(cell, Stone::Black),
                'O' | 'o' | '0' => grid = grid.with(cell, Stone::White),
                '.' | '-' | ' ' => {}
                other => {
                    return Err(GridParseError::UnknownCell {
                        cell: other,
                        text: text.to_string(),
                    })
                }
            }
        }
        Ok(grid)
    }

    /// The board as the seed 000 program draws it, with the number of each empty cell shown when
    /// `numbers` is set (for a human choosing a cell).
    pub fn render(self, numbers: bool) -> String {
        let mut out = String::new();
        for row in 0..3 {
            let cells: Vec<String> = (0..3)
                .map(|col| {
                    let cell = row * 3 + col;
                    match self.get(cell) {
                        Some(stone) => symbol(stone).to_string(),
                        None if numbers => cell.to_string(),
                        None => " ".to_string(),
                    }
                })
                .collect();
            out.push_str(&format!(" {} | {} | {}\n", cells[0], cells[1], cells[2]));
            if row < 2 {
                out.push_str("-----------\n");
            }
        }
        out
    }
}

impl fmt::Display for Grid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

/// The board cell of a morpion cell number.
pub fn cell_move(cell: usize) -> Move {
    Move::new(cell / 3, cell % 3)
}

/// The morpion cell number of a board move.
pub fn move_cell(mv: Move) -> usize {
    mv.row * 3 + mv.col
}

/// `X` for the first player (black), `O` for the second.
pub fn symbol(stone: Stone) -> char {
    match stone {
        Stone::Black => 'X',
        Stone::White => 'O',
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_come_from_the_board() {
        let grid = Grid::parse("XXX.OO...").unwrap();
        assert_eq!(grid.status(), Status::Won(Stone::Black));
        let grid = Grid::parse("XOXXOOOXX").unwrap();
        assert_eq!(grid.status(), Status::Draw);
        assert_eq!(Grid::EMPTY.status(), Status::ToMove(Stone::Black));
        assert_eq!(
            Grid::parse("X........").unwrap().status(),
            Status::ToMove(Stone::White)
        );
        assert_eq!(
            Grid::parse("OO.......").unwrap().status(),
            Status::Impossible
        );
    }

    #[test]
    fn symmetries_are_permutations_and_form_a_group() {
        for perm in SYMMETRIES {
            let mut seen = [false; CELLS];
            for &target in &perm {
                seen[target] = true;
            }
            assert!(seen.iter().all(|&s| s));
        }
        let grid = Grid::parse("XO..X...O").unwrap();
        let classes: std::collections::HashSet<Grid> =
            (0..8).map(|s| grid.transformed(s).canonical().0).collect();
        assert_eq!(classes.len(), 1);
        let (canon, s) = grid.canonical();
        assert_eq!(grid.transformed(s), canon);
    }

    #[test]
    fn codes_keep_the_encoding_saved_boxes_depend_on() {
        let code = |text: &str| Grid::parse(text).unwrap().code();
        assert_eq!(code("X........"), 1);
        assert_eq!(code("O........"), 2);
        assert_eq!(code(".X......."), 3);
        assert_eq!(code("........O"), 2 * 6561);
        // The box of a lone corner X is the top-left corner's, the smallest code.
        assert_eq!(Grid::parse("........X").unwrap().canonical().0, Grid(1));
    }

    #[test]
    fn board_round_trip() {
        let grid = Grid::parse("X.O.X..O.").unwrap();
        assert_eq!(Grid::from_board(&grid.to_board()), Some(grid));
        assert_eq!(grid.to_text(), "X.O.X..O.");
    }
}
