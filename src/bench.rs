//! `connect5 bench`: fixed positions searched to a fixed depth. Placeholder.

#[derive(clap::Args, Debug)]
pub struct BenchArgs {}

pub fn run(_args: BenchArgs) -> std::process::ExitCode {
    eprintln!("connect5 bench: not implemented yet");
    std::process::ExitCode::FAILURE
}
