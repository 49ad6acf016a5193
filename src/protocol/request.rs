//! A decoded request and everything that can be wrong with one.

use std::fmt;
use std::time::Duration;

use crate::board::{Board, Rule, Stone, MAX_SIDE};
use crate::engine::NoMove;

/// One complete, valid request: a position, the rule it is played under, the side to move and
/// the thinking time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub board: Board,
    pub rule: Rule,
    pub side: Stone,
    pub budget: Duration,
}

/// Everything a request can get wrong; each is answered by one `ERROR <reason>` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestError {
    UnparsableDimensions(String),
    DimensionsOutOfRange {
        rows: u64,
        cols: u64,
    },
    KOutOfRange {
        k: u64,
        max: usize,
    },
    RowLength {
        row: usize,
        expected: usize,
        found: usize,
    },
    UnknownCharacter {
        row: usize,
        col: usize,
        found: char,
    },
    MissingTime,
    UnparsableTime(String),
    LineTooLong {
        limit: usize,
    },
    Position(NoMove),
    IncompleteAtEnd {
        rows_read: usize,
        rows_expected: usize,
    },
}

impl RequestError {
    /// A short stable name for the error kind, first word of the `ERROR` line's reason.
    pub fn kind(&self) -> &'static str {
        match self {
            RequestError::UnparsableDimensions(_) => "bad-dimensions",
            RequestError::DimensionsOutOfRange { .. } => "dimensions-out-of-range",
            RequestError::KOutOfRange { .. } => "k-out-of-range",
            RequestError::RowLength { .. } => "bad-row-length",
            RequestError::UnknownCharacter { .. } => "unknown-character",
            RequestError::MissingTime => "missing-time",
            RequestError::UnparsableTime(_) => "bad-time",
            RequestError::LineTooLong { .. } => "line-too-long",
            RequestError::Position(NoMove::ImpossibleCounts(_)) => "impossible-counts",
            RequestError::Position(NoMove::AlreadyWon(_)) => "game-over",
            RequestError::Position(NoMove::BoardFull) => "board-full",
            RequestError::IncompleteAtEnd { .. } => "incomplete-request",
        }
    }
}

fn shown(text: &str) -> String {
    const SHOWN: usize = 40;
    if text.chars().count() > SHOWN {
        format!("{:?}…", text.chars().take(SHOWN).collect::<String>())
    } else {
        format!("{text:?}")
    }
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.kind())?;
        match self {
            RequestError::UnparsableDimensions(line) => write!(
                f,
                "unparsable dimension line {}: expected `L C` or `L C K` (or `0` to end)",
                shown(line)
            ),
            RequestError::DimensionsOutOfRange { rows, cols } => write!(
                f,
                "board {rows}x{cols} out of range: rows and columns must be 1 to {MAX_SIDE}"
            ),
            RequestError::KOutOfRange { k, max } => {
                write!(f, "K = {k} out of range: must be 1 to {max} on this board")
            }
            RequestError::RowLength { row, expected, found } => write!(
                f,
                "row {row} has {found} cells, expected {expected}"
            ),
            RequestError::UnknownCharacter { row, col, found } => write!(
                f,
                "unknown character {found:?} at row {row} column {col}: cells are 0, B or N"
            ),
            RequestError::MissingTime => {
                write!(f, "missing thinking time: expected the budget in ms after the rows")
            }
            RequestError::UnparsableTime(line) => write!(
                f,
                "bad thinking time {}: expected one non-negative number of milliseconds",
                shown(line)
            ),
            RequestError::LineTooLong { limit } => {
                write!(f, "line too long: more than {limit} bytes")
            }
            RequestError::Position(no_move) => no_move.fmt(f),
            RequestError::IncompleteAtEnd { rows_read, rows_expected } => write!(
                f,
                "end of input inside a request ({rows_read} of {rows_expected} rows read, no time line)"
            ),
        }
    }
}

impl std::error::Error for RequestError {}

/// The rule a request is played under: `K` as given, else the one the board size implies.
pub(crate) fn rule_for(
    rows: usize,
    cols: usize,
    k: Option<u64>,
    overline_wins: bool,
) -> Result<Rule, RequestError> {
    // A K beyond usize is out of range like any K beyond the board.
    let wanted = k.map(|k| usize::try_from(k).unwrap_or(usize::MAX));
    let rule =
        Rule::for_board_with_k(rows, cols, wanted).map_err(|max| RequestError::KOutOfRange {
            k: k.unwrap_or_default(),
            max,
        })?;
    Ok(Rule {
        overline_wins,
        ..rule
    })
}

/// Parses the thinking-time line.
pub(crate) fn parse_budget(line: &str) -> Result<Duration, RequestError> {
    let mut tokens = line.split_whitespace();
    let (Some(token), None) = (tokens.next(), tokens.next()) else {
        return Err(if line.trim().is_empty() {
            RequestError::MissingTime
        } else {
            RequestError::UnparsableTime(line.to_string())
        });
    };
    if let Ok(ms) = token.parse::<u64>() {
        return Ok(Duration::from_millis(ms));
    }
    // Some referees print the budget as a decimal number.
    match token.parse::<f64>() {
        Ok(ms) if (0.0..1e15).contains(&ms) => Ok(Duration::from_secs_f64(ms / 1000.0)),
        _ => Err(RequestError::UnparsableTime(line.to_string())),
    }
}
