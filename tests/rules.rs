//! What the player must answer in simple positions, through the real binary: the course grader's
//! cases (and their mirror images), blocking a four, exact five (an overline is no win), and
//! perfect play on 3×3 against every sequence of opponent moves.

mod common;

use std::collections::HashMap;
use std::sync::OnceLock;
use std::thread;

use common::{board, board_with, Player, StdioPlayer};
use connect5::board::{Board, Move, Rule, Stone};

/// The eight symmetries of a rectangle: optional transpose, then optional flips of rows and
/// columns. On a non-square board the transposed ones give the C×L board.
#[derive(Clone, Copy, Debug)]
struct Symmetry {
    transpose: bool,
    flip_rows: bool,
    flip_cols: bool,
}

fn symmetries() -> impl Iterator<Item = Symmetry> {
    (0..8).map(|i| Symmetry {
        transpose: i & 1 != 0,
        flip_rows: i & 2 != 0,
        flip_cols: i & 4 != 0,
    })
}

impl Symmetry {
    fn apply_move(self, mv: Move, rows: usize, cols: usize) -> Move {
        let (mut r, mut c, mut nr, mut nc) = (mv.row, mv.col, rows, cols);
        if self.transpose {
            (r, c, nr, nc) = (c, r, nc, nr);
        }
        if self.flip_rows {
            r = nr - 1 - r;
        }
        if self.flip_cols {
            c = nc - 1 - c;
        }
        Move::new(r, c)
    }

    fn apply(self, board: &Board) -> Board {
        let (rows, cols) = (board.rows(), board.cols());
        let (nr, nc) = if self.transpose {
            (cols, rows)
        } else {
            (rows, cols)
        };
        let mut out = Board::new(nr, nc).expect("same size");
        for (mv, stone) in board.cells() {
            out.set(self.apply_move(mv, rows, cols), stone)
                .expect("inside the board");
        }
        out
    }
}

/// Asks for a move in `position` and in each of its symmetric images; each reply must be one of
/// the images of `expected`.
fn expect_in_every_orientation(
    player: &mut StdioPlayer,
    what: &str,
    position: &Board,
    expected: &[Move],
    budget_ms: u64,
) {
    for symmetry in symmetries() {
        let image = symmetry.apply(position);
        let allowed: Vec<Move> = expected
            .iter()
            .map(|&mv| symmetry.apply_move(mv, position.rows(), position.cols()))
            .collect();
        let rule = Rule::for_board(image.rows(), image.cols());
        let (mv, _) = player.play(&image, rule, budget_ms);
        assert!(
            allowed.contains(&mv),
            "{what} ({symmetry:?}): answered {mv}, expected one of {allowed:?}\n{image}"
        );
    }
}

fn player() -> StdioPlayer {
    let mut player = StdioPlayer::spawn(&[]);
    player.expect_ready("READY");
    player
}

/// One player per engine: both must get the tactics right.
fn players() -> Vec<(&'static str, StdioPlayer)> {
    ["v1", "v2"]
        .into_iter()
        .map(|engine| {
            let mut player = StdioPlayer::spawn(&["--engine", engine]);
            player.expect_ready("READY");
            (engine, player)
        })
        .collect()
}

#[test]
fn grader_case_5x5_black_completes_its_column() {
    let position = board(&["N0B00", "N0B00", "N0B00", "N0B00", "00000"]);
    for (engine, mut player) in players() {
        let (reply, _) = player.ask(&common::request(&position, 1000));
        assert_eq!(reply, "4 0", "{engine}");
        expect_in_every_orientation(
            &mut player,
            &format!("{engine}: grader 5x5"),
            &position,
            &[Move::new(4, 0)],
            1000,
        );
    }
}

#[test]
fn grader_case_5x7_black_completes_its_row() {
    let position = board(&["00NNNN0", "0000000", "0000000", "0000000", "00BBBB0"]);
    for (engine, mut player) in players() {
        let (reply, _) = player.ask(&common::request(&position, 1000));
        assert!(
            reply == "0 1" || reply == "0 6",
            "{engine}: answered {reply:?}"
        );
        expect_in_every_orientation(
            &mut player,
            &format!("{engine}: grader 5x7"),
            &position,
            &[Move::new(0, 1), Move::new(0, 6)],
            1000,
        );
    }
}

#[test]
fn completes_a_diagonal_five() {
    let position = board_with(
        5,
        5,
        &[(0, 0), (1, 1), (2, 2), (3, 3)],
        &[(0, 4), (1, 4), (3, 0), (4, 1)],
    );
    for (engine, mut player) in players() {
        expect_in_every_orientation(
            &mut player,
            &format!("{engine}: diagonal"),
            &position,
            &[Move::new(4, 4)],
            500,
        );
    }
}

/// White to move on 15×15; black threatens to make five at exactly one cell and white has no
/// win of its own: white must take that cell.
#[test]
fn blocks_a_four() {
    let far_white = [(14, 0), (0, 14), (14, 14)];
    let cases: Vec<(&str, Board, Move)> = vec![
        (
            "closed four in a row",
            board_with(
                15,
                15,
                &[(7, 3), (7, 4), (7, 5), (7, 6)],
                &[(7, 2), far_white[0], far_white[1]],
            ),
            Move::new(7, 7),
        ),
        (
            "split four 2+2",
            board_with(
                15,
                15,
                &[(7, 3), (7, 4), (7, 6), (7, 7)],
                &[(6, 5), far_white[0], far_white[1]],
            ),
            Move::new(7, 5),
        ),
        (
            "split four 3+1",
            board_with(
                15,
                15,
                &[(4, 3), (5, 4), (6, 5), (8, 7)],
                &[(3, 2), far_white[0], far_white[1]],
            ),
            Move::new(7, 6),
        ),
        (
            "closed diagonal four",
            board_with(
                15,
                15,
                &[(3, 3), (4, 4), (5, 5), (6, 6)],
                &[(2, 2), far_white[0], far_white[1]],
            ),
            Move::new(7, 7),
        ),
        (
            "four against the edge",
            board_with(
                15,
                15,
                &[(0, 9), (1, 9), (2, 9), (3, 9)],
                &[(5, 3), far_white[0], far_white[2]],
            ),
            Move::new(4, 9),
        ),
    ];
    for (engine, mut player) in players() {
        for (what, position, block) in &cases {
            assert_eq!(position.side_to_move(), Ok(Stone::White), "{what}");
            expect_in_every_orientation(
                &mut player,
                &format!("{engine}: {what}"),
                position,
                &[*block],
                300,
            );
        }
    }
}

#[test]
fn wins_rather_than_blocks() {
    // White to move: black threatens (7,7), white wins at (9,7) or (9,2) at once.
    let position = board_with(
        15,
        15,
        &[(7, 3), (7, 4), (7, 5), (7, 6), (0, 0), (14, 14)],
        &[(7, 2), (9, 3), (9, 4), (9, 5), (9, 6)],
    );
    assert_eq!(position.side_to_move(), Ok(Stone::White));
    for (engine, mut player) in players() {
        expect_in_every_orientation(
            &mut player,
            &format!("{engine}: win rather than block"),
            &position,
            &[Move::new(9, 2), Move::new(9, 7)],
            300,
        );
    }
}

#[test]
fn a_budget_of_zero_still_takes_a_win_in_one() {
    let position = board_with(
        15,
        15,
        &[(7, 5), (7, 6), (7, 7), (7, 8)],
        &[(8, 6), (8, 7), (6, 7), (6, 8)],
    );
    for (engine, mut player) in players() {
        for _ in 0..3 {
            let (mv, _) = player.play(&position, Rule::for_board(15, 15), 0);
            assert!(
                mv == Move::new(7, 4) || mv == Move::new(7, 9),
                "{engine}: answered {mv} with a budget of 0"
            );
        }
    }
}

/// Black to move: filling the gap of `B N N N N _ N` makes six, which is no win; the real win is
/// the open vertical four. The gap is the first empty cell in reading order, so an engine that
/// counts six as a win, or just plays the first cell, answers it.
#[test]
fn an_overline_is_not_a_win() {
    let white = [
        (0, 0),
        (14, 0),
        (14, 2),
        (14, 4),
        (14, 6),
        (12, 0),
        (12, 2),
        (12, 4),
        (12, 6),
    ];
    let black = [
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (0, 6),
        (3, 10),
        (4, 10),
        (5, 10),
        (6, 10),
    ];
    let position = board_with(15, 15, &black, &white);
    let gap = Move::new(0, 5);
    let mut after_gap = position.clone();
    after_gap.play(gap, Stone::Black).expect("free");
    assert!(
        !after_gap.wins_at(gap, Stone::Black, Rule::for_board(15, 15)),
        "the test's premise: six is no win"
    );
    for (engine, mut player) in players() {
        expect_in_every_orientation(
            &mut player,
            &format!("{engine}: overline is no win"),
            &position,
            &[Move::new(2, 10), Move::new(7, 10)],
            300,
        );
    }
}

/// White to move: black's `N N N N _ N` is no threat (filling the gap makes six) but its closed
/// vertical four is; white must block the real one.
#[test]
fn a_gap_that_would_make_six_is_no_threat() {
    let black = [
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (0, 6),
        (3, 10),
        (4, 10),
        (5, 10),
        (6, 10),
    ];
    let white = [
        (0, 0),
        (2, 10),
        (14, 0),
        (14, 2),
        (14, 4),
        (12, 0),
        (12, 2),
        (12, 4),
    ];
    let position = board_with(15, 15, &black, &white);
    assert_eq!(position.side_to_move(), Ok(Stone::White));
    for (engine, mut player) in players() {
        expect_in_every_orientation(
            &mut player,
            &format!("{engine}: block the real four, not the gap"),
            &position,
            &[Move::new(7, 10)],
            300,
        );
    }
}

/// Game-theoretic value of a 3×3 position for the side to move: 1 win, 0 draw, -1 loss.
fn value(board: &Board, rule: Rule, memo: &mut HashMap<Board, i32>) -> i32 {
    if let Some(&known) = memo.get(board) {
        return known;
    }
    let side = board.side_to_move().expect("legal position");
    let mut best = if board.is_full() { 0 } else { -1 };
    for mv in board.empty_cells().collect::<Vec<_>>() {
        let mut next = board.clone();
        next.play(mv, side).expect("empty cell");
        let score = if next.wins_at(mv, side, rule) {
            1
        } else if next.is_full() {
            0
        } else {
            -value(&next, rule, memo)
        };
        best = best.max(score);
    }
    memo.insert(board.clone(), best);
    best
}

#[derive(Default, Debug)]
struct Tally {
    requests: usize,
    engine_wins: usize,
    draws: usize,
    losses: Vec<String>,
    /// Engine moves that turned a won position into a draw (or worse).
    wasted_wins: Vec<String>,
}

const MORPION_BUDGET_MS: u64 = 100;

/// Plays every sequence of opponent moves against the engine from `board` (game not over).
fn explore(
    player: &mut StdioPlayer,
    board: &Board,
    engine: Stone,
    history: &mut Vec<Move>,
    memo: &mut HashMap<Board, i32>,
    tally: &mut Tally,
) {
    let rule = Rule::for_board(3, 3);
    let side = board.side_to_move().expect("legal position");
    if side == engine {
        tally.requests += 1;
        let (mv, _) = player.play(board, rule, MORPION_BUDGET_MS);
        let mut next = board.clone();
        next.play(mv, engine).expect("legal reply");
        history.push(mv);
        let before = value(board, rule, memo);
        let after = if next.wins_at(mv, engine, rule) {
            1
        } else if next.is_full() {
            0
        } else {
            -value(&next, rule, memo)
        };
        if after < before {
            tally
                .wasted_wins
                .push(format!("moves {history:?}: value {before} became {after}"));
        }
        if next.wins_at(mv, engine, rule) {
            tally.engine_wins += 1;
        } else if next.is_full() {
            tally.draws += 1;
        } else {
            explore(player, &next, engine, history, memo, tally);
        }
        history.pop();
        return;
    }
    for mv in board.empty_cells().collect::<Vec<_>>() {
        let mut next = board.clone();
        next.play(mv, side).expect("empty cell");
        history.push(mv);
        if next.wins_at(mv, side, rule) {
            tally.losses.push(format!("moves {history:?}\n{next}"));
        } else if next.is_full() {
            tally.draws += 1;
        } else {
            explore(player, &next, engine, history, memo, tally);
        }
        history.pop();
    }
}

fn explore_morpion(engine: Stone) -> Tally {
    let mut player = player();
    let mut tally = Tally::default();
    let empty = Board::new(3, 3).expect("3x3");
    explore(
        &mut player,
        &empty,
        engine,
        &mut Vec::new(),
        &mut HashMap::new(),
        &mut tally,
    );
    tally
}

/// Both colours at once, one session each; explored once and shared by the tests below.
fn explorations() -> &'static [Tally; 2] {
    static EXPLORED: OnceLock<[Tally; 2]> = OnceLock::new();
    EXPLORED.get_or_init(|| {
        let second = thread::spawn(|| explore_morpion(Stone::White));
        let first = explore_morpion(Stone::Black);
        let second = second.join().expect("exploration as second player");
        for (tally, role) in [&first, &second].into_iter().zip(["first", "second"]) {
            eprintln!(
                "3x3 as {role} player: {} requests, {} wins, {} draws, {} losses",
                tally.requests,
                tally.engine_wins,
                tally.draws,
                tally.losses.len()
            );
        }
        [first, second]
    })
}

#[test]
fn morpion_never_loses_as_first_or_second_player() {
    for (tally, role) in explorations().iter().zip(["first", "second"]) {
        assert!(
            tally.losses.is_empty(),
            "as {role} player the engine lost {} games, e.g. {}",
            tally.losses.len(),
            tally.losses[0]
        );
    }
}

#[test]
fn morpion_never_lets_a_forced_win_go() {
    for (tally, role) in explorations().iter().zip(["first", "second"]) {
        assert!(
            tally.wasted_wins.is_empty(),
            "as {role} player the engine played {} moves that give up a forced win, e.g. {}",
            tally.wasted_wins.len(),
            tally.wasted_wins[0]
        );
    }
}
