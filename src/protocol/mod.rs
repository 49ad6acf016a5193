//! The Connect5 wire format, pure and synchronous: no I/O here, so it can be unit-tested and
//! fuzzed without sockets. `protocol.md` at the top of the repository is the specification.

mod decoder;
mod request;

pub use decoder::{Decoder, Event, Input};
pub use request::{Request, RequestError};

use crate::board::{Board, Move, Rule};

/// Longest line the decoder accepts, in bytes, line ending included. A 128-column row with a NUL,
/// CRLF and generous padding fits many times over.
pub const MAX_LINE_BYTES: usize = 4096;

/// The identification line a player prints when none is configured.
pub fn default_banner() -> String {
    format!("connect5 {}", env!("CARGO_PKG_VERSION"))
}

/// The word a player prints when it is ready for requests.
pub const READY_WORD: &str = "READY";

/// A request as a referee writes it: `L C` (or `L C K` when the rule is not the one the size
/// implies), the rows, the budget in milliseconds; every line ends with `\n`.
pub fn encode_request(board: &Board, rule: Rule, budget_ms: u64) -> String {
    let mut text = if rule.k == Rule::for_board(board.rows(), board.cols()).k {
        format!("{} {}\n", board.rows(), board.cols())
    } else {
        format!("{} {} {}\n", board.rows(), board.cols(), rule.k)
    };
    for row in board.to_rows() {
        text.push_str(&row);
        text.push('\n');
    }
    text.push_str(&budget_ms.to_string());
    text.push('\n');
    text
}

/// Reads a player's answer as the course referee does: the first two whitespace-separated tokens
/// are `row col`, 0-based; further tokens are ignored.
pub fn parse_reply(line: &str) -> Result<Move, String> {
    let cleaned: String = line.chars().filter(|&c| c != '\0').collect();
    let mut tokens = cleaned.split_whitespace();
    let (Some(row), Some(col)) = (tokens.next(), tokens.next()) else {
        return Err(format!(
            "unparsable answer {:?}: expected `row col`",
            line.trim_end()
        ));
    };
    match (row.parse::<usize>(), col.parse::<usize>()) {
        (Ok(row), Ok(col)) => Ok(Move::new(row, col)),
        _ => Err(format!(
            "unparsable answer {:?}: expected two non-negative integers `row col`",
            line.trim_end()
        )),
    }
}

/// Reads one line from a blocking reader into `buf` (without its end, CR included), keeping at most
/// [`MAX_LINE_BYTES`] of it: a peer that never ends its line costs no memory. `Ok(false)` at end of
/// input with nothing read.
pub fn read_bounded_line<R: std::io::BufRead>(
    reader: &mut R,
    buf: &mut Vec<u8>,
) -> std::io::Result<bool> {
    let mut any = false;
    loop {
        let available = reader.fill_buf()?;
        if available.is_empty() {
            return Ok(any);
        }
        any = true;
        let (chunk, used, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], i + 1, true),
            None => (available, available.len(), false),
        };
        let room = MAX_LINE_BYTES.saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
        reader.consume(used);
        if done {
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            return Ok(true);
        }
    }
}
