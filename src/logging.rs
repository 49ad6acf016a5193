//! Logs go to stderr through `tracing`, filtered by `RUST_LOG`: stdout belongs to the protocols
//! (a referee or a manager reads it) and to the reports.

use std::io::IsTerminal;

/// Installs the stderr logger with `default_level` unless `RUST_LOG` says otherwise; colours only
/// on a terminal, and never with `NO_COLOR`. A second call (a test, a command calling another)
/// keeps the first logger.
pub fn init(default_level: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .try_init();
}
