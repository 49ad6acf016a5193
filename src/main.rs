//! The `connect5` command: parses arguments and wires the library's parts together.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};
use tokio_util::sync::CancellationToken;

use connect5::engine::{EngineConfig, EngineKind};
use connect5::server::{self, ServerConfig};
use connect5::session::{self, SessionConfig, Shared};

#[derive(Parser, Debug)]
#[command(
    name = "connect5",
    version,
    about = "Connect5 (exact-five gomoku) engine, server and match runner"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve the Connect5 protocol over TCP, one session per connection.
    Serve(ServeArgs),
    /// Speak the Connect5 protocol on stdin/stdout, for referees that spawn the player.
    Stdio(PlayerArgs),
    /// Play a match between two players (engines, programs, servers).
    Match(connect5::referee::MatchArgs),
    /// Play against the engine in the terminal.
    Play(connect5::play::PlayArgs),
    /// Search a fixed set of positions to a fixed depth; print nodes, speed and time.
    Bench(connect5::bench::BenchArgs),
    /// The morpion (tic-tac-toe) agents of the course: games, training, analysis.
    Morpion(connect5::morpion::MorpionArgs),
}

/// What a protocol player says and how it plays (stdio and serve).
#[derive(Args, Debug, Clone)]
struct PlayerArgs {
    /// Identification line printed before the ready word; repeat for several lines.
    #[arg(long = "banner", value_name = "TEXT")]
    banners: Vec<String>,
    /// The word that tells the referee the player is ready (the 2020 course referee waits for PRET).
    #[arg(long, default_value = connect5::protocol::READY_WORD)]
    ready_word: String,
    /// Which search answers: v2 (the tournament engine) or v1 (the baseline).
    #[arg(long, value_enum, default_value_t = EngineKind::default())]
    engine: EngineKind,
    /// Transposition-table size of one search, in MiB.
    #[arg(long, value_name = "MB", default_value_t = 64)]
    hash: usize,
    /// Memory all searches together may use for their tables, in MiB.
    #[arg(long, value_name = "MB", default_value_t = 512)]
    memory: usize,
    /// Five or more in a row wins (freestyle, as the 2020 course referee counts) instead of exactly five.
    #[arg(long)]
    overline_wins: bool,
}

#[derive(Args, Debug)]
struct ServeArgs {
    /// Port to listen on, on 127.0.0.1 (as `serveurjoueur.exe 1199`); overrides --listen.
    port: Option<u16>,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:1199")]
    listen: SocketAddr,
    /// Connections served at once; further ones get a one-line error and are closed.
    #[arg(long, default_value_t = 512)]
    max_connections: usize,
    #[command(flatten)]
    player: PlayerArgs,
}

impl PlayerArgs {
    fn shared(&self) -> Arc<Shared> {
        let banners = if self.banners.is_empty() {
            vec![connect5::protocol::default_banner()]
        } else {
            self.banners.clone()
        };
        let config = SessionConfig {
            banners,
            ready_word: self.ready_word.clone(),
            engine: EngineConfig {
                kind: self.engine,
                hash_bytes: self.hash.max(1) << 20,
                max_depth: None,
            },
            overline_wins: self.overline_wins,
        };
        // A quarter of the memory stays outside the tables: boards, buffers, stacks.
        Shared::new(config, (self.memory << 20) / 4 * 3)
    }
}

fn init_logging(default_level: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_level));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

/// Cancels `stop` on SIGINT or SIGTERM.
fn stop_on_signals(stop: CancellationToken) {
    tokio::spawn(async move {
        let interrupt = tokio::signal::ctrl_c();
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            match signal(SignalKind::terminate()) {
                Ok(mut terminate) => {
                    tokio::select! {
                        _ = interrupt => {}
                        _ = terminate.recv() => {}
                    }
                }
                Err(_) => {
                    let _ = interrupt.await;
                }
            }
        }
        #[cfg(not(unix))]
        let _ = interrupt.await;
        tracing::info!("signal received: stopping");
        stop.cancel();
    });
}

fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
}

fn serve(args: ServeArgs) -> ExitCode {
    init_logging("info");
    let address = match args.port {
        Some(port) => SocketAddr::from(([127, 0, 0, 1], port)),
        None => args.listen,
    };
    let shared = args.player.shared();
    let result = runtime().and_then(|rt| {
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind(address).await.map_err(|e| {
                std::io::Error::new(e.kind(), format!("cannot listen on {address}: {e}"))
            })?;
            tracing::info!("listening on {}", listener.local_addr()?);
            let stop = CancellationToken::new();
            stop_on_signals(stop.clone());
            let config = ServerConfig {
                max_connections: args.max_connections.max(1),
            };
            server::serve(listener, shared, config, stop).await
        })
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("connect5 serve: {error}");
            ExitCode::FAILURE
        }
    }
}

fn stdio(args: PlayerArgs) -> ExitCode {
    init_logging("warn");
    let shared = args.shared();
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(error) => {
            eprintln!("connect5 stdio: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = rt.block_on(async {
        let stop = CancellationToken::new();
        stop_on_signals(stop.clone());
        let reader = tokio::io::BufReader::new(tokio::io::stdin());
        session::run(reader, tokio::io::stdout(), shared, stop).await
    });
    // Exit with the runtime still alive: dropping it would wait for its stdin reader, which may
    // be blocked in read(2) for as long as the referee keeps the pipe open.
    match result {
        Ok(end) => {
            tracing::debug!(?end, "session over");
            std::process::exit(0)
        }
        Err(error) => {
            eprintln!("connect5 stdio: {error}");
            std::process::exit(1)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve(args),
        Command::Stdio(args) => stdio(args),
        Command::Match(args) => connect5::referee::run(args),
        Command::Play(args) => connect5::play::run(args),
        Command::Bench(args) => connect5::bench::run(args),
        Command::Morpion(args) => connect5::morpion::run(args),
    }
}
