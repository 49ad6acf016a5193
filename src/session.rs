//! One protocol session over any byte stream: banner, READY, then decode, think, reply until the
//! session ends. Stdio mode and every TCP connection run this same code.

use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::board::Move;
use crate::engine::{self, Deadline, Decision, EngineConfig, NoMove, ProgressSink};
use crate::metrics::{Front, Metrics, Outcome, SearchGauges};
use crate::pool::{SearchFailure, SearchJob, SearchOutcome, SearchPool, Slot};
use crate::protocol::{Decoder, Event, Input, Request, MAX_LINE_BYTES};

/// What a session says and how it plays; the same for every session of a process.
#[derive(Clone, Debug)]
pub struct SessionConfig {
    /// Identification lines printed before the ready word.
    pub banners: Vec<String>,
    /// `READY` (the 2020 course referee waits for `PRET`).
    pub ready_word: String,
    pub engine: EngineConfig,
    /// Play under the freestyle rule (five or more wins) instead of exact five.
    pub overline_wins: bool,
    /// Longer budgets are clipped to this: no request holds a search slot for hours.
    pub max_budget: Duration,
    /// A session that sends nothing for this long after its last reply is closed (`None`: never,
    /// as for stdio, where the referee owns the process).
    pub idle_timeout: Option<Duration>,
    /// A request whose first byte has arrived must arrive in full within this (`None`: no limit).
    pub request_timeout: Option<Duration>,
    /// When the process is told to stop, how long a request partly read may take to arrive in
    /// full, and how long a request being answered may still search before the instant move is
    /// sent instead.
    pub stop_grace: Duration,
}

/// The budget a request may have unless the operator says otherwise.
pub const DEFAULT_MAX_BUDGET: Duration = Duration::from_secs(60);

/// The stop grace unless the operator (or a test) says otherwise.
pub const DEFAULT_STOP_GRACE: Duration = Duration::from_secs(3);

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            banners: vec![crate::protocol::default_banner()],
            ready_word: crate::protocol::READY_WORD.to_string(),
            engine: EngineConfig::default(),
            overline_wins: false,
            max_budget: DEFAULT_MAX_BUDGET,
            idle_timeout: None,
            request_timeout: None,
            stop_grace: DEFAULT_STOP_GRACE,
        }
    }
}

/// What every session of a process shares.
#[derive(Debug)]
pub struct Shared {
    pub config: SessionConfig,
    /// Where the searches run. Requests beyond its slots wait their turn and are given a fair
    /// share of what is left of their budget.
    pub pool: Arc<SearchPool>,
    /// Requests being answered right now (searching or waiting for a slot).
    requests_in_flight: AtomicUsize,
    /// The server's own record of its replies (from each request's last line to its reply) and
    /// connections, for `GET /metrics` and the log.
    pub metrics: Metrics,
}

impl Shared {
    pub fn new(config: SessionConfig, hash_pool_bytes: usize) -> Arc<Shared> {
        Shared::with_pool(config, SearchPool::new(hash_pool_bytes))
    }

    /// As [`Shared::new`], with `slot_count` searches at once instead of two per core (replicas
    /// sharing a machine's cores). Tests give it 0: every request that needs a search then waits
    /// for one in vain and gets the watchdog's instant move, whatever the machine.
    pub fn with_search_slots(
        config: SessionConfig,
        hash_pool_bytes: usize,
        slot_count: usize,
    ) -> Arc<Shared> {
        Shared::with_pool(config, SearchPool::with_slots(hash_pool_bytes, slot_count))
    }

    fn with_pool(config: SessionConfig, pool: SearchPool) -> Arc<Shared> {
        Arc::new(Shared {
            config,
            pool: Arc::new(pool),
            requests_in_flight: AtomicUsize::new(0),
            metrics: Metrics::default(),
        })
    }

    /// The search pool's gauges for the metrics.
    pub fn search_gauges(&self) -> SearchGauges {
        let running = self.pool.searches_running();
        SearchGauges {
            running,
            waiting: self
                .requests_in_flight
                .load(Ordering::Acquire)
                .saturating_sub(running),
            slots: self.pool.slot_count(),
        }
    }

    /// Clips a request's budget to the server's maximum: no request holds a slot for hours.
    pub fn clip_budget(&self, request: &mut Request) {
        let max_budget = self.config.max_budget;
        if request.budget > max_budget {
            tracing::info!(
                asked = ?request.budget,
                allowed = ?max_budget,
                "budget clipped to the server's maximum"
            );
            request.budget = max_budget;
        }
    }
}

/// Counts a request in flight for as long as it lives.
struct InFlight<'a>(&'a AtomicUsize);

impl<'a> InFlight<'a> {
    fn enter(counter: &'a AtomicUsize) -> InFlight<'a> {
        counter.fetch_add(1, Ordering::AcqRel);
        InFlight(counter)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// How a session ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionEnd {
    /// The client sent `0`.
    Ended,
    /// The client closed its side.
    EndOfInput,
    /// The client sent `shutdown`.
    Shutdown,
    /// The process is stopping (a shutdown elsewhere, or a signal).
    Stopped,
    /// The client was idle, or too slow to send a request, for longer than allowed.
    TimedOut,
}

enum LineRead {
    /// The first bytes of a line arrived (said once a line, before the line itself).
    Started,
    Line,
    TooLong,
    Eof,
}

/// Splits a byte stream into lines, never holding more than [`MAX_LINE_BYTES`] of one: the rest of
/// a longer line is read and thrown away. Cancel-safe: a partly read line stays here if the read
/// is abandoned (for a stop) and resumed.
#[derive(Default)]
struct LineReader {
    buf: Vec<u8>,
    too_long: bool,
    /// The last line returned is still in `buf`; clear it before reading on.
    taken: bool,
    /// `Started` was said for the line being read.
    announced: bool,
}

impl LineReader {
    /// Whether part of a line has been read (and not yet returned).
    fn holds_part_of_a_line(&self) -> bool {
        !self.taken && (self.announced || !self.buf.is_empty())
    }

    async fn read<R: AsyncBufRead + Unpin>(&mut self, reader: &mut R) -> io::Result<LineRead> {
        if std::mem::take(&mut self.taken) {
            self.buf.clear();
            self.too_long = false;
            self.announced = false;
        }
        loop {
            let available = reader.fill_buf().await?;
            if available.is_empty() {
                self.taken = true;
                return Ok(if self.too_long {
                    LineRead::TooLong
                } else if self.buf.is_empty() {
                    LineRead::Eof
                } else {
                    LineRead::Line
                });
            }
            let (chunk, used, done) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (&available[..i], i + 1, true),
                None => (available, available.len(), false),
            };
            if !self.too_long {
                if self.buf.len() + chunk.len() > MAX_LINE_BYTES {
                    self.too_long = true;
                    self.buf.clear();
                } else {
                    self.buf.extend_from_slice(chunk);
                }
            }
            reader.consume(used);
            if done {
                self.taken = true;
                return Ok(if self.too_long {
                    LineRead::TooLong
                } else {
                    LineRead::Line
                });
            }
            if !self.announced && used > 0 {
                self.announced = true;
                return Ok(LineRead::Started);
            }
        }
    }

    /// The line just read, as text (invalid UTF-8 replaced, a byte-order mark dropped).
    fn text(&self) -> String {
        let text = String::from_utf8_lossy(&self.buf);
        text.strip_prefix('\u{feff}').unwrap_or(&text).to_string()
    }
}

/// The session's output. A failed write does not end the session: the input decides when it
/// ends, so that a client that wrote `shutdown` and hung up before reading the banner still stops
/// the server. After the first failure nothing more is written.
struct Replies<W> {
    writer: W,
    broken: bool,
}

impl<W: AsyncWrite + Unpin> Replies<W> {
    async fn line(&mut self, line: &str) {
        if self.broken {
            return;
        }
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        let written = async {
            self.writer.write_all(&bytes).await?;
            self.writer.flush().await
        };
        if let Err(error) = written.await {
            tracing::debug!(%error, "the peer no longer reads: replies are dropped");
            self.broken = true;
        }
    }
}

/// Whether a session's `shutdown` stops the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownRight {
    Granted,
    /// Refused: the client is not on this machine and the server does not take remote shutdowns.
    NotLoopback,
    /// Refused: the server takes no `shutdown` from any client (replicas behind a load balancer,
    /// which only their orchestrator stops).
    Disabled,
}

impl ShutdownRight {
    /// The refusal's error line, if refused.
    fn refusal(self) -> Option<&'static str> {
        match self {
            ShutdownRight::Granted => None,
            ShutdownRight::NotLoopback => Some(
                "ERROR shutdown refused: only a client on this machine (loopback) may stop the \
                 server, unless it runs with --remote-shutdown",
            ),
            ShutdownRight::Disabled => Some(
                "ERROR shutdown refused: this server runs with --no-shutdown-command; it stops \
                 on a signal only",
            ),
        }
    }
}

/// Runs one session to its end. `stop` ends it between requests (never in the middle of
/// answering one). `shutdown`: whether this client's `shutdown` stops the process (else it is
/// refused with an error line and the session goes on).
pub async fn run<R, W>(
    reader: R,
    writer: W,
    shared: Arc<Shared>,
    stop: CancellationToken,
    shutdown: ShutdownRight,
) -> io::Result<SessionEnd>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut session = Handler {
        decoder: Decoder::new(shared.config.overline_wins),
        reader,
        out: Replies {
            writer,
            broken: false,
        },
        shared,
        stop,
        shutdown,
        lines: LineReader::default(),
        grace_end: None,
        last_reply: tokio::time::Instant::now(),
        request_started: None,
    };
    for banner in &session.shared.config.banners {
        session.out.line(banner).await;
    }
    session.out.line(&session.shared.config.ready_word).await;
    session.last_reply = tokio::time::Instant::now();
    loop {
        let Some(read) = session.next_read().await? else {
            continue;
        };
        // The deadline runs from the moment the request's last line has been read.
        let received = Instant::now();
        if let Some(end) = session.take(read, received).await {
            return Ok(end);
        }
    }
}

/// Whether input has arrived that the session has not read yet (polled once, without waiting).
async fn input_waiting<R: AsyncBufRead + Unpin>(reader: &mut R) -> bool {
    matches!(
        tokio::time::timeout(Duration::ZERO, reader.fill_buf()).await,
        Ok(Ok(buffer)) if !buffer.is_empty()
    )
}

/// One session's state between reads (as mini-redis's `Handler`).
struct Handler<R, W> {
    reader: R,
    out: Replies<W>,
    shared: Arc<Shared>,
    stop: CancellationToken,
    shutdown: ShutdownRight,
    decoder: Decoder,
    lines: LineReader,
    /// When a request partly read at a stop must have arrived.
    grace_end: Option<tokio::time::Instant>,
    /// The idle clock runs from the last reply; the request clock from a request's first byte.
    last_reply: tokio::time::Instant,
    request_started: Option<tokio::time::Instant>,
}

impl<R, W> Handler<R, W>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    /// The next read of the input (`Ok(Some(Ok(_)))`), the end the session comes to instead (a
    /// stop, a time-out: `Ok(Some(Err(_)))`), or `Ok(None)` to wait again (a stop began a grace
    /// period for the request being read).
    async fn next_read(&mut self) -> io::Result<Option<Result<LineRead, SessionEnd>>> {
        let config = &self.shared.config;
        let timeout = match self.request_started {
            Some(started) => config
                .request_timeout
                .map(|limit| (started + limit, Timeout::Request(limit))),
            None => config
                .idle_timeout
                .map(|limit| (self.last_reply + limit, Timeout::Idle(limit))),
        };
        let in_request = self.decoder.in_request();
        let read = tokio::select! {
            biased;
            // Between requests the stop ends the session at once; a request partly read, or
            // already waiting to be read when the stop came, gets a grace period to arrive in full
            // and be answered (once: a client streaming requests does not keep the process up).
            _ = self.stop.cancelled(), if !in_request || self.grace_end.is_none() => {
                let waiting = in_request
                    || self.lines.holds_part_of_a_line()
                    || input_waiting(&mut self.reader).await;
                if self.grace_end.is_some() || !waiting {
                    return Ok(Some(Err(SessionEnd::Stopped)));
                }
                self.grace_end = Some(tokio::time::Instant::now() + config.stop_grace);
                return Ok(None);
            }
            _ = tokio::time::sleep_until(self.grace_end.unwrap_or_else(tokio::time::Instant::now)),
                if self.grace_end.is_some() => {
                tracing::info!("stopping: a partly read request did not arrive in time");
                return Ok(Some(Err(SessionEnd::Stopped)));
            }
            _ = tokio::time::sleep_until(timeout.map_or_else(tokio::time::Instant::now, |t| t.0)),
                if timeout.is_some() => {
                if let Some((_, why)) = timeout {
                    tracing::info!("closing the session: {why}");
                    self.out.line(&format!("ERROR {why}; closing the connection")).await;
                }
                return Ok(Some(Err(SessionEnd::TimedOut)));
            }
            read = self.lines.read(&mut self.reader) => read?,
        };
        Ok(Some(Ok(read)))
    }

    /// Feeds what was read to the decoder and answers what it makes of it; `Some` when the
    /// session ends.
    async fn take(
        &mut self,
        read: Result<LineRead, SessionEnd>,
        received: Instant,
    ) -> Option<SessionEnd> {
        let event = match read {
            Err(end) => return Some(end),
            Ok(LineRead::Started) => {
                self.request_started
                    .get_or_insert_with(tokio::time::Instant::now);
                return None;
            }
            Ok(LineRead::Eof) => {
                if let Some(Event::Error(error)) = self.decoder.finish() {
                    self.out.line(&format!("ERROR {error}")).await;
                }
                return Some(SessionEnd::EndOfInput);
            }
            Ok(LineRead::TooLong) => self.decoder.feed(Input::TooLong),
            Ok(LineRead::Line) => self.decoder.feed(Input::Line(&self.lines.text())),
        };
        if self.decoder.in_request() {
            self.request_started
                .get_or_insert_with(tokio::time::Instant::now);
        } else {
            self.request_started = None;
        }
        match event? {
            Event::End => Some(SessionEnd::Ended),
            Event::Shutdown => match self.shutdown.refusal() {
                None => Some(SessionEnd::Shutdown),
                Some(refusal) => {
                    tracing::warn!(right = ?self.shutdown, "shutdown refused");
                    self.reply(refusal).await;
                    None
                }
            },
            Event::Error(error) => {
                tracing::info!(%error, "bad request");
                self.reply(&format!("ERROR {error}")).await;
                None
            }
            Event::Request(request) => {
                self.answer_request(request, received).await;
                None
            }
        }
    }

    async fn reply(&mut self, line: &str) {
        self.out.line(line).await;
        self.last_reply = tokio::time::Instant::now();
    }

    /// Answers a request within its budget (clipped to the server's maximum) and records how long
    /// the reply took.
    async fn answer_request(&mut self, mut request: Request, received: Instant) {
        self.shared.clip_budget(&mut request);
        let budget = request.budget;
        let answered = answer(
            request,
            received,
            &self.shared,
            &self.stop,
            client_gone(&mut self.reader),
            None,
        )
        .await;
        self.reply(&answered.line()).await;
        let elapsed = received.elapsed();
        self.shared
            .metrics
            .reply(Front::Line, answered.outcome(), elapsed, elapsed > budget);
        // Below the watchdog's floor a reply cannot be on time; that is no news.
        if elapsed > budget.max(WATCHDOG_FLOOR) {
            tracing::warn!(?elapsed, ?budget, "reply written after its budget");
        } else {
            tracing::trace!(?elapsed, ?budget, "reply written");
        }
    }
}

/// Why a session is closed for its client's silence.
#[derive(Clone, Copy, Debug)]
enum Timeout {
    /// No request since the last reply.
    Idle(Duration),
    /// A request started and did not arrive in full.
    Request(Duration),
}

impl std::fmt::Display for Timeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Timeout::Idle(limit) => write!(f, "idle: no request for {} s", limit.as_secs()),
            Timeout::Request(limit) => write!(
                f,
                "timeout: a request did not arrive in full within {} s",
                limit.as_secs()
            ),
        }
    }
}

/// Resolves when the client has closed its side (end of input, a broken connection): the answer
/// it waits for will never be read, or not by anyone still asking. Bytes it sends meanwhile (a
/// next request) stay buffered for the session, and the watch ends there: that client is still
/// there.
async fn client_gone<R: AsyncBufRead + Unpin>(reader: &mut R) {
    match reader.fill_buf().await {
        Ok([]) | Err(_) => {}
        Ok(_) => std::future::pending().await,
    }
}

/// When the session stops waiting for a search that overruns its own deadline (a thread starved of
/// CPU on a crowded machine) and answers without it: shortly before the budget ends, but never
/// sooner than a search given no time at all needs to answer (the exact solution of a tiny board).
fn watchdog_delay(budget: Duration) -> Duration {
    budget
        .saturating_sub(Duration::from_millis(3) + budget / 20)
        .max(WATCHDOG_FLOOR)
}

/// The least time the watchdog gives a search.
const WATCHDOG_FLOOR: Duration = Duration::from_millis(10);

/// How a move request was answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A move no search can improve on (a win in one, the block of a five, the last cell).
    Certain(Move),
    /// The search's decision.
    Searched(Decision),
    /// The instant move: no search slot freed in time, the search overran, failed or was
    /// abandoned (the client left, the process stops).
    Instant(Move),
    /// The position has no move.
    NoMove(NoMove),
}

impl Answer {
    pub fn outcome(&self) -> Outcome {
        match self {
            Answer::Certain(_) => Outcome::Certain,
            Answer::Searched(_) => Outcome::Searched,
            Answer::Instant(_) => Outcome::Instant,
            Answer::NoMove(_) => Outcome::Error,
        }
    }

    /// The line protocol's reply: `row col`, or the error of a position with no move.
    pub fn line(&self) -> String {
        match self {
            Answer::Certain(mv) | Answer::Instant(mv) => mv.to_string(),
            Answer::Searched(decision) => decision.mv.to_string(),
            Answer::NoMove(no_move) => format!("ERROR {no_move}"),
        }
    }
}

/// Answers a request: a certain move at once; otherwise a search on a slot of the pool, with the
/// instant move (a win, a forced block, else the best-ordered move: microseconds) as the fallback.
/// Every front end's move requests come here (the line protocol's sessions, the HTTP API).
///
/// The search keeps its own deadline; this function keeps a second one, the watchdog. Should no
/// search slot free up in time, the search still be running when the budget is nearly spent, the
/// process be stopping or `client_gone` resolve, it answers the instant move and raises the
/// search's stop flag (the thread stops at its next clock check and frees its slot). Dropping
/// the future raises the flag too (an HTTP client that leaves).
pub async fn answer(
    request: Request,
    received: Instant,
    shared: &Arc<Shared>,
    stop: &CancellationToken,
    client_gone: impl Future<Output = ()>,
    progress: Option<ProgressSink>,
) -> Answer {
    // A certain answer (a win in one, the block of a five, the last cell) waits for no slot.
    match engine::certain_move(&request.board, request.rule) {
        Ok(Some(mv)) => return Answer::Certain(mv),
        Ok(None) => {}
        Err(no_move) => return Answer::NoMove(no_move),
    }
    let instant = match engine::instant_move(&request.board, request.rule) {
        Ok(mv) => mv,
        Err(no_move) => return Answer::NoMove(no_move),
    };
    let _in_flight = InFlight::enter(&shared.requests_in_flight);
    let watch = Watch {
        size: format!("{}x{}", request.board.rows(), request.board.cols()),
        instant,
        watchdog: tokio::time::Instant::from_std(received + watchdog_delay(request.budget)),
    };
    tokio::pin!(client_gone);
    // A stop lets the request's search go on for the grace period, not for the whole of a budget
    // that may be hours long.
    let stopping = async {
        stop.cancelled().await;
        tokio::time::sleep(shared.config.stop_grace).await;
    };
    tokio::pin!(stopping);
    let slot = tokio::select! {
        slot = tokio::time::timeout_at(watch.watchdog, shared.pool.slot()) => slot,
        _ = &mut stopping => return watch.fallback("stopping: answering the instant move"),
        _ = &mut client_gone => return watch.fallback("the client left: no search"),
    };
    let Ok(slot) = slot else {
        tracing::warn!(board = %watch.size, "no search slot in time; answering the instant move");
        return Answer::Instant(watch.instant);
    };
    let (searched, abandoned) = match start_search(request, received, shared, slot, progress) {
        Ok(started) => started,
        Err(failure) => {
            tracing::error!(%failure, "answering the instant move");
            return Answer::Instant(watch.instant);
        }
    };
    let searched = tokio::select! {
        searched = tokio::time::timeout_at(watch.watchdog, searched) => searched,
        _ = &mut stopping => {
            abandoned.raise(false);
            return watch.fallback("stopping: answering the instant move");
        }
        _ = &mut client_gone => {
            abandoned.raise(true);
            return watch.fallback("the client left: search stopped");
        }
    };
    let Ok(searched) = searched else {
        abandoned.raise(false);
        tracing::warn!(board = %watch.size, "search overran its deadline; answering the instant move");
        return Answer::Instant(watch.instant);
    };
    searched_answer(searched, &watch, received)
}

/// The answer to a request whose search answered: its decision, or the instant move when the
/// search failed (the client is still owed a legal move), or the position's lack of a move.
fn searched_answer(
    searched: Result<SearchOutcome, oneshot::error::RecvError>,
    watch: &Watch,
    received: Instant,
) -> Answer {
    match searched {
        Ok(Ok(decision)) => {
            tracing::debug!(
                board = %watch.size,
                mv = %decision.mv,
                score = decision.score,
                depth = decision.depth,
                nodes = decision.nodes,
                ms = received.elapsed().as_millis() as u64,
                "answered"
            );
            Answer::Searched(decision)
        }
        Ok(Err(SearchFailure::NoMove(no_move))) => Answer::NoMove(no_move),
        Ok(Err(failure)) => {
            tracing::error!(board = %watch.size, %failure, "answering the instant move");
            Answer::Instant(watch.instant)
        }
        Err(_) => {
            tracing::error!(board = %watch.size, "the search thread ended without an answer");
            Answer::Instant(watch.instant)
        }
    }
}

/// What a request falls back on while it waits for its search.
struct Watch {
    size: String,
    instant: Move,
    /// When the instant move is sent if the search has not answered.
    watchdog: tokio::time::Instant,
}

impl Watch {
    fn fallback(&self, why: &str) -> Answer {
        tracing::info!(board = %self.size, "{why}");
        Answer::Instant(self.instant)
    }
}

/// Starts the request's search on `slot`, with a fair share of what is left of its budget: the
/// requests still waiting will want the slots too.
fn start_search(
    request: Request,
    received: Instant,
    shared: &Arc<Shared>,
    slot: Slot,
    progress: Option<ProgressSink>,
) -> Result<(oneshot::Receiver<SearchOutcome>, Abandon), SearchFailure> {
    let now = Instant::now();
    let left = (received + request.budget).saturating_duration_since(now);
    let slots = shared.pool.slot_count();
    let waiting = shared.requests_in_flight.load(Ordering::Acquire);
    let share = left.mul_f64(slots as f64 / waiting.max(slots) as f64);
    let abandon = Abandon::default();
    let job = SearchJob {
        name: "search".to_string(),
        board: request.board,
        rule: request.rule,
        deadline: Deadline::for_budget(now, share, shared.pool.searches_running())
            .with_stop(Arc::clone(&abandon.flag)),
        config: EngineConfig {
            progress,
            ..shared.config.engine.clone()
        },
    };
    let (decision_tx, decision_rx) = oneshot::channel();
    let client_left_at = Arc::clone(&abandon.client_left_at);
    shared.pool.spawn(job, Some(slot), move |outcome| {
        let left = client_left_at.lock().map(|at| *at).unwrap_or(None);
        if let Some(left) = left {
            tracing::info!(
                stopped_ms = left.elapsed().as_secs_f64() * 1000.0,
                "an abandoned search stopped and freed its slot"
            );
        }
        let _ = decision_tx.send(outcome);
    })?;
    Ok((decision_rx, abandon))
}

/// The stop flag of a request's search, raised when its answer is no longer wanted.
#[derive(Default)]
struct Abandon {
    flag: Arc<AtomicBool>,
    /// When the client left, so the search can log how long it took to stop.
    client_left_at: Arc<std::sync::Mutex<Option<Instant>>>,
}

/// An answer no longer awaited (its future dropped) stops its search.
impl Drop for Abandon {
    fn drop(&mut self) {
        self.flag.store(true, Ordering::Relaxed);
    }
}

impl Abandon {
    fn raise(&self, client_left: bool) {
        if client_left {
            if let Ok(mut at) = self.client_left_at.lock() {
                *at = Some(Instant::now());
            }
        }
        self.flag.store(true, Ordering::Relaxed);
    }
}
