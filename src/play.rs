//! `connect5 play`: a person plays the engine in the terminal. Placeholder.

#[derive(clap::Args, Debug)]
pub struct PlayArgs {}

pub fn run(_args: PlayArgs) -> std::process::ExitCode {
    eprintln!("connect5 play: not implemented yet");
    std::process::ExitCode::FAILURE
}
