//! Who plays which game when: games in pairs (one opening, colours swapped), `concurrency` games
//! at once, each worker with its own instance of both players (its own processes, its own
//! connections), as cutechess-cli does.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;

use super::game::{play_game, GameRecord, GameSettings};
use super::player::{make_player, Player, PlayerContext, PlayerSpec};
use rand::rngs::StdRng;
use rand::SeedableRng;

use super::openings::random_opening;
use crate::board::{Move, Rule};

/// A finished game, as a worker hands it back.
#[derive(Debug)]
pub struct Finished {
    /// 0-based game number; games `2p` and `2p+1` form pair `p`.
    pub index: usize,
    /// Whether the first player (`--player1`) had black.
    pub first_is_black: bool,
    pub record: GameRecord,
}

/// Which colour the first player has in game `index`: black in even games, white in odd ones.
pub fn first_is_black(index: usize) -> bool {
    index.is_multiple_of(2)
}

/// Everything the workers share.
pub struct Plan {
    pub specs: [PlayerSpec; 2],
    pub settings: GameSettings,
    pub openings: Openings,
    pub games: usize,
    pub concurrency: usize,
    pub context: PlayerContext,
}

/// Where each pair's starting stones come from.
pub enum Openings {
    /// Every game starts on an empty board.
    Empty,
    /// A file's openings, pair `p` playing opening `p`, cycling.
    List(Vec<Vec<Move>>),
    /// `stones` random stones, drawn for pair `p` from a generator seeded with `seed` and `p`:
    /// the same seed gives the same openings, and none is made before its pair is played.
    Random {
        stones: usize,
        seed: u64,
        rows: usize,
        cols: usize,
        rule: Rule,
    },
}

impl Openings {
    /// The opening of pair `pair`.
    pub fn for_pair(&self, pair: usize) -> Vec<Move> {
        match self {
            Openings::Empty => Vec::new(),
            Openings::List(list) => list[pair % list.len()].clone(),
            &Openings::Random {
                stones,
                seed,
                rows,
                cols,
                rule,
            } => {
                let mut rng = StdRng::seed_from_u64(seed ^ (pair as u64).wrapping_mul(PAIR_MIX));
                // Checked when the match was set up: the first pair's opening exists, and every
                // pair draws from the same cells.
                random_opening(&mut rng, stones, rows, cols, rule).unwrap_or_default()
            }
        }
    }
}

/// An odd constant (from SplitMix64) spreading pair numbers over the seed's bits.
const PAIR_MIX: u64 = 0x9E37_79B9_7F4A_7C15;

impl Plan {
    fn opening(&self, index: usize) -> Vec<Move> {
        self.openings.for_pair(index / 2)
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
        let first_black = first_is_black(index);
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
