//! Seed 000's MENACE menu: play MENACE, train it 500 games against the perfect player, the random
//! player or a second MENACE, delete both training sets, quit. MENACE plays first (X).

use std::path::Path;

use rand::rngs::StdRng;

use super::agents::{AgentKind, Console, GameError};
use super::arena::{play_game, play_series, result_word, Player};
use super::persistence::SavedLearners;
use super::MorpionError;

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
    let slots = [Some(MAIN_SLOT.to_string()), Some(SECOND_SLOT.to_string())];
    let mut saved = SavedLearners::open(state_path, slots)?;
    let mut menace = Player::new(AgentKind::Menace);
    let mut second = Player::new(AgentKind::Menace);
    saved.restore([&mut menace, &mut second]);

    console.say(&banner());
    loop {
        console.say(MENU);
        let Some(choice) = console.read_line()? else {
            return Ok(());
        };
        match choice.to_ascii_lowercase().as_str() {
            "1" => play_human(&mut menace, rng, console)?,
            "2" => train(
                &mut menace,
                &mut Player::new(AgentKind::Perfect),
                rng,
                console,
            )?,
            "3" => train(
                &mut menace,
                &mut Player::new(AgentKind::Random),
                rng,
                console,
            )?,
            "4" => {
                second.record = Default::default();
                train(&mut menace, &mut second, rng, console)?;
            }
            "5" => {
                menace = Player::new(AgentKind::Menace);
                second = Player::new(AgentKind::Menace);
                console.say("Both MENACE training sets deleted.\n\n");
            }
            "q" | "quit" => return Ok(()),
            "" => continue,
            other => {
                console.say(&format!(
                    "unknown choice {other:?}: type 1, 2, 3, 4, 5 or Q\n\n"
                ));
                continue;
            }
        }
        saved.keep([&menace, &second])?;
    }
}

/// Choice 1: a human (O) plays MENACE (X); MENACE's record over the session follows.
fn play_human(
    menace: &mut Player,
    rng: &mut StdRng,
    console: &mut Console,
) -> Result<(), GameError> {
    let mut human = Player::new(AgentKind::Human);
    let winner = match play_game(menace, &mut human, rng, console, true) {
        Ok(winner) => winner,
        // The input ended in the middle of a game: leave as at a quit.
        Err(error) => {
            console.say("\n");
            return Err(error);
        }
    };
    tracing::debug!(result = result_word(winner), "game against a human");
    console.say(&format!("{}\n\n", menace.record.describe()));
    Ok(())
}

/// Choices 2 to 4: MENACE (X) trains against `opponent`; MENACE's record runs over the session,
/// the opponent's over this training.
fn train(
    menace: &mut Player,
    opponent: &mut Player,
    rng: &mut StdRng,
    console: &mut Console,
) -> Result<(), GameError> {
    play_series(menace, opponent, TRAINING_GAMES, rng, console)?;
    console.say(&format!(
        "player 1: {}\nplayer 2: {}\n\n",
        menace.record.describe(),
        opponent.record.describe()
    ));
    Ok(())
}
