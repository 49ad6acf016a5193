//! `connect5 morpion`, the command line of the library's morpion lab: parsing (seed 004's `tictactoe -s | -t N | -p M [TRAINER]`) and the
//! game modes.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches};
use rand::rngs::StdRng;
use rand::SeedableRng;

use connect5::board::Stone;

use connect5::morpion::agents::{AgentKind, AgentNameError, Console, GameError};
use connect5::morpion::arena::{play_game, play_series, Player};
use connect5::morpion::grid::symbol;
use connect5::morpion::persistence::SavedLearners;
use connect5::morpion::MorpionError;

/// What to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `-s A B` (games = None: one game shown) or `-t N A B`.
    Games {
        games: Option<u64>,
        players: [AgentKind; 2],
        practice: Option<Practice>,
    },
    Menu,
    Analyze,
}

/// `-p M [TRAINER]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Practice {
    pub games: u64,
    pub trainer: Option<AgentKind>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub command: Command,
    pub state: Option<PathBuf>,
    pub seed: Option<u64>,
}

/// `connect5 morpion`, with the command line of seed 004's `tictactoe`. Its words are handed to
/// [`parse`], a clap parser of their own: the top-level one would answer a bad command line
/// with its usage and hints, and the seed's program (and its users' scripts) expect one line.
#[derive(clap::Args, Debug)]
#[command(disable_help_flag = true, override_help = help())]
pub struct MorpionArgs {
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    pub args: Vec<String>,
}

const USAGE: &str = "connect5 morpion -s A B [-p M [TRAINER]] [--state FILE] [--seed N]
       connect5 morpion -t N A B [-p M [TRAINER]] [--state FILE] [--seed N]
       connect5 morpion menace [--state FILE] [--seed N]
       connect5 morpion analyze";

const AFTER_HELP: &str = "\
Agents: human, random, perfect (or ai), menace, rl, heuristic:P (depth P, 1-9), attractor.
A plays X (first), B plays O. The trainer of -p is named only when three agents are: it is the
one right after -p M (-t 10 random rl -p 500 ai: trainer ai; -t 10 -p 500 random rl: none).
menace        seed 000's menu: play MENACE, train it, reset it
analyze       the seeds' facts about the game, computed";

/// The words after `connect5 morpion`, as clap reads them; [`parse`] then gives the agents their
/// roles, which depends on where `-p` stands among them.
#[derive(clap::Parser, Debug)]
#[command(
    name = "connect5 morpion",
    bin_name = "connect5 morpion",
    about = "The morpion (tic-tac-toe) agents of the course: games, training, analysis",
    override_usage = USAGE,
    after_help = AFTER_HELP,
    // Seed 004's tictactoe let a repeated option replace the earlier one.
    args_override_self = true
)]
struct Arguments {
    /// One game, shown move by move
    #[arg(short = 's', conflicts_with = "series")]
    single: bool,
    /// N games, then each player's record
    #[arg(short = 't', value_name = "N")]
    series: Option<u64>,
    /// First the learners (menace, rl) train M games against the trainer, else each other
    #[arg(short = 'p', value_name = "M")]
    practice: Option<u64>,
    /// Load the MENACE and RL tables from FILE, save them after training
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// Seed of the random generator (reproducible runs)
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// A B [TRAINER] with -s or -t; alone: menace (seed 000's menu) or analyze
    #[arg(value_name = "AGENT")]
    words: Vec<String>,
}

/// The help of `connect5 morpion`, for the top-level `connect5 help morpion`.
pub fn help() -> clap::builder::StyledStr {
    Arguments::command().render_long_help()
}

/// A command line that clap accepts but that names the wrong agents or too many of them.
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    #[error("nothing to do: use -s A B, -t N A B, menace or analyze")]
    NothingToDo,
    #[error("unexpected {0:?}: use -s A B, -t N A B, menace or analyze")]
    Unexpected(String),
    #[error("-p goes with -s or -t")]
    PracticeWithoutGames,
    #[error("three agents named ({0}) but only two play; a trainer goes right after -p M")]
    TrainerMisplaced(String),
    #[error("two agents are needed (X then O), {0} given")]
    AgentCount(usize),
    #[error(transparent)]
    Agent(#[from] AgentNameError),
    #[error("a human cannot be the trainer of thousands of games")]
    HumanTrainer,
}

impl UsageError {
    fn kind(&self) -> ErrorKind {
        match self {
            UsageError::NothingToDo => ErrorKind::MissingRequiredArgument,
            UsageError::Unexpected(_) => ErrorKind::UnknownArgument,
            UsageError::PracticeWithoutGames => ErrorKind::ArgumentConflict,
            UsageError::TrainerMisplaced(_) | UsageError::AgentCount(_) => {
                ErrorKind::WrongNumberOfValues
            }
            UsageError::Agent(_) | UsageError::HumanTrainer => ErrorKind::InvalidValue,
        }
    }
}

/// Parses the words after `connect5 morpion`.
///
/// `-p M` takes a trainer only when one more agent is named than the two players: in
/// `-t 10 random rl -p 500 ai` the trainer is `ai`, in `-t 10 -p 500 random rl` there is none.
pub fn parse(words: &[String]) -> Result<Options, clap::Error> {
    let mut command = Arguments::command();
    let program = std::iter::once("connect5 morpion".to_string());
    let matches = command.try_get_matches_from_mut(program.chain(words.iter().cloned()))?;
    let arguments = Arguments::from_arg_matches(&matches)?;
    // Clap numbers every value in order, options' values and positionals alike.
    let words_before_practice = matches.index_of("practice").map(|practice| {
        matches
            .indices_of("words")
            .map_or(0, |indices| indices.filter(|&i| i < practice).count())
    });
    arguments
        .into_options(words_before_practice)
        .map_err(|problem| command.error(problem.kind(), problem))
}

impl Arguments {
    fn into_options(self, words_before_practice: Option<usize>) -> Result<Options, UsageError> {
        let command = if self.single || self.series.is_some() {
            self.games(words_before_practice)?
        } else {
            self.other_command()?
        };
        Ok(Options {
            command,
            state: self.state,
            seed: self.seed,
        })
    }

    /// `menace` or `analyze`, the commands without -s or -t.
    fn other_command(&self) -> Result<Command, UsageError> {
        let command = match self.words.as_slice() {
            [word] if word.eq_ignore_ascii_case("menace") => Command::Menu,
            [word] if word.eq_ignore_ascii_case("analyze") => Command::Analyze,
            [] => return Err(UsageError::NothingToDo),
            words => return Err(UsageError::Unexpected(words.join(" "))),
        };
        if self.practice.is_some() {
            return Err(UsageError::PracticeWithoutGames);
        }
        Ok(command)
    }

    fn games(&self, words_before_practice: Option<usize>) -> Result<Command, UsageError> {
        let mut words = self.words.clone();
        let mut trainer = None;
        if words.len() == 3 {
            match words_before_practice {
                Some(position) if position < words.len() => {
                    trainer = Some(AgentKind::parse(&words.remove(position))?);
                }
                _ => return Err(UsageError::TrainerMisplaced(words.join(", "))),
            }
        }
        let [x, o] = words.as_slice() else {
            return Err(UsageError::AgentCount(words.len()));
        };
        let players = [AgentKind::parse(x)?, AgentKind::parse(o)?];
        if trainer == Some(AgentKind::Human) {
            return Err(UsageError::HumanTrainer);
        }
        Ok(Command::Games {
            games: self.series,
            players,
            practice: self.practice.map(|games| Practice { games, trainer }),
        })
    }
}

/// Clap renders an error as the problem, the usage and a hint, on several lines; seed 004's
/// program named the problem on one line, and so do we.
fn problem_line(error: &clap::Error) -> String {
    let rendered = error.render().to_string();
    let first = rendered.lines().next().unwrap_or_default();
    first.strip_prefix("error: ").unwrap_or(first).to_string()
}

pub fn run(words: &[String]) -> ExitCode {
    let options = match parse(words) {
        Ok(options) => options,
        // --help and its like: clap's answer is the output asked for.
        Err(answer) if !answer.use_stderr() => {
            let _ = answer.print();
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("connect5 morpion: {}", problem_line(&error));
            return ExitCode::from(2);
        }
    };
    let mut rng = match options.seed {
        Some(seed) => StdRng::seed_from_u64(seed),
        None => StdRng::from_entropy(),
    };
    let mut console = Console::stdio();
    let result = match options.command {
        Command::Analyze => {
            console.say(&connect5::morpion::analysis::compute().report());
            Ok(())
        }
        Command::Menu => {
            connect5::morpion::menu::run(options.state.as_deref(), &mut rng, &mut console)
        }
        Command::Games {
            games,
            players,
            practice,
        } => run_games(
            games,
            players,
            practice,
            options.state,
            &mut rng,
            &mut console,
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("connect5 morpion: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The state-file slot of each learning player: `menace`, `rl`, and `menace#2`, `rl#2` for a
/// second player of the same kind.
pub fn slots(players: &[AgentKind; 2]) -> [Option<String>; 2] {
    let first = players[0].learns().then(|| players[0].to_string());
    let second = players[1].learns().then(|| {
        if players[1] == players[0] {
            format!("{}#2", players[1])
        } else {
            players[1].to_string()
        }
    });
    [first, second]
}

fn describe_seat(index: usize, player: &Player) -> String {
    let side = if index == 0 {
        Stone::Black
    } else {
        Stone::White
    };
    format!(
        "player {} ({}, {}): {}",
        index + 1,
        player.kind(),
        symbol(side),
        player.record.describe()
    )
}

fn run_games(
    games: Option<u64>,
    kinds: [AgentKind; 2],
    practice: Option<Practice>,
    state_path: Option<PathBuf>,
    rng: &mut StdRng,
    console: &mut Console,
) -> Result<(), MorpionError> {
    let mut saved = SavedLearners::open(state_path.as_deref(), slots(&kinds))?;
    let mut players = kinds.map(Player::new);
    saved.restore(players.each_mut());
    if let Some(practice) = practice {
        if practice.games > 0 {
            train(&mut players, practice, rng, console)?;
            saved.keep(players.each_ref())?;
        }
        // The games that follow -p measure what was learnt: nothing more is learnt or counted
        // from the training.
        for player in &mut players {
            player.agent.set_training(false);
            player.record = Default::default();
        }
    }
    play_games(&mut players, games, rng, console)?;
    if practice.is_none() {
        // Learners played in training mode: keep what they learnt.
        saved.keep(players.each_ref())?;
    }
    Ok(())
}

/// The game of `-s` (shown), or the `-t N` games (shown only to a human), then both records.
fn play_games(
    players: &mut [Player; 2],
    games: Option<u64>,
    rng: &mut StdRng,
    console: &mut Console,
) -> Result<(), GameError> {
    let [x, o] = players;
    match games {
        None => {
            play_game(x, o, rng, console, true)?;
        }
        Some(n) => {
            let show = x.kind() == AgentKind::Human || o.kind() == AgentKind::Human;
            for _ in 0..n {
                play_game(x, o, rng, console, show)?;
            }
        }
    }
    console.say(&format!(
        "{}\n{}\n",
        describe_seat(0, x),
        describe_seat(1, o)
    ));
    Ok(())
}

/// The `-p M [TRAINER]` phase: each learning player trains `M` games in its own seat against the
/// trainer, or both players play `M` games against each other when no trainer is named.
fn train(
    players: &mut [Player; 2],
    practice: Practice,
    rng: &mut StdRng,
    console: &mut Console,
) -> Result<(), GameError> {
    for player in players.iter_mut() {
        player.agent.set_training(true);
    }
    match practice.trainer {
        None => {
            let [x, o] = players;
            play_series(x, o, practice.games, rng, console)?;
            console.say(&format!(
                "training, {} games against each other:\n{}\n{}\n",
                practice.games,
                describe_seat(0, x),
                describe_seat(1, o)
            ));
        }
        Some(trainer) => {
            for (index, learner) in players.iter_mut().enumerate() {
                if !learner.kind().learns() {
                    continue;
                }
                let mut opponent = Player::new(trainer);
                if index == 0 {
                    play_series(learner, &mut opponent, practice.games, rng, console)?;
                } else {
                    play_series(&mut opponent, learner, practice.games, rng, console)?;
                }
                console.say(&format!(
                    "training, {} games against {trainer}:\n{}\n",
                    practice.games,
                    describe_seat(index, learner)
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn seed_command_lines_parse() {
        let o = parse(&words("-t 1000 random rl -p 100000 ai")).unwrap();
        assert_eq!(
            o.command,
            Command::Games {
                games: Some(1000),
                players: [AgentKind::Random, AgentKind::Rl],
                practice: Some(Practice {
                    games: 100000,
                    trainer: Some(AgentKind::Perfect)
                }),
            }
        );
        let o = parse(&words("-t 1000 random rl -p 100000")).unwrap();
        assert!(matches!(
            o.command,
            Command::Games {
                practice: Some(Practice { trainer: None, .. }),
                ..
            }
        ));
        let o = parse(&words("-p 10 -s human rl")).unwrap();
        assert!(matches!(
            o.command,
            Command::Games {
                games: None,
                practice: Some(Practice {
                    games: 10,
                    trainer: None
                }),
                ..
            }
        ));
        // The trainer is the agent right after -p M, wherever -p stands.
        let o = parse(&words("-t 10 -p 500 ai random rl")).unwrap();
        assert!(matches!(
            o.command,
            Command::Games {
                players: [AgentKind::Random, AgentKind::Rl],
                practice: Some(Practice {
                    trainer: Some(AgentKind::Perfect),
                    ..
                }),
                ..
            }
        ));
        let o = parse(&words("-t 10 random -p 500 ai rl")).unwrap();
        assert!(matches!(
            o.command,
            Command::Games {
                players: [AgentKind::Random, AgentKind::Rl],
                practice: Some(Practice {
                    trainer: Some(AgentKind::Perfect),
                    ..
                }),
                ..
            }
        ));
        assert_eq!(parse(&words("menace")).unwrap().command, Command::Menu);
        assert_eq!(parse(&words("ANALYZE")).unwrap().command, Command::Analyze);
        let o = parse(&words("--state=f.json --seed=4 menace")).unwrap();
        assert_eq!((o.state, o.seed), (Some(PathBuf::from("f.json")), Some(4)));
        assert_eq!(parse(&words("analyze")).unwrap().command, Command::Analyze);
        let o = parse(&words("-s menace random --state f.json --seed 3")).unwrap();
        assert_eq!(o.state, Some(PathBuf::from("f.json")));
        assert_eq!(o.seed, Some(3));
    }

    #[test]
    fn bad_command_lines_are_refused() {
        for bad in [
            "-t",
            "-t x random random",
            "-s random",
            "-s random perfect menace",
            "-s random dog",
            "-s -t 3 random random",
            "-s random heuristic:0",
            "-s random heuristic:x",
            "--bogus",
            "",
            "menace random",
            "-s random rl -p 10 human",
            "-t 5 random rl -p",
            "-p 5 menace",
            "-s random rl ai -p 10",
            "--state",
            "--seed x menace",
            "-s random rl -x",
        ] {
            let Err(error) = parse(&words(bad)) else {
                panic!("{bad:?} accepted");
            };
            let problem = problem_line(&error);
            assert!(error.use_stderr(), "{bad:?}: {problem}");
            assert!(
                !problem.is_empty() && !problem.starts_with("error"),
                "{bad:?}: {problem:?}"
            );
        }
    }

    #[test]
    fn errors_name_the_problem() {
        for (bad, problem) in [
            ("-s random", "two agents are needed (X then O), 1 given"),
            (
                "-s random perfect menace",
                "three agents named (random, perfect, menace) but only two play; a trainer goes right after -p M",
            ),
            ("-s random dog", "unknown agent \"dog\""),
            ("-s random heuristic:0", "heuristic depth 0 out of range"),
            ("-s random rl -p 10 human", "a human cannot be the trainer"),
            ("-p 5 menace", "-p goes with -s or -t"),
            ("menace random", "unexpected \"menace random\""),
            ("", "nothing to do"),
            ("-t x random random", "'x'"),
            ("-s -t 3 random random", "cannot be used with"),
            ("--bogus", "'--bogus'"),
        ] {
            let Err(error) = parse(&words(bad)) else {
                panic!("{bad:?} accepted");
            };
            let line = problem_line(&error);
            assert!(line.contains(problem), "{bad:?}: {line:?}");
        }
    }

    #[test]
    fn help_documents_every_option() {
        let Err(answer) = parse(&words("--help")) else {
            panic!("--help parsed as a command");
        };
        assert!(!answer.use_stderr());
        let help = answer.render().to_string();
        for option in [
            "-s",
            "-t <N>",
            "-p <M>",
            "--state <FILE>",
            "--seed <N>",
            "[AGENT]...",
        ] {
            assert!(help.contains(option), "{option} missing from:\n{help}");
        }
    }

    #[test]
    fn slots_name_each_learner() {
        assert_eq!(
            slots(&[AgentKind::Menace, AgentKind::Menace]),
            [Some("menace".to_string()), Some("menace#2".to_string())]
        );
        assert_eq!(
            slots(&[AgentKind::Random, AgentKind::Rl]),
            [None, Some("rl".to_string())]
        );
    }
}
