//! Helpers shared by the end-to-end tests: the real `connect5` binary as a child process, line
//! clients over its stdio and over TCP, a server started on a free port, and board builders.
//!
//! Every read has a time limit, so a broken player fails the test with a message instead of
//! hanging it; the limits are failure guards, never a way to wait for something to happen.

// Each test file compiles its own copy of this module and uses only part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use connect5::board::{Board, Move, Rule, Stone};
use serde_json::Value;

/// How long a test waits for a line before it declares the player broken. Generous: the machine
/// the suite runs on may be busy with other builds.
pub const LINE_TIMEOUT: Duration = Duration::from_secs(30);

pub fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_connect5")
}

/// What the next read from a player gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// A line, without its `\n`.
    Line(String),
    /// The player closed its output.
    Eof,
    TimedOut,
}

/// A line-oriented connection to a protocol player (a stdio child or a TCP session).
pub trait Player {
    /// Writes `text` as is (it carries its own line endings) and flushes it.
    fn send(&mut self, text: &str);
    fn send_bytes(&mut self, bytes: &[u8]);
    fn next_within(&mut self, timeout: Duration) -> Next;
    /// What the player logged so far, for failure messages.
    fn diagnostics(&self) -> String;

    fn next(&mut self) -> Next {
        self.next_within(LINE_TIMEOUT)
    }

    /// The next line; fails the test on end of output or time-out.
    #[track_caller]
    fn line(&mut self) -> String {
        match self.next() {
            Next::Line(line) => line,
            other => panic!(
                "expected a line from the player, got {other:?}\n--- player log ---\n{}",
                self.diagnostics()
            ),
        }
    }

    /// Reads the banner lines and the ready word; returns the banner lines.
    #[track_caller]
    fn expect_ready(&mut self, ready_word: &str) -> Vec<String> {
        let mut banners = Vec::new();
        loop {
            let line = self.line();
            if line == ready_word {
                return banners;
            }
            assert!(
                banners.len() < 16,
                "no {ready_word} after 16 lines: {banners:?}"
            );
            banners.push(line);
        }
    }

    /// Sends a request and returns the reply line and the time from writing the request's last
    /// line to reading the reply.
    #[track_caller]
    fn ask(&mut self, request: &str) -> (String, Duration) {
        self.send(request);
        // As a referee measures: from the request written to the reply read.
        let sent = Instant::now();
        let line = self.line();
        (line, sent.elapsed())
    }

    /// Asks for a move in `board` and checks the reply is a legal move there.
    #[track_caller]
    fn play(&mut self, board: &Board, rule: Rule, budget_ms: u64) -> (Move, Duration) {
        let (reply, latency) =
            self.ask(&connect5::protocol::encode_request(board, rule, budget_ms));
        let mv = legal_reply(board, &reply);
        (mv, latency)
    }

    /// The player must close its output now (and say nothing more).
    #[track_caller]
    fn expect_eof(&mut self) {
        match self.next() {
            Next::Eof => {}
            other => panic!(
                "expected the player to close its output, got {other:?}\n--- player log ---\n{}",
                self.diagnostics()
            ),
        }
    }
}

/// Strips ANSI colour sequences, which the log formatter may add.
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Reads lines on a thread and hands them over a channel, so that reads can time out.
fn line_pump<R: Read + Send + 'static>(source: R) -> Receiver<Option<String>> {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let mut reader = BufReader::new(source);
        loop {
            let mut raw = Vec::new();
            match reader.read_until(b'\n', &mut raw) {
                Ok(0) | Err(_) => {
                    let _ = sender.send(None);
                    return;
                }
                Ok(_) => {
                    if raw.last() == Some(&b'\n') {
                        raw.pop();
                    }
                    let line = String::from_utf8_lossy(&raw).into_owned();
                    if sender.send(Some(line)).is_err() {
                        return;
                    }
                }
            }
        }
    });
    receiver
}

/// Collects a child's stderr into a shared log and also forwards each line over a channel, so a
/// test can wait for a particular log line. The reader thread ends at the end of the stream: once
/// it has, the log is complete ([`wait_exit`] waits for it).
fn log_pump<R: Read + Send + 'static>(
    source: R,
) -> (
    Arc<Mutex<Vec<String>>>,
    Receiver<String>,
    thread::JoinHandle<()>,
) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let (sender, receiver) = mpsc::channel();
    let kept = Arc::clone(&log);
    let reader = thread::spawn(move || {
        for line in BufReader::new(source).lines() {
            let Ok(line) = line else { return };
            let line = strip_ansi(&line);
            if let Ok(mut log) = kept.lock() {
                log.push(line.clone());
            }
            // The receiver may be gone; the log still keeps everything.
            let _ = sender.send(line);
        }
    });
    (log, receiver, reader)
}

/// The next line containing `needle` from a log pump, or `None` if none comes within
/// [`LINE_TIMEOUT`].
fn wait_for_line(lines: &Receiver<String>, needle: &str) -> Option<String> {
    let start = Instant::now();
    loop {
        let left = LINE_TIMEOUT.saturating_sub(start.elapsed());
        match lines.recv_timeout(left) {
            Ok(line) if line.contains(needle) => return Some(line),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
}

fn joined(log: &Arc<Mutex<Vec<String>>>) -> String {
    log.lock().map(|l| l.join("\n")).unwrap_or_default()
}

/// Waits for the child to exit, failing the test if it has not within `timeout`, and then for
/// `log_reader` to have read the last lines the child wrote (a test reads the log right after),
/// within what is left of `timeout` (a descendant of the child could hold its stderr open).
#[track_caller]
fn wait_exit(
    child: &mut Child,
    timeout: Duration,
    log: &Arc<Mutex<Vec<String>>>,
    log_reader: &mut Option<thread::JoinHandle<()>>,
) -> ExitStatus {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let reading = log_reader.as_ref().is_some_and(|r| !r.is_finished());
                if reading && start.elapsed() < timeout {
                    thread::sleep(Duration::from_millis(5));
                    continue;
                }
                if let Some(reader) = log_reader.take_if(|r| r.is_finished()) {
                    let _ = reader.join();
                }
                return status;
            }
            Ok(None) if start.elapsed() < timeout => thread::sleep(Duration::from_millis(5)),
            Ok(None) => panic!(
                "the process did not exit within {timeout:?}\n--- its log ---\n{}",
                joined(log)
            ),
            Err(error) => panic!("cannot wait for the player: {error}"),
        }
    }
}

/// `connect5 stdio …` (or another mode on stdin/stdout, such as `gomocup`) as a child process.
pub struct StdioPlayer {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Receiver<Option<String>>,
    stderr: Arc<Mutex<Vec<String>>>,
    stderr_lines: Receiver<String>,
    stderr_reader: Option<thread::JoinHandle<()>>,
}

impl StdioPlayer {
    pub fn spawn(args: &[&str]) -> StdioPlayer {
        StdioPlayer::spawn_with_env(args, &[])
    }

    pub fn spawn_with_env(args: &[&str], env: &[(&str, &str)]) -> StdioPlayer {
        StdioPlayer::spawn_mode("stdio", args, env)
    }

    /// `connect5 MODE ARGS`, talking on stdin/stdout.
    pub fn spawn_mode(mode: &str, args: &[&str], env: &[(&str, &str)]) -> StdioPlayer {
        let mut command = Command::new(binary());
        command
            .arg(mode)
            .args(args)
            .env("NO_COLOR", "1")
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start connect5 {mode}: {e}"));
        let stdin = child.stdin.take();
        let stdout = line_pump(child.stdout.take().expect("piped stdout"));
        let (stderr, stderr_lines, stderr_reader) =
            log_pump(child.stderr.take().expect("piped stderr"));
        StdioPlayer {
            child,
            stdin,
            stdout,
            stderr,
            stderr_lines,
            stderr_reader: Some(stderr_reader),
        }
    }

    /// Closes the player's input (end of input).
    pub fn close_input(&mut self) {
        self.stdin = None;
    }

    #[track_caller]
    pub fn wait_exit(&mut self) -> ExitStatus {
        wait_exit(
            &mut self.child,
            LINE_TIMEOUT,
            &self.stderr,
            &mut self.stderr_reader,
        )
    }

    pub fn stderr(&self) -> String {
        joined(&self.stderr)
    }

    /// Waits for a log line containing `needle` (among the lines not yet waited on) and returns it.
    #[track_caller]
    pub fn wait_for_log(&mut self, needle: &str) -> String {
        wait_for_line(&self.stderr_lines, needle).unwrap_or_else(|| {
            panic!(
                "the player never logged {needle:?} (process: {:?})\n--- player log ---\n{}",
                self.child.try_wait(),
                self.stderr()
            )
        })
    }

    /// Sends a signal to this child (by its own pid) with the system's `kill`.
    pub fn signal(&self, name: &str) {
        send_signal(self.child.id(), name);
    }
}

fn send_signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .expect("cannot run kill");
    assert!(status.success(), "kill -{name} {pid} failed: {status}");
}

impl Player for StdioPlayer {
    fn send(&mut self, text: &str) {
        self.send_bytes(text.as_bytes());
    }

    fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("the player's input is closed");
        if let Err(error) = stdin.write_all(bytes).and_then(|_| stdin.flush()) {
            panic!(
                "cannot write to the player: {error}\n--- player log ---\n{}",
                self.stderr()
            );
        }
    }

    fn next_within(&mut self, timeout: Duration) -> Next {
        match self.stdout.recv_timeout(timeout) {
            Ok(Some(line)) => Next::Line(line),
            Ok(None) | Err(RecvTimeoutError::Disconnected) => Next::Eof,
            Err(RecvTimeoutError::Timeout) => Next::TimedOut,
        }
    }

    fn diagnostics(&self) -> String {
        self.stderr()
    }
}

impl Drop for StdioPlayer {
    fn drop(&mut self) {
        // Only this test's own child, by its handle.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One TCP connection to a server.
pub struct TcpClient {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    /// The server's log, when the server was started by the test.
    server_log: Option<Arc<Mutex<Vec<String>>>>,
}

impl TcpClient {
    pub fn connect(addr: SocketAddr) -> TcpClient {
        TcpClient::try_connect(addr)
            .unwrap_or_else(|error| panic!("cannot connect to {addr}: {error}"))
    }

    pub fn try_connect(addr: SocketAddr) -> std::io::Result<TcpClient> {
        let stream = TcpStream::connect_timeout(&addr, LINE_TIMEOUT)?;
        stream.set_nodelay(true)?;
        let writer = stream.try_clone()?;
        Ok(TcpClient {
            reader: BufReader::new(stream),
            writer,
            server_log: None,
        })
    }

    /// Closes the sending side only: the server sees end of input.
    pub fn close_output(&mut self) {
        let _ = self.writer.shutdown(std::net::Shutdown::Write);
    }

    /// Writes without failing the test: the server may have closed the connection already.
    pub fn try_send(&mut self, text: &str) -> std::io::Result<()> {
        self.writer.write_all(text.as_bytes())
    }

    pub fn stream(&self) -> &TcpStream {
        &self.writer
    }
}

impl Player for TcpClient {
    fn send(&mut self, text: &str) {
        self.send_bytes(text.as_bytes());
    }

    fn send_bytes(&mut self, bytes: &[u8]) {
        if let Err(error) = self
            .writer
            .write_all(bytes)
            .and_then(|_| self.writer.flush())
        {
            panic!("cannot write to the server: {error}");
        }
    }

    fn next_within(&mut self, timeout: Duration) -> Next {
        if let Err(error) = self.reader.get_ref().set_read_timeout(Some(timeout)) {
            panic!("cannot set the read time-out: {error}");
        }
        let mut raw = Vec::new();
        match self.reader.read_until(b'\n', &mut raw) {
            Ok(0) => Next::Eof,
            Ok(_) => {
                if raw.last() == Some(&b'\n') {
                    raw.pop();
                }
                Next::Line(String::from_utf8_lossy(&raw).into_owned())
            }
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                Next::TimedOut
            }
            // A reset connection is the server closing it too.
            Err(_) => Next::Eof,
        }
    }

    fn diagnostics(&self) -> String {
        self.server_log
            .as_ref()
            .map_or_else(|| String::from("(no server log)"), joined)
    }
}

/// `connect5 serve …` as a child process, with its address read from its log.
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
    log: Arc<Mutex<Vec<String>>>,
    log_lines: Receiver<String>,
    log_reader: Option<thread::JoinHandle<()>>,
    /// Whatever the server wrote on stdout (it must write nothing), complete once it has exited.
    stdout: Option<thread::JoinHandle<Vec<String>>>,
}

impl Server {
    /// Starts a server on a free port of 127.0.0.1 with extra `args`.
    pub fn start(args: &[&str]) -> Server {
        let mut all = vec!["--listen", "127.0.0.1:0"];
        all.extend_from_slice(args);
        Server::start_exact(&all)
    }

    /// Starts `connect5 serve ARGS` as given and waits for its `listening on ADDR` line.
    pub fn start_exact(args: &[&str]) -> Server {
        let level = std::env::var("CONNECT5_TEST_SERVER_LOG").unwrap_or_else(|_| "info".into());
        Server::start_logging(args, &level)
    }

    /// Starts `connect5 serve ARGS` with `RUST_LOG=level`.
    pub fn start_logging(args: &[&str], level: &str) -> Server {
        let mut child = Command::new(binary())
            .arg("serve")
            .args(args)
            .env("NO_COLOR", "1")
            .env("RUST_LOG", level)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cannot start connect5 serve");
        // The server must not write to stdout at all; drain it so it can never block.
        let stdout = line_pump(child.stdout.take().expect("piped stdout"));
        let stdout = thread::spawn(move || {
            let mut lines = Vec::new();
            while let Ok(Some(line)) = stdout.recv() {
                lines.push(line);
            }
            lines
        });
        let (log, log_lines, log_reader) = log_pump(child.stderr.take().expect("piped stderr"));
        let mut server = Server {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            log,
            log_lines,
            log_reader: Some(log_reader),
            stdout: Some(stdout),
        };
        let line = server.wait_for_log("listening on ");
        let addr = line
            .split("listening on ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|text| text.parse().ok());
        server.addr = addr.unwrap_or_else(|| panic!("no address in the log line {line:?}"));
        server
    }

    /// Waits for a log line containing `needle` (among the lines not yet waited on) and returns it.
    #[track_caller]
    pub fn wait_for_log(&mut self, needle: &str) -> String {
        wait_for_line(&self.log_lines, needle).unwrap_or_else(|| {
            panic!(
                "the server never logged {needle:?} (process: {:?})\n--- server log ---\n{}",
                self.child.try_wait(),
                self.log()
            )
        })
    }

    pub fn connect(&self) -> TcpClient {
        let mut client = TcpClient::connect(self.addr);
        client.server_log = Some(Arc::clone(&self.log));
        client
    }

    /// Connects and reads the banner and READY.
    pub fn session(&self) -> TcpClient {
        let mut client = self.connect();
        client.expect_ready(connect5::protocol::READY_WORD);
        client
    }

    pub fn log(&self) -> String {
        joined(&self.log)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The most memory the server process has had resident so far, in bytes (Linux only).
    pub fn peak_resident_bytes(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    }

    #[track_caller]
    pub fn wait_exit(&mut self) -> ExitStatus {
        wait_exit(
            &mut self.child,
            LINE_TIMEOUT,
            &self.log,
            &mut self.log_reader,
        )
    }

    #[track_caller]
    pub fn wait_exit_within(&mut self, timeout: Duration) -> ExitStatus {
        wait_exit(&mut self.child, timeout, &self.log, &mut self.log_reader)
    }

    /// Everything the server wrote on stdout; call after it has exited.
    pub fn stdout_after_exit(&mut self) -> Vec<String> {
        assert!(!self.running(), "the server is still running");
        self.stdout
            .take()
            .map(|pump| pump.join().expect("the stdout reader"))
            .unwrap_or_default()
    }

    /// Whether the process is still running.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Sends a signal to this server process (by its own pid) with the system's `kill`.
    pub fn signal(&self, name: &str) {
        send_signal(self.pid(), name);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A board from rows of `0`/`.`/`N`/`B`.
pub fn board(rows: &[&str]) -> Board {
    Board::from_rows(rows).unwrap_or_else(|e| panic!("bad test board {rows:?}: {e}"))
}

/// An empty board with stones put at the given cells.
pub fn board_with(
    rows: usize,
    cols: usize,
    black: &[(usize, usize)],
    white: &[(usize, usize)],
) -> Board {
    let mut board = Board::new(rows, cols).expect("test board size");
    for &(r, c) in black {
        board
            .play(Move::new(r, c), Stone::Black)
            .expect("free cell for a test stone");
    }
    for &(r, c) in white {
        board
            .play(Move::new(r, c), Stone::White)
            .expect("free cell for a test stone");
    }
    board
}

/// A request in the wire format, with the rule the board size implies.
pub fn request(board: &Board, budget_ms: u64) -> String {
    connect5::protocol::encode_request(
        board,
        Rule::for_board(board.rows(), board.cols()),
        budget_ms,
    )
}

/// Parses a reply strictly as `row col` (two non-negative integers and nothing else).
pub fn parse_move(reply: &str) -> Option<Move> {
    let tokens: Vec<&str> = reply.split(' ').collect();
    let [row, col] = tokens.as_slice() else {
        return None;
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(row) || !digits(col) {
        return None;
    }
    Some(Move::new(row.parse().ok()?, col.parse().ok()?))
}

/// Checks that `reply` is a legal move in `board` and returns it.
#[track_caller]
pub fn legal_reply(board: &Board, reply: &str) -> Move {
    let mv = parse_move(reply)
        .unwrap_or_else(|| panic!("reply {reply:?} is not `row col`\nboard:\n{board}"));
    assert!(
        board.is_empty_cell(mv),
        "reply {reply:?} is not an empty cell of the board\n{board}"
    );
    mv
}

/// A 3×3 position with a single empty cell at `empty` (4 black, 4 white, nobody has three in a
/// row): the one legal answer is `empty`, whatever the engine. Found by enumeration.
pub fn one_empty_cell(empty: Move) -> Board {
    let rule = Rule::for_board(3, 3);
    let others: Vec<Move> = (0..9)
        .map(|i| Move::new(i / 3, i % 3))
        .filter(|&m| m != empty)
        .collect();
    for mask in 0u32..(1 << 8) {
        if mask.count_ones() != 4 {
            continue;
        }
        let mut board = Board::new(3, 3).expect("3x3");
        for (i, &mv) in others.iter().enumerate() {
            let stone = if mask & (1 << i) != 0 {
                Stone::Black
            } else {
                Stone::White
            };
            board.play(mv, stone).expect("free cell");
        }
        if board.winner(rule).is_none() {
            return board;
        }
    }
    panic!("no drawn 3x3 position with only {empty} empty")
}

/// The nine single-empty-cell requests, one per cell, in turn.
pub fn good_request(index: usize) -> (String, Move) {
    let empty = Move::new(index % 9 / 3, index % 3);
    (request(&one_empty_cell(empty), 100), empty)
}

/// A stone of a `connect5 match --json` summary: an opening stone `[row, col]` or a move
/// `{"row": …, "col": …}`.
pub fn recorded_cell(value: &Value) -> Move {
    let (row, col) = if let Some(pair) = value.as_array() {
        (pair[0].as_u64(), pair[1].as_u64())
    } else {
        (value["row"].as_u64(), value["col"].as_u64())
    };
    Move::new(row.expect("row") as usize, col.expect("col") as usize)
}

/// Every stone of a recorded game, the opening's first, in the order played.
pub fn recorded_stones(game: &Value) -> Vec<Move> {
    game["opening"]
        .as_array()
        .expect("an opening")
        .iter()
        .chain(game["moves"].as_array().expect("moves"))
        .map(recorded_cell)
        .collect()
}
