//! `builtin`: the engine in this process.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Answer, Fault, MoveTime, Player, TimeRules};
use crate::board::{Board, Rule};
use crate::engine::{Deadline, EngineConfig};
use crate::pool::{SearchFailure, SearchJob, SearchPool};

/// The engine, in this process.
pub struct BuiltinPlayer {
    pub(super) name: String,
    pub(super) config: EngineConfig,
    pub(super) concurrency: usize,
    /// The player's searches (one at a time: a player answers one move at a time), with its
    /// table as their memory.
    pub(super) pool: Arc<SearchPool>,
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
        // The search runs on a thread of its own so that the time limit holds for the engine too:
        // a search that never returns loses on time and is left behind, and the match goes on.
        let (report, answer) = mpsc::channel();
        let start = Instant::now();
        let job = SearchJob {
            name: format!("search-{}", self.name),
            board: board.clone(),
            rule,
            deadline: Deadline::for_budget(start, time.budget, self.concurrency),
            config: self.config.clone(),
        };
        self.pool
            .spawn(job, None, move |outcome| {
                let _ = report.send((outcome, Instant::now()));
            })
            .map_err(|failure| Fault::Unavailable(failure.to_string()))?;
        match answer.recv_timeout(limit) {
            Ok((Ok(decision), at)) => Ok(Answer {
                mv: decision.mv,
                elapsed: at.saturating_duration_since(start),
            }),
            Ok((Err(SearchFailure::NoMove(no_move)), _)) => {
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
