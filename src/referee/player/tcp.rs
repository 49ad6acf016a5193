//! `tcp:HOST:PORT`: a Connect5 server, one connection kept for the match.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::{answer_from_line, is_ready_line, Answer, Fault, MoveTime, Player, TimeRules};
use crate::board::{Board, Rule};
use crate::protocol::{encode_request, MAX_LINE_BYTES};

pub(super) struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

/// A Connect5 server over TCP: one connection, reused for every move of every game, as the course
/// referee does; a new one after a fault.
pub struct TcpPlayer {
    pub(super) name: String,
    pub(super) address: String,
    pub(super) start_timeout: Duration,
    pub(super) connection: Option<Connection>,
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

    fn time_rules(&self) -> TimeRules {
        TimeRules::Course
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
        time: &MoveTime,
        limit: Duration,
    ) -> Result<Answer, Fault> {
        // Never reconnected in the middle of a game: a connection lost since the last answer
        // is a crash.
        let Some(connection) = self.connection.as_mut() else {
            return Err(Fault::Crashed("lost the connection".to_string()));
        };
        let request = encode_request(board, rule, time.budget.as_millis() as u64);
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
