//! `builtin`: the engine in this process.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::{Answer, Fault, MoveTime, Player, TimeRules};
use crate::board::{Board, Rule};
use crate::engine::{self, Deadline, EngineConfig};

/// The engine, in this process.
pub struct BuiltinPlayer {
    pub(super) name: String,
    pub(super) config: EngineConfig,
    pub(super) concurrency: usize,
}

impl Player for BuiltinPlayer {
    fn name(&self) -> &str {
        &self.name
    }

    fn time_rules(&self) -> TimeRules {
        TimeRules::Course
    }

    fn prepare(&mut self) -> Result<(), Fault> {
        Ok(())
    }

    fn ask(
        &mut self,
        board: &Board,
        rule: Rule,
        time: &MoveTime,
        limit: Duration,
    ) -> Result<Answer, Fault> {
        // The search runs on its own thread so that the time limit holds for the engine too: a
        // search that never returns loses on time and is left behind, and the match goes on.
        let (report, answer) = mpsc::channel();
        let board = board.clone();
        let config = self.config.clone();
        let budget = time.budget;
        let concurrency = self.concurrency;
        let start = Instant::now();
        let spawned = std::thread::Builder::new()
            .name(format!("search-{}", self.name))
            .spawn(move || {
                let deadline = Deadline::for_budget(start, budget, concurrency);
                // An engine bug is this player's crash, not the match's end.
                let thought = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    engine::think(&board, rule, &deadline, &config)
                }));
                let _ = report.send((thought, Instant::now()));
            });
        if let Err(error) = spawned {
            return Err(Fault::Unavailable(format!(
                "cannot start a search thread: {error}"
            )));
        }
        match answer.recv_timeout(limit) {
            Ok((Ok(Ok(decision)), at)) => Ok(Answer {
                mv: decision.mv,
                elapsed: at.saturating_duration_since(start),
            }),
            Ok((Ok(Err(no_move)), _)) => {
                Err(Fault::Crashed(format!("engine found no move: {no_move}")))
            }
            Ok((Err(_), _)) | Err(RecvTimeoutError::Disconnected) => {
                Err(Fault::Crashed("engine panicked".to_string()))
            }
            Err(RecvTimeoutError::Timeout) => Err(Fault::NoAnswer { waited: limit }),
        }
    }

    fn close(&mut self) {}
}
