//! The morpion command line: parsing (seed 004's `tictactoe -s | -t N | -p M [TRAINER]`) and the
//! game modes.

use std::path::PathBuf;
use std::process::ExitCode;

use rand::rngs::StdRng;
use rand::SeedableRng;

use crate::board::Stone;

use super::agents::{Agent, AgentKind, Console, GameError};
use super::arena::{play_game, play_series, Player};
use super::grid::symbol;
use super::persistence::{StateError, StateFile};

/// Why a run stopped: its state file, or a game that could not go on.
#[derive(Debug, thiserror::Error)]
pub enum MorpionError {
    #[error(transparent)]
    State(#[from] StateError),
    #[error(transparent)]
    Game(#[from] GameError),
}

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

fn count(flag: &str, value: Option<&String>) -> Result<u64, String> {
    let value = value.ok_or_else(|| format!("{flag} needs a number of games"))?;
    value
        .parse::<u64>()
        .map_err(|_| format!("{flag} {value:?}: not a number of games"))
}

/// Parses the words after `connect5 morpion`.
///
/// `-p M` takes a trainer only when one more agent is named than the two players: in
/// `-t 10 random rl -p 500 ai` the trainer is `ai`, in `-t 10 -p 500 random rl` there is none.
pub fn parse(args: &[String]) -> Result<Options, String> {
    let mut single = false;
    let mut series = None;
    let mut practice_games = None;
    let mut practice_position = None;
    let mut state = None;
    let mut seed = None;
    let mut words: Vec<(usize, String)> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        match arg {
            "-s" => single = true,
            "-t" => {
                series = Some(count("-t", args.get(i + 1))?);
                i += 1;
            }
            "-p" => {
                practice_games = Some(count("-p", args.get(i + 1))?);
                i += 1;
                practice_position = Some(words.len());
            }
            "--state" => {
                let path = args
                    .get(i + 1)
                    .ok_or_else(|| "--state needs a file name".to_string())?;
                state = Some(PathBuf::from(path));
                i += 1;
            }
            "--seed" => {
                let value = args
                    .get(i + 1)
                    .ok_or_else(|| "--seed needs a number".to_string())?;
                seed = Some(
                    value
                        .parse::<u64>()
                        .map_err(|_| format!("--seed {value:?}: not a number"))?,
                );
                i += 1;
            }
            _ if arg.starts_with("--state=") => {
                state = Some(PathBuf::from(&arg["--state=".len()..]));
            }
            _ if arg.starts_with("--seed=") => {
                let value = &arg["--seed=".len()..];
                seed = Some(
                    value
                        .parse::<u64>()
                        .map_err(|_| format!("--seed {value:?}: not a number"))?,
                );
            }
            _ if arg.starts_with('-') && arg.len() > 1 => {
                return Err(format!(
                    "unknown option {arg:?} (expected -s, -t N, -p M [TRAINER], --state FILE, --seed N)"
                ))
            }
            _ => words.push((i, arg.to_string())),
        }
        i += 1;
    }
    if single && series.is_some() {
        return Err("-s and -t exclude each other: one game or N games".to_string());
    }
    if !single && series.is_none() {
        let command = match words.as_slice() {
            [(_, w)] if w.eq_ignore_ascii_case("menace") => Command::Menu,
            [(_, w)] if w.eq_ignore_ascii_case("analyze") => Command::Analyze,
            [] => return Err("nothing to do: use -s A B, -t N A B, menace or analyze".to_string()),
            _ => {
                return Err(format!(
                    "unexpected {:?}: use -s A B, -t N A B, menace or analyze",
                    words
                        .iter()
                        .map(|(_, w)| w.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                ))
            }
        };
        if practice_games.is_some() {
            return Err("-p goes with -s or -t".to_string());
        }
        return Ok(Options {
            command,
            state,
            seed,
        });
    }
    let mut trainer = None;
    if words.len() == 3 {
        match practice_position {
            Some(position) if position < words.len() => {
                let (_, name) = words.remove(position);
                trainer = Some(AgentKind::parse(&name).map_err(|e| e.to_string())?);
            }
            _ => {
                return Err(format!(
                    "three agents named ({}) but only two play; a trainer goes right after -p M",
                    words
                        .iter()
                        .map(|(_, w)| w.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            }
        }
    }
    if words.len() != 2 {
        return Err(format!(
            "two agents are needed (X then O), {} given",
            words.len()
        ));
    }
    let players = [
        AgentKind::parse(&words[0].1).map_err(|e| e.to_string())?,
        AgentKind::parse(&words[1].1).map_err(|e| e.to_string())?,
    ];
    if trainer == Some(AgentKind::Human) {
        return Err("a human cannot be the trainer of thousands of games".to_string());
    }
    let practice = practice_games.map(|games| Practice { games, trainer });
    Ok(Options {
        command: Command::Games {
            games: series,
            players,
            practice,
        },
        state,
        seed,
    })
}

pub fn run(args: &[String]) -> ExitCode {
    let options = match parse(args) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("connect5 morpion: {message}");
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
            console.say(&super::analysis::compute().report());
            Ok(())
        }
        Command::Menu => super::menu::run(options.state.as_deref(), &mut rng, &mut console),
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

pub fn load_learner(player: &mut Player, slot: &str, state: &StateFile) {
    match &mut player.agent {
        Agent::Menace(menace) => {
            if let Some(saved) = state.menace(slot) {
                *menace = saved;
            }
        }
        Agent::Rl(rl) => {
            if let Some(saved) = state.rl(slot) {
                *rl = saved;
            }
        }
        _ => {}
    }
}

pub fn store_learner(player: &Player, slot: &str, state: &mut StateFile) {
    match &player.agent {
        Agent::Menace(menace) => state.put_menace(slot, menace),
        Agent::Rl(rl) => state.put_rl(slot, rl),
        _ => {}
    }
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
    let mut state = match &state_path {
        Some(path) => Some(StateFile::load(path)?),
        None => None,
    };
    let slots = slots(&kinds);
    let mut players = [Player::new(kinds[0]), Player::new(kinds[1])];
    if let Some(state) = &state {
        for (player, slot) in players.iter_mut().zip(&slots) {
            if let Some(slot) = slot {
                load_learner(player, slot, state);
            }
        }
    }
    let any_learner = slots.iter().any(Option::is_some);
    let save = |players: &[Player; 2], state: &mut Option<StateFile>| -> Result<(), StateError> {
        let Some(state) = state else {
            return Ok(());
        };
        if !any_learner {
            return Ok(());
        }
        for (player, slot) in players.iter().zip(&slots) {
            if let Some(slot) = slot {
                store_learner(player, slot, state);
            }
        }
        state.save()?;
        tracing::info!("state saved to {}", state.path().display());
        Ok(())
    };

    if let Some(practice) = practice.filter(|p| p.games > 0) {
        train(&mut players, practice, rng, console)?;
        save(&players, &mut state)?;
    }
    if practice.is_some() {
        for player in &mut players {
            player.agent.set_training(false);
            player.record = Default::default();
        }
    }

    let [x, o] = &mut players;
    match games {
        None => {
            play_game(x, o, rng, console, true)?;
        }
        Some(n) => {
            let show = kinds.contains(&AgentKind::Human);
            for _ in 0..n {
                play_game(x, o, rng, console, show)?;
            }
        }
    }
    console.say(&format!(
        "{}\n{}\n",
        describe_seat(0, &players[0]),
        describe_seat(1, &players[1])
    ));
    if practice.is_none() {
        // Learners played in training mode: keep what they learnt.
        save(&players, &mut state)?;
    }
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
        assert_eq!(parse(&words("menace")).unwrap().command, Command::Menu);
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
        ] {
            assert!(parse(&words(bad)).is_err(), "{bad:?} accepted");
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
