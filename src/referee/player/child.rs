//! A program the runner starts and talks to by lines on its standard streams, whatever protocol
//! it speaks: its reader and writer threads (so that no pipe can block a game past its time
//! limit), its stderr log, and its process group (so that killing it ends whatever it started).

use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use super::Fault;
use crate::protocol::read_bounded_line;

/// A line the program wrote, with the instant it was read.
pub type TimedLine = (String, Instant);

/// Why no line came.
#[derive(Debug, PartialEq, Eq)]
pub enum NoLine {
    TimedOut,
    /// The program closed its output (it ended, most likely).
    Closed,
}

/// Why a request could not be delivered.
#[derive(Debug)]
pub enum Unsent {
    /// The write did not finish within the limit: the program stopped reading.
    TimedOut,
    /// The pipe is broken: the program ended.
    Failed(Option<std::io::Error>),
}

/// A running program.
pub struct Program {
    child: Child,
    /// Requests go through a writer thread: a program that stops reading fills the pipe, and a
    /// blocked write must not hold the game past its time limit. Dropping it closes stdin.
    requests: Option<Sender<String>>,
    /// When each request's last byte was flushed, or why it could not be.
    written: Receiver<std::io::Result<Instant>>,
    lines: Receiver<TimedLine>,
    log_path: PathBuf,
    ended: bool,
}

impl Program {
    /// Starts `words[0]` with the other words as arguments, its stderr appended to `log_path`.
    pub fn spawn(name: &str, words: &[String], log_path: &Path) -> Result<Program, Fault> {
        let Some(program) = words.first() else {
            return Err(Fault::Unavailable("no program to run".to_string()));
        };
        let stderr = match open_log(log_path) {
            Ok(file) => Stdio::from(file),
            Err(error) => {
                tracing::warn!(
                    "{name}: cannot open stderr log {}: {error}",
                    log_path.display()
                );
                Stdio::null()
            }
        };
        let mut command = Command::new(program);
        command
            .args(&words[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);
        // Its own process group, so that killing the player also kills whatever it started (an
        // engine behind a wrapper script would otherwise go on burning CPU).
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command
            .spawn()
            .map_err(|e| Fault::Unavailable(format!("cannot run {program:?}: {e}")))?;
        register_group(child.id());
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            kill(&mut child);
            return Err(Fault::Unavailable(
                "no pipes to the child process".to_string(),
            ));
        };
        let lines = spawn_line_reader(stdout, name.to_string());
        let (requests, written) = spawn_request_writer(stdin, name);
        Ok(Program {
            child,
            requests: Some(requests),
            written,
            lines,
            log_path: log_path.to_path_buf(),
            ended: false,
        })
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        !self.ended && matches!(self.child.try_wait(), Ok(None))
    }

    /// Writes `text` (it carries its own line ends); returns when its last byte was flushed.
    pub fn send(&mut self, text: String, limit: Duration) -> Result<Instant, Unsent> {
        let Some(requests) = &self.requests else {
            return Err(Unsent::Failed(None));
        };
        if requests.send(text).is_err() {
            return Err(Unsent::Failed(None));
        }
        match self.written.recv_timeout(limit) {
            Ok(Ok(at)) => Ok(at),
            Ok(Err(error)) => Err(Unsent::Failed(Some(error))),
            Err(RecvTimeoutError::Disconnected) => Err(Unsent::Failed(None)),
            Err(RecvTimeoutError::Timeout) => Err(Unsent::TimedOut),
        }
    }

    /// The next line the program writes, waiting at most `timeout`.
    pub fn next_line(&self, timeout: Duration) -> Result<TimedLine, NoLine> {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => Err(NoLine::TimedOut),
            Err(RecvTimeoutError::Disconnected) => Err(NoLine::Closed),
        }
    }

    /// The next line before `until`.
    pub fn next_line_until(&self, until: Instant) -> Result<TimedLine, NoLine> {
        self.next_line(until.saturating_duration_since(Instant::now()))
    }

    /// The program failed (`what` says how): reaps it and describes the end with the error if
    /// there was one, its exit status and the last line of its stderr.
    pub fn crash_report(&mut self, what: &str, error: Option<&std::io::Error>) -> String {
        let status = self.reap();
        let error = error.map(|e| format!("{e}; ")).unwrap_or_default();
        format!("{what} ({error}{status}){}", self.stderr_tail())
    }

    /// The last line of the program's stderr log, to say why it died.
    pub fn stderr_tail(&self) -> String {
        last_line_of(&self.log_path)
            .map(|line| format!("; stderr: {line}"))
            .unwrap_or_default()
    }

    /// Closes its input and gives it `grace` to end by itself (end of input is how most
    /// sessions end); kills it after that.
    pub fn close(&mut self, grace: Duration) {
        self.requests = None;
        let until = Instant::now() + grace;
        loop {
            match self.child.try_wait() {
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(5)),
                Ok(Some(_)) => {
                    end_group(self.child.id());
                    self.ended = true;
                    return;
                }
                _ => {
                    self.kill();
                    return;
                }
            }
        }
    }

    /// Kills the program and every process of its group.
    pub fn kill(&mut self) {
        if !self.ended {
            kill(&mut self.child);
            self.ended = true;
        }
    }

    /// Waits briefly for a program that closed its output to finish, and describes how it ended.
    fn reap(&mut self) -> String {
        if self.ended {
            return "ended".to_string();
        }
        let until = Instant::now() + Duration::from_millis(500);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    end_group(self.child.id());
                    self.ended = true;
                    return describe_status(status);
                }
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(5)),
                Ok(None) => {
                    self.kill();
                    return "closed its output and was killed".to_string();
                }
                Err(error) => return format!("cannot wait for it: {error}"),
            }
        }
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        self.kill();
    }
}

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
    let registered = match LIVE_GROUPS.lock() {
        Ok(mut groups) => {
            let before = groups.len();
            groups.retain(|&g| g != leader);
            groups.len() != before
        }
        Err(_) => true,
    };
    // A group ended once is not signalled again: its number may belong to another by now.
    if !registered {
        return;
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
        #[cfg(unix)]
        if let Ok(group) = libc::pid_t::try_from(leader) {
            // SAFETY: as in end_group.
            let _ = unsafe { libc::kill(-group, libc::SIGKILL) };
        }
    }
}

/// Kills the player and every process of its group.
fn kill(child: &mut Child) {
    end_group(child.id());
    let _ = child.kill();
    let _ = child.wait();
}

fn describe_status(status: std::process::ExitStatus) -> String {
    match status.code() {
        Some(code) => format!("exit code {code}"),
        None => format!("{status}"),
    }
}
