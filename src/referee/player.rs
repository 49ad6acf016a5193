//! The players a match can seat: the engine in-process, a program speaking the Connect5 protocol
//! on its standard streams, or a Connect5 TCP server. One trait, so the game loop never knows which
//! it talks to (a Gomocup-protocol kind slots in as one more implementation of [`Player`]).

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use crate::board::{Board, Move, Rule};
use crate::engine::{self, Deadline, EngineConfig, EngineKind};
use crate::protocol::{encode_request, parse_reply, read_bounded_line, MAX_LINE_BYTES};

/// How long a program or server may take to print its banner and `READY`. The course referee
/// waits forever; a match runner cannot.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(10);

/// A move as a player answered it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub mv: Move,
    /// From the moment the request's last byte was flushed to the moment the answer line was
    /// read: the runner's own work is not charged to the player.
    pub elapsed: Duration,
}

/// Everything that can go wrong while asking a player for a move; each loses the game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The answer line is not `row col`.
    Unparsable { line: String, elapsed: Duration },
    /// The process ended, or the connection closed, before answering.
    Crashed(String),
    /// No answer within the longest wait the time rules allow; the player was killed.
    NoAnswer { waited: Duration },
    /// The player could not be started or reached.
    Unavailable(String),
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::Unparsable { line, .. } => {
                let shown: String = line.chars().take(60).collect();
                write!(f, "unparsable answer {shown:?}")
            }
            Fault::Crashed(why) => write!(f, "{why}"),
            Fault::NoAnswer { waited } => write!(f, "no answer within {} ms", waited.as_millis()),
            Fault::Unavailable(why) => write!(f, "unavailable: {why}"),
        }
    }
}

/// One seat at the board. A player lives for the whole match and plays many games; after a fault
/// it starts afresh (new process, new connection) when the next game is prepared.
pub trait Player: Send {
    fn name(&self) -> &str;
    /// Gets ready for a new game: starts the process or opens the connection if there is none.
    fn prepare(&mut self) -> Result<(), Fault>;
    /// Asks for a move on `board` with `budget` to think; waits at most `limit` (from the moment
    /// the request is sent) before giving up on the player.
    fn ask(
        &mut self,
        board: &Board,
        rule: Rule,
        budget: Duration,
        limit: Duration,
    ) -> Result<Answer, Fault>;
    /// Ends the player for good (end of match).
    fn close(&mut self);
    /// This player's own thinking time per move (`time=`), instead of the match's `--time`.
    fn time_per_move(&self) -> Option<Duration> {
        None
    }
}

/// A player with a thinking time of its own (`time=MS`), for matches such as an engine at 400 ms
/// against itself at 100 ms.
struct OwnTime {
    inner: Box<dyn Player>,
    time: Duration,
}

impl Player for OwnTime {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn prepare(&mut self) -> Result<(), Fault> {
        self.inner.prepare()
    }
    fn ask(
        &mut self,
        board: &Board,
        rule: Rule,
        budget: Duration,
        limit: Duration,
    ) -> Result<Answer, Fault> {
        self.inner.ask(board, rule, budget, limit)
    }
    fn close(&mut self) {
        self.inner.close()
    }
    fn time_per_move(&self) -> Option<Duration> {
        Some(self.time)
    }
}

/// What `--player1`/`--player2` describe.
#[derive(Clone, Debug)]
pub enum PlayerKind {
    Builtin(EngineConfig),
    /// Program and arguments, run with the Connect5 protocol on stdin/stdout.
    Process(Vec<String>),
    /// `HOST:PORT` of a Connect5 TCP server.
    Tcp(String),
}

/// A player as the command line describes it.
#[derive(Clone, Debug)]
pub struct PlayerSpec {
    pub name: String,
    pub kind: PlayerKind,
    /// Thinking time per move of this player, when not the match's.
    pub time: Option<Duration>,
}

/// Parses a player description: tokens that are either a kind (`builtin[:key=value,…]`,
/// `cmd:PROGRAM ARGS`, `tcp:HOST:PORT`) or `key=value` options (`name=`, `cmd=`, `tcp=`,
/// `engine=`, `depth=`, `hash=`).
pub fn parse_player_spec(tokens: &[String]) -> Result<PlayerSpec, String> {
    let mut name: Option<String> = None;
    let mut time: Option<Duration> = None;
    let mut kind: Option<PlayerKind> = None;
    let mut engine_options: Vec<(String, String)> = Vec::new();
    let set_kind = |kind_slot: &mut Option<PlayerKind>, new: PlayerKind| {
        if kind_slot.is_some() {
            return Err("a player has exactly one kind (builtin, cmd: or tcp:)".to_string());
        }
        *kind_slot = Some(new);
        Ok(())
    };
    for token in tokens {
        let token = token.trim();
        if token.is_empty() {
            continue;
        }
        if token == "builtin" {
            set_kind(&mut kind, PlayerKind::Builtin(EngineConfig::default()))?;
        } else if let Some(options) = token.strip_prefix("builtin:") {
            set_kind(&mut kind, PlayerKind::Builtin(EngineConfig::default()))?;
            for option in options.split(',').filter(|o| !o.trim().is_empty()) {
                let (key, value) = option.split_once('=').ok_or_else(|| {
                    format!("builtin option {option:?} is not key=value (engine=, depth=, hash=, name=)")
                })?;
                engine_options.push((key.trim().to_string(), value.trim().to_string()));
            }
        } else if let Some(command) = token
            .strip_prefix("cmd:")
            .or_else(|| token.strip_prefix("cmd="))
        {
            let words = split_command(command)?;
            if words.is_empty() {
                return Err("cmd: needs a program to run".to_string());
            }
            set_kind(&mut kind, PlayerKind::Process(words))?;
        } else if let Some(address) = token
            .strip_prefix("tcp:")
            .or_else(|| token.strip_prefix("tcp="))
        {
            if !address.contains(':') {
                return Err(format!("tcp address {address:?} is not HOST:PORT"));
            }
            set_kind(&mut kind, PlayerKind::Tcp(address.to_string()))?;
        } else if let Some((key, value)) = token.split_once('=') {
            engine_options.push((key.trim().to_string(), value.trim().to_string()));
        } else {
            return Err(format!(
                "unknown player token {token:?}: expected builtin[:options], cmd:PROGRAM, tcp:HOST:PORT or key=value"
            ));
        }
    }
    let mut kind = kind.ok_or_else(|| {
        "no player kind given: expected builtin[:options], cmd:PROGRAM or tcp:HOST:PORT".to_string()
    })?;
    for (key, value) in engine_options {
        match (key.as_str(), &mut kind) {
            ("name", _) => {
                if value.is_empty() {
                    return Err("name= needs a name".to_string());
                }
                name = Some(value);
            }
            ("time", _) => {
                let ms: u64 = value
                    .parse()
                    .map_err(|_| format!("time={value:?} is not a whole number of milliseconds"))?;
                time = Some(Duration::from_millis(ms));
            }
            ("engine", PlayerKind::Builtin(config)) => config.kind = value.parse::<EngineKind>()?,
            ("depth", PlayerKind::Builtin(config)) => {
                let depth: u32 = value
                    .parse()
                    .map_err(|_| format!("depth={value:?} is not a whole number of plies"))?;
                config.max_depth = Some(depth.max(1));
            }
            ("hash", PlayerKind::Builtin(config)) => {
                let mb: usize = value
                    .parse()
                    .map_err(|_| format!("hash={value:?} is not a size in MiB"))?;
                if !(1..=65_536).contains(&mb) {
                    return Err(format!("hash={mb} out of range: 1 to 65536 MiB"));
                }
                config.hash_bytes = mb << 20;
            }
            ("engine" | "depth" | "hash", _) => {
                return Err(format!("{key}= applies to builtin players only"))
            }
            (other, _) => {
                return Err(format!(
                    "unknown player option {other:?} (name=, time=, engine=, depth=, hash=, cmd=, tcp=)"
                ))
            }
        }
    }
    let name = name.unwrap_or_else(|| default_name(&kind));
    Ok(PlayerSpec { name, kind, time })
}

fn default_name(kind: &PlayerKind) -> String {
    match kind {
        PlayerKind::Builtin(config) => {
            let engine = match config.kind {
                EngineKind::V1 => "v1",
                EngineKind::V2 => "v2",
            };
            match config.max_depth {
                Some(depth) => format!("builtin-{engine}-d{depth}"),
                None => format!("builtin-{engine}"),
            }
        }
        PlayerKind::Process(words) => Path::new(&words[0])
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| words[0].clone()),
        PlayerKind::Tcp(address) => address.clone(),
    }
}

/// Splits a command line into words the way a shell would for simple cases: whitespace separates,
/// single and double quotes group, backslash escapes the next character.
pub fn split_command(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') | (None, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                    in_word = true;
                }
            }
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err(format!("unclosed quote in command {text:?}"));
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// Where each player's process keeps its standard error.
#[derive(Clone, Debug)]
pub struct PlayerContext {
    /// Directory for `NAME.stderr.log` files.
    pub log_dir: PathBuf,
    /// Games played at once: the builtin engine keeps a larger safety reserve when crowded.
    pub concurrency: usize,
    pub start_timeout: Duration,
    /// Which worker this instance belongs to (several instances of one player run concurrently).
    pub worker: usize,
}

/// Builds the player a spec describes. Nothing is started until [`Player::prepare`].
pub fn make_player(spec: &PlayerSpec, context: &PlayerContext) -> Box<dyn Player> {
    let player = make_player_of_kind(spec, context);
    match spec.time {
        Some(time) => Box::new(OwnTime {
            inner: player,
            time,
        }),
        None => player,
    }
}

fn make_player_of_kind(spec: &PlayerSpec, context: &PlayerContext) -> Box<dyn Player> {
    match &spec.kind {
        PlayerKind::Builtin(config) => Box::new(BuiltinPlayer {
            name: spec.name.clone(),
            config: config.clone(),
            concurrency: context.concurrency,
        }),
        PlayerKind::Process(words) => Box::new(ProcessPlayer {
            name: spec.name.clone(),
            words: words.clone(),
            log_path: context.log_dir.join(format!(
                "{}.{}.stderr.log",
                sanitize(&spec.name),
                context.worker
            )),
            start_timeout: context.start_timeout,
            running: None,
        }),
        PlayerKind::Tcp(address) => Box::new(TcpPlayer {
            name: spec.name.clone(),
            address: address.clone(),
            start_timeout: context.start_timeout,
            connection: None,
        }),
    }
}

/// A name made safe for a file name.
pub fn sanitize(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "player".to_string()
    } else {
        cleaned
    }
}

/// Whether a line is the ready word: `READY`, or `PRET` as the 2020 course edition says it.
fn is_ready_line(line: &str) -> bool {
    let word = line.trim_matches(|c: char| c.is_whitespace() || c == '\0');
    word.eq_ignore_ascii_case("READY") || word.eq_ignore_ascii_case("PRET")
}

fn answer_from_line(line: String, elapsed: Duration) -> Result<Answer, Fault> {
    match parse_reply(&line) {
        Ok(mv) => Ok(Answer { mv, elapsed }),
        Err(_) => Err(Fault::Unparsable { line, elapsed }),
    }
}

// ---------------------------------------------------------------------------------------------
// builtin

/// The engine, in this process.
pub struct BuiltinPlayer {
    name: String,
    config: EngineConfig,
    concurrency: usize,
}

impl Player for BuiltinPlayer {
    fn name(&self) -> &str {
        &self.name
    }

    fn prepare(&mut self) -> Result<(), Fault> {
        Ok(())
    }

    fn ask(
        &mut self,
        board: &Board,
        rule: Rule,
        budget: Duration,
        limit: Duration,
    ) -> Result<Answer, Fault> {
        // The search runs on its own thread so that the time limit holds for the engine too: a
        // search that never returns loses on time and is left behind, and the match goes on.
        let (report, answer) = mpsc::channel();
        let board = board.clone();
        let config = self.config.clone();
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

// ---------------------------------------------------------------------------------------------
// process

/// A line the player wrote, with the instant it was read.
type TimedLine = (String, Instant);

/// Reads lines from `source` on its own thread, stamping each the moment it is complete, so that
/// the time charged to a player ends when its answer arrived, not when the runner looked. The
/// channel closes at end of input.
fn spawn_line_reader<R: Read + Send + 'static>(source: R, name: String) -> Receiver<TimedLine> {
    let (sender, receiver) = mpsc::channel();
    let thread_name = format!("reader-{name}");
    let spawned = std::thread::Builder::new()
        .name(thread_name)
        .spawn(move || {
            let mut reader = BufReader::new(source);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match read_bounded_line(&mut reader, &mut buf) {
                    Ok(true) => {
                        let stamp = Instant::now();
                        let line = String::from_utf8_lossy(&buf).into_owned();
                        if sender.send((line, stamp)).is_err() {
                            return;
                        }
                    }
                    Ok(false) | Err(_) => return,
                }
            }
        });
    if let Err(error) = spawned {
        tracing::error!("cannot start a reader thread for {name}: {error}");
    }
    receiver
}

struct RunningProcess {
    child: Child,
    /// Requests go through a writer thread: a player that stops reading fills the pipe, and a
    /// blocked write must not hold the game past its time limit.
    requests: Sender<String>,
    /// When each request's last byte was flushed, or why it could not be.
    written: Receiver<std::io::Result<Instant>>,
    lines: Receiver<TimedLine>,
}

/// Writes each request to the child's stdin on its own thread and reports when it was flushed.
/// Dropping the request sender closes stdin (end of input).
fn spawn_request_writer(
    mut stdin: ChildStdin,
    name: &str,
) -> (Sender<String>, Receiver<std::io::Result<Instant>>) {
    let (requests, pending) = mpsc::channel::<String>();
    let (report, written) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name(format!("writer-{name}"))
        .spawn(move || {
            for request in pending {
                let result = stdin
                    .write_all(request.as_bytes())
                    .and_then(|()| stdin.flush())
                    .map(|()| Instant::now());
                let failed = result.is_err();
                if report.send(result).is_err() || failed {
                    return;
                }
            }
        });
    if let Err(error) = spawned {
        tracing::error!("cannot start a writer thread for {name}: {error}");
    }
    (requests, written)
}

/// A program speaking the Connect5 protocol on stdin/stdout, started by the runner.
pub struct ProcessPlayer {
    name: String,
    words: Vec<String>,
    log_path: PathBuf,
    start_timeout: Duration,
    running: Option<RunningProcess>,
}

impl ProcessPlayer {
    fn start(&mut self) -> Result<RunningProcess, Fault> {
        let log = open_log(&self.log_path);
        let stderr = match log {
            Ok(file) => Stdio::from(file),
            Err(error) => {
                tracing::warn!(
                    "{}: cannot open stderr log {}: {error}",
                    self.name,
                    self.log_path.display()
                );
                Stdio::null()
            }
        };
        let mut command = Command::new(&self.words[0]);
        command
            .args(&self.words[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);
        // Its own process group, so that killing the player also kills whatever it started (an
        // engine behind a wrapper script would otherwise go on burning CPU).
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command
            .spawn()
            .map_err(|e| Fault::Unavailable(format!("cannot run {:?}: {e}", self.words[0])))?;
        register_group(child.id());
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            kill(&mut child);
            return Err(Fault::Unavailable(
                "no pipes to the child process".to_string(),
            ));
        };
        let lines = spawn_line_reader(stdout, self.name.clone());
        let (requests, written) = spawn_request_writer(stdin, &self.name);
        let mut running = RunningProcess {
            child,
            requests,
            written,
            lines,
        };
        let until = Instant::now() + self.start_timeout;
        loop {
            let wait = until.saturating_duration_since(Instant::now());
            match running.lines.recv_timeout(wait) {
                Ok((line, _)) if is_ready_line(&line) => return Ok(running),
                Ok((line, _)) => tracing::debug!("{} banner: {}", self.name, line.trim_end()),
                Err(RecvTimeoutError::Timeout) => {
                    kill(&mut running.child);
                    return Err(Fault::Unavailable(format!(
                        "no READY within {} ms",
                        self.start_timeout.as_millis()
                    )));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = reap(&mut running.child);
                    return Err(Fault::Unavailable(format!(
                        "ended before READY ({status}){}",
                        self.stderr_tail()
                    )));
                }
            }
        }
    }

    /// The player died (or closed its output): reaps it and says what failed (`what`), with the
    /// error if there was one, its exit status and the last line of its stderr.
    fn crashed(&mut self, what: &str, error: Option<&std::io::Error>) -> Fault {
        let status = match self.running.take() {
            Some(mut running) => reap(&mut running.child),
            None => "not running".to_string(),
        };
        let error = error.map(|e| format!("{e}; ")).unwrap_or_default();
        Fault::Crashed(format!(
            "crashed{what} ({error}{status}){}",
            self.stderr_tail()
        ))
    }

    /// The player did not answer in time: kills it.
    fn silent(&mut self, waited: Duration) -> Fault {
        if let Some(mut running) = self.running.take() {
            kill(&mut running.child);
        }
        Fault::NoAnswer { waited }
    }

    /// The last line of the player's stderr log, to say why it died.
    fn stderr_tail(&self) -> String {
        last_line_of(&self.log_path)
            .map(|line| format!("; stderr: {line}"))
            .unwrap_or_default()
    }
}

fn open_log(path: &Path) -> std::io::Result<File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    OpenOptions::new().create(true).append(true).open(path)
}

fn last_line_of(path: &Path) -> Option<String> {
    let text = std::fs::read(path).ok()?;
    let tail = &text[text.len().saturating_sub(2048)..];
    String::from_utf8_lossy(tail)
        .lines()
        .rev()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map(|line| line.chars().take(120).collect())
}

/// Process groups of the program players alive, so that an interrupted match can end them all.
static LIVE_GROUPS: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

fn register_group(leader: u32) {
    if let Ok(mut groups) = LIVE_GROUPS.lock() {
        groups.push(leader);
    }
}

/// Kills every process of a player's group (what is left of it once the player itself has ended:
/// whatever a wrapper script started).
fn end_group(leader: u32) {
    if let Ok(mut groups) = LIVE_GROUPS.lock() {
        groups.retain(|&g| g != leader);
    }
    #[cfg(unix)]
    if let Ok(group) = libc::pid_t::try_from(leader) {
        // SAFETY: kill takes plain integers; a negative pid names the process group the child
        // leads (it was spawned with process_group(0)), which holds only the player's processes.
        let _ = unsafe { libc::kill(-group, libc::SIGKILL) };
    }
}

/// Ends every program player still running (an interrupted match exits without waiting for its
/// games).
pub fn kill_all_players() {
    let groups = LIVE_GROUPS
        .lock()
        .map(|mut g| std::mem::take(&mut *g))
        .unwrap_or_default();
    for leader in groups {
        end_group(leader);
    }
}

/// Kills the player and every process of its group.
fn kill(child: &mut Child) {
    end_group(child.id());
    let _ = child.kill();
    let _ = child.wait();
}

/// Waits briefly for a child that closed its output to finish, and describes how it ended.
fn reap(child: &mut Child) -> String {
    let until = Instant::now() + Duration::from_millis(500);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                end_group(child.id());
                return describe_status(status);
            }
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                kill(child);
                return "closed its output and was killed".to_string();
            }
            Err(error) => return format!("cannot wait for it: {error}"),
        }
    }
}

fn describe_status(status: std::process::ExitStatus) -> String {
    match status.code() {
        Some(code) => format!("exit code {code}"),
        None => format!("{status}"),
    }
}

const UNWRITTEN: &str = ": the request could not be written";

impl Player for ProcessPlayer {
    fn name(&self) -> &str {
        &self.name
    }

    fn prepare(&mut self) -> Result<(), Fault> {
        if let Some(running) = &mut self.running {
            if let Ok(None) = running.child.try_wait() {
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
        budget: Duration,
        limit: Duration,
    ) -> Result<Answer, Fault> {
        // Never restarted in the middle of a game: a process that died since its last answer
        // has crashed.
        let Some(running) = self.running.as_mut() else {
            return Err(Fault::Crashed("crashed: not running".to_string()));
        };
        let request = encode_request(board, rule, budget.as_millis() as u64);
        let asked = Instant::now();
        let _ = running.requests.send(request);
        let sent = match running.written.recv_timeout(limit) {
            Ok(Ok(at)) => at,
            Ok(Err(error)) => return Err(self.crashed(UNWRITTEN, Some(&error))),
            Err(RecvTimeoutError::Disconnected) => return Err(self.crashed(UNWRITTEN, None)),
            Err(RecvTimeoutError::Timeout) => return Err(self.silent(asked.elapsed())),
        };
        let limit = limit.saturating_sub(sent.saturating_duration_since(asked));
        match running.lines.recv_timeout(limit) {
            Ok((line, at)) => answer_from_line(line, at.saturating_duration_since(sent)),
            Err(RecvTimeoutError::Timeout) => Err(self.silent(limit)),
            Err(RecvTimeoutError::Disconnected) => Err(self.crashed("", None)),
        }
    }

    fn close(&mut self) {
        if let Some(mut running) = self.running.take() {
            // End of input is how most course sessions end; a player that ignores it is killed.
            drop(running.requests);
            let until = Instant::now() + Duration::from_millis(500);
            loop {
                match running.child.try_wait() {
                    Ok(None) if Instant::now() < until => {
                        std::thread::sleep(Duration::from_millis(5))
                    }
                    Ok(Some(_)) => break,
                    _ => {
                        kill(&mut running.child);
                        break;
                    }
                }
            }
        }
    }
}

impl Drop for ProcessPlayer {
    fn drop(&mut self) {
        if let Some(mut running) = self.running.take() {
            kill(&mut running.child);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// tcp

struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

/// A Connect5 server over TCP: one connection, reused for every move of every game, as the course
/// referee does; a new one after a fault.
pub struct TcpPlayer {
    name: String,
    address: String,
    start_timeout: Duration,
    connection: Option<Connection>,
}

/// Reads one line before `until`; `Ok(None)` on timeout, `Err` on end of stream or error.
fn read_line_until(
    reader: &mut BufReader<TcpStream>,
    until: Instant,
) -> Result<Option<(String, Instant)>, String> {
    let mut buf = Vec::new();
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        reader
            .get_ref()
            .set_read_timeout(Some(left))
            .map_err(|e| e.to_string())?;
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) => return Err("connection closed".to_string()),
            Ok(_) if buf.last() == Some(&b'\n') => {
                let stamp = Instant::now();
                buf.pop();
                if buf.last() == Some(&b'\r') {
                    buf.pop();
                }
                buf.truncate(MAX_LINE_BYTES);
                return Ok(Some((String::from_utf8_lossy(&buf).into_owned(), stamp)));
            }
            Ok(_) => return Err("connection closed in the middle of a line".to_string()),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if buf.len() > MAX_LINE_BYTES * 4 {
                    return Err("line too long".to_string());
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Whether the peer has closed the connection (checked between games, so that a restarted server
/// costs a reconnection rather than a game).
fn is_closed(stream: &TcpStream) -> bool {
    if stream.set_nonblocking(true).is_err() {
        return false;
    }
    let mut byte = [0u8; 1];
    let closed = matches!(stream.peek(&mut byte), Ok(0))
        || matches!(stream.peek(&mut byte), Err(e) if e.kind() != std::io::ErrorKind::WouldBlock);
    let _ = stream.set_nonblocking(false);
    closed
}

impl TcpPlayer {
    fn connect(&self) -> Result<Connection, Fault> {
        let addresses: Vec<SocketAddr> = self
            .address
            .to_socket_addrs()
            .map_err(|e| Fault::Unavailable(format!("cannot resolve {}: {e}", self.address)))?
            .collect();
        let mut last_error = format!("{} resolves to no address", self.address);
        for address in addresses {
            match TcpStream::connect_timeout(&address, self.start_timeout) {
                Ok(stream) => {
                    let _ = stream.set_nodelay(true);
                    let writer = stream.try_clone().map_err(|e| {
                        Fault::Unavailable(format!("cannot use the connection: {e}"))
                    })?;
                    let mut reader = BufReader::new(stream);
                    let until = Instant::now() + self.start_timeout;
                    loop {
                        match read_line_until(&mut reader, until) {
                            Ok(Some((line, _))) if is_ready_line(&line) => {
                                return Ok(Connection { reader, writer })
                            }
                            Ok(Some((line, _))) => {
                                tracing::debug!("{} banner: {}", self.name, line.trim_end())
                            }
                            Ok(None) => {
                                return Err(Fault::Unavailable(format!(
                                    "no READY from {} within {} ms",
                                    self.address,
                                    self.start_timeout.as_millis()
                                )))
                            }
                            Err(why) => {
                                return Err(Fault::Unavailable(format!(
                                    "{} before READY: {why}",
                                    self.address
                                )))
                            }
                        }
                    }
                }
                Err(e) => last_error = format!("cannot connect to {address}: {e}"),
            }
        }
        Err(Fault::Unavailable(last_error))
    }
}

impl Player for TcpPlayer {
    fn name(&self) -> &str {
        &self.name
    }

    fn prepare(&mut self) -> Result<(), Fault> {
        if self
            .connection
            .as_ref()
            .is_some_and(|c| is_closed(c.reader.get_ref()))
        {
            tracing::info!(
                "{}: the server closed the connection; reconnecting",
                self.name
            );
            self.connection = None;
        }
        if self.connection.is_none() {
            self.connection = Some(self.connect()?);
        }
        Ok(())
    }

    fn ask(
        &mut self,
        board: &Board,
        rule: Rule,
        budget: Duration,
        limit: Duration,
    ) -> Result<Answer, Fault> {
        // Never reconnected in the middle of a game: a connection lost since the last answer
        // is a crash.
        let Some(connection) = self.connection.as_mut() else {
            return Err(Fault::Crashed("lost the connection".to_string()));
        };
        let request = encode_request(board, rule, budget.as_millis() as u64);
        // A server that stops reading must not block the runner past the time limit.
        let _ = connection.writer.set_write_timeout(Some(limit));
        let written = connection
            .writer
            .write_all(request.as_bytes())
            .and_then(|()| connection.writer.flush());
        let sent = Instant::now();
        if let Err(error) = written {
            self.connection = None;
            return Err(Fault::Crashed(format!(
                "lost the connection while the request was sent ({error})"
            )));
        }
        let outcome = read_line_until(&mut connection.reader, sent + limit);
        match outcome {
            Ok(Some((line, at))) => answer_from_line(line, at.saturating_duration_since(sent)),
            Ok(None) => {
                // Whatever it says later would be taken as the answer to the next request.
                self.connection = None;
                Err(Fault::NoAnswer { waited: limit })
            }
            Err(why) => {
                self.connection = None;
                Err(Fault::Crashed(format!("lost the connection ({why})")))
            }
        }
    }

    fn close(&mut self) {
        // The course referee never says goodbye over TCP: it drops the connection.
        self.connection = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn specs_parse_into_kinds_and_names() {
        let spec = parse_player_spec(&words("builtin:engine=v1,depth=2,name=old")).unwrap();
        assert_eq!(spec.name, "old");
        let PlayerKind::Builtin(config) = spec.kind else {
            panic!("not builtin")
        };
        assert_eq!(config.kind, EngineKind::V1);
        assert_eq!(config.max_depth, Some(2));

        let spec = parse_player_spec(&["cmd:./connect5 stdio --engine v1".to_string()]).unwrap();
        assert_eq!(spec.name, "connect5");
        assert!(
            matches!(&spec.kind, PlayerKind::Process(w) if *w == words("./connect5 stdio --engine v1"))
        );

        let spec = parse_player_spec(&words("tcp:127.0.0.1:1199 name=server")).unwrap();
        assert!(matches!(&spec.kind, PlayerKind::Tcp(a) if a == "127.0.0.1:1199"));
        assert_eq!(spec.name, "server");
        assert_eq!(spec.time, None);

        let spec = parse_player_spec(&words("builtin:engine=v2,time=400 name=slow")).unwrap();
        assert_eq!(spec.time, Some(Duration::from_millis(400)));
        assert!(parse_player_spec(&words("builtin time=soon")).is_err());
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        assert!(parse_player_spec(&words("name=x")).is_err());
        assert!(parse_player_spec(&words("builtin:engine=v9")).is_err());
        assert!(parse_player_spec(&words("builtin depth=x")).is_err());
        assert!(parse_player_spec(&words("tcp:nowhere")).is_err());
        assert!(parse_player_spec(&words("builtin tcp:a:1")).is_err());
        assert!(parse_player_spec(&words("tcp:a:1 depth=3")).is_err());
        assert!(parse_player_spec(&["cmd:\"unclosed".to_string()]).is_err());
    }

    #[test]
    fn commands_split_like_a_shell() {
        assert_eq!(
            split_command(r#"bash -c 'echo "a b"' x\ y"#).unwrap(),
            vec!["bash", "-c", "echo \"a b\"", "x y"]
        );
        assert_eq!(split_command("  ").unwrap(), Vec::<String>::new());
    }
}
