//! Morpion (tic-tac-toe): the agents, training and analysis of the course seeds 000, 002, 003
//! and 004, on the rules of `crate::board` (3×3, three in a row) and the engine's exact solver.

pub mod agents;
pub mod analysis;
pub mod arena;
pub mod attractor;
pub mod cli;
pub mod grid;
pub mod heuristic;
pub mod menace;
pub mod menu;
pub mod persistence;
pub mod rl;
pub mod stats;

/// `connect5 morpion`, with the command line of seed 004's `tictactoe`. Its words are handed to
/// [`cli::parse`], a clap parser of their own: the top-level one would answer a bad command line
/// with its usage and hints, and the seed's program (and its users' scripts) expect one line.
#[derive(clap::Args, Debug)]
#[command(disable_help_flag = true, override_help = cli::help())]
pub struct MorpionArgs {
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    pub args: Vec<String>,
}

pub fn run(args: MorpionArgs) -> std::process::ExitCode {
    cli::run(&args.args)
}
