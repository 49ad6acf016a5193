//! Time: the one place that decides when a search must stop.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// When a search must have its answer ready. Built once per request, the moment the request's last
/// line has been read; nothing else in the engine reads the clock to decide when to stop.
#[derive(Clone, Debug)]
pub struct Deadline {
    start: Instant,
    /// Past this instant the search stops and answers with what it has.
    hard: Option<Instant>,
    /// Raised by the front end when the answer is no longer wanted (the manager said `END`, the
    /// client left): the search stops as if the time were up.
    stop: Option<Arc<AtomicBool>>,
    /// A new iteration starts only when this many times the last one's time is left (see
    /// [`Deadline::worth_another_iteration`]).
    iteration_factor: f64,
}

/// A whole move's deadline: the next iteration usually costs several times the last, so starting
/// one with less than twice the last one's time left only wastes the time.
const WHOLE_MOVE_ITERATION_FACTOR: f64 = 2.0;
/// A share of a move (see [`Deadline::share`]): an iteration cut short at the share still orders
/// the next search, and the rest of the move's time stays behind the share.
const SHARE_ITERATION_FACTOR: f64 = 0.5;

impl Deadline {
    /// No limit (fixed-depth searches, analysis, tests of the search itself).
    pub fn unlimited() -> Deadline {
        Deadline {
            start: Instant::now(),
            hard: None,
            stop: None,
            iteration_factor: WHOLE_MOVE_ITERATION_FACTOR,
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
            stop: None,
            iteration_factor: WHOLE_MOVE_ITERATION_FACTOR,
        }
    }

    /// A deadline for a process that runs one search at a time on a clock of its own (a Gomocup
    /// brain): the reply is a few bytes on a pipe, so only a small reserve is kept (3% and 4 ms:
    /// over 4,882 moves at 100 ms with 2% and 3 ms, one reply reached the manager 6 ms after the
    /// search's stop).
    pub fn for_own_clock(start: Instant, budget: Duration) -> Deadline {
        let reserve = (Duration::from_millis(4) + budget * 3 / 100).min(budget / 2);
        Deadline {
            start,
            hard: Some(start + budget.saturating_sub(reserve)),
            stop: None,
            iteration_factor: WHOLE_MOVE_ITERATION_FACTOR,
        }
    }

    /// A deadline for a part of the search (a sub-search, or the main search with time kept back
    /// for a check after it): `fraction` of the time left to this one, from now, and never past
    /// it; stopped by the same flag. An unlimited deadline's share is unlimited too (such searches
    /// bound their parts by nodes).
    pub fn share(&self, fraction: f64) -> Deadline {
        let now = Instant::now();
        Deadline {
            start: now,
            hard: self.hard.map(|hard| {
                let left = hard.saturating_duration_since(now);
                now + left.mul_f64(fraction)
            }),
            stop: self.stop.clone(),
            iteration_factor: SHARE_ITERATION_FACTOR,
        }
    }

    /// The same deadline, also stopped as soon as `stop` is raised.
    pub fn with_stop(mut self, stop: Arc<AtomicBool>) -> Deadline {
        self.stop = Some(stop);
        self
    }

    /// A deadline at an exact instant, with no reserve.
    pub fn at(start: Instant, hard: Instant) -> Deadline {
        Deadline {
            start,
            hard: Some(hard),
            stop: None,
            iteration_factor: WHOLE_MOVE_ITERATION_FACTOR,
        }
    }

    pub fn start(&self) -> Instant {
        self.start
    }

    pub fn is_unlimited(&self) -> bool {
        self.hard.is_none()
    }

    pub fn expired(&self) -> bool {
        self.stop
            .as_ref()
            .is_some_and(|stop| stop.load(Ordering::Relaxed))
            || self.hard.is_some_and(|hard| Instant::now() >= hard)
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

    /// Whether a new iteration is worth starting, given how long the last one took.
    pub fn worth_another_iteration(&self, last_iteration: Duration) -> bool {
        match self.hard {
            None => true,
            Some(_) => {
                self.remaining().as_secs_f64()
                    > last_iteration.as_secs_f64() * self.iteration_factor
            }
        }
    }
}

/// A search's view of its limits: counts the nodes and reads the deadline (and a node cap) every
/// `poll_every` nodes, so the clock costs next to nothing per node. A part of a search (a threat
/// search at the root, a check of the chosen move) runs on a clock of its own made by
/// [`SearchClock::part`], and the nodes it searched are taken back by [`SearchClock::rejoin`]:
/// nothing is set on a search and reset after it.
#[derive(Debug)]
pub struct SearchClock {
    deadline: Deadline,
    /// The node count at which the search stops (counted from the start of the whole search).
    node_cap: u64,
    nodes: u64,
    poll_every: u64,
    /// Nodes searched whatever the limits say (see [`SearchClock::guaranteeing`]).
    guaranteed_nodes: u64,
    stopped: bool,
}

impl SearchClock {
    pub fn new(deadline: Deadline, poll_every: u64) -> SearchClock {
        SearchClock {
            deadline,
            node_cap: u64::MAX,
            nodes: 0,
            poll_every: poll_every.max(1),
            guaranteed_nodes: 0,
            stopped: false,
        }
    }

    /// The same clock, also stopping after `budget` more nodes (none: no further limit).
    pub fn with_node_budget(mut self, budget: Option<u64>) -> SearchClock {
        if let Some(nodes) = budget {
            self.node_cap = self.node_cap.min(self.nodes.saturating_add(nodes));
        }
        self
    }

    /// The same clock, never stopping before `nodes` nodes: for a search that must finish small
    /// work even with no time at all (the solver proves any 3×3 position with a budget of 0).
    pub fn guaranteeing(mut self, nodes: u64) -> SearchClock {
        self.guaranteed_nodes = nodes;
        self
    }

    /// Counts a node; true once the search must unwind (and from then on).
    #[inline]
    pub fn tick(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes.is_multiple_of(self.poll_every)
            && self.nodes > self.guaranteed_nodes
            && (self.nodes >= self.node_cap || self.deadline.expired())
        {
            self.stopped = true;
        }
        self.stopped
    }

    /// Whether the search must unwind: a limit was reached at the last poll.
    #[inline]
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    pub fn deadline(&self) -> &Deadline {
        &self.deadline
    }

    /// A clock for a part of this search: stopped by `deadline` (one of this deadline's shares,
    /// or the deadline itself) and, when `max_nodes` is given, after that many more nodes; it
    /// counts on from this clock's nodes.
    pub fn part(&self, deadline: Deadline, max_nodes: Option<u64>) -> SearchClock {
        SearchClock {
            deadline,
            node_cap: max_nodes.map_or(self.node_cap, |cap| {
                self.nodes.saturating_add(cap).min(self.node_cap)
            }),
            nodes: self.nodes,
            poll_every: self.poll_every,
            guaranteed_nodes: self.guaranteed_nodes,
            stopped: false,
        }
    }

    /// A part of this search that may take `fraction` of what is left: of the time, and of the
    /// nodes when the search has a node budget, so that a search stopped by nodes divides them
    /// as a timed one divides its time.
    pub fn share(&self, fraction: f64) -> SearchClock {
        let nodes = self
            .has_node_budget()
            .then(|| (self.node_cap.saturating_sub(self.nodes) as f64 * fraction) as u64);
        self.part(self.deadline.share(fraction), nodes)
    }

    /// Whether the search stops at a node count as well as at its deadline.
    pub fn has_node_budget(&self) -> bool {
        self.node_cap != u64::MAX
    }

    /// Takes back the nodes `part` searched; this clock stops if its own deadline has passed
    /// meanwhile. Returns whether the part was cut short by its limits.
    pub fn rejoin(&mut self, part: SearchClock) -> bool {
        self.nodes = part.nodes;
        self.stopped = self.nodes >= self.node_cap || self.deadline.expired();
        part.stopped
    }
}

/// What a player's clock says before one of its moves: a limit per move, what is left of a
/// whole-match clock and the increment it gains with each move. Every front end that owns a clock
/// (the Gomocup brain, the match runner for players that only take a per-move budget) turns it
/// into one move's budget with [`Clock::budget`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Clock {
    /// The longest a move may take (`None`: no per-move limit).
    pub turn: Option<Duration>,
    /// What is left of the match clock before this move (`None`: no match clock). Zero when the
    /// clock has run out.
    pub match_left: Option<Duration>,
    /// Added to the match clock after each move.
    pub increment: Duration,
}

/// A match clock is spent as if this many moves were still to come: gomoku games seldom last
/// more than 40 moves a side, and a share of what is left (rather than of the initial time)
/// keeps some time for a long game whatever happens.
const MOVES_TO_PLAN: u32 = 20;
/// The budget of a move under a match clock alone (no per-move limit) when nothing is known.
const FALLBACK_BUDGET: Duration = Duration::from_secs(5);

impl Clock {
    /// One move's thinking time: the per-move limit, or the share of the match clock due to this
    /// move (its part of what is left, plus most of the increment it will earn back), whichever
    /// is smaller; never more than half of what is left on the match clock.
    pub fn budget(&self) -> Duration {
        let by_match = self.match_left.map(|left| {
            let share = left / MOVES_TO_PLAN + self.increment.mul_f64(0.75);
            share.min(left / 2)
        });
        match (self.turn, by_match) {
            (Some(turn), Some(share)) => turn.min(share),
            (Some(turn), None) => turn,
            (None, Some(share)) => share,
            (None, None) => FALLBACK_BUDGET,
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

    /// Ticks `clock` until it stops; the nodes it counted.
    fn run_out(clock: &mut SearchClock) -> u64 {
        while !clock.tick() {}
        clock.nodes()
    }

    #[test]
    fn a_share_of_a_node_budget_is_that_share_of_the_nodes_left() {
        let mut clock = SearchClock::new(Deadline::unlimited(), 10).with_node_budget(Some(1_000));
        for _ in 0..200 {
            clock.tick();
        }
        let mut part = clock.share(0.25);
        assert_eq!(
            run_out(&mut part),
            400,
            "a quarter of the 800 nodes left, from 200"
        );
        assert!(
            clock.rejoin(part),
            "the part should say its node limit cut it short"
        );
        assert_eq!(clock.nodes(), 400, "the part's nodes count for the search");
        assert!(!clock.stopped(), "the search has 600 nodes left");
        assert_eq!(run_out(&mut clock), 1_000);
        // Without a node budget a share limits the time only.
        let unlimited = SearchClock::new(Deadline::unlimited(), 10);
        assert!(!unlimited.has_node_budget() && !unlimited.share(0.1).has_node_budget());
    }

    #[test]
    fn a_raised_stop_expires_an_unlimited_deadline() {
        let stop = Arc::new(AtomicBool::new(false));
        let deadline = Deadline::unlimited().with_stop(Arc::clone(&stop));
        assert!(!deadline.expired());
        stop.store(true, Ordering::Relaxed);
        assert!(deadline.expired());
    }

    #[test]
    fn an_own_clock_keeps_a_small_reserve() {
        let start = Instant::now();
        let deadline = Deadline::for_own_clock(start, Duration::from_millis(300));
        assert_eq!(deadline.total(), Duration::from_millis(287));
        assert!(Deadline::for_own_clock(start, Duration::ZERO).expired());
    }

    #[test]
    fn a_clock_spends_its_match_time_over_the_game() {
        let ms = Duration::from_millis;
        let turn_only = Clock {
            turn: Some(ms(300)),
            ..Clock::default()
        };
        assert_eq!(turn_only.budget(), ms(300));
        let match_only = Clock {
            match_left: Some(ms(60_000)),
            ..Clock::default()
        };
        assert_eq!(match_only.budget(), ms(3_000));
        // The per-move limit caps the match share, and the share never takes half the clock.
        let both = Clock {
            turn: Some(ms(1_000)),
            match_left: Some(ms(60_000)),
            increment: ms(500),
        };
        assert_eq!(both.budget(), ms(1_000));
        let nearly_out = Clock {
            match_left: Some(ms(100)),
            increment: ms(1_000),
            ..Clock::default()
        };
        assert_eq!(nearly_out.budget(), ms(50));
        let out = Clock {
            match_left: Some(Duration::ZERO),
            ..Clock::default()
        };
        assert_eq!(out.budget(), Duration::ZERO);
    }
}
