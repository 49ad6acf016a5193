//! The TCP server: accept loop, connection limit, shutdown broadcast. Each connection runs the
//! same session code as stdio mode.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::metrics::Front;
use crate::session::{self, SessionEnd, Shared, ShutdownRight};

/// Which clients' `shutdown` stops the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownFrom {
    /// Clients on this machine (the default: a course's referee beside the server).
    Loopback,
    Anywhere,
    /// No client: the process stops on a signal only (replicas behind a load balancer, whose
    /// clients all arrive from the balancer's address).
    Nobody,
}

#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub max_connections: usize,
    /// Connections one address may hold at once, so that one host cannot take every slot.
    pub max_connections_per_ip: usize,
    /// Which clients may stop the server with `shutdown`.
    pub shutdown_from: ShutdownFrom,
}

/// Connections open per client address.
#[derive(Default)]
struct PerAddress {
    open: Mutex<HashMap<IpAddr, usize>>,
}

/// One connection counted against its address; uncounted when dropped.
struct AddressSlot {
    table: Arc<PerAddress>,
    ip: IpAddr,
}

impl PerAddress {
    /// Counts a connection from `ip`, unless it already holds `limit`.
    fn take(self: &Arc<Self>, ip: IpAddr, limit: usize) -> Option<AddressSlot> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let count = open.entry(ip).or_insert(0);
        if *count >= limit {
            return None;
        }
        *count += 1;
        Some(AddressSlot {
            table: Arc::clone(self),
            ip,
        })
    }
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let mut open = self.table.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = open.get_mut(&self.ip) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

/// Serves until a client sends `shutdown` or `stop` is cancelled (a signal); then stops accepting,
/// lets every request in flight be answered, and returns.
pub async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    config: ServerConfig,
    stop: CancellationToken,
) -> io::Result<()> {
    let slots = Arc::new(Semaphore::new(config.max_connections));
    let per_address = Arc::new(PerAddress::default());
    let mut sessions = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
            // Reap finished sessions as we go so the set does not grow with every connection.
            Some(_) = sessions.join_next(), if !sessions.is_empty() => continue,
        };
        let (stream, peer) = match accepted {
            Ok(pair) => pair,
            Err(error) => {
                // Running out of descriptors and the like: keep serving the others.
                tracing::warn!(%error, "accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                continue;
            }
        };
        let Some(address_slot) = per_address.take(peer.ip(), config.max_connections_per_ip) else {
            tracing::warn!(
                %peer,
                "connection refused: this address already holds {} connections",
                config.max_connections_per_ip
            );
            let why = format!(
                "ERROR busy: your address already holds {} connections",
                config.max_connections_per_ip
            );
            shared.metrics.refused(Front::Line);
            sessions.spawn(refuse(stream, why));
            continue;
        };
        let Ok(permit) = Arc::clone(&slots).try_acquire_owned() else {
            tracing::warn!(%peer, "connection refused: limit of {} reached", config.max_connections);
            let why = format!(
                "ERROR busy: the server already serves {} connections",
                config.max_connections
            );
            shared.metrics.refused(Front::Line);
            sessions.spawn(refuse(stream, why));
            continue;
        };
        let shared = Arc::clone(&shared);
        let stop = stop.clone();
        let shutdown_from = config.shutdown_from;
        sessions.spawn(connection(
            stream,
            peer,
            shared,
            stop,
            shutdown_from,
            (permit, address_slot),
        ));
    }
    tracing::info!("stopping: no new connections; finishing requests in flight");
    drop(listener);
    while sessions.join_next().await.is_some() {}
    Ok(())
}

async fn refuse(mut stream: TcpStream, why: String) {
    let line = format!("{why}\n");
    let _ = stream.write_all(line.as_bytes()).await;
    let _ = stream.shutdown().await;
}

async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared>,
    stop: CancellationToken,
    shutdown_from: ShutdownFrom,
    places: (OwnedSemaphorePermit, AddressSlot),
) {
    let _ = stream.set_nodelay(true);
    tracing::debug!(%peer, "connected");
    let open = shared.metrics.connection(Front::Line);
    let (read, write) = stream.into_split();
    let shutdown = match shutdown_from {
        ShutdownFrom::Anywhere => ShutdownRight::Granted,
        ShutdownFrom::Loopback if peer.ip().is_loopback() => ShutdownRight::Granted,
        ShutdownFrom::Loopback => ShutdownRight::NotLoopback,
        ShutdownFrom::Nobody => ShutdownRight::Disabled,
    };
    let end = session::run(BufReader::new(read), write, shared, stop.clone(), shutdown).await;
    // The places are given back before the end is logged: whoever reads the log may reconnect.
    drop((places, open));
    match end {
        Ok(SessionEnd::Shutdown) => {
            tracing::info!(%peer, "shutdown requested");
            stop.cancel();
        }
        Ok(SessionEnd::TimedOut) => tracing::info!(%peer, "session closed: the client was silent"),
        Ok(end) => tracing::debug!(%peer, ?end, "session over"),
        Err(error) => tracing::debug!(%peer, %error, "connection lost"),
    }
}
