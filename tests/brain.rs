//! `connect5 gomocup` end to end: the real binary as a Gomocup brain, talked to as a manager talks
//! to it (docs/gomocup.md is the contract). Coordinates on the wire are `x,y` = column,row.

mod common;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{board_with, legal_reply, request, Next, Player, StdioPlayer};
use connect5::board::{Board, Move, Rule, Stone};

/// Tests that judge a reply's latency run one at a time: brains of other tests searching at
/// once on the same two cores would only measure the machine.
static TIMED: Mutex<()> = Mutex::new(());

/// Transport and scheduling slack on top of a budget when a test times a reply.
const SLACK: Duration = Duration::from_millis(50);

fn brain(args: &[&str]) -> StdioPlayer {
    StdioPlayer::spawn_mode("gomocup", args, &[])
}

/// The next line that is not a `MESSAGE` or `DEBUG`, as a manager reads replies.
#[track_caller]
fn reply(player: &mut StdioPlayer) -> String {
    loop {
        let line = player.line();
        if !line.starts_with("MESSAGE") && !line.starts_with("DEBUG") {
            return line;
        }
    }
}

/// Sends `command` and returns the reply and the time from the write to the read.
#[track_caller]
fn ask(player: &mut StdioPlayer, command: &str) -> (String, Duration) {
    player.send(&format!("{command}\n"));
    let sent = Instant::now();
    let line = reply(player);
    (line, sent.elapsed())
}

#[track_caller]
fn expect(player: &mut StdioPlayer, command: &str, expected: &str) {
    let (line, _) = ask(player, command);
    assert_eq!(line, expected, "reply to {command:?}");
}

#[track_caller]
fn expect_error(player: &mut StdioPlayer, command: &str, words: &str) {
    let (line, _) = ask(player, command);
    assert!(
        line.starts_with("ERROR ") && line.contains(words),
        "reply to {command:?}: {line:?} (expected an ERROR with {words:?})"
    );
}

/// Parses a move `x,y` strictly.
#[track_caller]
fn point(line: &str) -> Move {
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let parsed = line.split_once(',').and_then(|(x, y)| {
        if !digits(x) || !digits(y) {
            return None;
        }
        Some(Move::new(y.parse().ok()?, x.parse().ok()?))
    });
    parsed.unwrap_or_else(|| panic!("{line:?} is not a move x,y"))
}

fn wire(mv: Move) -> String {
    format!("{},{}", mv.col, mv.row)
}

/// Sends a move command and checks the brain answers a legal move of `board`, which it plays for
/// `stone`; returns the move and the latency.
#[track_caller]
fn brain_moves(
    player: &mut StdioPlayer,
    command: &str,
    board: &mut Board,
    stone: Stone,
) -> (Move, Duration) {
    let (line, latency) = ask(player, command);
    let mv = point(&line);
    assert!(
        board.is_empty_cell(mv),
        "{command:?} answered {line:?}, not an empty cell\n{board}"
    );
    board.play(mv, stone).expect("legal move");
    (mv, latency)
}

/// `INFO` gets no reply: the next line after it is the answer to `ABOUT`.
#[track_caller]
fn expect_silent_info(player: &mut StdioPlayer, info: &str) {
    player.send(&format!("{info}\n"));
    let (line, _) = ask(player, "ABOUT");
    assert!(
        line.starts_with("name=\"connect5\""),
        "{info:?} was answered: {line:?}"
    );
}

#[test]
fn a_scripted_manager_dialogue_gets_every_answer_and_survives_every_error() {
    let mut player = brain(&["--no-messages"]);
    let (about, _) = ask(&mut player, "ABOUT");
    assert!(
        about.contains("name=\"connect5\"") && about.contains("version=\""),
        "{about}"
    );
    expect_error(&mut player, "TURN 7,7", "before START");
    expect_error(&mut player, "START 0", "not supported");
    expect_error(&mut player, "START 129", "not supported");
    expect_error(&mut player, "START x", "not a board size");
    let (unknown, _) = ask(&mut player, "FOO 1");
    assert!(unknown.starts_with("UNKNOWN "), "{unknown}");
    expect(&mut player, "START 15", "OK");
    for info in [
        "INFO timeout_turn 200",
        "INFO timeout_match 0",
        "INFO time_left 2147483647",
        "INFO max_memory 83886080",
        "INFO game_type 1",
        "INFO rule 1",
        "INFO folder /tmp",
        "INFO some_future_key 5",
    ] {
        expect_silent_info(&mut player, info);
    }
    expect_error(&mut player, "INFO rule 4", "renju");
    expect_error(&mut player, "INFO rule 8", "caro");
    expect_error(&mut player, "INFO timeout_turn abc", "not a whole number");
    // A blank line gets no answer either.
    player.send("\n");

    let mut board = Board::new(15, 15).unwrap();
    let (first, _) = brain_moves(&mut player, "BEGIN", &mut board, Stone::Black);
    assert_eq!(first, Move::new(7, 7), "the centre opens");
    expect_error(&mut player, "TURN 7,7", "occupied");
    expect_error(&mut player, "TURN 15,0", "outside");
    expect_error(&mut player, "TURN 3", "comma-separated");
    board.play(Move::new(8, 8), Stone::White).unwrap();
    let (answer, _) = brain_moves(&mut player, "TURN 8,8", &mut board, Stone::Black);

    // Take back the brain's answer and the opponent's move, then play the opponent's again.
    expect_error(&mut player, "TAKEBACK 0,0", "no stone");
    expect(&mut player, &format!("TAKEBACK {}", wire(answer)), "OK");
    expect(&mut player, "TAKEBACK 8,8", "OK");
    board.set(answer, None).unwrap();
    board.set(Move::new(8, 8), None).unwrap();
    board.play(Move::new(8, 8), Stone::White).unwrap();
    brain_moves(&mut player, "TURN 8,8", &mut board, Stone::Black);

    // PLAY: the manager's move for the brain, echoed.
    let mut opponent = board.empty_cells().next().unwrap();
    board.play(opponent, Stone::White).unwrap();
    brain_moves(
        &mut player,
        &format!("TURN {}", wire(opponent)),
        &mut board,
        Stone::Black,
    );
    opponent = board.empty_cells().next().unwrap();
    board.play(opponent, Stone::White).unwrap();
    player.send(&format!("TURN {}\n", wire(opponent)));
    let searched = point(&reply(&mut player));
    expect(&mut player, &format!("TAKEBACK {}", wire(searched)), "OK");
    let chosen = board.empty_cells().nth(3).unwrap();
    expect(
        &mut player,
        &format!("PLAY {}", wire(chosen)),
        &wire(chosen),
    );
    board.play(chosen, Stone::Black).unwrap();
    expect_error(&mut player, &format!("PLAY {}", wire(chosen)), "occupied");

    // BOARD blocks: a bad line or impossible counts are refused at DONE; a good one is played.
    player.send("BOARD\n7,7,1\n7,8,5\n");
    expect_error(&mut player, "DONE", "field 5");
    player.send("BOARD\n7,7,1\n7,8,1\n6,6,2\n");
    expect_error(&mut player, "DONE", "one fewer");
    player.send("BOARD\n7,7,2\n8,7,1\n6,8,2\n3,3,3\n");
    let mut position = board_with(15, 15, &[(7, 7), (8, 6)], &[(7, 8)]);
    brain_moves(&mut player, "DONE", &mut position, Stone::White);

    // The Yixin board's YXBOARD takes a position without a move (nor YXHASHCLEAR or INFO
    // max_depth a reply): the next line answers BEGIN, in that position.
    player.send("YXBOARD\n7,7,1\n8,8,2\nDONE\nINFO max_depth 3\nYXHASHCLEAR\n");
    let mut yixin = board_with(15, 15, &[(7, 7)], &[(8, 8)]);
    brain_moves(&mut player, "BEGIN", &mut yixin, Stone::Black);

    // RESTART clears the board: the brain opens in the centre again.
    expect(&mut player, "RESTART", "OK");
    expect(&mut player, "BEGIN", "7,7");
    player.send("END\n");
    assert!(player.wait_exit().success());
}

#[test]
fn a_rectangular_board_is_played_inside_its_bounds() {
    let mut player = brain(&[]);
    expect(&mut player, "RECTSTART 20,7", "OK");
    player.send("INFO timeout_turn 100\n");
    let mut board = Board::new(7, 20).unwrap();
    brain_moves(&mut player, "BEGIN", &mut board, Stone::Black);
    expect_error(&mut player, "TURN 3,7", "outside");
    for _ in 0..6 {
        // The opponent takes the last empty cell of the board, far from the brain's stones.
        let Some(opponent) = board.empty_cells().last() else {
            break;
        };
        board.play(opponent, Stone::White).unwrap();
        if board.winner(Rule::exact(5)).is_some() {
            break;
        }
        brain_moves(
            &mut player,
            &format!("TURN {}", wire(opponent)),
            &mut board,
            Stone::Black,
        );
        if board.winner(Rule::exact(5)).is_some() {
            break;
        }
    }
    assert!(board.stone_count() >= 7, "{board}");
}

/// A naive opponent: completes its own five, else blocks the brain's, else plays next to the
/// brain's last stone.
fn naive_reply(board: &Board, brain_last: Move, rule: Rule) -> Option<Move> {
    let wins_for = |stone: Stone| {
        board.empty_cells().find(|&mv| {
            let mut trial = board.clone();
            trial.play(mv, stone).is_ok() && trial.wins_at(mv, stone, rule)
        })
    };
    wins_for(Stone::White)
        .or_else(|| wins_for(Stone::Black))
        .or_else(|| {
            connect5::board::DIRECTIONS
                .iter()
                .flat_map(|&(dr, dc)| [(dr, dc), (-dr, -dc)])
                .filter_map(|dir| board.step(brain_last, dir, 1))
                .find(|&mv| board.is_empty_cell(mv))
        })
        .or_else(|| board.empty_cells().next())
}

#[test]
fn a_full_game_ends_with_the_brains_five_every_move_in_time() {
    let _timed = TIMED.lock().unwrap_or_else(|e| e.into_inner());
    let budget = Duration::from_millis(100);
    let rule = Rule::exact(5);
    let mut player = brain(&[]);
    expect(&mut player, "START 15", "OK");
    player.send("INFO timeout_turn 100\nINFO rule 1\n");
    let mut board = Board::new(15, 15).unwrap();
    let (mut last, latency) = brain_moves(&mut player, "BEGIN", &mut board, Stone::Black);
    assert!(latency <= budget + SLACK, "BEGIN answered in {latency:?}");
    while board.winner(rule).is_none() && !board.is_full() {
        let opponent = naive_reply(&board, last, rule).expect("a cell");
        board.play(opponent, Stone::White).unwrap();
        if board.winner(rule).is_some() {
            break;
        }
        let (mv, latency) = brain_moves(
            &mut player,
            &format!("TURN {}", wire(opponent)),
            &mut board,
            Stone::Black,
        );
        assert!(
            latency <= budget + SLACK,
            "TURN answered in {latency:?}\n{board}"
        );
        last = mv;
    }
    assert_eq!(board.winner(rule), Some(Stone::Black), "\n{board}");
    assert!(board.wins_at(last, Stone::Black, rule), "\n{board}");
    player.send("END\n");
    assert!(player.wait_exit().success());
}

#[test]
fn the_same_position_gets_a_legal_answer_in_time_through_both_protocols() {
    let _timed = TIMED.lock().unwrap_or_else(|e| e.into_inner());
    let budget_ms = 300;
    let budget = Duration::from_millis(budget_ms);
    // Black to move; white's four in column 4 (rows 5 to 8) is blocked at row 4 and makes five
    // at (9,4): the only move is the block, whatever the engine thinks of the rest.
    let black = [(7, 7), (7, 8), (6, 10), (5, 9), (4, 4)];
    let white = [(5, 4), (6, 4), (7, 4), (8, 4), (0, 14)];
    let forced = board_with(15, 15, &black, &white);
    let open = board_with(15, 15, &black[..3], &white[..3]);
    for (position, only) in [(&forced, Some(Move::new(9, 4))), (&open, None)] {
        let mut connect5 = StdioPlayer::spawn(&[]);
        connect5.expect_ready("READY");
        let (line, latency) = connect5.ask(&request(position, budget_ms));
        let by_connect5 = legal_reply(position, &line);
        assert!(latency <= budget + SLACK, "Connect5 protocol: {latency:?}");

        let mut gomocup = brain(&["--no-messages"]);
        expect(&mut gomocup, "START 15", "OK");
        gomocup.send(&format!(
            "INFO timeout_turn {budget_ms}\nINFO rule 1\nBOARD\n"
        ));
        for (mv, stone) in position.cells() {
            if let Some(stone) = stone {
                let field = if stone == Stone::Black { 1 } else { 2 };
                gomocup.send(&format!("{},{field}\n", wire(mv)));
            }
        }
        let mut after = position.clone();
        let (by_gomocup, latency) = brain_moves(&mut gomocup, "DONE", &mut after, Stone::Black);
        assert!(latency <= budget + SLACK, "Gomocup protocol: {latency:?}");
        if let Some(only) = only {
            assert_eq!(by_connect5, only, "Connect5 protocol, row col");
            assert_eq!(by_gomocup, only, "Gomocup protocol, x,y");
        }
    }
}

#[test]
fn a_match_clock_nearly_spent_is_respected() {
    let _timed = TIMED.lock().unwrap_or_else(|e| e.into_inner());
    let mut player = brain(&[]);
    expect(&mut player, "START 15", "OK");
    // 10 s a move, but only 200 ms left of the match: the move takes a share of the 200 ms.
    player.send("INFO timeout_turn 10000\nINFO timeout_match 60000\nINFO time_left 200\n");
    let mut board = Board::new(15, 15).unwrap();
    brain_moves(&mut player, "BEGIN", &mut board, Stone::Black);
    board.play(Move::new(8, 8), Stone::White).unwrap();
    let (_, latency) = brain_moves(&mut player, "TURN 8,8", &mut board, Stone::Black);
    assert!(
        latency <= Duration::from_millis(100) + SLACK,
        "a move with 200 ms on the clock took {latency:?}"
    );
}

#[test]
fn search_information_comes_as_a_message_unless_turned_off() {
    let mut player = brain(&[]);
    expect(&mut player, "START 15", "OK");
    player.send("INFO timeout_turn 100\nBEGIN\n");
    let message = player.line();
    assert!(
        message.starts_with("MESSAGE ") && message.contains("depth") && message.contains("pv"),
        "{message}"
    );
    assert_eq!(player.line(), "7,7");

    let mut quiet = brain(&["--no-messages"]);
    expect(&mut quiet, "START 15", "OK");
    quiet.send("INFO timeout_turn 100\nBEGIN\n");
    assert_eq!(quiet.line(), "7,7");
}

#[test]
fn end_or_yxstop_stop_a_long_search_at_once() {
    for stop in ["YXSTOP", "END"] {
        let mut player = brain(&["--no-messages"]);
        expect(&mut player, "START 15", "OK");
        player.send("INFO timeout_turn 60000\n");
        expect(&mut player, "BEGIN", "7,7");
        player.send("TURN 8,8\n");
        // The brain is searching a minute-long move (its answer cannot be ready yet).
        assert_eq!(
            player.next_within(Duration::from_millis(300)),
            Next::TimedOut
        );
        let stopped = Instant::now();
        player.send(&format!("{stop}\n"));
        let line = reply(&mut player);
        point(&line);
        assert!(
            stopped.elapsed() < Duration::from_secs(5),
            "{stop}: the move came {:?} after it",
            stopped.elapsed()
        );
        if stop == "END" {
            assert!(player.wait_exit().success());
            assert!(stopped.elapsed() < Duration::from_secs(5));
        } else {
            // The brain goes on after YXSTOP.
            let (about, _) = ask(&mut player, "ABOUT");
            assert!(about.starts_with("name="), "{about}");
        }
    }
}

#[test]
fn the_end_of_input_ends_the_brain() {
    let mut player = brain(&[]);
    expect(&mut player, "START 9", "OK");
    player.close_input();
    assert!(player.wait_exit().success());
}
