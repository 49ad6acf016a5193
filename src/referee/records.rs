//! Game records: Piskvork `.psq` files (one per game, loadable in Piskvork) and SGF game trees
//! (`GM[4]`, gomoku, as c-gomoku-cli writes them; one collection file for the match).

use std::fmt::Write as _;
use std::path::Path;

use serde::Deserialize;

use super::game::{GameRecord, Outcome, Termination};
use crate::board::{Board, Move, Rule, Stone};

/// The parts of a `connect5 match --json` summary that its readers (`connect5 review`,
/// `connect5 tune`, `connect5 compare`) use.
#[derive(Debug, Deserialize)]
pub struct MatchSummary {
    pub player1: String,
    pub player2: String,
    pub games: Vec<SummaryGame>,
}

#[derive(Debug, Deserialize)]
pub struct SummaryGame {
    /// The game's number in the match, from 1.
    pub game: usize,
    #[serde(flatten)]
    pub record: GameRecord,
}

impl MatchSummary {
    /// The player called `asked` in this match, or its first player when none is asked; the
    /// error names the match's players.
    pub fn player_named(&self, asked: Option<&str>) -> Result<String, String> {
        let player = asked.unwrap_or(&self.player1);
        if player != self.player1 && player != self.player2 {
            return Err(format!(
                "no player {player:?} in this match (its players are {:?} and {:?})",
                self.player1, self.player2
            ));
        }
        Ok(player.to_string())
    }
}

/// Reads a match summary; the error is one line naming the file.
pub fn load_summary(path: &Path) -> Result<MatchSummary, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "{} is not a `connect5 match --json` summary: {e}",
            path.display()
        )
    })
}

/// One position of a replayed game: the board before the `ply`-th stone (1-based, opening
/// stones counted), the side to move and what it played.
#[derive(Clone, Debug)]
pub struct ReplayedMove {
    pub ply: usize,
    pub board: Board,
    pub side: Stone,
    pub played: Move,
}

impl GameRecord {
    /// The rule the game was played under (the match runner plays the exact rule).
    pub fn rule(&self) -> Result<Rule, String> {
        Rule::for_board_with_k(self.rows, self.cols, Some(self.k)).map_err(|longest| {
            format!(
                "line length {} out of range (1 to {longest} on this board)",
                self.k
            )
        })
    }

    /// The positions of the game's moves (after the opening), each with the board before it.
    pub fn replay(&self) -> Result<Vec<ReplayedMove>, String> {
        let mut board = Board::new(self.rows, self.cols).map_err(|e| e.to_string())?;
        let mut side = Stone::Black;
        for &(row, col) in &self.opening {
            board
                .play(Move::new(row, col), side)
                .map_err(|e| format!("opening stone {row} {col}: {e}"))?;
            side = side.opponent();
        }
        let mut replayed = Vec::with_capacity(self.moves.len());
        for (index, played) in self.moves.iter().enumerate() {
            let mv = Move::new(played.row, played.col);
            let ply = self.opening.len() + index + 1;
            replayed.push(ReplayedMove {
                ply,
                board: board.clone(),
                side,
                played: mv,
            });
            board
                .play(mv, side)
                .map_err(|e| format!("move {mv} at ply {ply}: {e}"))?;
            side = side.opponent();
        }
        Ok(replayed)
    }
}

/// A game as Piskvork saves it: the header `Piskvorky WxH, 11:11, 0`, then one `x,y,ms` line per
/// stone (1-based, x the column), opening stones included with no time. Piskvork stops reading
/// at the first line that is not a move, so the names and the result follow.
pub fn to_psq(record: &GameRecord) -> String {
    let mut text = format!("Piskvorky {}x{}, 11:11, 0\n", record.cols, record.rows);
    for &(row, col) in &record.opening {
        let _ = writeln!(text, "{},{},0", col + 1, row + 1);
    }
    for mv in &record.moves {
        let _ = writeln!(text, "{},{},{}", mv.col + 1, mv.row + 1, mv.ms);
    }
    let _ = writeln!(text, "{}", record.black);
    let _ = writeln!(text, "{}", record.white);
    let _ = writeln!(text, "{} {{{}}}", record.outcome.notation(), record.reason);
    text
}

/// SGF supports boards up to 52 on a side (coordinates `a`–`z`, `A`–`Z`).
pub const SGF_MAX_SIDE: usize = 52;

fn sgf_coordinate(index: usize) -> char {
    if index < 26 {
        (b'a' + index as u8) as char
    } else {
        (b'A' + (index - 26) as u8) as char
    }
}

fn sgf_text(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if c == ']' || c == '\\' {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// One SGF game tree, or `None` when the board is too large for SGF coordinates.
pub fn to_sgf(record: &GameRecord, round: usize) -> Option<String> {
    if record.rows > SGF_MAX_SIDE || record.cols > SGF_MAX_SIDE {
        return None;
    }
    let size = if record.rows == record.cols {
        record.rows.to_string()
    } else {
        format!("{}:{}", record.cols, record.rows)
    };
    let winner = match record.outcome {
        Outcome::BlackWins => "B",
        Outcome::WhiteWins => "W",
        Outcome::Draw => "",
    };
    let result = match (&record.outcome, &record.termination) {
        (Outcome::Draw, _) => "0".to_string(),
        (_, Termination::Line) => format!("{winner}+"),
        (_, Termination::Time) => format!("{winner}+T"),
        _ => format!("{winner}+F"),
    };
    let mut text = format!(
        "(;FF[4]GM[4]CA[UTF-8]AP[connect5:{}]SZ[{size}]RU[{}]GN[{}]RO[{round}]PB[{}]PW[{}]RE[{result}]C[{}]",
        env!("CARGO_PKG_VERSION"),
        if record.k == 5 {
            "exact five".to_string()
        } else {
            format!("exactly {} in a row", record.k)
        },
        sgf_text(&format!("{} vs {}", record.black, record.white)),
        sgf_text(&record.black),
        sgf_text(&record.white),
        sgf_text(&record.reason),
    );
    let mut black = true;
    let mut stone = |text: &mut String, row: usize, col: usize, comment: Option<String>| {
        let colour = if black { 'B' } else { 'W' };
        black = !black;
        let _ = write!(
            text,
            ";{colour}[{}{}]",
            sgf_coordinate(col),
            sgf_coordinate(row)
        );
        if let Some(comment) = comment {
            let _ = write!(text, "C[{}]", sgf_text(&comment));
        }
    };
    for &(row, col) in &record.opening {
        stone(&mut text, row, col, Some("opening".to_string()));
    }
    for mv in &record.moves {
        stone(&mut text, mv.row, mv.col, Some(format!("{} ms", mv.ms)));
    }
    text.push_str(")\n");
    Some(text)
}
