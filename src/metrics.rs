//! What a server has done, counted where it happens and read by `GET /metrics` (Prometheus text
//! format) and by the log line a stopping server writes. One instance per process, in
//! [`crate::session::Shared`], for both front ends.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The two ways in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Front {
    /// The Connect5 line protocol (TCP sessions and stdio).
    Line,
    Http,
}

impl Front {
    const ALL: [Front; 2] = [Front::Line, Front::Http];

    fn label(self) -> &'static str {
        match self {
            Front::Line => "line",
            Front::Http => "http",
        }
    }
}

/// How a move request was answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// By a search.
    Searched,
    /// By a move no search can improve on, without a search.
    Certain,
    /// By the instant move: no slot in time, an overrun or failed search, a stop.
    Instant,
    /// By an error (the request or its position was wrong).
    Error,
}

impl Outcome {
    const ALL: [Outcome; 4] = [
        Outcome::Searched,
        Outcome::Certain,
        Outcome::Instant,
        Outcome::Error,
    ];

    fn label(self) -> &'static str {
        match self {
            Outcome::Searched => "searched",
            Outcome::Certain => "certain",
            Outcome::Instant => "instant",
            Outcome::Error => "error",
        }
    }
}

/// Upper bounds (seconds) of the reply-time histogram's buckets: from a certain move's
/// microseconds to the longest budget's minute.
const BUCKETS: [f64; 14] = [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

#[derive(Debug, Default)]
struct Histogram {
    /// Per bucket, not cumulative (made cumulative when written).
    counts: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_us: AtomicU64,
}

impl Histogram {
    fn observe(&self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        if let Some(bucket) = BUCKETS.iter().position(|&bound| seconds <= bound) {
            self.counts[bucket].fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_us
            .fetch_add(elapsed.as_micros() as u64, Ordering::Relaxed);
    }
}

/// The counters of one process.
#[derive(Debug, Default)]
pub struct Metrics {
    /// Move requests answered, per front end and outcome.
    replies: [[AtomicU64; 4]; 2],
    /// Replies written after their budget, per front end.
    late: [AtomicU64; 2],
    reply_time: [Histogram; 2],
    slowest_us: AtomicU64,
    /// Connections open, per front end (shared with the guards that count them).
    connections: Arc<[AtomicUsize; 2]>,
    /// Connections refused at once (a connection limit reached), per front end.
    refused: [AtomicU64; 2],
    /// HTTP responses per (route, status).
    http_responses: Mutex<BTreeMap<(String, u16), u64>>,
}

fn index(front: Front) -> usize {
    front as usize
}

impl Metrics {
    /// A move request answered `elapsed` after it arrived, `late` if after its budget.
    pub fn reply(&self, front: Front, outcome: Outcome, elapsed: Duration, late: bool) {
        let f = index(front);
        self.replies[f][outcome as usize].fetch_add(1, Ordering::Relaxed);
        if late {
            self.late[f].fetch_add(1, Ordering::Relaxed);
        }
        self.reply_time[f].observe(elapsed);
        self.slowest_us
            .fetch_max(elapsed.as_micros() as u64, Ordering::Relaxed);
    }

    pub fn http_response(&self, route: String, status: u16) {
        let mut responses = self
            .http_responses
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        *responses.entry((route, status)).or_insert(0) += 1;
    }

    /// Counts a connection open until the returned guard is dropped.
    pub fn connection(&self, front: Front) -> OpenConnection {
        self.connections[index(front)].fetch_add(1, Ordering::Relaxed);
        OpenConnection {
            counters: Arc::clone(&self.connections),
            front,
        }
    }

    /// A connection refused for a limit (the whole server's or one address's).
    pub fn refused(&self, front: Front) {
        self.refused[index(front)].fetch_add(1, Ordering::Relaxed);
    }

    /// Late replies of both front ends.
    pub fn late_replies(&self) -> u64 {
        self.late.iter().map(|n| n.load(Ordering::Relaxed)).sum()
    }

    /// The Prometheus text exposition of every metric; `searches` are the pool's gauges read by
    /// the caller (running, waiting for a slot, slots).
    pub fn render(&self, searches: SearchGauges) -> String {
        let mut out = String::new();
        let load = |n: &AtomicU64| n.load(Ordering::Relaxed);
        header(
            &mut out,
            "connect5_replies_total",
            "counter",
            "Move requests answered, by front end and how.",
        );
        for front in Front::ALL {
            for outcome in Outcome::ALL {
                let n = load(&self.replies[index(front)][outcome as usize]);
                let _ = writeln!(
                    out,
                    "connect5_replies_total{{front=\"{}\",outcome=\"{}\"}} {n}",
                    front.label(),
                    outcome.label()
                );
            }
        }
        per_front(
            &mut out,
            ("connect5_late_replies_total", "counter"),
            "Replies written after their request's budget.",
            |front| load(&self.late[index(front)]),
        );
        header(
            &mut out,
            "connect5_reply_seconds",
            "histogram",
            "Time from a move request's arrival to its reply.",
        );
        for front in Front::ALL {
            let histogram = &self.reply_time[index(front)];
            let mut cumulative = 0;
            for (bound, count) in BUCKETS.iter().zip(&histogram.counts) {
                cumulative += load(count);
                let _ = writeln!(
                    out,
                    "connect5_reply_seconds_bucket{{front=\"{}\",le=\"{bound}\"}} {cumulative}",
                    front.label()
                );
            }
            let count = load(&histogram.count);
            let _ = writeln!(
                out,
                "connect5_reply_seconds_bucket{{front=\"{0}\",le=\"+Inf\"}} {count}\n\
                 connect5_reply_seconds_sum{{front=\"{0}\"}} {1}\n\
                 connect5_reply_seconds_count{{front=\"{0}\"}} {count}",
                front.label(),
                load(&histogram.sum_us) as f64 / 1e6
            );
        }
        header(
            &mut out,
            "connect5_http_responses_total",
            "counter",
            "HTTP responses, by route and status.",
        );
        let responses = self
            .http_responses
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        for ((route, status), n) in responses {
            let _ = writeln!(
                out,
                "connect5_http_responses_total{{route=\"{route}\",status=\"{status}\"}} {n}"
            );
        }
        per_front(
            &mut out,
            ("connect5_connections", "gauge"),
            "Connections open, by front end.",
            |front| self.connections[index(front)].load(Ordering::Relaxed) as u64,
        );
        per_front(
            &mut out,
            ("connect5_connections_refused_total", "counter"),
            "Connections refused for a connection limit.",
            |front| load(&self.refused[index(front)]),
        );
        let _ = write!(
            out,
            "# HELP connect5_searches_running Searches holding a search slot.\n\
             # TYPE connect5_searches_running gauge\n\
             connect5_searches_running {}\n\
             # HELP connect5_searches_waiting Move requests waiting for a search slot.\n\
             # TYPE connect5_searches_waiting gauge\n\
             connect5_searches_waiting {}\n\
             # HELP connect5_search_slots Searches that may run at once.\n\
             # TYPE connect5_search_slots gauge\n\
             connect5_search_slots {}\n",
            searches.running, searches.waiting, searches.slots
        );
        out
    }
}

/// A metric's `# HELP` and `# TYPE` lines.
fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// A metric with one sample per front end: `(name, kind)`, its help, and each front's value.
fn per_front(
    out: &mut String,
    (name, kind): (&str, &str),
    help: &str,
    value: impl Fn(Front) -> u64,
) {
    header(out, name, kind, help);
    for front in Front::ALL {
        let _ = writeln!(
            out,
            "{name}{{front=\"{}\"}} {}",
            front.label(),
            value(front)
        );
    }
}

/// The search pool's state when the metrics are read.
#[derive(Clone, Copy, Debug)]
pub struct SearchGauges {
    pub running: usize,
    pub waiting: usize,
    pub slots: usize,
}

/// One connection counted in [`Metrics`]; uncounted when dropped.
pub struct OpenConnection {
    counters: Arc<[AtomicUsize; 2]>,
    front: Front,
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.counters[index(self.front)].fetch_sub(1, Ordering::Relaxed);
    }
}

impl std::fmt::Display for Metrics {
    /// The line a stopping server logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let replies: u64 = self
            .replies
            .iter()
            .flatten()
            .map(|n| n.load(Ordering::Relaxed))
            .sum();
        write!(
            f,
            "{replies} replies, {} after their budget, the slowest {:.1} ms after its request",
            self.late_replies(),
            self.slowest_us.load(Ordering::Relaxed) as f64 / 1000.0
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exposition_counts_replies_and_fills_the_histogram_cumulatively() {
        let metrics = Metrics::default();
        metrics.reply(
            Front::Http,
            Outcome::Searched,
            Duration::from_millis(80),
            false,
        );
        metrics.reply(
            Front::Http,
            Outcome::Instant,
            Duration::from_millis(300),
            true,
        );
        metrics.http_response("/v1/move".to_string(), 200);
        let open = metrics.connection(Front::Line);
        metrics.refused(Front::Http);
        let text = metrics.render(SearchGauges {
            running: 1,
            waiting: 2,
            slots: 4,
        });
        for expected in [
            "connect5_replies_total{front=\"http\",outcome=\"searched\"} 1",
            "connect5_replies_total{front=\"line\",outcome=\"searched\"} 0",
            "connect5_late_replies_total{front=\"http\"} 1",
            "connect5_reply_seconds_bucket{front=\"http\",le=\"0.05\"} 0",
            "connect5_reply_seconds_bucket{front=\"http\",le=\"0.1\"} 1",
            "connect5_reply_seconds_bucket{front=\"http\",le=\"0.5\"} 2",
            "connect5_reply_seconds_count{front=\"http\"} 2",
            "connect5_http_responses_total{route=\"/v1/move\",status=\"200\"} 1",
            "connect5_connections{front=\"line\"} 1",
            "connect5_connections_refused_total{front=\"http\"} 1",
            "connect5_searches_waiting 2",
        ] {
            assert!(text.contains(expected), "missing {expected:?} in\n{text}");
        }
        drop(open);
        assert!(metrics
            .render(SearchGauges {
                running: 0,
                waiting: 0,
                slots: 4
            })
            .contains("connect5_connections{front=\"line\"} 0"));
        assert_eq!(
            metrics.to_string(),
            "2 replies, 1 after their budget, the slowest 300.0 ms after its request"
        );
    }
}
