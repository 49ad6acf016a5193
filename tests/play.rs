//! `connect5 play` through a real process: moves typed on stdin (a pipe), the board on stdout.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use connect5::board::{Board, Rule, Stone};

const BIN: &str = env!("CARGO_BIN_EXE_connect5");

fn play(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(BIN)
        .arg("play")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start connect5 play");
    let mut stdin = child.stdin.take().unwrap();
    // The game may end before it has read everything: a closed pipe is fine here.
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// The last board drawn in a transcript, as protocol rows (`N` for X, `B` for O).
fn last_board(stdout: &str, rows: usize) -> Board {
    let lines: Vec<&str> = stdout.lines().collect();
    let header = lines
        .iter()
        .rposition(|l| l.trim_start().starts_with("0 1"))
        .expect("a board was drawn");
    let grid: Vec<String> = lines[header + 1..header + 1 + rows]
        .iter()
        .map(|line| {
            line.split_whitespace()
                .skip(1)
                .map(|mark| match mark {
                    "X" => 'N',
                    "O" => 'B',
                    _ => '0',
                })
                .collect()
        })
        .collect();
    let refs: Vec<&str> = grid.iter().map(String::as_str).collect();
    Board::from_rows(&refs).unwrap()
}

#[test]
fn a_person_plays_morpion_to_the_end_and_wrong_input_asks_again() {
    // Garbage, a cell outside, the same cell twice, then every cell in order: whatever the
    // engine does, the game must end with a verdict the final board bears out.
    let mut input = String::from("hello\n7 7\n0 0\n0 0\n");
    for row in 0..3 {
        for col in 0..3 {
            input.push_str(&format!("{row} {col}\n"));
        }
    }
    let output = play(&["--board", "3x3", "--time", "50"], &input);
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("not understood"), "{stdout}");
    assert!(stdout.contains("outside the board"), "{stdout}");
    assert!(stdout.contains("0 0 is already taken"), "{stdout}");
    assert!(stdout.contains("Engine (white O) plays"), "{stdout}");
    let board = last_board(&stdout, 3);
    match board.winner(Rule::for_board(3, 3)) {
        Some(Stone::Black) => assert!(stdout.contains("Black (you) wins with three in a row.")),
        Some(Stone::White) => {
            assert!(stdout.contains("White (the engine) wins with three in a row."))
        }
        None => {
            assert!(board.is_full());
            assert!(stdout.contains("Draw: the board is full."), "{stdout}");
        }
    }
}

#[test]
fn the_engine_opens_when_the_person_takes_white() {
    let output = play(
        &[
            "--board", "7x7", "--color", "white", "--time", "50", "--engine", "v1",
        ],
        "quit\n",
    );
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let engine_move = stdout.find("Engine (black X) plays").expect("engine moved");
    let prompt = stdout.find("Your move (white O)").expect("then asked");
    assert!(engine_move < prompt);
    assert_eq!(last_board(&stdout, 7).counts(), (1, 0));
}

#[test]
fn wide_boards_keep_their_columns_aligned() {
    let output = play(&["--board", "11x12", "--engine", "v1", "--time", "50"], "");
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("Game abandoned."));
    let header = stdout.lines().find(|l| l.contains(" 10 11")).unwrap();
    let row = stdout.lines().find(|l| l.starts_with("10")).unwrap();
    assert_eq!(header.len(), row.len());
    assert_eq!(header.find("11"), row.rfind('.').map(|i| i - 1));
}

#[test]
fn bad_options_are_one_clear_error() {
    for args in [["--board", "0x3"], ["--board", "nine"], ["--k", "99"]] {
        let output = play(&args, "");
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    }
}
