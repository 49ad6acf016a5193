//! The TCP server: accept loop, connection limit, shutdown broadcast. Each connection runs the
//! same session code as stdio mode.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::session::{self, SessionEnd, Shared};

#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub max_connections: usize,
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
        let Ok(permit) = Arc::clone(&slots).try_acquire_owned() else {
            tracing::warn!(%peer, "connection refused: limit of {} reached", config.max_connections);
            sessions.spawn(refuse(stream, config.max_connections));
            continue;
        };
        let shared = Arc::clone(&shared);
        let stop = stop.clone();
        sessions.spawn(async move {
            connection(stream, peer, shared, stop).await;
            drop(permit);
        });
    }
    tracing::info!("stopping: no new connections; finishing requests in flight");
    drop(listener);
    while sessions.join_next().await.is_some() {}
    Ok(())
}

async fn refuse(mut stream: TcpStream, limit: usize) {
    let line = format!("ERROR busy: the server already serves {limit} connections\n");
    let _ = stream.write_all(line.as_bytes()).await;
    let _ = stream.shutdown().await;
}

async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared>,
    stop: CancellationToken,
) {
    let _ = stream.set_nodelay(true);
    tracing::debug!(%peer, "connected");
    let (read, write) = stream.into_split();
    match session::run(BufReader::new(read), write, shared, stop.clone()).await {
        Ok(SessionEnd::Shutdown) => {
            tracing::info!(%peer, "shutdown requested");
            stop.cancel();
        }
        Ok(end) => tracing::debug!(%peer, ?end, "session over"),
        Err(error) => tracing::debug!(%peer, %error, "connection lost"),
    }
}
