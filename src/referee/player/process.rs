//! `cmd:PROGRAM`: a program speaking the Connect5 protocol on its standard streams.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::child::{NoLine, Program, Unsent};
use super::{answer_from_line, is_ready_line, Answer, Fault, MoveTime, Player, TimeRules};
use crate::board::{Board, Rule};
use crate::protocol::encode_request;

/// A program speaking the Connect5 protocol on stdin/stdout, started by the runner.
pub struct ProcessPlayer {
    pub(super) name: String,
    pub(super) words: Vec<String>,
    pub(super) log_path: PathBuf,
    pub(super) start_timeout: Duration,
    pub(super) running: Option<Program>,
}

impl ProcessPlayer {
    fn start(&mut self) -> Result<Program, Fault> {
        let mut program = Program::spawn(&self.name, &self.words, &self.log_path)?;
        let until = Instant::now() + self.start_timeout;
        loop {
            match program.next_line_until(until) {
                Ok((line, _)) if is_ready_line(&line) => return Ok(program),
                Ok((line, _)) => tracing::debug!("{} banner: {}", self.name, line.trim_end()),
                Err(NoLine::TimedOut) => {
                    program.kill();
                    return Err(Fault::Unavailable(format!(
                        "no READY within {} ms",
                        self.start_timeout.as_millis()
                    )));
                }
                Err(NoLine::Closed) => {
                    return Err(Fault::Unavailable(
                        program.crash_report("ended before READY", None),
                    ));
                }
            }
        }
    }

    /// The player died (or closed its output): says what failed (`what`).
    fn crashed(&mut self, what: &str, error: Option<&std::io::Error>) -> Fault {
        match self.running.take() {
            Some(mut program) => {
                Fault::Crashed(program.crash_report(&format!("crashed{what}"), error))
            }
            None => Fault::Crashed("crashed (not running)".to_string()),
        }
    }

    /// The player did not answer in time: kills it.
    fn silent(&mut self, waited: Duration) -> Fault {
        if let Some(mut program) = self.running.take() {
            program.kill();
        }
        Fault::NoAnswer { waited }
    }
}

const UNWRITTEN: &str = ": the request could not be written";

impl Player for ProcessPlayer {
    fn name(&self) -> &str {
        &self.name
    }

    fn time_rules(&self) -> TimeRules {
        TimeRules::Course
    }

    fn prepare(&mut self) -> Result<(), Fault> {
        if let Some(program) = &mut self.running {
            if program.is_running() {
                return Ok(());
            }
            self.running = None;
        }
        self.running = Some(self.start()?);
        Ok(())
    }

    fn ask(
        &mut self,
        board: &Board,
        rule: Rule,
        time: &MoveTime,
        limit: Duration,
    ) -> Result<Answer, Fault> {
        // Never restarted in the middle of a game: a process that died since its last answer
        // has crashed.
        let Some(program) = self.running.as_mut() else {
            return Err(Fault::Crashed("crashed: not running".to_string()));
        };
        let request = encode_request(board, rule, time.budget.as_millis() as u64);
        let asked = Instant::now();
        let sent = match program.send(request, limit) {
            Ok(at) => at,
            Err(Unsent::Failed(error)) => return Err(self.crashed(UNWRITTEN, error.as_ref())),
            Err(Unsent::TimedOut) => return Err(self.silent(asked.elapsed())),
        };
        let limit = limit.saturating_sub(sent.saturating_duration_since(asked));
        match program.next_line(limit) {
            Ok((line, at)) => answer_from_line(line, at.saturating_duration_since(sent)),
            Err(NoLine::TimedOut) => Err(self.silent(limit)),
            Err(NoLine::Closed) => Err(self.crashed("", None)),
        }
    }

    fn close(&mut self) {
        if let Some(mut program) = self.running.take() {
            // End of input is how most course sessions end; a player that ignores it is killed.
            program.close(Duration::from_millis(500));
        }
    }
}
