//! `connect5 match`: the library's match runner, with the process's exit status and Ctrl-C.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use connect5::referee::{run_match, MatchArgs, MatchEnd};

/// Raised by the first Ctrl-C (SIGINT) or SIGTERM of a match.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

pub fn run(args: MatchArgs) -> ExitCode {
    watch_interrupts();
    match run_match(&args.options, &INTERRUPTED) {
        Ok(MatchEnd::Finished) => ExitCode::SUCCESS,
        // The workers may be waiting on players: the players are ended (they run in process
        // groups of their own, so the terminal's signal did not reach them) and the games are
        // not waited for (returning ends the process with its threads).
        Ok(MatchEnd::Interrupted) => ExitCode::from(130),
        Err(error) => {
            eprintln!("connect5 match: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The first interrupt ends the match with the closing lines and records of the games finished
/// so far (as cutechess-cli does); a second one ends the process at once. The handler runs on a
/// thread of the `ctrlc` crate, not in the signal's context, so it may end the process.
fn watch_interrupts() {
    let installed = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    });
    if let Err(error) = installed {
        tracing::warn!(%error, "Ctrl-C will end the match at once, without its closing lines");
    }
}
