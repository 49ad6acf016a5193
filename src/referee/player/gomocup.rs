//! `gomocup:PROGRAM`: a Gomocup (pbrain) brain, as Piskvork and c-gomoku-cli run them. Each game
//! opens with `START`/`RECTSTART` (or `RESTART` when the brain has played on this board before),
//! the game's `INFO`s and `ABOUT`, then `BEGIN`, `TURN x,y` for each opponent move, or `BOARD`
//! for an opening; `INFO time_left` before every move; `END` when the match is over.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::child::{NoLine, Program, Unsent};
use super::{Answer, Fault, MoveTime, Player, TimeRules};
use crate::board::{Board, Move, Rule, Stone};
use crate::gomocup::command::{format_point, parse_point, RULE_EXACT_FIVE};

/// What `INFO time_left` says when the match has no clock (the protocol's value).
const NO_MATCH_LIMIT_MS: u64 = 2_147_483_647;
/// How long a brain may take to end after `END` before it is killed (the protocol's second).
const END_GRACE: Duration = Duration::from_millis(1000);

/// A Gomocup brain started by the runner.
pub struct GomocupPlayer {
    pub(super) name: String,
    pub(super) words: Vec<String>,
    pub(super) log_path: PathBuf,
    pub(super) start_timeout: Duration,
    /// `INFO max_memory`, in bytes.
    pub(super) max_memory: u64,
    pub(super) running: Option<Program>,
    /// The board as the brain knows it (its reply played), or `None` when the next `ask` opens a
    /// game.
    pub(super) known: Option<Board>,
    /// The board size of the brain's last game, if it played one since it started: the next
    /// game on the same size opens with `RESTART`.
    pub(super) played_size: Option<(usize, usize)>,
    /// The `INFO timeout_turn` the brain was last told.
    pub(super) told_turn: Option<Duration>,
}

impl GomocupPlayer {
    pub(super) fn new(
        name: String,
        words: Vec<String>,
        log_path: PathBuf,
        start_timeout: Duration,
        max_memory: u64,
    ) -> GomocupPlayer {
        GomocupPlayer {
            name,
            words,
            log_path,
            start_timeout,
            max_memory,
            running: None,
            known: None,
            played_size: None,
            told_turn: None,
        }
    }

    fn program(&mut self) -> Result<&mut Program, Fault> {
        self.running
            .as_mut()
            .ok_or_else(|| Fault::Crashed("crashed: not running".to_string()))
    }

    /// The brain ended or broke its pipe: says what failed.
    fn crashed(&mut self, what: &str, error: Option<&std::io::Error>) -> Fault {
        self.known = None;
        match self.running.take() {
            Some(mut program) => Fault::Crashed(program.crash_report(what, error)),
            None => Fault::Crashed(format!("{what} (not running)")),
        }
    }

    /// Kills the brain (it did not answer, or said something that leaves it in an unknown
    /// state): the next game starts a fresh one.
    fn abandon(&mut self) {
        if let Some(mut program) = self.running.take() {
            program.kill();
        }
        self.known = None;
        self.played_size = None;
    }

    /// Writes `text`; on failure the brain is gone.
    fn send(&mut self, text: String, limit: Duration) -> Result<Instant, Fault> {
        let asked = Instant::now();
        match self.program()?.send(text, limit) {
            Ok(at) => Ok(at),
            Err(Unsent::Failed(error)) => {
                Err(self.crashed("crashed: a command could not be written", error.as_ref()))
            }
            Err(Unsent::TimedOut) => {
                self.abandon();
                Err(Fault::NoAnswer {
                    waited: asked.elapsed(),
                })
            }
        }
    }

    /// Reads the brain's next line that is not `MESSAGE` or `DEBUG` (those are logged).
    fn next_reply(&mut self, until: Instant) -> Result<(String, Instant), NoLine> {
        let name = self.name.clone();
        let program = self.running.as_mut().ok_or(NoLine::Closed)?;
        loop {
            let (line, at) = program.next_line_until(until)?;
            let trimmed = line.trim();
            let word = trimmed.split_whitespace().next().unwrap_or("");
            if word.eq_ignore_ascii_case("MESSAGE") || word.eq_ignore_ascii_case("DEBUG") {
                tracing::debug!("{name}: {trimmed}");
                continue;
            }
            if trimmed.is_empty() {
                continue;
            }
            return Ok((trimmed.to_string(), at));
        }
    }

    /// Sends a command that the brain answers `OK` to (`START`, `RECTSTART`, `RESTART`), waiting
    /// for the answer up to the start time-out. `Err` carries the brain's other answer.
    fn command_ok(&mut self, command: &str) -> Result<Result<(), String>, Fault> {
        self.send(format!("{command}\n"), self.start_timeout)?;
        let until = Instant::now() + self.start_timeout;
        match self.next_reply(until) {
            Ok((line, _)) if line.eq_ignore_ascii_case("OK") => Ok(Ok(())),
            Ok((line, _)) => Ok(Err(line)),
            Err(NoLine::TimedOut) => Ok(Err(format!(
                "no answer within {} ms",
                self.start_timeout.as_millis()
            ))),
            Err(NoLine::Closed) => Err(self.crashed(&format!("crashed after {command}"), None)),
        }
    }

    /// Opens a game on `board`'s size: `RESTART` if the brain's last game had that size (a fresh
    /// brain if it refuses), else `START`/`RECTSTART`; then the game's `INFO`s.
    fn open_game(&mut self, board: &Board, rule: Rule, time: &MoveTime) -> Result<(), Fault> {
        let size = (board.rows(), board.cols());
        if self.played_size == Some(size) {
            match self.command_ok("RESTART")? {
                Ok(()) => {}
                Err(answer) => {
                    tracing::info!(
                        "{}: RESTART answered {answer:?}; starting a fresh brain",
                        self.name
                    );
                    self.abandon();
                    self.prepare()?;
                }
            }
        }
        if self.played_size != Some(size) {
            let start = if board.rows() == board.cols() {
                format!("START {}", board.cols())
            } else {
                format!("RECTSTART {},{}", board.cols(), board.rows())
            };
            if let Err(answer) = self.command_ok(&start)? {
                self.abandon();
                return Err(Fault::Unavailable(format!("{start} answered {answer:?}")));
            }
            self.played_size = Some(size);
        }
        let exact = if rule.overline_wins {
            0
        } else {
            RULE_EXACT_FIVE
        };
        let mut infos = format!(
            "INFO max_memory {}\nINFO timeout_match {}\nINFO rule {exact}\nINFO game_type 1\n",
            self.max_memory,
            time.match_total.map_or(0, |t| t.as_millis())
        );
        infos.push_str(&self.turn_info(time));
        // ABOUT is answered only once the INFOs before it are handled: brains that set up their
        // tables on `INFO max_memory` (Rapfi takes about 0.2 s for 350 MB) do so before the
        // first move's clock starts, as they would after START.
        infos.push_str("ABOUT\n");
        self.send(infos, self.start_timeout)?;
        let until = Instant::now() + self.start_timeout;
        match self.next_reply(until) {
            Ok((about, _)) => tracing::debug!("{}: {about}", self.name),
            Err(NoLine::TimedOut) => {
                self.abandon();
                return Err(Fault::Unavailable(format!(
                    "no answer to ABOUT within {} ms",
                    self.start_timeout.as_millis()
                )));
            }
            Err(NoLine::Closed) => return Err(self.crashed("crashed after INFO", None)),
        }
        self.known = Some(Board::new(board.rows(), board.cols()).map_err(|e| {
            Fault::Unavailable(format!("cannot make a {}x{} board: {e}", size.0, size.1))
        })?);
        Ok(())
    }

    /// `INFO timeout_turn` when it changed: the per-move limit, or the whole match time when the
    /// match has only a match clock (as c-gomoku-cli does: 0 would mean "play at once").
    fn turn_info(&mut self, time: &MoveTime) -> String {
        let turn = time.clock.turn.or(time.match_total).unwrap_or(time.budget);
        if self.told_turn == Some(turn) {
            return String::new();
        }
        self.told_turn = Some(turn);
        format!("INFO timeout_turn {}\n", turn.as_millis())
    }
}

/// The command that asks the brain to move in `board`, knowing it has `known`: `BEGIN` on an
/// empty board, `TURN x,y` when the opponent added one stone, else the whole position.
fn move_command(known: &Board, board: &Board, own: Stone) -> String {
    if board.stone_count() == 0 {
        return "BEGIN\n".to_string();
    }
    let added: Vec<(Move, Option<Stone>)> = board
        .cells()
        .filter(|&(mv, stone)| known.get(mv) != stone)
        .collect();
    if let [(mv, Some(stone))] = added[..] {
        if stone == own.opponent() && known.is_empty_cell(mv) {
            return format!("TURN {}\n", format_point(mv));
        }
    }
    board_command(board, own)
}

/// `BOARD`, the stones, `DONE`. The stones alternate from black's, so that the last one listed is
/// the opponent's: brains that read the side to move from the order (Rapfi) get it right.
fn board_command(board: &Board, own: Stone) -> String {
    let field = |stone: Stone| if stone == own { 1 } else { 2 };
    let black: Vec<Move> = stones_of(board, Stone::Black);
    let white: Vec<Move> = stones_of(board, Stone::White);
    let mut text = String::from("BOARD\n");
    for i in 0..black.len().max(white.len()) {
        for (stones, stone) in [(&black, Stone::Black), (&white, Stone::White)] {
            if let Some(&mv) = stones.get(i) {
                text.push_str(&format!("{},{}\n", format_point(mv), field(stone)));
            }
        }
    }
    text.push_str("DONE\n");
    text
}

fn stones_of(board: &Board, colour: Stone) -> Vec<Move> {
    board
        .cells()
        .filter(|&(_, stone)| stone == Some(colour))
        .map(|(mv, _)| mv)
        .collect()
}

impl Player for GomocupPlayer {
    fn name(&self) -> &str {
        &self.name
    }

    fn time_rules(&self) -> TimeRules {
        TimeRules::Gomocup
    }

    fn prepare(&mut self) -> Result<(), Fault> {
        self.known = None;
        if let Some(program) = &mut self.running {
            if program.is_running() {
                return Ok(());
            }
            self.running = None;
        }
        self.played_size = None;
        self.told_turn = None;
        self.running = Some(Program::spawn(&self.name, &self.words, &self.log_path)?);
        Ok(())
    }

    fn ask(
        &mut self,
        board: &Board,
        rule: Rule,
        time: &MoveTime,
        limit: Duration,
    ) -> Result<Answer, Fault> {
        if self.running.is_none() {
            return Err(Fault::Crashed("crashed: not running".to_string()));
        }
        let own = board.side_to_move().map_err(|counts| {
            Fault::Unavailable(format!("cannot ask for a move in this position: {counts}"))
        })?;
        if self.known.is_none() {
            self.open_game(board, rule, time)?;
        }
        let known = self.known.take().unwrap_or_else(|| board.clone());
        let time_left = time
            .clock
            .match_left
            .map_or(NO_MATCH_LIMIT_MS as u128, |left| left.as_millis());
        let mut request = self.turn_info(time);
        request.push_str(&format!("INFO time_left {time_left}\n"));
        request.push_str(&move_command(&known, board, own));
        let asked = Instant::now();
        let sent = self.send(request, limit)?;
        let until = asked + limit;
        loop {
            let (line, at) = match self.next_reply(until) {
                Ok(reply) => reply,
                Err(NoLine::TimedOut) => {
                    self.abandon();
                    return Err(Fault::NoAnswer {
                        waited: asked.elapsed(),
                    });
                }
                Err(NoLine::Closed) => return Err(self.crashed("crashed", None)),
            };
            let elapsed = at.saturating_duration_since(sent);
            let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((&line, ""));
            match word.to_ascii_uppercase().as_str() {
                "ERROR" | "UNKNOWN" => {
                    // Whatever the brain thinks of the game now is unknown: a fresh one next.
                    self.abandon();
                    return Err(Fault::Refused(format!(
                        "answered {} {}",
                        word.to_ascii_uppercase(),
                        rest.trim()
                    )));
                }
                // A brain answering `OK` to an `INFO` is lenient rather than wrong.
                "OK" => continue,
                "SUGGEST" => match parse_point(rest) {
                    Ok(mv) => {
                        self.send(format!("PLAY {}\n", format_point(mv)), limit)?;
                        continue;
                    }
                    Err(_) => {
                        self.abandon();
                        return Err(Fault::Unparsable { line, elapsed });
                    }
                },
                _ => {}
            }
            return match parse_point(&line) {
                Ok(mv) => {
                    let mut after = board.clone();
                    if after.play(mv, own).is_ok() {
                        self.known = Some(after);
                    }
                    Ok(Answer { mv, elapsed })
                }
                Err(_) => {
                    self.abandon();
                    Err(Fault::Unparsable { line, elapsed })
                }
            };
        }
    }

    fn close(&mut self) {
        if let Some(mut program) = self.running.take() {
            let _ = program.send("END\n".to_string(), END_GRACE);
            program.close(END_GRACE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_move_is_begin_turn_or_the_whole_board() {
        let empty = Board::new(15, 15).unwrap();
        assert_eq!(move_command(&empty, &empty, Stone::Black), "BEGIN\n");
        let mut board = empty.clone();
        board.play(Move::new(7, 7), Stone::Black).unwrap();
        assert_eq!(move_command(&empty, &board, Stone::White), "TURN 7,7\n");
        let known = board.clone();
        board.play(Move::new(8, 7), Stone::White).unwrap();
        board.play(Move::new(6, 9), Stone::Black).unwrap();
        // Two stones the brain has not seen: the whole position, ending with the opponent's.
        assert_eq!(
            move_command(&known, &board, Stone::White),
            "BOARD\n9,6,2\n7,8,1\n7,7,2\nDONE\n"
        );
    }
}
