//! The Gomocup (pbrain) wire format, pure and synchronous: a manager's command lines as typed
//! values, and the `x,y` coordinates both sides write. `docs/gomocup.md` is the contract.

use crate::board::{Move, MAX_SIDE};

/// One line a manager sends a brain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `START n`: a new game on an n×n board.
    Start(usize),
    /// `RECTSTART w,h`: a new game on a board w columns wide and h rows high.
    RectStart {
        width: usize,
        height: usize,
    },
    Restart,
    /// The brain plays the first move.
    Begin,
    /// The opponent's move; the brain answers with its own.
    Turn(Move),
    /// A whole position follows, one `x,y,field` line a stone, until `DONE`; the brain then
    /// moves (`BOARD`) or only takes the position (the Yixin board's `YXBOARD`).
    Board {
        then_move: bool,
    },
    Done,
    /// One line of a `BOARD` block.
    Stone {
        at: Move,
        field: Field,
    },
    TakeBack(Move),
    /// The manager confirms a move: the brain plays it and echoes it.
    Play(Move),
    Info {
        key: String,
        value: String,
    },
    End,
    About,
    /// Yixin board's "answer now with what you have".
    Stop,
    /// Yixin board's "forget what you learnt": nothing is kept between moves, so nothing to do.
    HashClear,
}

/// Whose stone a `BOARD` line places.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Own,
    Opponent,
    /// A stone of a continuous game's earlier phase; ignored.
    Continuous,
}

/// Why a line is not a command the brain can carry out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommandError {
    /// A command word the brain does not know: answered `UNKNOWN`.
    Unknown(String),
    /// A known command with bad arguments: answered `ERROR`.
    Bad(String),
}

impl std::fmt::Display for CommandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CommandError::Unknown(text) | CommandError::Bad(text) => f.write_str(text),
        }
    }
}

/// Longest text of a line quoted back in an error.
const QUOTED_CHARS: usize = 60;

fn quoted(text: &str) -> String {
    let shown: String = text.chars().take(QUOTED_CHARS).collect();
    format!("{shown:?}")
}

/// Writes a move as the protocol has it: `x,y`, the column first.
pub fn format_point(mv: Move) -> String {
    format!("{},{}", mv.col, mv.row)
}

/// Reads `x,y` (spaces around the numbers tolerated) as a move: x is the column, y the row.
pub fn parse_point(text: &str) -> Result<Move, String> {
    let numbers = parse_numbers(text, 2)?;
    Ok(Move::new(numbers[1], numbers[0]))
}

/// Reads exactly `count` comma-separated non-negative numbers.
fn parse_numbers(text: &str, count: usize) -> Result<Vec<usize>, String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() != count {
        return Err(format!(
            "{} is not {} comma-separated numbers",
            quoted(text.trim()),
            count
        ));
    }
    parts
        .iter()
        .map(|part| {
            part.parse::<usize>()
                .map_err(|_| format!("{} is not a non-negative number", quoted(part)))
        })
        .collect()
}

/// Reads one manager line. `in_board` says whether a `BOARD` block is open: its lines are stones
/// (`x,y,field`) until `DONE`.
pub fn parse_command(line: &str, in_board: bool) -> Result<Command, CommandError> {
    let line = line.trim_matches(|c: char| c.is_whitespace() || c == '\0');
    let (word, rest) = match line.split_once(char::is_whitespace) {
        Some((word, rest)) => (word, rest.trim()),
        None => (line, ""),
    };
    let word_upper = word.to_ascii_uppercase();
    if in_board {
        match word_upper.as_str() {
            "DONE" => return Ok(Command::Done),
            // A manager that gives up in the middle of a block still ends the brain.
            "END" => return Ok(Command::End),
            _ => {}
        }
        return parse_stone(line).map_err(CommandError::Bad);
    }
    let bad = |why: String| CommandError::Bad(format!("{word_upper}: {why}"));
    let no_arguments = |command: Command| {
        if rest.is_empty() {
            Ok(command)
        } else {
            Err(CommandError::Bad(format!(
                "{word_upper} takes no arguments, got {}",
                quoted(rest)
            )))
        }
    };
    match word_upper.as_str() {
        "START" => {
            let size = rest
                .parse::<usize>()
                .map_err(|_| bad(format!("{} is not a board size", quoted(rest))))?;
            check_side(size).map_err(bad)?;
            Ok(Command::Start(size))
        }
        "RECTSTART" => {
            let numbers = parse_numbers(rest, 2).map_err(bad)?;
            check_side(numbers[0]).map_err(bad)?;
            check_side(numbers[1]).map_err(bad)?;
            Ok(Command::RectStart {
                width: numbers[0],
                height: numbers[1],
            })
        }
        "RESTART" => no_arguments(Command::Restart),
        "BEGIN" => no_arguments(Command::Begin),
        "TURN" => parse_point(rest).map(Command::Turn).map_err(bad),
        "BOARD" => no_arguments(Command::Board { then_move: true }),
        "YXBOARD" => no_arguments(Command::Board { then_move: false }),
        "YXHASHCLEAR" => no_arguments(Command::HashClear),
        "DONE" => Err(CommandError::Bad("DONE without BOARD".to_string())),
        "TAKEBACK" => parse_point(rest).map(Command::TakeBack).map_err(bad),
        "PLAY" => parse_point(rest).map(Command::Play).map_err(bad),
        "INFO" => {
            let (key, value) = match rest.split_once(char::is_whitespace) {
                Some((key, value)) => (key, value.trim()),
                None => (rest, ""),
            };
            if key.is_empty() {
                return Err(bad("expected INFO key value".to_string()));
            }
            Ok(Command::Info {
                key: key.to_ascii_lowercase(),
                value: value.to_string(),
            })
        }
        "END" => Ok(Command::End),
        "ABOUT" => Ok(Command::About),
        "YXSTOP" | "STOP" => Ok(Command::Stop),
        "" => Err(CommandError::Unknown("empty line".to_string())),
        _ => Err(CommandError::Unknown(format!(
            "command {} not known",
            quoted(word)
        ))),
    }
}

fn check_side(size: usize) -> Result<(), String> {
    if (1..=MAX_SIDE).contains(&size) {
        Ok(())
    } else {
        Err(format!("board side {size} not supported: 1 to {MAX_SIDE}"))
    }
}

fn parse_stone(line: &str) -> Result<Command, String> {
    let numbers = parse_numbers(line, 3).map_err(|why| format!("BOARD line: {why}"))?;
    let field = match numbers[2] {
        1 => Field::Own,
        2 => Field::Opponent,
        3 => Field::Continuous,
        other => {
            return Err(format!(
                "BOARD line {}: field {other} is not 1 (own), 2 (opponent) or 3",
                quoted(line)
            ))
        }
    };
    Ok(Command::Stone {
        at: Move::new(numbers[1], numbers[0]),
        field,
    })
}

/// The `INFO rule` bits this brain cares about: 1 exact five, 4 renju, 8 caro (2 is a continuous
/// game, played as the others).
pub const RULE_EXACT_FIVE: u32 = 1;
pub const RULE_RENJU: u32 = 4;
pub const RULE_CARO: u32 = 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_with_their_arguments() {
        assert_eq!(parse_command("START 15", false), Ok(Command::Start(15)));
        assert_eq!(parse_command("start 20\r", false), Ok(Command::Start(20)));
        assert_eq!(
            parse_command("RECTSTART 20,7", false),
            Ok(Command::RectStart {
                width: 20,
                height: 7
            })
        );
        assert_eq!(
            parse_command("TURN 3,10", false),
            Ok(Command::Turn(Move::new(10, 3)))
        );
        assert_eq!(
            parse_command("INFO timeout_turn 300", false),
            Ok(Command::Info {
                key: "timeout_turn".to_string(),
                value: "300".to_string()
            })
        );
        assert_eq!(
            parse_command("7,8,2", true),
            Ok(Command::Stone {
                at: Move::new(8, 7),
                field: Field::Opponent
            })
        );
        assert_eq!(parse_command("DONE", true), Ok(Command::Done));
        assert_eq!(parse_command("END", true), Ok(Command::End));
    }

    #[test]
    fn bad_lines_name_the_problem() {
        assert!(matches!(
            parse_command("FOO 1", false),
            Err(CommandError::Unknown(_))
        ));
        for line in [
            "START 0",
            "START 129",
            "START x",
            "TURN 3",
            "TURN -1,2",
            "RECTSTART 5",
            "BEGIN now",
            "DONE",
        ] {
            assert!(
                matches!(parse_command(line, false), Err(CommandError::Bad(_))),
                "{line}"
            );
        }
        assert!(parse_command("1,2,5", true).is_err());
        assert!(parse_command("1,2", true).is_err());
    }

    #[test]
    fn points_are_column_then_row() {
        let mv = parse_point(" 4 , 9 ").unwrap();
        assert_eq!(mv, Move::new(9, 4));
        assert_eq!(format_point(mv), "4,9");
    }
}
