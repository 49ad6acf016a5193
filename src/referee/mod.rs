//! Match runner (referee): plays any two players against each other. Placeholder.

/// `connect5 match` options.
#[derive(clap::Args, Debug)]
pub struct MatchArgs {}

pub fn run(_args: MatchArgs) -> std::process::ExitCode {
    eprintln!("connect5 match: not implemented yet");
    std::process::ExitCode::FAILURE
}
