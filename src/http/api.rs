//! The JSON of the HTTP API: positions in (rows in the protocol's form, or a size and a move
//! list), answers and errors out. A position is checked by the line protocol's own decoder, so
//! both front ends accept the same requests and name the same errors.

use serde::{Deserialize, Serialize};

use crate::board::{Board, Move, Stone};
use crate::engine::types::mate_distance;
use crate::engine::{Decision, Progress, Score};
use crate::protocol::{Decoder, Event, Input, Request, RequestError};
use crate::session::Answer;

/// A move request's body (`/v1/move`, `/v1/analyse`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PositionBody {
    /// The protocol's rows (`0`, `N`, `B`), row 0 at the top.
    rows: Option<Vec<String>>,
    size: Option<Size>,
    /// `[row, col]` pairs, black first, alternating.
    moves: Option<Vec<[u64; 2]>>,
    k: Option<u64>,
    overline_wins: Option<bool>,
    /// Milliseconds; a number, as the protocol's time line.
    time_ms: Option<serde_json::Number>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Size {
    rows: u64,
    cols: u64,
}

/// Why a request was refused: a line protocol error, or one only the API can make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    Request(RequestError),
    BadJson(String),
    BadMove(String),
    BadGrid(String),
    BadAgent(String),
    BodyTooLarge,
    /// The body did not arrive in full within this.
    BodyTimeout(std::time::Duration),
    NotFound,
    MethodNotAllowed,
    /// The server already serves as many HTTP connections as it may.
    Busy,
}

impl ApiError {
    pub fn kind(&self) -> &'static str {
        match self {
            ApiError::Request(error) => error.kind(),
            ApiError::BadJson(_) => "bad-json",
            ApiError::BadMove(_) => "bad-move",
            ApiError::BadGrid(_) => "bad-grid",
            ApiError::BadAgent(_) => "bad-agent",
            ApiError::BodyTooLarge => "body-too-large",
            ApiError::BodyTimeout(_) => "timeout",
            ApiError::NotFound => "not-found",
            ApiError::MethodNotAllowed => "method-not-allowed",
            ApiError::Busy => "busy",
        }
    }

    pub fn status(&self) -> u16 {
        match self {
            ApiError::BodyTooLarge => 413,
            ApiError::BodyTimeout(_) => 408,
            ApiError::NotFound => 404,
            ApiError::MethodNotAllowed => 405,
            ApiError::Busy => 503,
            _ => 400,
        }
    }

    /// The one-line message: `kind: reason`, as the line protocol's `ERROR` lines.
    pub fn message(&self) -> String {
        match self {
            ApiError::Request(error) => error.to_string(),
            ApiError::BadJson(why)
            | ApiError::BadMove(why)
            | ApiError::BadGrid(why)
            | ApiError::BadAgent(why) => format!("{}: {why}", self.kind()),
            ApiError::BodyTooLarge => format!(
                "body-too-large: a request body may hold at most {} bytes",
                super::MAX_BODY_BYTES
            ),
            ApiError::BodyTimeout(limit) => format!(
                "timeout: the request's body did not arrive in full within {} s",
                limit.as_secs()
            ),
            ApiError::NotFound => "not-found: no such endpoint (see docs/http.md)".to_string(),
            ApiError::MethodNotAllowed => {
                "method-not-allowed: this endpoint does not take that method".to_string()
            }
            ApiError::Busy => {
                "busy: the server already serves as many HTTP connections as it may".to_string()
            }
        }
    }

    pub fn body(&self) -> serde_json::Value {
        serde_json::json!({"error": {"kind": self.kind(), "message": self.message()}})
    }
}

/// Whether a request must say how long to think.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeField {
    Required,
    /// Absent means this many milliseconds.
    DefaultsTo(u64),
}

/// Parses a body into the request the line protocol would have decoded from the same position.
pub fn parse_position(
    body: &[u8],
    server_overline_wins: bool,
    time: TimeField,
) -> Result<Request, ApiError> {
    let body: PositionBody =
        serde_json::from_slice(body).map_err(|error| ApiError::BadJson(error.to_string()))?;
    let rows = match (body.rows, body.size, body.moves) {
        (Some(rows), None, None) => rows,
        (None, Some(size), moves) => rows_from_moves(size, moves.unwrap_or_default())?,
        (None, None, Some(_)) => {
            return Err(ApiError::BadJson(
                "a move list needs the board's size: \"size\": {\"rows\": R, \"cols\": C}"
                    .to_string(),
            ))
        }
        (None, None, None) => {
            return Err(ApiError::BadJson(
                "no position: give \"rows\", or \"size\" and \"moves\"".to_string(),
            ))
        }
        (Some(_), _, _) => {
            return Err(ApiError::BadJson(
                "give either \"rows\" or \"size\" and \"moves\", not both".to_string(),
            ))
        }
    };
    let time_line = match (body.time_ms, time) {
        (Some(ms), _) => ms.to_string(),
        (None, TimeField::DefaultsTo(ms)) => ms.to_string(),
        (None, TimeField::Required) => String::new(),
    };
    let cols = rows.first().map_or(0, |row| row.chars().count());
    let dimensions = match body.k {
        Some(k) => format!("{} {cols} {k}", rows.len()),
        None => format!("{} {cols}", rows.len()),
    };
    let mut decoder = Decoder::new(body.overline_wins.unwrap_or(server_overline_wins));
    let lines = std::iter::once(dimensions.as_str())
        .chain(rows.iter().map(String::as_str))
        .chain(std::iter::once(time_line.as_str()));
    for line in lines {
        // A line break inside a row would split it into two protocol lines: refuse it as the
        // character it is.
        match decoder.feed(Input::Line(line)) {
            Some(Event::Request(request)) => return Ok(request),
            Some(Event::Error(error)) => return Err(ApiError::Request(error)),
            Some(Event::End | Event::Shutdown) | None => {}
        }
    }
    match decoder.finish() {
        Some(Event::Error(error)) => Err(ApiError::Request(error)),
        _ => Err(ApiError::BadJson("no position".to_string())),
    }
}

/// The rows of the position a move list reaches.
fn rows_from_moves(size: Size, moves: Vec<[u64; 2]>) -> Result<Vec<String>, ApiError> {
    let fits = |n: u64| {
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= crate::board::MAX_SIDE)
    };
    let (Some(rows), Some(cols)) = (fits(size.rows), fits(size.cols)) else {
        return Err(ApiError::Request(RequestError::DimensionsOutOfRange {
            rows: size.rows,
            cols: size.cols,
        }));
    };
    let mut board = Board::new(rows, cols).map_err(|_| {
        ApiError::Request(RequestError::DimensionsOutOfRange {
            rows: size.rows,
            cols: size.cols,
        })
    })?;
    let mut stone = Stone::Black;
    for (index, [row, col]) in moves.into_iter().enumerate() {
        let mv = match (usize::try_from(row), usize::try_from(col)) {
            (Ok(row), Ok(col)) if row < rows && col < cols => Move::new(row, col),
            _ => {
                return Err(ApiError::BadMove(format!(
                    "move {} ({row} {col}) is off the {rows}x{cols} board",
                    index + 1
                )))
            }
        };
        board.play(mv, stone).map_err(|_| {
            ApiError::BadMove(format!("move {} ({mv}) is on an occupied cell", index + 1))
        })?;
        stone = stone.opponent();
    }
    Ok(board.to_rows())
}

/// A move as the API writes it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct MoveJson {
    pub row: usize,
    pub col: usize,
    /// As gomoku players write it: `h8`.
    pub name: String,
}

impl MoveJson {
    pub fn new(mv: Move, board_rows: usize) -> MoveJson {
        MoveJson {
            row: mv.row,
            col: mv.col,
            name: gomoku_name(mv, board_rows),
        }
    }
}

/// A cell as gomoku players write it: the column's letter from the left (`a`…`z`, then `aa`,
/// `ab`…) and the row's number from the bottom (Piskvork, Yixin and the Gomocup's records count
/// rows from the bottom as well).
pub fn gomoku_name(mv: Move, board_rows: usize) -> String {
    let letter = |n: usize| char::from(b'a' + (n % 26) as u8);
    let column = if mv.col < 26 {
        letter(mv.col).to_string()
    } else {
        format!("{}{}", letter(mv.col / 26 - 1), letter(mv.col))
    };
    format!("{column}{}", board_rows.saturating_sub(mv.row))
}

fn side_name(side: Stone) -> &'static str {
    match side {
        Stone::Black => "black",
        Stone::White => "white",
    }
}

fn nodes_per_second(nodes: u64, seconds: f64) -> u64 {
    if seconds > 0.0 {
        (nodes as f64 / seconds) as u64
    } else {
        0
    }
}

/// The answer of `/v1/move` (and the `done` event of `/v1/analyse`).
#[derive(Debug, Serialize)]
pub struct MoveAnswer {
    #[serde(rename = "move")]
    pub mv: MoveJson,
    pub side: &'static str,
    pub score: Score,
    pub mate: Option<i32>,
    pub depth: u32,
    pub nodes: u64,
    pub nps: u64,
    pub pv: Vec<MoveJson>,
    pub time_ms: u64,
    pub source: &'static str,
}

impl MoveAnswer {
    /// The answer's JSON, or the error of a position with no move.
    pub fn new(
        answer: &Answer,
        side: Stone,
        rows: usize,
        elapsed: std::time::Duration,
    ) -> Result<MoveAnswer, ApiError> {
        let only = |mv: Move, source| MoveAnswer {
            mv: MoveJson::new(mv, rows),
            side: side_name(side),
            score: 0,
            mate: None,
            depth: 0,
            nodes: 0,
            nps: 0,
            pv: vec![MoveJson::new(mv, rows)],
            time_ms: elapsed.as_millis() as u64,
            source,
        };
        Ok(match answer {
            Answer::Certain(mv) => only(*mv, "certain"),
            Answer::Instant(mv) => only(*mv, "instant"),
            Answer::Searched(Decision {
                mv,
                score,
                depth,
                nodes,
                pv,
            }) => MoveAnswer {
                mv: MoveJson::new(*mv, rows),
                side: side_name(side),
                score: *score,
                mate: mate_distance(*score),
                depth: *depth,
                nodes: *nodes,
                nps: nodes_per_second(*nodes, elapsed.as_secs_f64()),
                pv: pv.iter().map(|&mv| MoveJson::new(mv, rows)).collect(),
                time_ms: elapsed.as_millis() as u64,
                source: "search",
            },
            Answer::NoMove(no_move) => {
                return Err(ApiError::Request(RequestError::Position(no_move.clone())))
            }
        })
    }
}

/// One `progress` event of `/v1/analyse`.
#[derive(Debug, Serialize)]
pub struct ProgressJson {
    pub depth: u32,
    pub score: Score,
    pub mate: Option<i32>,
    #[serde(rename = "move")]
    pub mv: MoveJson,
    pub pv: Vec<MoveJson>,
    pub nodes: u64,
    pub nps: u64,
    pub time_ms: u64,
}

impl ProgressJson {
    pub fn new(progress: &Progress, rows: usize) -> ProgressJson {
        ProgressJson {
            depth: progress.depth,
            score: progress.score,
            mate: mate_distance(progress.score),
            mv: MoveJson::new(progress.mv, rows),
            pv: progress
                .pv
                .iter()
                .map(|&mv| MoveJson::new(mv, rows))
                .collect(),
            nodes: progress.nodes,
            nps: nodes_per_second(progress.nodes, progress.elapsed.as_secs_f64()),
            time_ms: progress.elapsed.as_millis() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<Request, ApiError> {
        parse_position(json.as_bytes(), false, TimeField::Required)
    }

    #[test]
    fn names_count_columns_from_the_left_and_rows_from_the_bottom() {
        assert_eq!(gomoku_name(Move::new(7, 7), 15), "h8");
        assert_eq!(gomoku_name(Move::new(14, 0), 15), "a1");
        assert_eq!(gomoku_name(Move::new(0, 25), 30), "z30");
        assert_eq!(gomoku_name(Move::new(0, 26), 30), "aa30");
        assert_eq!(gomoku_name(Move::new(0, 29), 30), "ad30");
    }

    #[test]
    fn rows_and_move_lists_give_the_same_request() {
        let from_rows =
            parse(r#"{"rows": ["00000", "0NB00", "00000", "00000", "00N00"], "time_ms": 250}"#)
                .expect("a valid position");
        let from_moves = parse(
            r#"{"size": {"rows": 5, "cols": 5}, "moves": [[1,1],[1,2],[4,2]], "time_ms": 250}"#,
        )
        .expect("a valid move list");
        assert_eq!(from_rows, from_moves);
        assert_eq!(from_rows.side, Stone::White);
        assert_eq!(from_rows.budget, std::time::Duration::from_millis(250));
    }

    #[test]
    fn errors_keep_the_line_protocols_kinds() {
        let kind = |json: &str| parse(json).map(|_| ()).map_err(|e| e.kind());
        assert_eq!(
            kind(r#"{"rows": ["000", "00"], "time_ms": 5}"#),
            Err("bad-row-length")
        );
        assert_eq!(
            kind(r#"{"rows": ["0X0", "000", "000"], "time_ms": 5}"#),
            Err("unknown-character")
        );
        assert_eq!(
            kind(r#"{"rows": ["NN0", "000", "000"], "time_ms": 5}"#),
            Err("impossible-counts")
        );
        assert_eq!(
            kind(r#"{"rows": ["000", "000", "000"]}"#),
            Err("missing-time")
        );
        assert_eq!(
            kind(r#"{"rows": ["000", "000", "000"], "time_ms": -3}"#),
            Err("bad-time")
        );
        assert_eq!(
            kind(r#"{"rows": ["000", "000", "000"], "k": 4, "time_ms": 5}"#),
            Err("k-out-of-range")
        );
        assert_eq!(
            kind(r#"{"size": {"rows": 0, "cols": 3}, "time_ms": 5}"#),
            Err("dimensions-out-of-range")
        );
        assert_eq!(
            kind(r#"{"size": {"rows": 3, "cols": 3}, "moves": [[1,1],[1,1]], "time_ms": 5}"#),
            Err("bad-move")
        );
        assert_eq!(
            kind(r#"{"size": {"rows": 3, "cols": 3}, "moves": [[3,0]], "time_ms": 5}"#),
            Err("bad-move")
        );
        assert_eq!(kind(r#"{"rows": "000", "time_ms": 5}"#), Err("bad-json"));
        assert_eq!(
            kind(r#"{"rows": ["000"], "colour": "red", "time_ms": 5}"#),
            Err("bad-json")
        );
        assert_eq!(kind("not json"), Err("bad-json"));
        assert_eq!(
            kind(r#"{"rows": ["NNN", "BB0", "000"], "time_ms": 5}"#),
            Err("game-over")
        );
    }
}
