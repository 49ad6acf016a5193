//! The protocol session in-process: `connect5::session::run` over in-memory pipes
//! (`tokio::io::duplex`), the one generic session that stdio mode and every TCP connection run.
//! The whole error table lives here, once; `tests/stdio.rs` and `tests/server.rs` keep one
//! end-to-end smoke test per transport.
//!
//! Every test runs on tokio's paused clock (`start_paused`): the session's timers (idle and
//! request time-outs, the stop grace, the watchdog) fire as soon as nothing else can happen, so a
//! ten-minute idle time-out costs no wall time and elapsed times are exact. Searches run on OS
//! threads with the real clock, which the paused clock does not govern, so the tests avoid them:
//! they ask certain answers (no search), or give the session no search slot, except the one test
//! of a stop cutting a running search short, whose outcome does not depend on the search's speed.
//! Nothing here sleeps to synchronise: a test waits until the session has read every byte it was
//! sent (the input counts them), or for a line, or for the session's end.

mod common;

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader, DuplexStream, ReadBuf,
};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

use common::{board_with, good_request, legal_reply};
use connect5::board::{Board, Rule};
use connect5::session::{self, SessionConfig, SessionEnd, Shared};

/// How long (on the paused clock) a test waits for anything before it declares the session stuck.
/// When nothing else is pending the paused clock jumps straight here, so a stuck session fails the
/// test at once instead of hanging it; it is far beyond every time-out and budget under test.
const GUARD: Duration = Duration::from_secs(24 * 3600);

/// The session's input: counts the bytes the session has taken, so that a test can wait until
/// the session has read everything sent to it (before a stop, say) instead of sleeping.
struct CountedInput {
    inner: BufReader<DuplexStream>,
    consumed: watch::Sender<usize>,
}

impl AsyncRead for CountedInput {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        let read = buf.filled().len() - before;
        this.consumed.send_modify(|total| *total += read);
        polled
    }
}

impl AsyncBufRead for CountedInput {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        Pin::new(&mut self.get_mut().inner).poll_fill_buf(cx)
    }

    fn consume(self: Pin<&mut Self>, amount: usize) {
        let this = self.get_mut();
        Pin::new(&mut this.inner).consume(amount);
        this.consumed.send_modify(|total| *total += amount);
    }
}

/// What the next read of the session's output gave.
#[derive(Debug, PartialEq, Eq)]
enum Next {
    Line(String),
    Eof,
}

/// A client of one session that runs as a task of the test's runtime.
struct Client {
    input: Option<DuplexStream>,
    output: BufReader<DuplexStream>,
    sent: usize,
    consumed: watch::Receiver<usize>,
    stop: CancellationToken,
    session: JoinHandle<io::Result<SessionEnd>>,
}

/// A small table per search: the tests are about the session, not the search.
fn config() -> SessionConfig {
    let mut config = SessionConfig::default();
    config.engine.hash_bytes = 1 << 20;
    config
}

impl Client {
    /// A session of the process `shared`; `may_shutdown` as for a loopback client.
    fn start(shared: Arc<Shared>, may_shutdown: bool) -> Client {
        let (input, session_input) = tokio::io::duplex(64 << 10);
        let (session_output, output) = tokio::io::duplex(1 << 20);
        let (consumed_tx, consumed) = watch::channel(0);
        let reader = CountedInput {
            inner: BufReader::new(session_input),
            consumed: consumed_tx,
        };
        let stop = CancellationToken::new();
        let session = tokio::spawn(session::run(
            reader,
            session_output,
            shared,
            stop.clone(),
            if may_shutdown {
                session::ShutdownRight::Granted
            } else {
                session::ShutdownRight::NotLoopback
            },
        ));
        Client {
            input: Some(input),
            output: BufReader::new(output),
            sent: 0,
            consumed,
            stop,
            session,
        }
    }

    /// A session with `config` and as many search slots as the real process would have.
    fn with(config: SessionConfig) -> Client {
        Client::start(Shared::new(config, 64 << 20), true)
    }

    /// A session with `config` and `slots` search slots.
    fn with_slots(config: SessionConfig, slots: usize) -> Client {
        Client::start(Shared::with_search_slots(config, 64 << 20, slots), true)
    }

    /// A session that has printed its banner and READY.
    async fn ready(config: SessionConfig) -> Client {
        let mut client = Client::with(config);
        client.expect_ready().await;
        client
    }

    async fn send(&mut self, text: &str) {
        let input = self.input.as_mut().expect("the input is closed");
        input
            .write_all(text.as_bytes())
            .await
            .expect("the session's input");
        self.sent += text.len();
    }

    /// Waits until the session has read every byte sent so far.
    async fn read_all(&mut self) {
        let sent = self.sent;
        let read = tokio::time::timeout(GUARD, self.consumed.wait_for(|&n| n >= sent)).await;
        assert!(
            matches!(read, Ok(Ok(_))),
            "the session did not read all {sent} bytes sent to it"
        );
    }

    /// Ends the session's input, as a client closing its side.
    fn close_input(&mut self) {
        self.input = None;
    }

    async fn next(&mut self) -> Next {
        let mut line = String::new();
        match tokio::time::timeout(GUARD, self.output.read_line(&mut line)).await {
            Err(_) => panic!("the session wrote nothing and did not end"),
            Ok(Err(error)) => panic!("cannot read the session's output: {error}"),
            Ok(Ok(0)) => Next::Eof,
            Ok(Ok(_)) => {
                assert_eq!(line.pop(), Some('\n'), "a line without its end: {line:?}");
                Next::Line(line)
            }
        }
    }

    async fn line(&mut self) -> String {
        match self.next().await {
            Next::Line(line) => line,
            Next::Eof => panic!("expected a line, the session ended"),
        }
    }

    async fn expect_ready(&mut self) {
        assert_eq!(self.line().await, connect5::protocol::default_banner());
        assert_eq!(self.line().await, "READY");
    }

    async fn ask(&mut self, request: &str) -> String {
        self.send(request).await;
        self.line().await
    }

    /// How the session ended, once it has; it must write nothing more.
    async fn end(self) -> SessionEnd {
        // The input stays open until the session has ended: closing it would end the session
        // (end of input) and hide how it would have ended otherwise.
        let Client {
            mut output,
            session,
            input,
            ..
        } = self;
        let ended = tokio::time::timeout(GUARD, session).await;
        let end = match ended {
            Ok(Ok(Ok(end))) => end,
            other => panic!("the session did not end cleanly: {other:?}"),
        };
        let mut rest = String::new();
        output
            .read_line(&mut rest)
            .await
            .expect("the session's output");
        assert_eq!(rest, "", "the session wrote after its last line");
        drop(input);
        end
    }
}

// ---------------------------------------------------------------------------------------------
// Errors: every kind of protocol.md section 4, its exact line, and the session going on

/// One broken request and the exact line it must get.
struct BadRequest {
    what: &'static str,
    text: String,
    line: &'static str,
}

/// One broken request per error kind of the protocol, and a few variants of each. (The kind
/// `incomplete-request` ends the session and has a test of its own.)
fn bad_requests() -> Vec<BadRequest> {
    let long = |c: char| c.to_string().repeat(5000);
    let bad = |what, text: String, line| BadRequest { what, text, line };
    vec![
        bad(
            "words for dimensions",
            "three three\n000\n000\n000\n100\n".into(),
            "ERROR bad-dimensions: unparsable dimension line \"three three\": expected `L C` or \
             `L C K` (or `0` to end)",
        ),
        bad(
            "one number for dimensions",
            "3\n000\n000\n000\n100\n".into(),
            "ERROR bad-dimensions: unparsable dimension line \"3\": expected `L C` or `L C K` \
             (or `0` to end)",
        ),
        bad(
            "four numbers for dimensions",
            "3 3 3 3\n000\n000\n000\n100\n".into(),
            "ERROR bad-dimensions: unparsable dimension line \"3 3 3 3\": expected `L C` or \
             `L C K` (or `0` to end)",
        ),
        bad(
            "a negative column count",
            "3 -3\n000\n000\n000\n100\n".into(),
            "ERROR bad-dimensions: unparsable dimension line \"3 -3\": expected `L C` or \
             `L C K` (or `0` to end)",
        ),
        bad(
            "a long broken dimension line, shown cut",
            format!("{} 3\n000\n000\n000\n100\n", "x".repeat(60)),
            "ERROR bad-dimensions: unparsable dimension line \
             \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"…: expected `L C` or `L C K` (or `0` to \
             end)",
        ),
        bad(
            "too many rows",
            format!("129 3\n{}100\n", "000\n".repeat(129)),
            "ERROR dimensions-out-of-range: board 129x3 out of range: rows and columns must be \
             1 to 128",
        ),
        bad(
            "too many rows and columns",
            format!(
                "200 200\n{}100\n",
                format!("{}\n", "0".repeat(200)).repeat(3)
            ),
            "ERROR dimensions-out-of-range: board 200x200 out of range: rows and columns must \
             be 1 to 128",
        ),
        bad(
            "too many rows, written padded",
            format!("300 3\n{}100\n", "0 N 0\n\t0 0 0 \nB  0  0\n".repeat(3)),
            "ERROR dimensions-out-of-range: board 300x3 out of range: rows and columns must be \
             1 to 128",
        ),
        bad(
            "zero columns",
            "3 0\n\n\n\n100\n".into(),
            "ERROR dimensions-out-of-range: board 3x0 out of range: rows and columns must be 1 \
             to 128",
        ),
        bad(
            "K larger than the board",
            "3 3 4\n000\n000\n000\n100\n".into(),
            "ERROR k-out-of-range: K = 4 out of range: must be 1 to 3 on this board",
        ),
        bad(
            "K of zero",
            "3 3 0\n000\n000\n000\n100\n".into(),
            "ERROR k-out-of-range: K = 0 out of range: must be 1 to 3 on this board",
        ),
        bad(
            "a short row",
            "3 3\n00\n000\n000\n100\n".into(),
            "ERROR bad-row-length: row 0 has 2 cells, expected 3",
        ),
        bad(
            "a long row",
            "3 3\n000\n000\n0000\n100\n".into(),
            "ERROR bad-row-length: row 2 has 4 cells, expected 3",
        ),
        bad(
            "an unknown character",
            "3 3\n000\n0X0\n000\n100\n".into(),
            "ERROR unknown-character: unknown character 'X' at row 1 column 1: cells are 0, B \
             or N",
        ),
        bad(
            "an empty time line",
            "3 3\n000\n000\n000\n\n".into(),
            "ERROR missing-time: missing thinking time: expected the budget in ms after the rows",
        ),
        bad(
            "a word for the time",
            "3 3\n000\n000\n000\nsoon\n".into(),
            "ERROR bad-time: bad thinking time \"soon\": expected one non-negative number of \
             milliseconds",
        ),
        bad(
            "a negative time",
            "3 3\n000\n000\n000\n-5\n".into(),
            "ERROR bad-time: bad thinking time \"-5\": expected one non-negative number of \
             milliseconds",
        ),
        bad(
            "two numbers for the time",
            "3 3\n000\n000\n000\n100 200\n".into(),
            "ERROR bad-time: bad thinking time \"100 200\": expected one non-negative number of \
             milliseconds",
        ),
        bad(
            "two black stones, no white",
            "3 3\nNN0\n000\n000\n100\n".into(),
            "ERROR impossible-counts: impossible stone counts: 2 black (N) and 0 white (B); \
             black moves first, so black must have as many stones as white or one more",
        ),
        bad(
            "more white than black",
            "3 3\nBN0\nB00\n000\n100\n".into(),
            "ERROR impossible-counts: impossible stone counts: 1 black (N) and 2 white (B); \
             black moves first, so black must have as many stones as white or one more",
        ),
        bad(
            "black has three on 3x3",
            "3 3\nNNN\nBB0\n000\n100\n".into(),
            "ERROR game-over: game already won: black (N) has a winning line",
        ),
        bad(
            "white has five on 7x7",
            "7 7\n0000000\nNBNNN00\n0B00000\nNB0N000\n0B00000\n0B00000\n0000000\n100\n".into(),
            "ERROR game-over: game already won: white (B) has a winning line",
        ),
        bad(
            "a full drawn board",
            "3 3\nNBN\nNBB\nBNN\n100\n".into(),
            "ERROR board-full: board full: no empty cell to play",
        ),
        bad(
            "a dimension line of 5000 bytes",
            format!("{}\n000\n000\n000\n100\n", long('3')),
            "ERROR line-too-long: line too long: more than 4096 bytes",
        ),
        bad(
            "a row of 5000 bytes",
            format!("3 3\n000\n{}\n000\n100\n", long('0')),
            "ERROR line-too-long: line too long: more than 4096 bytes",
        ),
        bad(
            "a time line of 5000 bytes",
            format!("3 3\n000\n000\n000\n{}\n", long('1')),
            "ERROR line-too-long: line too long: more than 4096 bytes",
        ),
    ]
}

#[tokio::test(start_paused = true)]
async fn every_error_kind_gets_its_exact_line_and_the_session_goes_on() {
    let mut client = Client::ready(config()).await;
    for (index, bad) in bad_requests().iter().enumerate() {
        assert_eq!(client.ask(&bad.text).await, bad.line, "{}", bad.what);
        let (good, answer) = good_request(index);
        assert_eq!(
            client.ask(&good).await,
            answer.to_string(),
            "{}: the good request after it was not answered right",
            bad.what
        );
    }
    client.send("0\n").await;
    assert_eq!(client.end().await, SessionEnd::Ended);
}

#[tokio::test(start_paused = true)]
async fn end_of_input_inside_a_request_is_reported_and_ends_the_session() {
    for (text, line) in [
        (
            "3 3\n000\n",
            "ERROR incomplete-request: end of input inside a request (1 of 3 rows read, no time \
             line)",
        ),
        (
            "3 3\n000\n000\n000\n",
            "ERROR incomplete-request: end of input inside a request (3 of 3 rows read, no time \
             line)",
        ),
        // No newline after the last row: it still counts as read.
        (
            "2 2\n00\n00",
            "ERROR incomplete-request: end of input inside a request (2 of 2 rows read, no time \
             line)",
        ),
    ] {
        let mut client = Client::ready(config()).await;
        let (good, answer) = good_request(3);
        assert_eq!(client.ask(&good).await, answer.to_string());
        client.send(text).await;
        client.close_input();
        assert_eq!(client.line().await, line, "after {text:?}");
        assert_eq!(client.end().await, SessionEnd::EndOfInput, "after {text:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_refused_shutdown_gets_its_line_and_the_session_goes_on() {
    let mut client = Client::start(Shared::new(config(), 64 << 20), false);
    client.expect_ready().await;
    for word in ["shutdown", "  SHUTDOWN\r"] {
        assert_eq!(
            client.ask(&format!("{word}\n")).await,
            "ERROR shutdown refused: only a client on this machine (loopback) may stop the \
             server, unless it runs with --remote-shutdown"
        );
        let (good, answer) = good_request(5);
        assert_eq!(client.ask(&good).await, answer.to_string());
    }
    client.send("0\n").await;
    assert_eq!(client.end().await, SessionEnd::Ended);
}

#[tokio::test(start_paused = true)]
async fn how_a_session_ends() {
    for (text, end) in [
        ("0\n", SessionEnd::Ended),
        ("0 0\n", SessionEnd::Ended),
        ("shutdown\n", SessionEnd::Shutdown),
        ("ShutDown\r\n", SessionEnd::Shutdown),
        // After a broken dimension line only a bare `0` ends the session.
        ("7 x\n0000000\n0\n", SessionEnd::Ended),
        ("300 3\n000\nshutdown\n", SessionEnd::Shutdown),
    ] {
        let mut client = Client::ready(config()).await;
        let (good, answer) = good_request(1);
        assert_eq!(client.ask(&good).await, answer.to_string());
        client.send(text).await;
        if text.starts_with("7 x") || text.starts_with("300") {
            assert!(client.line().await.starts_with("ERROR "), "{text:?}");
        }
        assert_eq!(client.end().await, end, "{text:?}");
    }
    let mut client = Client::ready(config()).await;
    client.close_input();
    assert_eq!(client.end().await, SessionEnd::EndOfInput);
}

/// Each request gets exactly one reply line, so a referee that reads one line per request stays
/// in step: every broken request and a good one after each written at once, replies read after.
#[tokio::test(start_paused = true)]
async fn pipelined_requests_get_one_reply_each_in_order() {
    let mut client = Client::ready(config()).await;
    let mut text = String::new();
    let mut expected = Vec::new();
    for (index, bad) in bad_requests().iter().enumerate() {
        text.push_str(&bad.text);
        expected.push(bad.line.to_string());
        let (good, answer) = good_request(index);
        text.push_str(&good);
        expected.push(answer.to_string());
    }
    text.push_str("0\n");
    client.send(&text).await;
    for want in expected {
        assert_eq!(client.line().await, want);
    }
    assert_eq!(client.end().await, SessionEnd::Ended);
}

// ---------------------------------------------------------------------------------------------
// Silent clients: the idle and request time-outs

fn timeouts(idle: u64, request: u64) -> SessionConfig {
    SessionConfig {
        idle_timeout: Some(Duration::from_secs(idle)),
        request_timeout: Some(Duration::from_secs(request)),
        ..config()
    }
}

#[tokio::test(start_paused = true)]
async fn a_silent_client_is_closed_exactly_when_the_idle_time_out_ends() {
    let start = Instant::now();
    let mut client = Client::ready(timeouts(600, 30)).await;
    assert_eq!(
        client.line().await,
        "ERROR idle: no request for 600 s; closing the connection"
    );
    assert_eq!(start.elapsed(), Duration::from_secs(600));
    assert_eq!(client.end().await, SessionEnd::TimedOut);
}

#[tokio::test(start_paused = true)]
async fn the_idle_clock_runs_from_the_last_reply() {
    let mut client = Client::ready(timeouts(600, 30)).await;
    // A referee that thinks for just under the limit between requests is never idle.
    for index in 0..3 {
        tokio::time::sleep(Duration::from_secs(599)).await;
        let (good, answer) = good_request(index);
        assert_eq!(client.ask(&good).await, answer.to_string());
    }
    let last_reply = Instant::now();
    assert_eq!(
        client.line().await,
        "ERROR idle: no request for 600 s; closing the connection"
    );
    assert_eq!(last_reply.elapsed(), Duration::from_secs(600));
    assert_eq!(client.end().await, SessionEnd::TimedOut);
}

/// A request may take its whole request time-out to arrive, even when that is longer than the
/// idle time-out: the idle clock does not run while a request arrives.
#[tokio::test(start_paused = true)]
async fn the_idle_clock_stops_while_a_request_arrives() {
    let mut client = Client::ready(timeouts(10, 30)).await;
    let (good, answer) = good_request(2);
    let lines: Vec<&str> = good.split_inclusive('\n').collect();
    // The request starts 9 s after READY and ends 20 s later, 29 s after READY.
    tokio::time::sleep(Duration::from_secs(9)).await;
    for (index, line) in lines.iter().enumerate() {
        if index > 0 {
            tokio::time::sleep(Duration::from_secs(5)).await;
        }
        client.send(line).await;
    }
    assert_eq!(client.line().await, answer.to_string());
    // And it starts again from the reply.
    let reply = Instant::now();
    assert_eq!(
        client.line().await,
        "ERROR idle: no request for 10 s; closing the connection"
    );
    assert_eq!(reply.elapsed(), Duration::from_secs(10));
}

#[tokio::test(start_paused = true)]
async fn a_request_not_in_full_within_the_request_time_out_is_closed_with_the_reason() {
    let timed_out = "ERROR timeout: a request did not arrive in full within 30 s; closing the \
                     connection";
    // Rows that stop coming; a line without its end; lines that come, each in time, but too
    // slowly for the whole request.
    let (good, _) = good_request(4);
    // The rows of a request 8 s apart: its time line would come 32 s after the first byte.
    let mut slow_lines: Vec<String> = good.split_inclusive('\n').map(str::to_string).collect();
    slow_lines.pop();
    for (what, pieces, gap) in [
        (
            "stalled rows",
            vec!["15 15\n000000000000000\n".to_string()],
            0,
        ),
        ("a line without its end", vec!["15".to_string()], 0),
        ("a slow request", slow_lines, 8),
    ] {
        let mut client = Client::ready(timeouts(600, 30)).await;
        let first_byte = Instant::now();
        for (index, piece) in pieces.iter().enumerate() {
            if index > 0 {
                tokio::time::sleep(Duration::from_secs(gap)).await;
            }
            client.send(piece).await;
        }
        assert_eq!(client.line().await, timed_out, "{what}");
        assert_eq!(
            first_byte.elapsed(),
            Duration::from_secs(30),
            "{what}: the request clock runs from the first byte"
        );
        assert_eq!(client.end().await, SessionEnd::TimedOut, "{what}");
    }
}

/// Stdio sessions have neither limit: the referee that spawned the player owns it.
#[tokio::test(start_paused = true)]
async fn without_time_outs_a_silent_session_stays_open() {
    let mut client = Client::ready(config()).await;
    tokio::time::sleep(Duration::from_secs(24 * 3600 - 1)).await;
    let (good, answer) = good_request(6);
    client.send(&good[..good.len() / 2]).await;
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert_eq!(
        client.ask(&good[good.len() / 2..]).await,
        answer.to_string()
    );
}

// ---------------------------------------------------------------------------------------------
// Stopping (a shutdown elsewhere, a signal) and the stop grace

fn grace(seconds: u64) -> SessionConfig {
    SessionConfig {
        stop_grace: Duration::from_secs(seconds),
        ..config()
    }
}

#[tokio::test(start_paused = true)]
async fn a_stop_between_requests_ends_the_session_at_once() {
    let mut client = Client::ready(config()).await;
    let (good, answer) = good_request(0);
    assert_eq!(client.ask(&good).await, answer.to_string());
    let stopped = Instant::now();
    client.stop.cancel();
    assert_eq!(client.next().await, Next::Eof);
    assert_eq!(stopped.elapsed(), Duration::ZERO);
    assert_eq!(client.end().await, SessionEnd::Stopped);
}

#[tokio::test(start_paused = true)]
async fn a_request_partly_read_at_a_stop_is_answered_if_it_arrives_within_the_grace() {
    let mut client = Client::ready(grace(3)).await;
    let (good, answer) = good_request(7);
    let (head, time_line) = good
        .trim_end()
        .rsplit_once('\n')
        .expect("a request has several lines");
    client.send(&format!("{head}\n")).await;
    client.read_all().await;
    client.stop.cancel();
    tokio::time::sleep(Duration::from_millis(2900)).await;
    assert_eq!(
        client.ask(&format!("{time_line}\n")).await,
        answer.to_string()
    );
    // Answered, the session ends: it reads no further request.
    assert_eq!(client.end().await, SessionEnd::Stopped);
}

/// The default grace, the one the binary runs with, is 3 s (protocol.md section 2).
#[tokio::test(start_paused = true)]
async fn a_request_stalled_at_a_stop_ends_the_session_when_the_grace_ends() {
    assert_eq!(SessionConfig::default().stop_grace, Duration::from_secs(3));
    let mut client = Client::ready(config()).await;
    let (good, answer) = good_request(0);
    client.send(&format!("{good}3 3\n000\n")).await;
    assert_eq!(client.line().await, answer.to_string());
    client.read_all().await;
    let stopped = Instant::now();
    client.stop.cancel();
    assert_eq!(client.next().await, Next::Eof);
    assert_eq!(stopped.elapsed(), Duration::from_secs(3));
    assert_eq!(client.end().await, SessionEnd::Stopped);
}

/// A 15×15 opening: no win, no forced block, not the last cell, so only a search answers it.
fn open_position() -> Board {
    board_with(15, 15, &[(7, 7), (8, 8)], &[(7, 8)])
}

fn instant_move(board: &Board) -> String {
    let rule = Rule::for_board(board.rows(), board.cols());
    connect5::engine::instant_move(board, rule)
        .expect("a position with moves")
        .to_string()
}

#[tokio::test(start_paused = true)]
async fn a_request_waiting_for_a_search_slot_at_a_stop_gets_its_instant_move_when_the_grace_ends() {
    let mut client = Client::with_slots(grace(2), 0);
    client.expect_ready().await;
    let board = open_position();
    client.send(&common::request(&board, 3_600_000)).await;
    client.read_all().await;
    let stopped = Instant::now();
    client.stop.cancel();
    assert_eq!(client.line().await, instant_move(&board));
    assert_eq!(stopped.elapsed(), Duration::from_secs(2));
    assert_eq!(client.end().await, SessionEnd::Stopped);
}

/// The one test with a real search: it runs on its own thread with the real clock for the 300 ms
/// the session allows, while the paused clock reaches the end of the 50 ms grace as soon as the
/// session waits (microseconds later), long before the search could answer or the watchdog (set
/// on the real clock) fire. Only a 300 ms stall of the test's thread could let the search answer
/// first, and that fails the test rather than passing it wrongly.
#[tokio::test(start_paused = true)]
async fn a_search_running_at_a_stop_is_cut_short_when_the_grace_ends() {
    let config = SessionConfig {
        max_budget: Duration::from_millis(300),
        stop_grace: Duration::from_millis(50),
        ..config()
    };
    let mut client = Client::with_slots(config, 1);
    client.expect_ready().await;
    let board = open_position();
    client.send(&common::request(&board, 3_600_000)).await;
    client.read_all().await;
    let stopped = Instant::now();
    client.stop.cancel();
    let reply = client.line().await;
    assert_eq!(stopped.elapsed(), Duration::from_millis(50));
    legal_reply(&board, &reply);
    assert_eq!(reply, instant_move(&board));
    assert_eq!(client.end().await, SessionEnd::Stopped);
}

// ---------------------------------------------------------------------------------------------
// The watchdog and the search slots

/// protocol.md section 5: the watchdog answers 3 ms + 5% before the budget ends.
#[tokio::test(start_paused = true)]
async fn with_no_search_slot_free_the_watchdog_answers_the_instant_move_within_the_budget() {
    let mut client = Client::with_slots(config(), 0);
    client.expect_ready().await;
    let board = open_position();
    let budget = Duration::from_secs(60);
    let sent = Instant::now();
    let reply = client
        .ask(&common::request(&board, budget.as_millis() as u64))
        .await;
    let elapsed = sent.elapsed();
    assert_eq!(reply, instant_move(&board));
    // The watchdog's deadline is set on the real clock when the request is read, a little after
    // the paused clock stopped: hence a range, not an exact figure.
    let watchdog = budget - Duration::from_millis(3) - budget / 20;
    assert!(
        elapsed >= watchdog && elapsed < budget,
        "answered after {elapsed:?}, watchdog at {watchdog:?}, budget {budget:?}"
    );
    // The session goes on.
    let (good, answer) = good_request(8);
    assert_eq!(client.ask(&good).await, answer.to_string());
}

#[tokio::test(start_paused = true)]
async fn a_certain_answer_does_not_wait_for_a_search_slot() {
    let mut client = Client::with_slots(config(), 0);
    client.expect_ready().await;
    // Black to move with a four on row 0: the win in one.
    let win = board_with(
        20,
        20,
        &[(0, 0), (0, 1), (0, 2), (0, 3)],
        &[(5, 5), (6, 6), (7, 7), (9, 9)],
    );
    // White to move, with no four of its own: the block of that four.
    let block = board_with(
        20,
        20,
        &[(0, 0), (0, 1), (0, 2), (0, 3), (10, 10)],
        &[(5, 5), (6, 9), (12, 3), (15, 15)],
    );
    for (board, answer) in [(win, "0 4"), (block, "0 4")] {
        let sent = Instant::now();
        assert_eq!(client.ask(&common::request(&board, 20_000)).await, answer);
        assert_eq!(sent.elapsed(), Duration::ZERO);
    }
}

/// A client that leaves while its request waits for a slot gets the instant move at once (it may
/// have closed only its sending side) and frees the session.
#[tokio::test(start_paused = true)]
async fn a_client_that_leaves_while_waiting_for_a_slot_gets_the_instant_move_at_once() {
    let mut client = Client::with_slots(config(), 0);
    client.expect_ready().await;
    let board = open_position();
    client.send(&common::request(&board, 3_600_000)).await;
    let closed = Instant::now();
    client.close_input();
    assert_eq!(client.line().await, instant_move(&board));
    assert_eq!(closed.elapsed(), Duration::ZERO);
    assert_eq!(client.end().await, SessionEnd::EndOfInput);
}
