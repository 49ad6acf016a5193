//! The `connect5` command: parses arguments and wires the library's parts together.

mod bench;
mod compare;
mod gomocup_command;
mod logging;
mod match_command;
mod morpion_command;
mod openings_command;
mod play;
mod review;
mod tune;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use tokio_util::sync::CancellationToken;

use connect5::engine::params::ParamArgs;
use connect5::engine::{EngineConfig, EngineKind};
use connect5::http::HttpConfig;
use connect5::server::{self, ServerConfig, ShutdownFrom};
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
    /// Speak the Gomocup (pbrain) protocol on stdin/stdout, as a brain for Gomocup managers.
    Gomocup(gomocup_command::GomocupArgs),
    /// Play a match between two players (engines, programs, servers).
    Match(connect5::referee::MatchArgs),
    /// Play against the engine in the terminal.
    Play(play::PlayArgs),
    /// Replay the games a player lost in a match's JSON summary and find where each was lost.
    Review(review::ReviewArgs),
    /// Compare two runs of a player on the same openings (two match JSON summaries), game by
    /// game: the difference of their scores with its error bar.
    Compare(compare::CompareArgs),
    /// Search a fixed set of positions to a fixed depth; print nodes, speed and time.
    Bench(bench::BenchArgs),
    /// Draw random openings and keep those the engine's search scores near even: an openings
    /// file for `connect5 match --openings` where neither colour wins nearly every game.
    Openings(openings_command::OpeningsArgs),
    /// List the search's tunable constants (`--param NAME=VALUE`): name, default, range, meaning.
    Params(ParamsArgs),
    /// Fit the evaluation's tables to played games (match JSON summaries): to their results, or
    /// to the scores of searches of their positions.
    Tune(tune::TuneArgs),
    /// The morpion (tic-tac-toe) agents of the course: games, training, analysis.
    Morpion(morpion_command::MorpionArgs),
}

/// What a protocol player says and how it plays (stdio and serve).
#[derive(Args, Debug, Clone)]
struct PlayerArgs {
    /// Identification line printed before the ready word; repeat for several lines.
    #[arg(long = "banner", value_name = "TEXT")]
    banners: Vec<String>,
    /// The word that tells the referee the player is ready (the 2020 course referee waits for PRET).
    #[arg(long, default_value = connect5::protocol::READY_WORD, value_parser = one_word)]
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
    /// Longest thinking time a request may have, in milliseconds; longer budgets are clipped.
    #[arg(long, value_name = "MS", default_value_t = connect5::session::DEFAULT_MAX_BUDGET.as_millis() as u64)]
    max_budget: u64,
    /// Searches that may run at once (default: two per core of the machine). Lower it when
    /// several replicas share one machine's cores.
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    search_slots: Option<usize>,
    #[command(flatten)]
    params: ParamArgs,
}

#[derive(Args, Debug)]
struct ServeArgs {
    /// Port to listen on, on 127.0.0.1 (as `serveurjoueur.exe 1199`); instead of --listen.
    #[arg(conflicts_with = "listen")]
    port: Option<u16>,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:1199")]
    listen: SocketAddr,
    /// Connections served at once; further ones get a one-line error and are closed.
    #[arg(long, default_value_t = 512, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_connections: usize,
    /// Connections one client address may hold at once (default: three quarters of
    /// --max-connections, so that one host does not take every slot).
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_connections_per_ip: Option<usize>,
    /// A connection that sends no request for this many seconds after its last reply is closed.
    #[arg(long, value_name = "SECONDS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    idle_timeout: u64,
    /// A request whose first byte has arrived must arrive in full within this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    request_timeout: u64,
    /// Let clients that are not on this machine stop the server with `shutdown` (by default only
    /// loopback clients may).
    #[arg(long, conflicts_with = "no_shutdown_command")]
    remote_shutdown: bool,
    /// Refuse `shutdown` from every client: the server stops on SIGTERM or SIGINT only (for
    /// replicas behind a load balancer, where every client arrives from the balancer).
    #[arg(long)]
    no_shutdown_command: bool,
    /// Also serve the HTTP API and the web board on this address (docs/http.md), for example
    /// 127.0.0.1:8080.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Serve HTTP only, not the line protocol.
    #[arg(long, requires = "http", conflicts_with = "port")]
    no_line: bool,
    #[command(flatten)]
    player: PlayerArgs,
}

impl PlayerArgs {
    /// What every session of the process shares; `timeouts` are the idle and request time-outs
    /// (a server's; a spawned player has none).
    fn shared(&self, timeouts: (Option<Duration>, Option<Duration>)) -> Arc<Shared> {
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
                max_nodes: None,
                memory: None,
                progress: None,
                params: self.params.search_params(),
            },
            overline_wins: self.overline_wins,
            max_budget: Duration::from_millis(self.max_budget),
            idle_timeout: timeouts.0,
            request_timeout: timeouts.1,
            stop_grace: session::DEFAULT_STOP_GRACE,
        };
        // A quarter of the memory stays outside the tables: boards, buffers, stacks.
        let table_bytes = (self.memory << 20) / 4 * 3;
        match self.search_slots {
            Some(slots) => Shared::with_search_slots(config, table_bytes, slots),
            None => Shared::new(config, table_bytes),
        }
    }
}

/// A ready word must be something a referee can wait for: one non-empty word.
fn one_word(text: &str) -> Result<String, String> {
    if text.is_empty() || text.chars().any(char::is_whitespace) {
        Err("the ready word must be one word, without spaces".to_string())
    } else {
        Ok(text.to_string())
    }
}

/// Cancels `stop` on SIGINT or SIGTERM. The handlers are installed before this returns (call it
/// inside the runtime, before announcing readiness): a signal sent the moment the process says it
/// is listening must stop it cleanly, not kill it.
fn stop_on_signals(stop: CancellationToken) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let streams = signal(SignalKind::interrupt()).and_then(|interrupt| {
            signal(SignalKind::terminate()).map(|terminate| (interrupt, terminate))
        });
        match streams {
            Ok((mut interrupt, mut terminate)) => {
                tokio::spawn(async move {
                    tokio::select! {
                        _ = interrupt.recv() => {}
                        _ = terminate.recv() => {}
                    }
                    tracing::info!("signal received: stopping");
                    stop.cancel();
                });
            }
            Err(error) => tracing::warn!(%error, "cannot watch for signals"),
        }
    }
    #[cfg(not(unix))]
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            tracing::info!("signal received: stopping");
            stop.cancel();
        }
    });
}

fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
}

fn serve(args: ServeArgs) -> ExitCode {
    let address = match args.port {
        Some(port) => SocketAddr::from(([127, 0, 0, 1], port)),
        None => args.listen,
    };
    let shared = args.player.shared((
        Some(Duration::from_secs(args.idle_timeout)),
        Some(Duration::from_secs(args.request_timeout)),
    ));
    let config = ServerConfig {
        max_connections: args.max_connections,
        max_connections_per_ip: args
            .max_connections_per_ip
            .unwrap_or(args.max_connections - args.max_connections / 4),
        shutdown_from: if args.no_shutdown_command {
            ShutdownFrom::Nobody
        } else if args.remote_shutdown {
            ShutdownFrom::Anywhere
        } else {
            ShutdownFrom::Loopback
        },
    };
    let http_config = HttpConfig {
        max_connections: args.max_connections,
        header_timeout: Duration::from_secs(args.request_timeout),
    };
    let result = runtime().and_then(|rt| {
        rt.block_on(async {
            let stop = CancellationToken::new();
            stop_on_signals(stop.clone());
            let line = match args.no_line {
                true => None,
                false => Some(bind(address).await?),
            };
            let http = match args.http {
                Some(http_address) => Some(bind(http_address).await?),
                None => None,
            };
            if let Some(listener) = &line {
                tracing::info!("listening on {}", listener.local_addr()?);
            }
            if let Some(listener) = &http {
                tracing::info!(
                    "serving HTTP on http://{}/ (web board, API: docs/http.md)",
                    listener.local_addr()?
                );
            }
            let line_server = async {
                match line {
                    Some(listener) => {
                        server::serve(listener, Arc::clone(&shared), config, stop.clone()).await
                    }
                    None => Ok(()),
                }
            };
            let http_server = async {
                match http {
                    Some(listener) => {
                        connect5::http::serve(
                            listener,
                            Arc::clone(&shared),
                            http_config,
                            stop.clone(),
                        )
                        .await
                    }
                    None => Ok(()),
                }
            };
            tokio::try_join!(line_server, http_server)?;
            tracing::info!("stopped: {}", shared.metrics);
            Ok(())
        })
    });
    command_status("serve", result)
}

async fn bind(address: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(address)
        .await
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot listen on {address}: {e}")))
}

fn stdio(args: PlayerArgs) -> ExitCode {
    let shared = args.shared((None, None));
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
        // The referee that spawned the player owns it: its `shutdown` ends the session.
        session::run(
            reader,
            tokio::io::stdout(),
            shared,
            stop,
            session::ShutdownRight::Granted,
        )
        .await
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

#[derive(clap::Args, Debug)]
struct ParamsArgs {
    /// Print instead the evaluation's tables (the form of `src/engine/v2/eval_weights.txt`) a
    /// search plays with the `--param` values given: the shipped ones moved by what the
    /// formula's changed `eval_*` values change.
    #[arg(long, conflicts_with = "ordering_table")]
    eval_table: bool,
    /// Print instead the move ordering's tables (the form of
    /// `src/engine/v2/ordering_weights.txt`) that the formula's `order_*` values make.
    #[arg(long)]
    ordering_table: bool,
    #[command(flatten)]
    params: ParamArgs,
}

/// `connect5 params`: the list of tunable constants, or the tables a search plays with.
fn params_command(args: ParamsArgs) {
    use connect5::engine::tuning::{OrderingWeights, Weights};
    let params = args.params.search_params();
    let header = |what: &str, section: &str, option: &str, prefix: &str| {
        let formula: Vec<String> = params
            .pairs()
            .into_iter()
            .filter(|(name, _)| name.starts_with(prefix))
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        format!(
            "The {what} of engine v2 (docs/engine.md, \"{section}\"), read at build time by \
             build.rs.\n\
             Written by `connect5 params {option}`: the shipped tables moved by what these \
             formula values change from the defaults:\n{}",
            formula.join(" ")
        )
    };
    if args.eval_table {
        let header = header("evaluation", "Evaluation", "--eval-table", "eval_");
        print!("{}", Weights::of_params(&params).to_text(&header));
    } else if args.ordering_table {
        let header = header("move ordering", "Search", "--ordering-table", "order_");
        print!("{}", OrderingWeights::of_params(&params).to_text(&header));
    } else {
        print!("{}", connect5::engine::params::table());
    }
}

/// How a command that prints its own results ends: success, or its error as one line on stderr
/// named by the command (`connect5 NAME: ...`) and exit status 1.
fn command_status(command: &str, result: Result<(), impl std::fmt::Display>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("connect5 {command}: {error}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if matches!(
        cli.command,
        Command::Bench(_)
            | Command::Openings(_)
            | Command::Params(_)
            | Command::Review(_)
            | Command::Compare(_)
            | Command::Tune(_)
            | Command::Morpion(_)
    ) {
        exit_quietly_when_the_reader_leaves();
    }
    // Logs go to stderr, set up here once for every command: a server says what it does; the
    // other commands speak only of trouble unless RUST_LOG asks for more.
    logging::init(if matches!(cli.command, Command::Serve(_)) {
        "info"
    } else {
        "warn"
    });
    match cli.command {
        Command::Serve(args) => serve(args),
        Command::Stdio(args) => stdio(args),
        Command::Gomocup(args) => gomocup_command::run(args),
        Command::Match(args) => match_command::run(args),
        Command::Play(args) => play::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Openings(args) => openings_command::run(args),
        Command::Params(args) => {
            params_command(args);
            ExitCode::SUCCESS
        }
        Command::Review(args) => review::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Tune(args) => tune::run(args),
        Command::Morpion(args) => morpion_command::run(&args.args),
    }
}

/// Commands that only print a report end quietly when their reader goes away (`connect5 bench |
/// head`), as Unix tools do, instead of panicking on the failed write. Not for the protocol modes
/// and the match runner: they write to peers that may vanish and treat that as an error to handle.
fn exit_quietly_when_the_reader_leaves() {
    #[cfg(unix)]
    // SAFETY: restores the default action of one signal, before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
