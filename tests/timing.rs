//! Replies within the budget: one search alone over stdio, and 64 clients playing games at once
//! against one `connect5 serve`. Latency is measured from writing the request to reading the reply.
//!
//! In a test binary of their own, and one at a time, so that no other test of the suite shares
//! the cores while latencies are measured.

mod common;

use std::net::SocketAddr;
use std::sync::{Arc, Barrier, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use common::{board, board_with, Player, Server, StdioPlayer, TcpClient};
use connect5::board::{Board, Move, Rule, Stone};

/// Held by each test for its whole run.
fn alone() -> MutexGuard<'static, ()> {
    static CORES: Mutex<()> = Mutex::new(());
    CORES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[test]
fn a_budget_of_zero_gets_an_immediate_legal_move() {
    let _alone = alone();
    let mut player = StdioPlayer::spawn(&[]);
    player.expect_ready("READY");
    let quiet = board_with(15, 15, &[(7, 7), (8, 8), (6, 9)], &[(7, 8), (6, 8)]);
    let winning = board_with(
        15,
        15,
        &[(7, 5), (7, 6), (7, 7), (7, 8)],
        &[(8, 6), (8, 7), (6, 7), (6, 8)],
    );
    for position in [&quiet, &winning, &quiet, &winning] {
        let (_, latency) = player.play(position, Rule::for_board(15, 15), 0);
        assert!(
            latency < Duration::from_millis(100),
            "a budget of 0 took {latency:?}"
        );
    }
}

#[test]
fn a_lone_search_replies_within_its_budget() {
    let _alone = alone();
    let mut player = StdioPlayer::spawn(&[]);
    player.expect_ready("READY");
    let middle_game = board(&[
        "000000000000000",
        "000000000000000",
        "000000000000000",
        "000000000000000",
        "00000000B000000",
        "00000N0NB000000",
        "000000NNBN00000",
        "00000BBNN000000",
        "000000NB0B00000",
        "00000B0N0000000",
        "000000000000000",
        "000000000000000",
        "000000000000000",
        "000000000000000",
        "000000000000000",
    ]);
    let rule = Rule::for_board(15, 15);
    for budget_ms in [200u64, 500] {
        let (_, latency) = player.play(&middle_game, rule, budget_ms);
        assert!(
            latency < Duration::from_millis(budget_ms),
            "budget {budget_ms} ms, reply after {latency:?}"
        );
    }
    // The largest board: its reply is on time too.
    let huge = board_with(128, 128, &[(64, 64), (63, 65)], &[(64, 65)]);
    let (_, latency) = player.play(&huge, Rule::for_board(128, 128), 300);
    assert!(latency < Duration::from_millis(300), "128x128: {latency:?}");
}

const CLIENTS: usize = 64;
const GAMES_PER_CLIENT: usize = 2;
/// Engine moves per game at most; a game also ends on a win or a full board.
const ENGINE_MOVES_PER_GAME: usize = 5;

/// One engine reply: its budget and how long it took.
struct Timed {
    budget: Duration,
    latency: Duration,
}

/// A random empty cell near the stones already played (the centre on an empty board), so that
/// games look like games and the engine has tactics to look at.
fn opponent_move(board: &Board, rng: &mut StdRng) -> Move {
    let near: Vec<Move> = board
        .empty_cells()
        .filter(|&mv| {
            board.cells().any(|(other, stone)| {
                stone.is_some()
                    && other.row.abs_diff(mv.row) <= 2
                    && other.col.abs_diff(mv.col) <= 2
            })
        })
        .collect();
    if near.is_empty() {
        Move::new(board.rows() / 2, board.cols() / 2)
    } else {
        near[rng.gen_range(0..near.len())]
    }
}

/// Plays this client's games; returns every engine reply's timing.
fn play_games(addr: SocketAddr, id: usize, start: &Barrier) -> Vec<Timed> {
    let mut client = TcpClient::connect(addr);
    client.expect_ready("READY");
    let mut rng = StdRng::seed_from_u64(id as u64);
    let mut timings = Vec::new();
    // Everyone searches at the same time.
    start.wait();
    for game in 0..GAMES_PER_CLIENT {
        let side = [9, 11, 13, 15][(id + game) % 4];
        let budget_ms = [200u64, 300, 400, 500][(id / 4 + game) % 4];
        let rule = Rule::for_board(side, side);
        let engine = if (id + game).is_multiple_of(2) {
            Stone::Black
        } else {
            Stone::White
        };
        let mut board = Board::new(side, side).expect("board size");
        let mut engine_moves = 0;
        let mut to_move = Stone::Black;
        while engine_moves < ENGINE_MOVES_PER_GAME && !board.is_full() {
            let mv = if to_move == engine {
                let (mv, latency) = client.play(&board, rule, budget_ms);
                timings.push(Timed {
                    budget: Duration::from_millis(budget_ms),
                    latency,
                });
                engine_moves += 1;
                mv
            } else {
                opponent_move(&board, &mut rng)
            };
            board.play(mv, to_move).expect("legal move");
            if board.wins_at(mv, to_move, rule) {
                break;
            }
            to_move = to_move.opponent();
        }
    }
    client.send("0\n");
    client.expect_eof();
    timings
}

#[test]
fn sixty_four_clients_playing_games_get_legal_replies_in_time() {
    let _alone = alone();
    let server = Server::start(&[]);
    let start = Arc::new(Barrier::new(CLIENTS));
    let handles: Vec<_> = (0..CLIENTS)
        .map(|id| {
            let start = Arc::clone(&start);
            let addr = server.addr;
            thread::spawn(move || play_games(addr, id, &start))
        })
        .collect();
    let mut timings = Vec::new();
    for (id, handle) in handles.into_iter().enumerate() {
        match handle.join() {
            Ok(mine) => timings.extend(mine),
            Err(_) => panic!("client {id} failed (its message is above)"),
        }
    }
    let late: Vec<String> = timings
        .iter()
        .filter(|t| t.latency >= t.budget)
        .map(|t| format!("{:?} for a budget of {:?}", t.latency, t.budget))
        .collect();
    let worst = timings
        .iter()
        .map(|t| t.latency.as_secs_f64() / t.budget.as_secs_f64())
        .fold(0.0, f64::max);
    // The course's limit is 512 MB for the player; the default --memory is that budget.
    if let Some(peak) = server.peak_resident_bytes() {
        eprintln!("server peak resident memory: {} MiB", peak >> 20);
        assert!(peak < 512 << 20, "the server peaked at {} MiB", peak >> 20);
    }
    let log = server.log();
    let instant_answers = log.matches("answering the instant move").count();
    let late_by_the_server = log.matches("reply written after its budget").count();
    eprintln!(
        "{} replies, {} late, worst latency {:.0}% of its budget; the server answered {instant_answers} \
         with the instant move and saw {late_by_the_server} of its replies late",
        timings.len(),
        late.len(),
        worst * 100.0
    );
    assert!(timings.len() >= CLIENTS * GAMES_PER_CLIENT);
    assert!(
        late.is_empty(),
        "{} of {} replies late: {late:?}",
        late.len(),
        timings.len()
    );
}
