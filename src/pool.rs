//! Where searches run, for every front end (the Connect5 sessions, the Gomocup brain, the
//! referee's builtin player): the memory budget all tables share, the search slots, and the
//! thread a search runs on, at a lower priority and with a panic turned into a failure the front
//! end can answer around. The engine itself (`crate::engine`) stays synchronous and knows none of
//! this; the front ends keep their protocols' own policies (the session's watchdog and instant
//! move, the referee's time limit, the brain's stop commands), and all meet the engine here.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::board::{Board, Rule};
use crate::engine::{self, Deadline, Decision, EngineConfig, NoMove};

/// Why a search gave no decision.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SearchFailure {
    /// The position has no move to play (game over, impossible stone counts).
    #[error("no move to play: {0}")]
    NoMove(NoMove),
    /// The search panicked: an engine bug, confined to this search.
    #[error("the search failed")]
    Panicked,
    /// No thread could be started for it.
    #[error("cannot start a search thread: {0}")]
    NoThread(String),
}

pub type SearchOutcome = Result<Decision, SearchFailure>;

/// The least table a search gets even when the budget is spent; the connection limit bounds how
/// many such floors can exist at once.
pub const MIN_SEARCH_HASH_BYTES: usize = 256 << 10;

/// Search recursion is bounded by the ply limit; this leaves ample room.
const SEARCH_STACK_BYTES: usize = 8 << 20;

/// Bytes of transposition table a search may have, shared by every search of the process so that
/// memory stays bounded whatever the number of connections.
#[derive(Debug)]
pub struct MemoryBudget {
    total: usize,
    used: AtomicUsize,
}

impl MemoryBudget {
    pub fn new(total: usize) -> MemoryBudget {
        MemoryBudget {
            total,
            used: AtomicUsize::new(0),
        }
    }

    /// Takes up to `want` bytes; gives back what it could (at least the floor).
    pub fn reserve(self: &Arc<Self>, want: usize) -> Reservation {
        let mut used = self.used.load(Ordering::Relaxed);
        loop {
            let free = self.total.saturating_sub(used);
            let grant = want.min(free).max(MIN_SEARCH_HASH_BYTES.min(want));
            match self.used.compare_exchange_weak(
                used,
                used + grant,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    return Reservation {
                        budget: Arc::clone(self),
                        bytes: grant,
                    }
                }
                Err(now) => used = now,
            }
        }
    }
}

/// Bytes taken from a [`MemoryBudget`], given back when dropped.
#[derive(Debug)]
pub struct Reservation {
    budget: Arc<MemoryBudget>,
    pub bytes: usize,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// A search slot, held for as long as a search runs and given back when dropped.
#[derive(Debug)]
pub struct Slot {
    _permit: Option<OwnedSemaphorePermit>,
}

/// The searches of a process: their memory, their slots, their threads.
#[derive(Debug)]
pub struct SearchPool {
    memory: Arc<MemoryBudget>,
    /// Searches allowed to run at once. More searches than cores do not get more CPU by running
    /// all at once; they only make every thread, the ones that must write replies included, wait
    /// longer for a core.
    slots: Arc<Semaphore>,
    slot_count: usize,
}

impl SearchPool {
    /// Two slots per core, and `table_bytes` for all the searches' tables together.
    pub fn new(table_bytes: usize) -> SearchPool {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        SearchPool::with_slots(table_bytes, 2 * cores)
    }

    /// As [`SearchPool::new`], with `slot_count` searches at once (0: every search that needs a
    /// slot waits in vain, which tests use to reach the fallbacks whatever the machine).
    pub fn with_slots(table_bytes: usize, slot_count: usize) -> SearchPool {
        SearchPool {
            memory: Arc::new(MemoryBudget::new(table_bytes)),
            slots: Arc::new(Semaphore::new(slot_count)),
            slot_count,
        }
    }

    pub fn slot_count(&self) -> usize {
        self.slot_count
    }

    /// Searches holding a slot right now.
    pub fn searches_running(&self) -> usize {
        self.slot_count
            .saturating_sub(self.slots.available_permits())
    }

    /// Waits for a free slot (cancel-safe: dropping the wait gives up its place in the queue).
    pub async fn slot(&self) -> Slot {
        // The semaphore is never closed; should that change, searching without a slot beats
        // answering nothing.
        let permit = Arc::clone(&self.slots).acquire_owned().await.ok();
        Slot { _permit: permit }
    }

    /// Searches on the calling thread with a table from the budget; a panic of the search is
    /// returned as [`SearchFailure::Panicked`].
    pub fn search_here(
        &self,
        board: &Board,
        rule: Rule,
        deadline: &Deadline,
        config: &EngineConfig,
    ) -> SearchOutcome {
        let reservation = self.memory.reserve(config.hash_bytes);
        let config = EngineConfig {
            hash_bytes: reservation.bytes,
            ..config.clone()
        };
        let thought = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            engine::think(board, rule, deadline, &config)
        }));
        match thought {
            Ok(Ok(decision)) => Ok(decision),
            Ok(Err(no_move)) => Err(SearchFailure::NoMove(no_move)),
            Err(_) => {
                tracing::error!("the search panicked");
                Err(SearchFailure::Panicked)
            }
        }
    }

    /// Searches on a thread of its own, at a lower priority than the threads that read requests
    /// and write replies, holding `slot` (if any) until the search is over; `deliver` gets the
    /// outcome on that thread. Returns at once.
    pub fn spawn(
        self: &Arc<Self>,
        job: SearchJob,
        slot: Option<Slot>,
        deliver: impl FnOnce(SearchOutcome) + Send + 'static,
    ) -> Result<(), SearchFailure> {
        let pool = Arc::clone(self);
        std::thread::Builder::new()
            .name(job.name.clone())
            .stack_size(SEARCH_STACK_BYTES)
            .spawn(move || {
                lower_thread_priority();
                let outcome = pool.search_here(&job.board, job.rule, &job.deadline, &job.config);
                drop(slot);
                deliver(outcome);
            })
            .map(|_| ())
            .map_err(|error| SearchFailure::NoThread(error.to_string()))
    }
}

/// A search to run on a thread of its own ([`SearchPool::spawn`]).
pub struct SearchJob {
    /// The thread's name (in a debugger or a profile).
    pub name: String,
    pub board: Board,
    pub rule: Rule,
    pub deadline: Deadline,
    pub config: EngineConfig,
}

/// Search threads run at a lower priority than the threads that read requests and write replies,
/// so that on a crowded machine a reply due now is not queued behind searches still thinking.
fn lower_thread_priority() {
    #[cfg(target_os = "linux")]
    {
        // On Linux the nice value is per thread; 0 names the calling thread. Failure only means
        // the search keeps the default priority.
        // SAFETY: setpriority takes plain integers and touches no memory of ours.
        let _ = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 5) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_grants_what_is_left_never_less_than_the_floor_and_takes_it_back() {
        let budget = Arc::new(MemoryBudget::new(4 << 20));
        let first = budget.reserve(3 << 20);
        assert_eq!(first.bytes, 3 << 20);
        let second = budget.reserve(3 << 20);
        assert_eq!(second.bytes, 1 << 20);
        let third = budget.reserve(3 << 20);
        assert_eq!(third.bytes, MIN_SEARCH_HASH_BYTES);
        drop((first, second, third));
        assert_eq!(budget.reserve(3 << 20).bytes, 3 << 20);
    }

    #[test]
    fn a_search_on_its_thread_delivers_its_decision_and_frees_its_slot() {
        let pool = Arc::new(SearchPool::with_slots(8 << 20, 1));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime for the test");
        let slot = runtime.block_on(pool.slot());
        assert_eq!(pool.searches_running(), 1);
        let board = Board::from_rows(&["NNNN.", "BBB..", ".....", ".....", "B...."]).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let job = SearchJob {
            name: "test".to_string(),
            board,
            rule: Rule::for_board(5, 5),
            deadline: Deadline::unlimited(),
            config: EngineConfig::default(),
        };
        pool.spawn(job, Some(slot), move |outcome| {
            let _ = tx.send(outcome);
        })
        .unwrap();
        let decision = rx.recv().unwrap().unwrap();
        assert_eq!(decision.mv, crate::board::Move::new(0, 4));
        assert_eq!(pool.searches_running(), 0);
    }
}
