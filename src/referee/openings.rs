//! Openings: the stones on the board before the players' first move, black first, alternating.
//!
//! Files use c-gomoku-cli's two line formats: offsets from the centre (`0,0, 1,0, 1,3`: pairs of
//! x (column) and y (row) offsets, as in its openings files) and pos strings (`h8i9j7`: a column
//! letter from `a` and a 1-based row number counted from the top, the Piskvork/Gomocup axes).
//! Blank lines and lines starting with `#` are skipped.

use rand::seq::SliceRandom;
use rand::Rng;

use crate::board::{Board, BoardError, Move, Rule, Stone};

/// Why an openings file was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpeningsFileError {
    #[error("opening on line {line}: {problem}")]
    Line {
        line: usize,
        problem: OpeningProblem,
    },
    #[error("no opening in the file")]
    NoOpening,
}

/// What is wrong with one opening (one line of a file).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpeningProblem {
    #[error("{0:?} is not an offset")]
    NotAnOffset(String),
    #[error("odd number of offsets: expected x,y pairs")]
    OddOffsets,
    #[error("offset {x},{y} falls outside the {rows}x{cols} board")]
    OffsetOutside {
        x: i64,
        y: i64,
        rows: usize,
        cols: usize,
    },
    #[error("{0:?} is not a column letter a-z")]
    NotAColumn(char),
    #[error("column {0} has no row number")]
    NoRowNumber(char),
    #[error("row numbers start at 1 ({0}0)")]
    RowZero(char),
    #[error("{mv} is outside the {rows}x{cols} board")]
    Outside { mv: Move, rows: usize, cols: usize },
    #[error("{0} is played twice")]
    PlayedTwice(Move),
    #[error("{} already has a winning line", .0.name())]
    AlreadyWon(Stone),
    #[error("the board is already full")]
    BoardFull,
    #[error(transparent)]
    Board(#[from] BoardError),
}

/// Why no random opening could be drawn.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RandomOpeningError {
    #[error(
        "a random opening of {stones} stones does not fit a {rows}x{cols} board with a cell to spare"
    )]
    TooManyStones {
        stones: usize,
        rows: usize,
        cols: usize,
    },
    #[error("found no random opening of {stones} stones without a winning line on {rows}x{cols}")]
    NoneFound {
        stones: usize,
        rows: usize,
        cols: usize,
    },
    #[error(
        "--opening-radius {radius} is too small for {stones} stones and a cell to spare: its square covers {cells} of this board's cells"
    )]
    RadiusTooSmall {
        radius: usize,
        cells: usize,
        stones: usize,
    },
}

/// Reads every opening of `text`, checking each fits the board and leaves a game to play.
pub fn parse_openings(
    text: &str,
    rows: usize,
    cols: usize,
    rule: Rule,
) -> Result<Vec<Vec<Move>>, OpeningsFileError> {
    let mut openings = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let moves = parse_opening_line(line, rows, cols, rule).map_err(|problem| {
            OpeningsFileError::Line {
                line: index + 1,
                problem,
            }
        })?;
        openings.push(moves);
    }
    if openings.is_empty() {
        return Err(OpeningsFileError::NoOpening);
    }
    Ok(openings)
}

/// One non-blank line, in either format, checked.
fn parse_opening_line(
    line: &str,
    rows: usize,
    cols: usize,
    rule: Rule,
) -> Result<Vec<Move>, OpeningProblem> {
    let moves = if line.starts_with(|c: char| c.is_ascii_alphabetic()) {
        parse_pos_line(line)
    } else {
        parse_offset_line(line, rows, cols)
    }?;
    check_opening(&moves, rows, cols, rule)?;
    Ok(moves)
}

/// `x,y, x,y …` relative to the centre (row L/2, column C/2).
fn parse_offset_line(line: &str, rows: usize, cols: usize) -> Result<Vec<Move>, OpeningProblem> {
    let numbers: Vec<i64> = line
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.parse::<i64>()
                .map_err(|_| OpeningProblem::NotAnOffset(t.to_string()))
        })
        .collect::<Result<_, _>>()?;
    if !numbers.len().is_multiple_of(2) {
        return Err(OpeningProblem::OddOffsets);
    }
    numbers
        .chunks(2)
        .map(|pair| {
            let (x, y) = (pair[0], pair[1]);
            let col = (cols / 2) as i64 + x;
            let row = (rows / 2) as i64 + y;
            if row < 0 || col < 0 || row >= rows as i64 || col >= cols as i64 {
                Err(OpeningProblem::OffsetOutside { x, y, rows, cols })
            } else {
                Ok(Move::new(row as usize, col as usize))
            }
        })
        .collect()
}

/// `moves` as an offset line (`0,0, 1,0, 1,3`), the form [`parse_openings`] and c-gomoku-cli read.
pub fn offset_line(moves: &[Move], rows: usize, cols: usize) -> String {
    let offset = |mv: &Move| {
        let x = mv.col as i64 - (cols / 2) as i64;
        let y = mv.row as i64 - (rows / 2) as i64;
        format!("{x},{y}")
    };
    moves.iter().map(offset).collect::<Vec<_>>().join(", ")
}

/// The same key for two openings that one of the board's symmetries (its mirrors, and on a
/// square board its rotations) maps onto each other: each colour's cells, sorted, in the least
/// of the opening's images.
pub fn symmetry_key(moves: &[Move], rows: usize, cols: usize) -> Vec<Move> {
    let transposes: &[bool] = if rows == cols {
        &[false, true]
    } else {
        &[false]
    };
    let mut least: Option<Vec<Move>> = None;
    for &transpose in transposes {
        for flip_rows in [false, true] {
            for flip_cols in [false, true] {
                let image = |mv: &Move| {
                    let row = if flip_rows { rows - 1 - mv.row } else { mv.row };
                    let col = if flip_cols { cols - 1 - mv.col } else { mv.col };
                    if transpose {
                        Move::new(col, row)
                    } else {
                        Move::new(row, col)
                    }
                };
                let mut black: Vec<Move> = moves.iter().step_by(2).map(image).collect();
                let mut white: Vec<Move> = moves.iter().skip(1).step_by(2).map(image).collect();
                black.sort_unstable();
                white.sort_unstable();
                black.extend(white);
                if least.as_ref().is_none_or(|least| black < *least) {
                    least = Some(black);
                }
            }
        }
    }
    least.unwrap_or_default()
}

/// `h8i9j7`: letter = column from `a`, number = row from 1.
fn parse_pos_line(line: &str) -> Result<Vec<Move>, OpeningProblem> {
    let mut moves = Vec::new();
    let mut chars = line.chars().filter(|c| !c.is_whitespace()).peekable();
    while let Some(letter) = chars.next() {
        if !letter.is_ascii_lowercase() {
            return Err(OpeningProblem::NotAColumn(letter));
        }
        let mut digits = String::new();
        while let Some(&d) = chars.peek() {
            if !d.is_ascii_digit() {
                break;
            }
            digits.push(d);
            chars.next();
        }
        let row: usize = digits
            .parse()
            .map_err(|_| OpeningProblem::NoRowNumber(letter))?;
        if row == 0 {
            return Err(OpeningProblem::RowZero(letter));
        }
        moves.push(Move::new(row - 1, (letter as u8 - b'a') as usize));
    }
    Ok(moves)
}

/// An opening must fit, not repeat a cell, and leave the game undecided with a cell to play.
pub fn check_opening(
    moves: &[Move],
    rows: usize,
    cols: usize,
    rule: Rule,
) -> Result<(), OpeningProblem> {
    let board = opening_board(moves, rows, cols)?;
    if let Some(winner) = board.winner(rule) {
        return Err(OpeningProblem::AlreadyWon(winner));
    }
    if board.is_full() {
        return Err(OpeningProblem::BoardFull);
    }
    Ok(())
}

/// The board after the opening's stones, black first, alternating; an error for a stone off the
/// board or on another.
pub fn opening_board(moves: &[Move], rows: usize, cols: usize) -> Result<Board, OpeningProblem> {
    let mut board = Board::new(rows, cols)?;
    let mut stone = Stone::Black;
    for &mv in moves {
        if !board.contains(mv) {
            return Err(OpeningProblem::Outside { mv, rows, cols });
        }
        board
            .play(mv, stone)
            .map_err(|_| OpeningProblem::PlayedTwice(mv))?;
        stone = stone.opponent();
    }
    Ok(board)
}

/// `stones` random stones near the centre, black first, alternating, with no winning line and a
/// cell left to play: drawn from the square of `radius` around the centre, by default the
/// smallest with three cells per stone.
pub fn random_opening<R: Rng>(
    rng: &mut R,
    stones: usize,
    radius: Option<usize>,
    rows: usize,
    cols: usize,
    rule: Rule,
) -> Result<Vec<Move>, RandomOpeningError> {
    if stones >= rows * cols {
        return Err(RandomOpeningError::TooManyStones { stones, rows, cols });
    }
    let cells = opening_cells(stones, radius, rows, cols)?;
    for _ in 0..1000 {
        let moves: Vec<Move> = cells.choose_multiple(rng, stones).copied().collect();
        if check_opening(&moves, rows, cols, rule).is_ok() {
            return Ok(moves);
        }
    }
    Err(RandomOpeningError::NoneFound { stones, rows, cols })
}

/// The cells random openings of `stones` stones are drawn from: the square of the radius
/// [`opening_square`] gives, or the whole board.
fn opening_cells(
    stones: usize,
    radius: Option<usize>,
    rows: usize,
    cols: usize,
) -> Result<Vec<Move>, RandomOpeningError> {
    let radius = opening_square(stones, radius, rows, cols)?;
    Ok(square_cells(radius.unwrap_or(usize::MAX), rows, cols).collect())
}

/// The radius of the square around the centre that random openings of `stones` stones are drawn
/// from: the one asked for, or by default the smallest with three cells per stone (so that
/// openings look like games); `None`, the whole board, when the default square is the board or
/// leaves no cell to spare. A radius asked for that leaves no cell to spare is an error, not a
/// silently wider draw.
pub fn opening_square(
    stones: usize,
    radius: Option<usize>,
    rows: usize,
    cols: usize,
) -> Result<Option<usize>, RandomOpeningError> {
    match radius {
        Some(radius) => {
            let cells = square_cells(radius, rows, cols).count();
            if cells > stones {
                Ok(Some(radius))
            } else {
                Err(RandomOpeningError::RadiusTooSmall {
                    radius,
                    cells,
                    stones,
                })
            }
        }
        None => {
            let mut radius = 1usize;
            while (2 * radius + 1).pow(2) < stones * 3 && radius < rows.max(cols) {
                radius += 1;
            }
            let cells = square_cells(radius, rows, cols).count();
            Ok((cells > stones && cells < rows * cols).then_some(radius))
        }
    }
}

/// The board's cells within `radius` of the centre (in both coordinates), row by row.
fn square_cells(radius: usize, rows: usize, cols: usize) -> impl Iterator<Item = Move> {
    (0..rows)
        .flat_map(move |r| (0..cols).map(move |c| Move::new(r, c)))
        .filter(move |m| m.row.abs_diff(rows / 2) <= radius && m.col.abs_diff(cols / 2) <= radius)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;
    use std::collections::HashSet;

    #[test]
    fn an_offset_line_reads_back_as_the_same_opening() {
        for (rows, cols) in [(15, 15), (20, 20), (9, 12)] {
            let moves = vec![
                Move::new(0, 0),
                Move::new(rows / 2, cols / 2),
                Move::new(rows - 1, 3),
            ];
            let line = offset_line(&moves, rows, cols);
            let read = parse_openings(&line, rows, cols, Rule::exact(5)).unwrap();
            assert_eq!(read, vec![moves], "{line}");
        }
    }

    #[test]
    fn openings_share_a_symmetry_key_only_with_their_mirrors_and_rotations() {
        let (rows, cols) = (20, 20);
        let opening = [Move::new(9, 9), Move::new(10, 11), Move::new(8, 9)];
        let key = symmetry_key(&opening, rows, cols);
        let mirrored: Vec<Move> = opening
            .iter()
            .map(|m| Move::new(m.row, cols - 1 - m.col))
            .collect();
        let rotated: Vec<Move> = opening
            .iter()
            .map(|m| Move::new(m.col, rows - 1 - m.row))
            .collect();
        assert_eq!(symmetry_key(&mirrored, rows, cols), key);
        assert_eq!(symmetry_key(&rotated, rows, cols), key);
        // The same cells with the colours changed over, or one stone moved, are another opening.
        let swapped = [Move::new(10, 11), Move::new(9, 9), Move::new(8, 9)];
        assert_ne!(symmetry_key(&swapped, rows, cols), key);
        let moved = [Move::new(9, 9), Move::new(10, 12), Move::new(8, 9)];
        assert_ne!(symmetry_key(&moved, rows, cols), key);
        // On a rectangle only the mirrors are symmetries: the transposed opening is another one.
        let (rows, cols) = (12, 12 + 3);
        let opening = [Move::new(1, 2), Move::new(5, 9)];
        let transposed: Vec<Move> = opening.iter().map(|m| Move::new(m.col, m.row)).collect();
        assert_ne!(
            symmetry_key(&transposed, rows, cols),
            symmetry_key(&opening, rows, cols)
        );
        let mirrored = [Move::new(rows - 2, 2), Move::new(rows - 6, 9)];
        assert_eq!(
            symmetry_key(&mirrored, rows, cols),
            symmetry_key(&opening, rows, cols)
        );
    }

    #[test]
    fn both_formats_read_as_c_gomoku_cli_writes_them() {
        let text = "# comment\n0,0, 1,0, 1,3\n\nh8i9j7\n";
        let openings = parse_openings(text, 15, 15, Rule::exact(5)).unwrap();
        assert_eq!(
            openings[0],
            vec![Move::new(7, 7), Move::new(7, 8), Move::new(10, 8)]
        );
        assert_eq!(
            openings[1],
            vec![Move::new(7, 7), Move::new(8, 8), Move::new(6, 9)]
        );
    }

    #[test]
    fn bad_openings_name_their_line() {
        let error = parse_openings("0,0\n0,0,9,9\n", 9, 9, Rule::exact(5)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "opening on line 2: offset 9,9 falls outside the 9x9 board"
        );
        let error = parse_openings("0,0,0,0", 9, 9, Rule::exact(5)).unwrap_err();
        assert_eq!(error.to_string(), "opening on line 1: 4 4 is played twice");
        assert!(parse_openings("z", 9, 9, Rule::exact(5)).is_err());
        assert_eq!(
            parse_openings("", 9, 9, Rule::exact(5)),
            Err(OpeningsFileError::NoOpening)
        );
    }

    /// Replays `moves` black first, alternating, checking each stone lands on an empty cell of
    /// the board, without going through [`check_opening`] (the function under test relies on it).
    fn replay(moves: &[Move], rows: usize, cols: usize) -> Board {
        let mut board = Board::new(rows, cols).unwrap();
        let mut stone = Stone::Black;
        for &mv in moves {
            assert!(mv.row < rows && mv.col < cols, "{mv} off the board");
            assert_eq!(board.get(mv), None, "{mv} played twice in {moves:?}");
            board.set(mv, Some(stone)).unwrap();
            stone = stone.opponent();
        }
        board
    }

    fn draw(
        seed: u64,
        count: usize,
        stones: usize,
        rows: usize,
        cols: usize,
        rule: Rule,
    ) -> Vec<Vec<Move>> {
        let mut rng = StdRng::seed_from_u64(seed);
        (0..count)
            .map(|_| random_opening(&mut rng, stones, None, rows, cols, rule).unwrap())
            .collect()
    }

    #[test]
    fn random_openings_have_the_stones_asked_for_on_distinct_cells_near_the_centre() {
        for stones in [0, 1, 6, 13] {
            for opening in draw(1, 40, stones, 15, 15, Rule::exact(5)) {
                assert_eq!(opening.len(), stones);
                replay(&opening, 15, 15);
                // Near the centre: 13 stones fit a 7x7 square around it with room to spare.
                for mv in &opening {
                    assert!(mv.row.abs_diff(7) <= 3 && mv.col.abs_diff(7) <= 3, "{mv}");
                }
            }
        }
    }

    #[test]
    fn a_wider_opening_radius_draws_from_its_whole_square_and_no_further() {
        let rule = Rule::exact(5);
        let mut rng = StdRng::seed_from_u64(3);
        let mut outside_the_default = 0;
        let mut distinct = HashSet::new();
        for _ in 0..300 {
            let opening = random_opening(&mut rng, 3, Some(3), 20, 20, rule).unwrap();
            replay(&opening, 20, 20);
            for mv in &opening {
                assert!(mv.row.abs_diff(10) <= 3 && mv.col.abs_diff(10) <= 3, "{mv}");
                if mv.row.abs_diff(10) > 1 || mv.col.abs_diff(10) > 1 {
                    outside_the_default += 1;
                }
            }
            distinct.insert(opening);
        }
        // The default square of 3 stones (radius 1) holds 9 cells and 252 openings; radius 3
        // holds 49 cells, and 300 draws hardly repeat.
        assert!(
            outside_the_default > 500,
            "{outside_the_default} stones outside radius 1"
        );
        assert!(distinct.len() > 290, "{} distinct of 300", distinct.len());
        let default = draw(3, 300, 3, 20, 20, rule);
        assert!(default
            .iter()
            .flatten()
            .all(|mv| mv.row.abs_diff(10) <= 1 && mv.col.abs_diff(10) <= 1));
    }

    #[test]
    fn a_radius_too_small_for_the_stones_is_refused_and_the_default_never_is() {
        let rule = Rule::exact(5);
        let mut rng = StdRng::seed_from_u64(5);
        // Radius 0 is the centre alone; radius 1 holds 9 cells, too few for 9 stones and a spare.
        for (radius, stones, cells) in [(0, 3, 1), (1, 9, 9)] {
            let refused = random_opening(&mut rng, stones, Some(radius), 20, 20, rule);
            assert_eq!(
                refused,
                Err(RandomOpeningError::RadiusTooSmall {
                    radius,
                    cells,
                    stones
                })
            );
            let message = refused.unwrap_err().to_string();
            assert!(message.contains(&format!("--opening-radius {radius}")));
        }
        assert_eq!(opening_square(8, Some(1), 20, 20), Ok(Some(1)));
        // A radius clipped by a small board counts the cells the board has.
        assert_eq!(opening_square(3, Some(1), 2, 2), Ok(Some(1)));
        assert!(opening_square(4, Some(1), 2, 2).is_err());
        // By default: the smallest square with three cells a stone, or the whole board.
        assert_eq!(opening_square(3, None, 20, 20), Ok(Some(1)));
        assert_eq!(opening_square(9, None, 20, 20), Ok(Some(3)));
        assert_eq!(opening_square(8, None, 3, 3), Ok(None));
    }

    #[test]
    fn random_openings_never_hold_a_winning_line() {
        // Short lines on a small board, where most random stones would make one.
        let rule = Rule::exact(3);
        for opening in draw(2, 200, 8, 5, 5, rule) {
            let board = replay(&opening, 5, 5);
            assert_eq!(board.winner(rule), None, "{opening:?}");
        }
    }

    #[test]
    fn random_openings_are_reproducible_from_their_seed_and_vary_with_it() {
        let rule = Rule::exact(5);
        let first = draw(7, 30, 6, 15, 15, rule);
        assert_eq!(first, draw(7, 30, 6, 15, 15, rule));
        assert_ne!(first, draw(8, 30, 6, 15, 15, rule));
        let distinct: HashSet<&Vec<Move>> = first.iter().collect();
        assert_eq!(distinct.len(), first.len(), "a seed repeats its openings");
    }

    #[test]
    fn random_openings_fill_all_but_one_cell_and_no_more() {
        let mut rng = StdRng::seed_from_u64(0);
        // No line of 4 fits a 3x3 board, so only the count can be refused.
        let opening = random_opening(&mut rng, 8, None, 3, 3, Rule::exact(4)).unwrap();
        assert!(!replay(&opening, 3, 3).is_full());
        assert_eq!(opening.len(), 8);
        assert_eq!(
            random_opening(&mut rng, 9, None, 3, 3, Rule::exact(4)),
            Err(RandomOpeningError::TooManyStones {
                stones: 9,
                rows: 3,
                cols: 3
            })
        );
        // Every stone is a line of one.
        assert_eq!(
            random_opening(&mut rng, 2, None, 3, 3, Rule::exact(1)),
            Err(RandomOpeningError::NoneFound {
                stones: 2,
                rows: 3,
                cols: 3
            })
        );
    }
}
