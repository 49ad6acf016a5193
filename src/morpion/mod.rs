//! Morpion (tic-tac-toe) agents of the course seeds. Placeholder.

#[derive(clap::Args, Debug)]
pub struct MorpionArgs {}

pub fn run(_args: MorpionArgs) -> std::process::ExitCode {
    eprintln!("connect5 morpion: not implemented yet");
    std::process::ExitCode::FAILURE
}
