//! Who plays which game when: games in pairs (one opening, colours swapped) or one game per
//! opening with fixed colours, `concurrency` games at once, each worker with its own instance of
//! both players (its own processes, its own connections), as cutechess-cli does.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;

use super::game::{play_game, GameRecord, GameSettings};
use super::player::{make_player, Player, PlayerContext, PlayerSpec};
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::Serialize;

use super::openings::{opening_square, random_opening};
use crate::board::{Move, Rule, Stone};

/// A finished game, as a worker hands it back.
#[derive(Debug)]
pub struct Finished {
    /// 0-based game number; with swapped colours, games `2p` and `2p+1` form pair `p`.
    pub index: usize,
    /// Whether the first player (`--player1`) had black.
    pub first_is_black: bool,
    pub record: GameRecord,
}

/// Who has black in each game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Colours {
    /// Each opening twice: the first player black in even games, white in odd ones.
    Swapped,
    /// Each opening once, the first player always with this colour: measures one side (how
    /// often an engine converts black's start, say) with every game a new opening.
    Fixed(Stone),
}

impl Colours {
    /// Whether the first player has black in game `index`.
    pub fn first_is_black(self, index: usize) -> bool {
        match self {
            Colours::Swapped => index.is_multiple_of(2),
            Colours::Fixed(colour) => colour == Stone::Black,
        }
    }

    /// Which opening game `index` starts from: with one seed, game `n` of fixed colours starts
    /// from the opening of pair `n` of swapped ones.
    pub fn opening_number(self, index: usize) -> usize {
        match self {
            Colours::Swapped => index / 2,
            Colours::Fixed(_) => index,
        }
    }

    /// The pair game `index` belongs to, when games come in pairs.
    pub fn pair(self, index: usize) -> Option<usize> {
        match self {
            Colours::Swapped => Some(index / 2),
            Colours::Fixed(_) => None,
        }
    }
}

/// Everything the workers share.
pub struct Plan {
    pub specs: [PlayerSpec; 2],
    pub settings: GameSettings,
    pub openings: Openings,
    pub games: usize,
    pub colours: Colours,
    pub concurrency: usize,
    pub context: PlayerContext,
}

/// Where each pair's starting stones come from.
pub enum Openings {
    /// Every game starts on an empty board.
    Empty,
    /// A file's openings, in order, cycling.
    List {
        path: PathBuf,
        openings: Vec<Vec<Move>>,
    },
    /// `stones` random stones, drawn for opening `n` from a generator seeded with `seed` and `n`:
    /// the same seed gives the same openings, and none is made before its games are played.
    Random {
        stones: usize,
        /// The square the stones are drawn from (`None`: the default of `random_opening`).
        radius: Option<usize>,
        seed: u64,
        rows: usize,
        cols: usize,
        rule: Rule,
    },
}

impl Openings {
    /// Opening number `number` ([`Colours::opening_number`]).
    pub fn nth(&self, number: usize) -> Vec<Move> {
        match self {
            Openings::Empty => Vec::new(),
            Openings::List { openings, .. } => openings[number % openings.len()].clone(),
            &Openings::Random {
                stones,
                radius,
                seed,
                rows,
                cols,
                rule,
            } => {
                let mut rng =
                    StdRng::seed_from_u64(seed ^ (number as u64).wrapping_mul(OPENING_MIX));
                // Checked when the match was set up: the first opening exists, and every opening
                // draws from the same cells.
                random_opening(&mut rng, stones, radius, rows, cols, rule).unwrap_or_default()
            }
        }
    }

    /// Where the openings come from, for the summary and the match's first lines.
    pub fn source(&self) -> OpeningsSource {
        match self {
            Openings::Empty => OpeningsSource::Empty,
            Openings::List { path, openings } => OpeningsSource::File {
                path: path.clone(),
                count: openings.len(),
            },
            &Openings::Random {
                stones,
                radius,
                seed,
                rows,
                cols,
                ..
            } => OpeningsSource::Random {
                stones,
                radius: opening_square(stones, radius, rows, cols).unwrap_or(radius),
                seed,
            },
        }
    }
}

/// Where a match's openings came from, as its JSON summary and its first lines say: enough to
/// play the same openings again (a seed drawn from the clock included).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum OpeningsSource {
    Empty,
    File {
        path: PathBuf,
        count: usize,
    },
    Random {
        stones: usize,
        /// The square's radius around the centre; `null` for the whole board.
        radius: Option<usize>,
        seed: u64,
    },
}

impl std::fmt::Display for OpeningsSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpeningsSource::Empty => write!(f, "every game from the empty board"),
            OpeningsSource::File { path, count } => {
                write!(f, "the {count} openings of {}, in order", path.display())
            }
            OpeningsSource::Random {
                stones,
                radius,
                seed,
            } => {
                write!(f, "{stones} random stones ")?;
                match radius {
                    Some(radius) => write!(f, "within {radius} of the centre")?,
                    None => write!(f, "anywhere on the board")?,
                }
                write!(f, ", seed {seed} (`--seed {seed}` plays them again)")
            }
        }
    }
}

/// An odd constant (from SplitMix64) spreading opening numbers over the seed's bits.
const OPENING_MIX: u64 = 0x9E37_79B9_7F4A_7C15;

impl Plan {
    fn opening(&self, index: usize) -> Vec<Move> {
        self.openings.nth(self.colours.opening_number(index))
    }
}

/// Plays the plan's games on `concurrency` threads, sending each finished game to `results`.
/// Returns when every game is played or `stop` is raised (games under way are finished).
/// `first_players` are already-started instances for worker 0 (checked before the match).
pub fn run_workers(
    plan: Arc<Plan>,
    first_players: [Box<dyn Player>; 2],
    stop: Arc<AtomicBool>,
    results: Sender<Finished>,
) {
    let next = Arc::new(AtomicUsize::new(0));
    let mut first_players = Some(first_players);
    std::thread::scope(|scope| {
        for worker in 0..plan.concurrency.max(1) {
            let plan = Arc::clone(&plan);
            let next = Arc::clone(&next);
            let stop = Arc::clone(&stop);
            let results = results.clone();
            let players = first_players.take().unwrap_or_else(|| {
                let context = PlayerContext {
                    worker,
                    ..plan.context.clone()
                };
                [
                    make_player(&plan.specs[0], &context),
                    make_player(&plan.specs[1], &context),
                ]
            });
            scope.spawn(move || work(&plan, players, &next, &stop, &results));
        }
    });
}

fn work(
    plan: &Plan,
    players: [Box<dyn Player>; 2],
    next: &AtomicUsize,
    stop: &AtomicBool,
    results: &Sender<Finished>,
) {
    let [mut first, mut second] = players;
    loop {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let index = next.fetch_add(1, Ordering::Relaxed);
        if index >= plan.games {
            break;
        }
        let first_black = plan.colours.first_is_black(index);
        let record = if first_black {
            play_game(
                first.as_mut(),
                second.as_mut(),
                &plan.opening(index),
                &plan.settings,
            )
        } else {
            play_game(
                second.as_mut(),
                first.as_mut(),
                &plan.opening(index),
                &plan.settings,
            )
        };
        let finished = Finished {
            index,
            first_is_black: first_black,
            record,
        };
        if results.send(finished).is_err() {
            break;
        }
    }
    first.close();
    second.close();
}
