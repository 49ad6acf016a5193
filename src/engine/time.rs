//! Time: the one place that decides when a search must stop.

use std::time::{Duration, Instant};

/// When a search must have its answer ready. Built once per request, the moment the request's last
/// line has been read; nothing else in the engine reads the clock to decide when to stop.
#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    start: Instant,
    /// Past this instant the search stops and answers with what it has.
    hard: Option<Instant>,
}

impl Deadline {
    /// No limit (fixed-depth searches, analysis, tests of the search itself).
    pub fn unlimited() -> Deadline {
        Deadline {
            start: Instant::now(),
            hard: None,
        }
    }

    /// A deadline `budget` after `start`, keeping back a safety reserve so that the reply, written
    /// after the search returns, still arrives within the budget. The reserve grows with the number
    /// of searches sharing the machine (`concurrent`): with 64 threads on 2 cores a thread may wait
    /// several scheduler slices before it runs again after its deadline.
    pub fn for_budget(start: Instant, budget: Duration, concurrent: usize) -> Deadline {
        let reserve = reserve_for(budget, concurrent);
        Deadline {
            start,
            hard: Some(start + budget.saturating_sub(reserve)),
        }
    }

    /// A deadline at an exact instant, with no reserve.
    pub fn at(start: Instant, hard: Instant) -> Deadline {
        Deadline {
            start,
            hard: Some(hard),
        }
    }

    pub fn start(&self) -> Instant {
        self.start
    }

    pub fn is_unlimited(&self) -> bool {
        self.hard.is_none()
    }

    pub fn expired(&self) -> bool {
        self.hard.is_some_and(|hard| Instant::now() >= hard)
    }

    /// Time left before the hard stop (`Duration::MAX` when unlimited).
    pub fn remaining(&self) -> Duration {
        match self.hard {
            Some(hard) => hard.saturating_duration_since(Instant::now()),
            None => Duration::MAX,
        }
    }

    /// Time between the start and the hard stop (`Duration::MAX` when unlimited).
    pub fn total(&self) -> Duration {
        match self.hard {
            Some(hard) => hard.saturating_duration_since(self.start),
            None => Duration::MAX,
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Whether a new iteration is worth starting: the next one usually costs several times the
    /// last, so starting it with less than that left only wastes the time.
    pub fn worth_another_iteration(&self, last_iteration: Duration) -> bool {
        match self.hard {
            None => true,
            Some(_) => self.remaining() > last_iteration.saturating_mul(2),
        }
    }
}

/// The part of a budget kept back for writing the reply and for scheduling delays.
fn reserve_for(budget: Duration, concurrent: usize) -> Duration {
    let base = Duration::from_millis(5) + budget / 10;
    let crowd = Duration::from_millis(3) * (concurrent.saturating_sub(1) as u32).min(200);
    (base + crowd)
        .min(budget / 2 + Duration::from_millis(2))
        .min(budget)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserve_never_exceeds_budget_and_grows_with_load() {
        for ms in [0u64, 1, 10, 100, 1000, 10_000] {
            let budget = Duration::from_millis(ms);
            assert!(reserve_for(budget, 1) <= budget);
            assert!(reserve_for(budget, 64) <= budget);
            assert!(reserve_for(budget, 64) >= reserve_for(budget, 1));
        }
        let zero = Deadline::for_budget(Instant::now(), Duration::ZERO, 1);
        assert!(zero.expired());
    }
}
