//! `connect5 gomocup` end to end: the real binary as a Gomocup (pbrain) brain, spoken to over its
//! stdin/stdout exactly as a manager speaks to it (docs/gomocup.md is the contract).
//!
//! On the wire a cell is `x,y`: the column, then the row, both from 0 at the top-left. The tests
//! keep their own `Board` of every game (`Move { row, col }`), so that each move the brain writes
//! is checked against a position the test knows, not against what the brain says.

mod common;

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use common::{legal_reply, request, Next, Player, StdioPlayer, LINE_TIMEOUT};
use connect5::board::{Board, Move, Rule, Stone, DIRECTIONS};

/// The tests of this file run one at a time: they time the brain's replies, and brains of other
/// tests searching at once on the same two cores would only measure the machine.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> MutexGuard<'static, ()> {
    // A test that failed while holding the lock poisons it; the others still run.
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Transport and scheduling slack on top of a move's budget when a reply is timed.
const SLACK: Duration = Duration::from_millis(50);

/// How soon the brain must be gone after `END` or the end of its input, even in the middle of a
/// long search: a failure guard (the searches it cuts short would take 20 s), not a speed test.
const PROMPT_EXIT: Duration = Duration::from_secs(5);

/// `connect5 gomocup ARGS`.
fn spawn_brain(args: &[&str]) -> StdioPlayer {
    StdioPlayer::spawn_mode("gomocup", args, &[])
}

/// A cell as the wire has it: `x,y`, the column first.
fn at(x: usize, y: usize) -> Move {
    Move::new(y, x)
}

fn wire(mv: Move) -> String {
    format!("{},{}", mv.col, mv.row)
}

/// Reads a move strictly as `x,y` (two non-negative integers, nothing else).
fn parse_point(line: &str) -> Option<Move> {
    let (x, y) = line.split_once(',')?;
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(x) || !digits(y) {
        return None;
    }
    Some(at(x.parse().ok()?, y.parse().ok()?))
}

/// Lines a manager shows or logs but never takes for a reply.
fn is_chatter(line: &str) -> bool {
    line.starts_with("MESSAGE") || line.starts_with("DEBUG")
}

/// The next reply and every line the brain writes before it (its `MESSAGE` and `DEBUG` lines),
/// read without skipping anything.
#[track_caller]
fn reply_and_chatter(brain: &mut StdioPlayer) -> (String, Vec<String>) {
    let mut before = Vec::new();
    loop {
        let line = brain.line();
        if !is_chatter(&line) {
            return (line, before);
        }
        before.push(line);
        assert!(before.len() < 100, "no reply after {before:?}");
    }
}

/// The next reply as a manager reads it: the next line that is not a `MESSAGE` or `DEBUG`. Fails
/// the test when none comes within the failure guard (however many messages come meanwhile).
#[track_caller]
fn next_reply(brain: &mut StdioPlayer) -> String {
    let start = Instant::now();
    loop {
        let left = LINE_TIMEOUT.saturating_sub(start.elapsed());
        match brain.next_within(left) {
            Next::Line(line) if is_chatter(&line) => {}
            Next::Line(line) => return line,
            other => panic!(
                "expected a reply from the brain, got {other:?}\n--- brain's stderr ---\n{}",
                brain.stderr()
            ),
        }
    }
}

/// Sends one command line and returns the reply and the time from the write to the read.
#[track_caller]
fn ask(brain: &mut StdioPlayer, command: &str) -> (String, Duration) {
    brain.send(&format!("{command}\n"));
    let sent = Instant::now();
    let reply = next_reply(brain);
    (reply, sent.elapsed())
}

#[track_caller]
fn expect_reply(brain: &mut StdioPlayer, command: &str, expected: &str) {
    let (reply, _) = ask(brain, command);
    assert_eq!(reply, expected, "reply to {command:?}");
}

/// `command` is refused with an `ERROR` line that mentions `mentions`.
#[track_caller]
fn expect_error(brain: &mut StdioPlayer, command: &str, mentions: &str) {
    let (reply, _) = ask(brain, command);
    assert!(
        reply.starts_with("ERROR ") && reply.contains(mentions),
        "reply to {command:?}: {reply:?} (expected `ERROR …` mentioning {mentions:?})"
    );
}

#[track_caller]
fn expect_about(brain: &mut StdioPlayer, after: &str) {
    let line = brain.line();
    assert!(
        line.starts_with("name=\"connect5\"")
            && line.contains(&format!("version=\"{}\"", env!("CARGO_PKG_VERSION"))),
        "after {after:?} the next line should answer ABOUT, got {line:?}"
    );
}

/// `line` gets no reply at all: the very next line the brain writes answers the `ABOUT` sent
/// after it (not even a `MESSAGE` comes in between).
#[track_caller]
fn expect_silent(brain: &mut StdioPlayer, line: &str) {
    brain.send(&format!("{line}\nABOUT\n"));
    expect_about(brain, line);
}

/// Sends `command` (`BEGIN`, `TURN x,y`, `DONE`) and checks that the reply is a move on an empty
/// cell of `board` (the brain's game as the test keeps it), within `budget` plus the slack when
/// one is given; plays it there for the side to move and returns it.
#[track_caller]
fn brain_moves(
    brain: &mut StdioPlayer,
    command: &str,
    board: &mut Board,
    budget: Option<Duration>,
) -> Move {
    let stone = board
        .side_to_move()
        .unwrap_or_else(|counts| panic!("the test's own board is wrong: {counts}\n{board}"));
    let (reply, latency) = ask(brain, command);
    let mv = parse_point(&reply)
        .unwrap_or_else(|| panic!("{command:?} answered {reply:?}, not a move x,y\n{board}"));
    assert!(
        board.contains(mv),
        "{command:?} answered {reply:?}, outside the {}x{} board (x < {}, y < {})",
        board.cols(),
        board.rows(),
        board.cols(),
        board.rows()
    );
    assert!(
        board.is_empty_cell(mv),
        "{command:?} answered {reply:?}, an occupied cell\n{board}"
    );
    if let Some(budget) = budget {
        assert!(
            latency <= budget + SLACK,
            "{command:?} answered {reply:?} after {latency:?}, beyond the {budget:?} turn\n{board}"
        );
    }
    board.play(mv, stone).expect("an empty cell of the board");
    mv
}

/// The opponent plays `mv` (on the test's board and with `TURN`); returns the brain's answer.
#[track_caller]
fn turn(brain: &mut StdioPlayer, board: &mut Board, mv: Move, budget: Option<Duration>) -> Move {
    let stone = board
        .side_to_move()
        .unwrap_or_else(|counts| panic!("the test's own board is wrong: {counts}\n{board}"));
    board
        .play(mv, stone)
        .unwrap_or_else(|e| panic!("the test plays {mv} on its board: {e}\n{board}"));
    brain_moves(brain, &format!("TURN {}", wire(mv)), board, budget)
}

/// A position as a `BOARD` block without its `DONE`: the side to move's stones are the brain's
/// (field 1), the others its opponent's (field 2).
fn board_block(board: &Board) -> String {
    let own = board
        .side_to_move()
        .unwrap_or_else(|counts| panic!("the test's own board is wrong: {counts}\n{board}"));
    let mut text = String::from("BOARD\n");
    for (mv, stone) in board.cells() {
        if let Some(stone) = stone {
            let field = if stone == own { 1 } else { 2 };
            text.push_str(&format!("{},{field}\n", wire(mv)));
        }
    }
    text
}

/// A board `cols` wide and `rows` high with black and white stones at the given `x,y` cells.
fn position(cols: usize, rows: usize, black: &[(usize, usize)], white: &[(usize, usize)]) -> Board {
    let mut board = Board::new(rows, cols).expect("a test board size");
    for (&(x, y), stone) in black
        .iter()
        .map(|cell| (cell, Stone::Black))
        .chain(white.iter().map(|cell| (cell, Stone::White)))
    {
        board
            .play(at(x, y), stone)
            .unwrap_or_else(|e| panic!("test stone at {x},{y}: {e}"));
    }
    board
}

/// Ends a brain with `END` and checks it exits with status 0 and closes its output.
#[track_caller]
fn end(mut brain: StdioPlayer) {
    brain.send("END\n");
    brain.expect_eof();
    let status = brain.wait_exit();
    assert!(status.success(), "END: the brain exited with {status}");
}

#[test]
fn a_scripted_manager_dialogue_gets_every_answer_and_survives_every_error() {
    let _one = one_at_a_time();
    let turn_time = Duration::from_millis(300);
    let budget = Some(turn_time);
    // Default options: search messages come before moves and the replies are read past them.
    let mut brain = spawn_brain(&[]);

    brain.send("ABOUT\n");
    expect_about(&mut brain, "ABOUT");
    expect_error(&mut brain, "TURN 7,7", "START");
    expect_error(&mut brain, "BEGIN", "START");

    // Board sizes: 1 to 128 a side.
    expect_error(&mut brain, "START 0", "side 0");
    expect_error(&mut brain, "START 129", "side 129");
    expect_error(&mut brain, "START x", "\"x\"");
    expect_error(&mut brain, "START", "board size");
    expect_error(&mut brain, "RECTSTART 20", "\"20\"");
    expect_error(&mut brain, "RECTSTART 0,7", "side 0");
    expect_error(&mut brain, "RECTSTART 20,129", "side 129");
    let (unknown, _) = ask(&mut brain, "FOO");
    assert!(
        unknown.starts_with("UNKNOWN ") && unknown.contains("FOO"),
        "FOO: {unknown:?}"
    );
    expect_reply(&mut brain, "RECTSTART 20,7", "OK");
    expect_reply(&mut brain, "START 128", "OK");
    expect_silent(
        &mut brain,
        &format!("INFO timeout_turn {}", turn_time.as_millis()),
    );
    let mut big = Board::new(128, 128).unwrap();
    brain_moves(&mut brain, "BEGIN", &mut big, budget);

    // 1x1: the first stone is the whole line; then the game is over and no move is left.
    expect_reply(&mut brain, "START 1", "OK");
    expect_reply(&mut brain, "BEGIN", "0,0");
    expect_error(&mut brain, "BEGIN", "no move");

    expect_reply(&mut brain, "START 15", "OK");
    for info in [
        "INFO timeout_match 0",
        "INFO time_left 2147483647",
        "INFO max_memory 83886080",
        "INFO game_type 1",
        "INFO rule 0",
        "INFO rule 1",
        "INFO folder /tmp/connect5",
        "INFO a_key_of_a_later_protocol 42",
        "",
    ] {
        expect_silent(&mut brain, info);
    }
    expect_error(&mut brain, "INFO rule 4", "renju");
    expect_error(&mut brain, "INFO rule 8", "caro");
    // A refused value changes nothing: the turn stays 300 ms (the moves below are timed).
    expect_error(&mut brain, "INFO timeout_turn abc", "abc");
    expect_error(&mut brain, "INFO time_left soon", "soon");
    expect_error(&mut brain, "INFO max_node many", "many");

    let mut board = Board::new(15, 15).unwrap();
    let first = brain_moves(&mut brain, "BEGIN", &mut board, budget);
    assert_eq!(wire(first), "7,7", "the brain opens in the centre");

    // Bad moves are refused and change nothing.
    expect_error(&mut brain, "TURN 7,7", "occupied");
    expect_error(&mut brain, "TURN 15,3", "outside");
    expect_error(&mut brain, "TURN 3,15", "outside");
    expect_error(&mut brain, "TURN 3", "\"3\"");
    expect_error(&mut brain, "TURN -1,2", "\"-1\"");
    // 15,3 read row-major without a bounds check would be 0,4: no stone went there.
    expect_error(&mut brain, "TAKEBACK 0,4", "no stone");
    turn(&mut brain, &mut board, at(8, 8), budget);
    expect_error(&mut brain, "TURN 8,8", "occupied");
    // The opponent's second stone: any empty cell near the game (the brain's answers decide which).
    let second = [at(6, 9), at(9, 6), at(5, 5)]
        .into_iter()
        .find(|&mv| board.is_empty_cell(mv))
        .expect("three cells cannot all hold the brain's two stones");
    let last = turn(&mut brain, &mut board, second, budget);

    // BOARD blocks: a bad line, impossible counts, cells outside or taken twice are refused at
    // DONE (the lines before it get no reply), and the game stays as it was.
    brain.send("BOARD\n7,7,1\n7,8,5\n");
    expect_error(&mut brain, "DONE", "7,8,5");
    brain.send("BOARD\nseven,seven,one\n");
    expect_error(&mut brain, "DONE", "seven");
    brain.send("BOARD\n7,7\n");
    expect_error(&mut brain, "DONE", "7,7");
    brain.send("BOARD\n7,7,1\n8,8,1\n6,6,2\n");
    expect_error(&mut brain, "DONE", "2 own and 1 opponent");
    brain.send("BOARD\n7,7,2\n8,8,2\n");
    expect_error(&mut brain, "DONE", "0 own and 2 opponent");
    brain.send("BOARD\n20,3,2\n");
    expect_error(&mut brain, "DONE", "outside");
    brain.send("BOARD\n5,5,1\n5,5,2\n");
    expect_error(&mut brain, "DONE", "occupied");
    expect_error(&mut brain, "DONE", "without BOARD");
    expect_error(&mut brain, &format!("TURN {}", wire(last)), "occupied");
    let opponent = board
        .empty_cells()
        .find(|&mv| mv.row == 0)
        .expect("an empty cell");
    turn(&mut brain, &mut board, opponent, budget);

    // TAKEBACK and PLAY: the manager takes the brain's move back and makes it play another.
    let corner = board
        .empty_cells()
        .filter(|&mv| mv.row == 14)
        .last()
        .expect("an empty cell");
    let searched = turn(&mut brain, &mut board, corner, budget);
    let empty = board.empty_cells().next().expect("an empty cell");
    expect_error(&mut brain, &format!("TAKEBACK {}", wire(empty)), "no stone");
    expect_error(&mut brain, "TAKEBACK 15,15", "outside");
    expect_reply(&mut brain, &format!("TAKEBACK {}", wire(searched)), "OK");
    board.set(searched, None).unwrap();
    expect_error(
        &mut brain,
        &format!("TAKEBACK {}", wire(searched)),
        "no stone",
    );
    let chosen = board
        .empty_cells()
        .find(|&mv| mv != searched && mv.row == 14)
        .expect("an empty cell");
    expect_error(&mut brain, "PLAY 7,7", "occupied");
    expect_error(&mut brain, "PLAY 0,15", "outside");
    expect_reply(&mut brain, &format!("PLAY {}", wire(chosen)), &wire(chosen));
    board.play(chosen, Stone::Black).unwrap();
    let opponent = board.empty_cells().next().expect("an empty cell");
    turn(&mut brain, &mut board, opponent, budget);

    // A good BOARD block replaces the game. The brain with one stone fewer is white; 3 is a
    // stone of a continuous game's earlier phase and ignored (its cell stays empty).
    brain.send("BOARD\n7,7,2\n8,7,1\n6,8,2\n3,3,3\n");
    let mut white = position(15, 15, &[(7, 7), (6, 8)], &[(8, 7)]);
    brain_moves(&mut brain, "DONE", &mut white, budget);
    expect_error(&mut brain, "TAKEBACK 3,3", "no stone");
    // The stones of the earlier game are gone.
    if white.is_empty_cell(at(8, 8)) {
        expect_error(&mut brain, "TAKEBACK 8,8", "no stone");
    }
    let opponent = white
        .empty_cells()
        .find(|&mv| mv.row == 5)
        .expect("an empty cell");
    turn(&mut brain, &mut white, opponent, budget);
    // And with as many stones as its opponent the brain is black.
    let mut black = position(15, 15, &[(7, 7), (8, 7)], &[(7, 8), (9, 9)]);
    brain.send(&board_block(&black));
    brain_moves(&mut brain, "DONE", &mut black, budget);
    let opponent = black.empty_cells().next().expect("an empty cell");
    turn(&mut brain, &mut black, opponent, budget);

    // RESTART: a new game on the same board, opened in the centre again.
    expect_reply(&mut brain, "RESTART", "OK");
    expect_reply(&mut brain, "BEGIN", "7,7");
    // Commands are not case-sensitive and a CR before the newline is tolerated.
    brain.send("about\r\n");
    expect_about(&mut brain, "about");
    end(brain);
}

#[test]
fn search_messages_come_before_the_move_unless_turned_off() {
    let _one = one_at_a_time();
    for quiet in [false, true] {
        let args: &[&str] = if quiet { &["--no-messages"] } else { &[] };
        let mut brain = spawn_brain(args);
        expect_reply(&mut brain, "START 15", "OK");
        brain.send("INFO timeout_turn 100\n");
        for command in ["BEGIN", "TURN 8,8"] {
            brain.send(&format!("{command}\n"));
            let (mv, before) = reply_and_chatter(&mut brain);
            assert!(
                parse_point(&mv).is_some(),
                "{command} (quiet: {quiet}): {mv:?} is not a move; before it: {before:?}"
            );
            if quiet {
                assert!(
                    before.is_empty(),
                    "{command} with --no-messages: {before:?} before the move"
                );
            } else {
                assert!(
                    before
                        .iter()
                        .any(|line| line.starts_with("MESSAGE ") && line.contains("depth")),
                    "{command}: no MESSAGE with the search's depth before the move: {before:?}"
                );
            }
            // Nothing comes after the move: the next line answers the next command.
            expect_silent(&mut brain, "INFO game_type 1");
        }
        end(brain);
    }
}

#[test]
fn a_long_thin_rectangular_board_is_played_inside_its_bounds() {
    let _one = one_at_a_time();
    let budget = Some(Duration::from_millis(300));
    let rule = Rule::exact(5);
    let mut brain = spawn_brain(&[]);
    // 20 columns, 7 rows.
    expect_reply(&mut brain, "RECTSTART 20,7", "OK");
    brain.send("INFO timeout_turn 300\nINFO rule 1\n");
    let mut board = Board::new(7, 20).unwrap();
    let mut last = brain_moves(&mut brain, "BEGIN", &mut board, budget);
    // Cells a 7-column, 20-row board would have, and a 20x7 one has not.
    expect_error(&mut brain, "TURN 3,7", "outside");
    expect_error(&mut brain, "TURN 6,19", "outside");
    expect_error(&mut brain, "TURN 20,0", "outside");
    expect_error(&mut brain, "TAKEBACK 0,7", "outside");
    // The far corners, which exist on this board only with x the column: then a naive opponent.
    let corners = [at(19, 6), at(19, 0), at(0, 6)];
    let mut replies = 0;
    for index in 0..10 {
        let opponent = match corners.get(index) {
            Some(&corner) if board.is_empty_cell(corner) => corner,
            _ => naive_opponent(&board, last, rule).expect("a free cell on a 20x7 board"),
        };
        board.play(opponent, Stone::White).unwrap();
        if board.winner(rule).is_some() || board.is_full() {
            break;
        }
        let command = format!("TURN {}", wire(opponent));
        last = brain_moves(&mut brain, &command, &mut board, budget);
        replies += 1;
        if board.winner(rule).is_some() {
            break;
        }
    }
    // Nobody can have five before the brain's fifth stone: at least four replies came.
    assert!(replies >= 4, "only {replies} replies\n{board}");

    // The other way round, 7 columns and 20 rows: 6,19 is the bottom-right corner now.
    expect_reply(&mut brain, "RECTSTART 7,20", "OK");
    let mut tall = Board::new(20, 7).unwrap();
    brain_moves(&mut brain, "BEGIN", &mut tall, budget);
    expect_error(&mut brain, "TURN 19,6", "outside");
    turn(&mut brain, &mut tall, at(6, 19), budget);
    turn(&mut brain, &mut tall, at(0, 19), budget);
    end(brain);
}

#[test]
fn a_takeback_then_replay_is_answered_in_the_new_position() {
    let _one = one_at_a_time();
    let budget = Some(Duration::from_millis(300));
    let mut brain = spawn_brain(&[]);
    expect_reply(&mut brain, "START 15", "OK");
    brain.send("INFO timeout_turn 300\nINFO rule 1\n");
    // The brain is black (as many stones as its opponent). Its opponent's four in column 4, rows
    // 5 to 8, is blocked at 4,4: the only move is 4,9.
    let black = [(4, 4), (10, 10), (12, 1), (1, 12)];
    let white = [(4, 5), (4, 6), (4, 7), (4, 8)];
    let mut board = position(15, 15, &black, &white);
    brain.send(&board_block(&board));
    let block = brain_moves(&mut brain, "DONE", &mut board, budget);
    assert_eq!(wire(block), "4,9", "the four must be blocked\n{board}");

    // Take back the block and the four's last stone, and play the same move again: the same
    // answer.
    expect_reply(&mut brain, "TAKEBACK 4,9", "OK");
    expect_error(&mut brain, "TAKEBACK 4,9", "no stone");
    expect_reply(&mut brain, "TAKEBACK 4,8", "OK");
    board.set(at(4, 9), None).unwrap();
    board.set(at(4, 8), None).unwrap();
    let block = turn(&mut brain, &mut board, at(4, 8), budget);
    assert_eq!(
        wire(block),
        "4,9",
        "the replayed four must be blocked\n{board}"
    );

    // Take them back again and let the opponent make its four the other way, at 4,9: the cell
    // to block is now 4,8, where a stone was taken back.
    expect_reply(&mut brain, "TAKEBACK 4,9", "OK");
    expect_reply(&mut brain, "TAKEBACK 4,8", "OK");
    board.set(at(4, 9), None).unwrap();
    board.set(at(4, 8), None).unwrap();
    let block = turn(&mut brain, &mut board, at(4, 9), budget);
    assert_eq!(
        wire(block),
        "4,8",
        "the other four must be blocked\n{board}"
    );

    // The manager takes the block back and has the brain play it itself with PLAY (the test's
    // board is the same after both).
    expect_reply(&mut brain, "TAKEBACK 4,8", "OK");
    expect_reply(&mut brain, "PLAY 4,8", "4,8");
    expect_error(&mut brain, "PLAY 4,8", "occupied");
    expect_error(&mut brain, "TAKEBACK 0,0", "no stone");
    turn(&mut brain, &mut board, at(0, 0), budget);

    // Everything taken back, stone by stone: the empty board is opened in the centre.
    let stones: Vec<Move> = board
        .cells()
        .filter(|(_, stone)| stone.is_some())
        .map(|(mv, _)| mv)
        .collect();
    for mv in stones {
        expect_reply(&mut brain, &format!("TAKEBACK {}", wire(mv)), "OK");
        board.set(mv, None).unwrap();
    }
    expect_error(&mut brain, "TAKEBACK 4,4", "no stone");
    let opening = brain_moves(&mut brain, "BEGIN", &mut board, budget);
    assert_eq!(wire(opening), "7,7", "an empty board again");
    end(brain);
}

/// `INFO rule` decides whether six in a row wins: with 0 the brain takes the overline that wins
/// at once, with 1 (exactly five) that six wins nothing and it must block its opponent's four.
#[test]
fn info_rule_decides_whether_an_overline_wins() {
    let _one = one_at_a_time();
    let budget = Some(Duration::from_millis(300));
    // The brain (black) makes six at 6,7 (row 7, columns 3 to 8); its opponent's four in
    // column 12, rows 1 to 4, is blocked at 12,0 and makes five at 12,5.
    let black = [(3, 7), (4, 7), (5, 7), (7, 7), (8, 7), (12, 0)];
    let white = [(12, 1), (12, 2), (12, 3), (12, 4), (0, 12), (14, 12)];
    let start = position(15, 15, &black, &white);
    let mut brain = spawn_brain(&[]);
    expect_reply(&mut brain, "START 15", "OK");
    brain.send("INFO timeout_turn 300\n");
    for (rule, expected) in [("0", "6,7"), ("1", "12,5"), ("0", "6,7")] {
        expect_silent(&mut brain, &format!("INFO rule {rule}"));
        let mut board = start.clone();
        brain.send(&board_block(&board));
        let mv = brain_moves(&mut brain, "DONE", &mut board, budget);
        assert_eq!(wire(mv), expected, "INFO rule {rule}\n{start}");
    }
    end(brain);
}

/// A naive opponent for the side to move: its own five if it has one, else a block of the
/// other side's five, else the nearest free cell around `brain_last`.
fn naive_opponent(board: &Board, brain_last: Move, rule: Rule) -> Option<Move> {
    let me = board.side_to_move().ok()?;
    let five_for = |stone: Stone| {
        board
            .empty_cells()
            .find(|&mv| board.wins_at(mv, stone, rule))
    };
    let longest_side = board.rows().max(board.cols()) as isize;
    five_for(me)
        .or_else(|| five_for(me.opponent()))
        .or_else(|| {
            (1..=longest_side)
                .flat_map(|distance| {
                    DIRECTIONS
                        .iter()
                        .flat_map(move |&dir| [distance, -distance].map(|times| (dir, times)))
                })
                .filter_map(|(dir, times)| board.step(brain_last, dir, times))
                .find(|&mv| board.is_empty_cell(mv))
        })
        .or_else(|| board.empty_cells().next())
}

#[test]
fn a_full_game_against_a_naive_opponent_ends_with_the_brains_five() {
    let _one = one_at_a_time();
    let budget = Some(Duration::from_millis(100));
    let rule = Rule::exact(5);
    let mut brain = spawn_brain(&[]);
    expect_reply(&mut brain, "START 15", "OK");
    brain.send("INFO timeout_turn 100\nINFO rule 1\n");
    let mut board = Board::new(15, 15).unwrap();
    let mut last = brain_moves(&mut brain, "BEGIN", &mut board, budget);
    let mut moves = vec![wire(last)];
    while board.winner(rule).is_none() && !board.is_full() {
        let opponent = naive_opponent(&board, last, rule).expect("a free cell");
        moves.push(wire(opponent));
        board.play(opponent, Stone::White).unwrap();
        if board.winner(rule).is_some() || board.is_full() {
            break;
        }
        let command = format!("TURN {}", wire(opponent));
        last = brain_moves(&mut brain, &command, &mut board, budget);
        moves.push(wire(last));
    }
    assert_eq!(
        board.winner(rule),
        Some(Stone::Black),
        "the game should end with the brain's five; moves {moves:?}\n{board}"
    );
    assert!(
        board.wins_at(last, Stone::Black, rule),
        "the brain's last move {} should make its five\n{board}",
        wire(last)
    );
    end(brain);
}

#[test]
fn the_same_position_gets_a_legal_answer_in_time_through_both_protocols() {
    let _one = one_at_a_time();
    let budget_ms = 300;
    let budget = Duration::from_millis(budget_ms);
    // Positions as x,y lists. Black to move, white's four in column 12 (rows 2 to 5, blocked at
    // row 1) to block at 12,6; white to move, black's four in row 10 (columns 2 to 5, blocked at
    // column 1) to block at 6,10; and an open position where any free cell is legal.
    let black_blocks = position(
        15,
        15,
        &[(12, 1), (7, 7), (6, 8), (9, 9)],
        &[(12, 2), (12, 3), (12, 4), (12, 5)],
    );
    let white_blocks = position(
        15,
        15,
        &[(2, 10), (3, 10), (4, 10), (5, 10), (7, 7)],
        &[(1, 10), (6, 6), (8, 8), (8, 6)],
    );
    let open = position(15, 15, &[(7, 7), (8, 7), (6, 9)], &[(7, 8), (8, 8)]);
    let positions = [
        (
            "black to move, a forced block",
            black_blocks,
            Some(at(12, 6)),
        ),
        (
            "white to move, a forced block",
            white_blocks,
            Some(at(6, 10)),
        ),
        ("white to move, an open position", open, None),
    ];

    let mut connect5 = StdioPlayer::spawn(&[]);
    connect5.expect_ready("READY");
    let mut gomocup = spawn_brain(&[]);
    expect_reply(&mut gomocup, "START 15", "OK");
    gomocup.send(&format!("INFO timeout_turn {budget_ms}\nINFO rule 1\n"));
    for (what, board, forced) in positions {
        // The Connect5 protocol: rows of 0/N/B, the time in ms; the answer is `row col`.
        let (line, latency) = connect5.ask(&request(&board, budget_ms));
        let by_connect5 = legal_reply(&board, &line);
        assert!(
            latency <= budget + SLACK,
            "{what}: the Connect5 protocol answered {line:?} after {latency:?}"
        );
        // The Gomocup protocol: the same stones as the brain's own (1) and its opponent's (2);
        // the answer is `x,y`.
        gomocup.send(&board_block(&board));
        let mut after = board.clone();
        let by_gomocup = brain_moves(&mut gomocup, "DONE", &mut after, Some(budget));
        if let Some(forced) = forced {
            assert_eq!(
                line,
                format!("{} {}", forced.row, forced.col),
                "{what}: Connect5 answers row col\n{board}"
            );
            assert_eq!(
                wire(by_gomocup),
                wire(forced),
                "{what}: Gomocup answers x,y\n{board}"
            );
            assert_eq!(by_connect5, by_gomocup, "{what}");
        }
    }
    connect5.send("0\n");
    connect5.expect_eof();
    assert!(connect5.wait_exit().success());
    end(gomocup);
}

/// Starts a brain on a move that may take 20 s, and checks it is still thinking after a while
/// (so that what the test sends next reaches a running search).
fn brain_thinking_for_20_seconds() -> StdioPlayer {
    let mut brain = spawn_brain(&["--no-messages"]);
    expect_reply(&mut brain, "START 15", "OK");
    brain.send("INFO timeout_turn 20000\n");
    // An empty board is opened at once; the second move is searched.
    expect_reply(&mut brain, "BEGIN", "7,7");
    brain.send("TURN 8,8\n");
    let early = brain.next_within(Duration::from_millis(300));
    assert_eq!(
        early,
        Next::TimedOut,
        "a 20 s move should still be searched after 300 ms"
    );
    brain
}

/// After END or the end of input in a search: at most the search's move, then the end of the
/// output and exit status 0, within `PROMPT_EXIT` of `since`.
#[track_caller]
fn expect_prompt_exit(brain: &mut StdioPlayer, since: Instant, what: &str) {
    let mut lines = Vec::new();
    loop {
        match brain.next_within(PROMPT_EXIT) {
            Next::Line(line) => lines.push(line),
            Next::Eof => break,
            Next::TimedOut => panic!(
                "{what}: the brain did not close its output within {PROMPT_EXIT:?}; it wrote \
                 {lines:?}\n--- brain's stderr ---\n{}",
                brain.stderr()
            ),
        }
    }
    let replies: Vec<&String> = lines.iter().filter(|line| !is_chatter(line)).collect();
    assert!(
        replies.len() <= 1 && replies.iter().all(|line| parse_point(line).is_some()),
        "{what}: only the interrupted search's move may come, got {lines:?}"
    );
    let status = brain.wait_exit();
    assert!(status.success(), "{what}: exit status {status}");
    assert!(
        since.elapsed() < PROMPT_EXIT,
        "{what}: the brain took {:?} to exit",
        since.elapsed()
    );
}

#[test]
fn end_in_a_long_search_and_the_end_of_input_exit_promptly_with_status_0() {
    let _one = one_at_a_time();
    // END while a 20 s move is being searched.
    let mut brain = brain_thinking_for_20_seconds();
    brain.send("END\n");
    expect_prompt_exit(&mut brain, Instant::now(), "END in a search");

    // The end of input while a 20 s move is being searched.
    let mut brain = brain_thinking_for_20_seconds();
    brain.close_input();
    expect_prompt_exit(&mut brain, Instant::now(), "end of input in a search");

    // The end of input between commands, in a game and before any.
    let mut brain = spawn_brain(&[]);
    expect_reply(&mut brain, "START 15", "OK");
    brain.send("INFO timeout_turn 100\n");
    let mut board = Board::new(15, 15).unwrap();
    brain_moves(&mut brain, "BEGIN", &mut board, None);
    brain.close_input();
    expect_prompt_exit(&mut brain, Instant::now(), "end of input after a move");
    let mut brain = spawn_brain(&[]);
    brain.close_input();
    expect_prompt_exit(&mut brain, Instant::now(), "end of input at once");

    // END before anything else.
    end(spawn_brain(&[]));
}

#[test]
fn yxstop_answers_a_long_search_at_once_and_the_brain_goes_on() {
    let _one = one_at_a_time();
    let mut brain = brain_thinking_for_20_seconds();
    let stopped = Instant::now();
    brain.send("YXSTOP\n");
    let reply = next_reply(&mut brain);
    assert!(parse_point(&reply).is_some(), "YXSTOP: {reply:?}");
    assert!(
        stopped.elapsed() < PROMPT_EXIT,
        "YXSTOP: the move came {:?} after it",
        stopped.elapsed()
    );
    expect_silent(&mut brain, "YXHASHCLEAR");
    end(brain);
}

#[test]
fn yxboard_takes_a_position_without_a_move() {
    let _one = one_at_a_time();
    let mut brain = spawn_brain(&["--no-messages"]);
    expect_reply(&mut brain, "START 15", "OK");
    brain.send("INFO timeout_turn 200\n");
    expect_silent(&mut brain, "INFO max_depth 3");
    let mut board = position(15, 15, &[(7, 7)], &[(8, 8)]);
    let block = board_block(&board).replacen("BOARD", "YXBOARD", 1);
    expect_silent(&mut brain, &format!("{block}DONE"));
    // BEGIN moves in the position YXBOARD gave.
    brain_moves(
        &mut brain,
        "BEGIN",
        &mut board,
        Some(Duration::from_millis(200)),
    );
    end(brain);
}

#[test]
fn a_nearly_spent_match_clock_is_respected() {
    let _one = one_at_a_time();
    let mut brain = spawn_brain(&[]);
    expect_reply(&mut brain, "START 15", "OK");
    // 10 s a move, but 200 ms left of the match: the move takes a share of the 200 ms (never
    // more than half of it).
    brain.send("INFO timeout_turn 10000\nINFO timeout_match 60000\nINFO time_left 200\n");
    let mut board = Board::new(15, 15).unwrap();
    brain_moves(&mut brain, "BEGIN", &mut board, None);
    turn(
        &mut brain,
        &mut board,
        at(8, 8),
        Some(Duration::from_millis(100)),
    );
    end(brain);
}

/// Sends `board` as `BOARD` … `DONE` and returns the brain's move and the node count of the
/// search's `MESSAGE` line.
#[track_caller]
fn nodes_searched(brain: &mut StdioPlayer, board: &Board) -> (String, u64) {
    brain.send(&format!("{}DONE\n", board_block(board)));
    let mut nodes = None;
    loop {
        let line = brain.line();
        if !is_chatter(&line) {
            let nodes = nodes.unwrap_or_else(|| panic!("no MESSAGE with nodes before {line:?}"));
            return (line, nodes);
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if let Some(at) = words.iter().position(|word| *word == "nodes") {
            nodes = words.get(at + 1).and_then(|count| count.parse().ok());
        }
    }
}

#[test]
fn yxhashclear_makes_the_next_search_start_from_an_empty_table() {
    let _one = one_at_a_time();
    let mut brain = spawn_brain(&[]);
    expect_reply(&mut brain, "START 15", "OK");
    // A fixed depth and a turn it never reaches: the searches are the same but for the table.
    brain.send("INFO timeout_turn 60000\nINFO max_depth 8\n");
    let board = position(15, 15, &[(7, 7), (8, 7)], &[(8, 8), (6, 6)]);
    let (first_move, fresh) = nodes_searched(&mut brain, &board);
    let (kept_move, kept) = nodes_searched(&mut brain, &board);
    assert!(
        kept < fresh,
        "the table kept from the first search saves nothing: {kept} nodes, then {fresh}"
    );
    expect_silent(&mut brain, "YXHASHCLEAR");
    let (cleared_move, cleared) = nodes_searched(&mut brain, &board);
    assert_eq!(
        (cleared_move, cleared),
        (first_move, fresh),
        "after YXHASHCLEAR the search should be the first one again (the kept one: {kept_move}, \
         {kept} nodes)"
    );
    end(brain);
}

/// The nodes past its limit a search may visit: it reads its limits every 256 nodes.
const NODE_POLL_SLACK: u64 = 256;

#[test]
fn max_node_stops_the_search_at_a_node_count_so_it_repeats_in_any_process() {
    let _one = one_at_a_time();
    // A quiet opening and a turn no search below reaches: only the node limit stops them.
    let board = position(15, 15, &[(7, 7), (8, 7)], &[(8, 8), (6, 6)]);
    let search = |infos: &str| {
        let mut brain = spawn_brain(&[]);
        expect_reply(&mut brain, "START 15", "OK");
        brain.send(&format!("INFO timeout_turn 60000\n{infos}"));
        let searched = nodes_searched(&mut brain, &board);
        end(brain);
        searched
    };
    let (small_move, small) = search("INFO max_node 20000\n");
    assert!(
        small <= 20_000 + NODE_POLL_SLACK,
        "max_node 20000: the search visited {small} nodes"
    );
    let (larger_move, larger) = search("INFO max_node 200000\n");
    assert!(
        (small..=200_000 + NODE_POLL_SLACK).contains(&larger),
        "max_node 200000: {larger} nodes (20000: {small}, {small_move})"
    );
    assert_eq!(
        search("INFO max_node 20000\n"),
        (small_move, small),
        "the same position and node limit in another process should give the same search \
         (200000 nodes gave {larger_move})"
    );
    // 0 lifts the limit: the depth limit alone then decides, as if max_node had never been set.
    assert_eq!(
        search("INFO max_node 20000\nINFO max_node 0\nINFO max_depth 6\n"),
        search("INFO max_depth 6\n"),
        "INFO max_node 0 should lift the node limit"
    );
}

#[test]
fn the_block_of_a_four_reports_the_loss_its_position_proves() {
    let _one = one_at_a_time();
    // Game 5 of docs/runs/rapfi-20x20-1s-bal20s1-s73.json.gz after 34 stones, black (the brain)
    // to move: white has a four, and after its block an open four to make, a loss in four plies
    // (Rapfi: -M4). The block used to report the static evaluation of the position before it,
    // +2537 (docs/engine.md, session 80).
    let board = position(
        20,
        20,
        &[
            (7, 8),
            (12, 10),
            (8, 8),
            (12, 9),
            (13, 8),
            (10, 13),
            (6, 8),
            (4, 8),
            (11, 10),
            (13, 13),
            (11, 11),
            (10, 12),
            (14, 7),
            (9, 13),
            (9, 10),
            (12, 14),
            (14, 12),
        ],
        &[
            (11, 9),
            (13, 10),
            (13, 9),
            (12, 11),
            (11, 12),
            (13, 12),
            (9, 8),
            (5, 8),
            (13, 11),
            (10, 11),
            (12, 12),
            (12, 13),
            (15, 6),
            (8, 14),
            (12, 15),
            (15, 12),
            (13, 14),
        ],
    );
    let mut brain = spawn_brain(&[]);
    expect_reply(&mut brain, "START 20", "OK");
    brain.send("INFO timeout_turn 1000\n");
    brain.send(&format!("{}DONE\n", board_block(&board)));
    let (reply, messages) = reply_and_chatter(&mut brain);
    assert_eq!(reply, "14,15", "the block of white's four");
    assert!(
        messages.iter().any(|m| m.contains("score loss in 4 plies")),
        "{messages:?}"
    );
    end(brain);
}

/// Game 6 of docs/runs/rapfi-20x20-1s-bal20s1-s73.json.gz after 27 stones, white to move:
/// black has threats but no VCT within the check's 10 threats, so the threat searches run as
/// long as they are let (docs/engine.md, sessions 79 and 80).
fn position_of_long_threat_searches() -> Board {
    position(
        20,
        20,
        &[
            (7, 8),
            (12, 10),
            (11, 7),
            (12, 8),
            (13, 9),
            (14, 9),
            (9, 10),
            (12, 9),
            (10, 8),
            (11, 11),
            (10, 13),
            (7, 9),
            (13, 11),
            (6, 8),
        ],
        &[
            (11, 9),
            (11, 8),
            (13, 8),
            (12, 7),
            (14, 10),
            (10, 9),
            (10, 11),
            (10, 10),
            (9, 9),
            (10, 12),
            (12, 12),
            (15, 9),
            (10, 6),
        ],
    )
}

/// The nodes a brain started with `args` reports for its depth-10 search of that position
/// with a 600 s turn.
fn depth_10_nodes_with_a_long_turn(args: &[&str]) -> u64 {
    let mut brain = spawn_brain(args);
    expect_reply(&mut brain, "START 20", "OK");
    brain.send("INFO timeout_turn 600000\nINFO max_depth 10\n");
    let (_, nodes) = nodes_searched(&mut brain, &position_of_long_threat_searches());
    end(brain);
    nodes
}

#[test]
fn the_check_of_the_chosen_move_takes_no_more_nodes_than_the_search_before_it() {
    let _one = one_at_a_time();
    // The depth-10 search took 208 thousand nodes and the check of its move, given 60% of a
    // long turn, 173 million (session 79). The threat searches before the main search are
    // off, so the count is the main search's and the check's.
    let nodes = depth_10_nodes_with_a_long_turn(&[
        "--param",
        "vct_time_share=0",
        "--param",
        "threat_time_share=0",
    ]);
    assert!(
        nodes <= 2_000_000,
        "the depth-10 search and its check took {nodes} nodes"
    );
}

#[test]
fn a_search_limited_in_depth_bounds_its_threat_searches_whatever_its_turn() {
    let _one = one_at_a_time();
    // With the threat searches on, the root VCT and the opponent's VCT with a free move took
    // their shares of a 600 s turn here (78 million nodes in all, 55 s) before the main
    // search, which then reached depth 10 in well under a million (session 80).
    let nodes = depth_10_nodes_with_a_long_turn(&[]);
    assert!(
        nodes <= 3_000_000,
        "the depth-10 search and its threat searches took {nodes} nodes"
    );
}
