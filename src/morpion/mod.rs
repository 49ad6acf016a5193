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

/// `connect5 morpion`, with the command line of seed 004's `tictactoe`.
#[derive(clap::Args, Debug)]
#[command(
    override_usage = "connect5 morpion -s A B [-p M [TRAINER]] [--state FILE] [--seed N]\n       \
                      connect5 morpion -t N A B [-p M [TRAINER]] [--state FILE] [--seed N]\n       \
                      connect5 morpion menace [--state FILE] [--seed N]\n       \
                      connect5 morpion analyze",
    after_help = "Agents: human, random, perfect (or ai), menace, rl, heuristic:P (depth P, 1-9), attractor.\n\
                  -s A B        one game, A plays X (first), B plays O, shown move by move\n\
                  -t N A B      N games; prints each player's record\n\
                  -p M [T]      learning agents (menace, rl) first train M games against T (or against\n\
                  \x20             the other player), then the games are played in exploitation mode\n\
                  --state FILE  load MENACE and RL tables from FILE, save them after training\n\
                  --seed N      seed of the random generator (reproducible runs)\n\
                  menace        seed 000's menu: play MENACE, train it, reset it\n\
                  analyze       the seeds' facts about the game, computed"
)]
pub struct MorpionArgs {
    /// The command line as seed 004's tictactoe takes it (see below).
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
