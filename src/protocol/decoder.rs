//! Line-by-line state machine of a Connect5 session: feed it lines, get back a request, the end of
//! the session, a shutdown, or an error. How it finds the next request after a broken one is part
//! of the specification (`protocol.md`, "Errors and resynchronisation").

use crate::board::{Board, Move, Stone};
use crate::engine::side_to_move;

use super::request::{parse_budget, rule_for, Request, RequestError};
use super::MAX_LINE_BYTES;

/// One line of input as the transport delivers it.
#[derive(Clone, Copy, Debug)]
pub enum Input<'a> {
    /// A complete line, with or without its line ending.
    Line(&'a str),
    /// A line longer than [`MAX_LINE_BYTES`]; the transport has discarded it up to its newline.
    TooLong,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Request(Request),
    /// `0`: the session is over.
    End,
    /// `shutdown` in place of a dimension line: stop the server (or the process).
    Shutdown,
    Error(RequestError),
}

#[derive(Debug)]
enum State {
    /// Waiting for a dimension line.
    Dimensions,
    /// Reading the rows of a request whose dimension line was valid.
    Rows(Partial),
    /// Reading the thinking-time line.
    Time(Partial),
    /// After a broken dimension line: the size of the request is unknown, so single-token lines
    /// (rows, the time line) are skipped until a line that reads as a dimension line.
    Skipping,
}

#[derive(Debug)]
struct Partial {
    board: Board,
    k: Option<u64>,
    rows_read: usize,
    /// The first thing wrong with the request; reported once the whole request has been read, so
    /// that the decoder stays in step with the referee.
    error: Option<RequestError>,
}

/// The decoder of one session.
#[derive(Debug)]
pub struct Decoder {
    state: State,
    overline_wins: bool,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new(false)
    }
}

/// Strips what referees in the wild add around a line: line endings (LF, CRLF), the NUL byte the
/// 2009–2011 referee writes before the newline, spaces and tabs.
fn clean(line: &str) -> String {
    line.chars()
        .filter(|&c| c != '\0')
        .collect::<String>()
        .trim()
        .to_string()
}

impl Decoder {
    /// `overline_wins`: whether requests are played under the freestyle rule (five or more wins)
    /// rather than Connect5's exact five.
    pub fn new(overline_wins: bool) -> Decoder {
        Decoder {
            state: State::Dimensions,
            overline_wins,
        }
    }

    /// True while a request is partly read.
    pub fn in_request(&self) -> bool {
        matches!(self.state, State::Rows(_) | State::Time(_))
    }

    /// Feeds one line; returns what it completes, if anything.
    pub fn feed(&mut self, input: Input<'_>) -> Option<Event> {
        let state = std::mem::replace(&mut self.state, State::Dimensions);
        match state {
            State::Dimensions => self.on_dimensions(input, false),
            State::Skipping => self.on_dimensions(input, true),
            State::Rows(partial) => self.on_row(partial, input),
            State::Time(partial) => Some(self.on_time(partial, input)),
        }
    }

    /// The input has ended: reports a request cut short, if one was being read.
    pub fn finish(&mut self) -> Option<Event> {
        match std::mem::replace(&mut self.state, State::Dimensions) {
            State::Rows(p) | State::Time(p) => Some(Event::Error(RequestError::IncompleteAtEnd {
                rows_read: p.rows_read,
                rows_expected: p.board.rows(),
            })),
            State::Dimensions | State::Skipping => None,
        }
    }

    fn on_dimensions(&mut self, input: Input<'_>, skipping: bool) -> Option<Event> {
        let Input::Line(raw) = input else {
            self.state = State::Skipping;
            return (!skipping).then_some(Event::Error(RequestError::LineTooLong {
                limit: MAX_LINE_BYTES,
            }));
        };
        let line = clean(raw);
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if tokens.is_empty() {
            self.state = if skipping {
                State::Skipping
            } else {
                State::Dimensions
            };
            return None;
        }
        if tokens.len() == 1 && tokens[0].eq_ignore_ascii_case("shutdown") {
            return Some(Event::Shutdown);
        }
        // The handout: "if the line starts with a zero, end". While skipping, rows of zeros
        // belong to the broken request, so only a bare `0` ends the session there.
        if (!skipping && line.starts_with('0')) || line == "0" {
            return Some(Event::End);
        }
        // Single tokens (rows, the time line) and lines of cell characters only (padded rows such
        // as `0 N 0`) belong to the broken request.
        let looks_like_row = line
            .chars()
            .all(|c| matches!(c, '0' | 'N' | 'B' | 'n' | 'b') || c.is_whitespace());
        if skipping && (tokens.len() == 1 || looks_like_row) {
            self.state = State::Skipping;
            return None;
        }
        let numbers: Option<Vec<u64>> = if (2..=3).contains(&tokens.len()) {
            tokens.iter().map(|t| t.parse::<u64>().ok()).collect()
        } else {
            None
        };
        let Some(numbers) = numbers else {
            self.state = State::Skipping;
            return Some(Event::Error(RequestError::UnparsableDimensions(line)));
        };
        let (rows, cols) = (numbers[0], numbers[1]);
        let board = usize::try_from(rows)
            .ok()
            .zip(usize::try_from(cols).ok())
            .and_then(|(r, c)| Board::new(r, c).ok());
        let Some(board) = board else {
            self.state = State::Skipping;
            return Some(Event::Error(RequestError::DimensionsOutOfRange {
                rows,
                cols,
            }));
        };
        self.state = State::Rows(Partial {
            board,
            k: numbers.get(2).copied(),
            rows_read: 0,
            error: None,
        });
        None
    }

    fn on_row(&mut self, mut partial: Partial, input: Input<'_>) -> Option<Event> {
        let row = partial.rows_read;
        partial.rows_read += 1;
        if partial.error.is_none() {
            partial.error = read_row(&mut partial.board, row, input).err();
        }
        self.state = if partial.rows_read == partial.board.rows() {
            State::Time(partial)
        } else {
            State::Rows(partial)
        };
        None
    }

    fn on_time(&mut self, partial: Partial, input: Input<'_>) -> Event {
        self.state = State::Dimensions;
        let budget = match input {
            Input::Line(raw) => parse_budget(&clean(raw)),
            Input::TooLong => Err(RequestError::LineTooLong {
                limit: MAX_LINE_BYTES,
            }),
        };
        if let Some(error) = partial.error {
            return Event::Error(error);
        }
        let budget = match budget {
            Ok(budget) => budget,
            Err(error) => return Event::Error(error),
        };
        let board = partial.board;
        let rule = match rule_for(board.rows(), board.cols(), partial.k, self.overline_wins) {
            Ok(rule) => rule,
            Err(error) => return Event::Error(error),
        };
        match side_to_move(&board, rule) {
            Ok(side) => Event::Request(Request {
                board,
                rule,
                side,
                budget,
            }),
            Err(no_move) => Event::Error(RequestError::Position(no_move)),
        }
    }
}

/// Reads one row into the board. Whitespace anywhere in the row is padding and is ignored, as are
/// NUL bytes; lowercase `b`/`n` are accepted.
fn read_row(board: &mut Board, row: usize, input: Input<'_>) -> Result<(), RequestError> {
    let Input::Line(raw) = input else {
        return Err(RequestError::LineTooLong {
            limit: MAX_LINE_BYTES,
        });
    };
    let cells: Vec<char> = raw
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '\0')
        .collect();
    if cells.len() != board.cols() {
        return Err(RequestError::RowLength {
            row,
            expected: board.cols(),
            found: cells.len(),
        });
    }
    for (col, &ch) in cells.iter().enumerate() {
        let stone = match ch {
            '0' => None,
            'N' | 'n' => Some(Stone::Black),
            'B' | 'b' => Some(Stone::White),
            found => return Err(RequestError::UnknownCharacter { row, col, found }),
        };
        // In range by construction: the row index is below rows and col below cols.
        let _ = board.set(Move::new(row, col), stone);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn feed_all(decoder: &mut Decoder, text: &str) -> Vec<Event> {
        text.split('\n')
            .filter_map(|line| decoder.feed(Input::Line(line)))
            .collect()
    }

    #[test]
    fn decodes_the_handout_example() {
        let text = "8 8\n00000000\n000N0000\n000B0000\n00N00000\n00000000\n00000000\n00000000\n00000000\n1000\n";
        let events = feed_all(&mut Decoder::default(), text);
        let [Event::Request(request)] = events.as_slice() else {
            panic!("expected one request, got {events:?}");
        };
        assert_eq!(request.side, Stone::White);
        assert_eq!(request.budget, Duration::from_millis(1000));
        assert_eq!(request.rule.k, 5);
        assert_eq!(request.board.get(Move::new(1, 3)), Some(Stone::Black));
    }

    #[test]
    fn resynchronises_after_a_broken_dimension_line() {
        let text = "200 200\n0000\n0000\n500\n3 3\n000\n000\n000\n10\n0\n";
        let events = feed_all(&mut Decoder::default(), text);
        assert!(matches!(
            events[0],
            Event::Error(RequestError::DimensionsOutOfRange { .. })
        ));
        assert!(matches!(events[1], Event::Request(_)));
        assert_eq!(events[2], Event::End);
        assert_eq!(events.len(), 3);
    }

    #[test]
    fn a_bad_row_is_reported_after_the_whole_request() {
        let text = "3 3\n0X0\n000\n000\n10\n3 3\n000\n000\n000\n10\n";
        let events = feed_all(&mut Decoder::default(), text);
        assert!(matches!(
            events[0],
            Event::Error(RequestError::UnknownCharacter {
                row: 0,
                col: 1,
                found: 'X'
            })
        ));
        assert!(matches!(events[1], Event::Request(_)));
    }

    #[test]
    fn random_garbage_never_panics_and_a_fresh_request_still_decodes() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let alphabet: Vec<char> = "0123456789NBnbX \t\r\0-.shutdownK".chars().collect();
        for _ in 0..2000 {
            let mut decoder = Decoder::default();
            for _ in 0..rng.gen_range(1..30) {
                if rng.gen_bool(0.05) {
                    decoder.feed(Input::TooLong);
                    continue;
                }
                let len = rng.gen_range(0..12);
                let line: String = (0..len)
                    .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
                    .collect();
                if matches!(
                    decoder.feed(Input::Line(&line)),
                    Some(Event::End | Event::Shutdown)
                ) {
                    decoder = Decoder::default();
                }
            }
            decoder.finish();
            // After finish() the decoder waits for a dimension line again.
            let events = feed_all(&mut decoder, "3 3\nN00\n000\n000\n50\n");
            assert!(
                matches!(events.as_slice(), [Event::Request(_)]),
                "{events:?}"
            );
        }
    }
}
