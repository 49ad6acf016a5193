//! Seed 000's MENACE menu: play MENACE, train it 500 games against the perfect player, the random
//! player or a second MENACE, delete both training sets, quit. MENACE plays first (X).

use std::path::Path;

use rand::rngs::StdRng;

use super::agents::{AgentKind, Console};
use super::arena::{play_game, play_series, result_word, Player};
use super::cli::{load_learner, store_learner, MorpionError};
use super::persistence::StateFile;

/// Games of one training session, as in the seed.
pub const TRAINING_GAMES: u64 = 500;

/// State-file slots of the main MENACE and of its MENACE opponent.
const MAIN_SLOT: &str = "menace";
const SECOND_SLOT: &str = "menace#2";

const MENU: &str = "\
(1) Human to play menace
(2) Train Menace against perfect player
(3) Train Menace against random player
(4) Train Menace against another menace
(5) Delete (both) Menace training sets
(Q)uit
";

fn banner() -> String {
    let stars = "*".repeat(60);
    let blank = format!("*{}*", " ".repeat(58));
    let title = "MENACE: Machine Educable Noughts And Crosses Engine";
    let padding = 58 - title.len();
    let left = padding / 2;
    let middle = format!(
        "*{}{}{}*",
        " ".repeat(left),
        title,
        " ".repeat(padding - left)
    );
    format!("{stars}\n{blank}\n{middle}\n{blank}\n{stars}\n\n")
}

pub fn run(
    state_path: Option<&Path>,
    rng: &mut StdRng,
    console: &mut Console,
) -> Result<(), MorpionError> {
    let mut state = match state_path {
        Some(path) => Some(StateFile::load(path)?),
        None => None,
    };
    let mut menace = Player::new(AgentKind::Menace);
    let mut second = Player::new(AgentKind::Menace);
    if let Some(state) = &state {
        load_learner(&mut menace, MAIN_SLOT, state);
        load_learner(&mut second, SECOND_SLOT, state);
    }
    let save = |menace: &Player, second: &Player, state: &mut Option<StateFile>| {
        let Some(state) = state else {
            return Ok(());
        };
        store_learner(menace, MAIN_SLOT, state);
        store_learner(second, SECOND_SLOT, state);
        state.save()
    };

    console.say(&banner());
    loop {
        console.say(MENU);
        let Some(choice) = console.read_line()? else {
            return Ok(());
        };
        match choice.to_ascii_lowercase().as_str() {
            "1" => {
                let mut human = Player::new(AgentKind::Human);
                let winner = play_game(&mut menace, &mut human, rng, console, true);
                let winner = match winner {
                    Ok(winner) => winner,
                    // The input ended in the middle of a game: leave as at a quit.
                    Err(message) => {
                        console.say("\n");
                        return Err(message.into());
                    }
                };
                tracing::debug!(result = result_word(winner), "game against a human");
                console.say(&format!("{}\n\n", menace.record.describe()));
                save(&menace, &second, &mut state)?;
            }
            "2" | "3" | "4" => {
                let result = match choice.as_str() {
                    "2" => {
                        let mut perfect = Player::new(AgentKind::Perfect);
                        play_series(&mut menace, &mut perfect, TRAINING_GAMES, rng, console)
                            .map(|()| perfect.record.describe())
                    }
                    "3" => {
                        let mut random = Player::new(AgentKind::Random);
                        play_series(&mut menace, &mut random, TRAINING_GAMES, rng, console)
                            .map(|()| random.record.describe())
                    }
                    _ => {
                        second.record = Default::default();
                        play_series(&mut menace, &mut second, TRAINING_GAMES, rng, console)
                            .map(|()| second.record.describe())
                    }
                };
                let opponent = result?;
                console.say(&format!(
                    "player 1: {}\nplayer 2: {opponent}\n\n",
                    menace.record.describe()
                ));
                save(&menace, &second, &mut state)?;
            }
            "5" => {
                menace = Player::new(AgentKind::Menace);
                second = Player::new(AgentKind::Menace);
                console.say("Both MENACE training sets deleted.\n\n");
                save(&menace, &second, &mut state)?;
            }
            "q" | "quit" => return Ok(()),
            "" => {}
            other => console.say(&format!(
                "unknown choice {other:?}: type 1, 2, 3, 4, 5 or Q\n\n"
            )),
        }
    }
}
