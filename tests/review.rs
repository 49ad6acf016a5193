//! `connect5 review` end to end: the real binary reading real match summaries, one written by hand
//! with games whose losing move is known, one written by `connect5 match`.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_connect5");

fn review(file: &Path, extra: &[&str]) -> Output {
    Command::new(BIN)
        .arg("review")
        .arg(file)
        .args(extra)
        .output()
        .expect("run connect5 review")
}

/// Reviews a copy of the summary `file`, changed by `edit`, written beside it.
fn review_edited(file: &Path, edit: impl FnOnce(&mut Value)) -> Output {
    let mut summary: Value =
        serde_json::from_str(&std::fs::read_to_string(file).expect("read")).expect("json");
    edit(&mut summary);
    let edited = file.with_file_name("edited.json");
    std::fs::write(&edited, summary.to_string()).expect("write");
    review(&edited, &["--time", "300"])
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn moves(list: &[(usize, usize)]) -> Value {
    list.iter()
        .map(|&(row, col)| json!({"row": row, "col": col, "ms": 10}))
        .collect()
}

fn game(
    number: usize,
    black: &str,
    white: &str,
    opening: &[(usize, usize)],
    played: &[(usize, usize)],
    outcome: &str,
    termination: &str,
) -> Value {
    json!({
        "game": number, "first_player_black": black == "mine",
        "result": if outcome == "blackwins" { "1-0" } else { "0-1" },
        "black": black, "white": white, "rows": 15, "cols": 15, "k": 5,
        "opening": opening.iter().map(|&(r, c)| json!([r, c])).collect::<Value>(),
        "moves": moves(played), "outcome": outcome, "termination": termination,
        "reason": "by hand",
    })
}

/// Four games of "mine" against "other" on 15x15:
/// 1. white has an open three when black makes one: white wins by making its four first, but
///    plays far away; black's open four then beats it: lost from its move 2, the blunder at ply 8;
/// 2. black's open four stands when white first moves: lost from its first move;
/// 3. game 1 with the names swapped: mine wins (not reviewed);
/// 4. mine loses on time (reported, not searched).
fn hand_written_match(dir: &Path) -> std::path::PathBuf {
    let threes = [(7, 6), (8, 6), (7, 7), (8, 7), (0, 14), (8, 8)];
    let blunder = [(7, 8), (14, 14), (7, 9), (8, 9), (7, 5)];
    let four = [(7, 5), (0, 0), (7, 6), (0, 14), (7, 7), (14, 0)];
    let summary = json!({
        "player1": "mine", "player2": "other", "board": "15x15", "k": 5, "time_ms": 100,
        "games": [
            game(1, "other", "mine", &threes, &blunder, "blackwins", "line"),
            game(2, "other", "mine", &four, &[(7, 8), (7, 9), (7, 4)], "blackwins", "line"),
            game(3, "mine", "other", &threes, &blunder, "blackwins", "line"),
            game(4, "mine", "other", &threes, &[(7, 8)], "whitewins", "time"),
        ],
    });
    let path = dir.join("hand.json");
    std::fs::write(&path, summary.to_string()).expect("write summary");
    path
}

#[test]
fn review_finds_the_move_from_which_each_game_was_lost() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = hand_written_match(dir.path());
    let output = review(&file, &["--time", "300"]);
    let text = stdout(&output);
    assert!(output.status.success(), "{text}{}", stderr(&output));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(
        lines[0].starts_with("game 1: mine (white) lost at ply 11: proven lost from its move 2 (ply 10); at ply 8 it played 14 14, the long search plays 8 "),
        "{text}"
    );
    assert!(
        lines[1].starts_with(
            "game 2: mine (white) lost at ply 9: proven lost from its first move (ply 8)"
        ),
        "{text}"
    );
    assert!(
        lines[2].starts_with("game 4: mine (black) lost at ply 7 by time"),
        "{text}"
    );
    assert!(
        lines[3].starts_with(
            "mine lost 3 of 4 games (2 as white), reviewed at 300 ms a position: 1 proven lost from its first move, 1 later (at its move 2), 0 never proven lost, 1 lost by a fault"
        ),
        "{text}"
    );
}

#[test]
fn review_of_the_other_player_and_bad_input() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = hand_written_match(dir.path());
    // "other" lost only game 3, game 1 with the names swapped.
    let output = review(&file, &["--player", "other", "--time", "300"]);
    let text = stdout(&output);
    assert!(output.status.success(), "{text}{}", stderr(&output));
    assert!(
        text.contains("game 3: other (white) lost at ply 11: proven lost from its move 2 (ply 10)"),
        "{text}"
    );
    assert!(
        text.contains("other lost 1 of 4 games (1 as white)"),
        "{text}"
    );

    let output = review(&file, &["--player", "nobody"]);
    assert!(!output.status.success());
    let error = stderr(&output);
    assert!(
        error.contains(
            "no player \"nobody\" in this match (its players are \"mine\" and \"other\")"
        ),
        "{error}"
    );

    let garbage = dir.path().join("garbage.json");
    std::fs::write(&garbage, "{\"player1\": 3").expect("write");
    let output = review(&garbage, &[]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("is not a `connect5 match --json` summary"),
        "{}",
        stderr(&output)
    );

    let output = review(&dir.path().join("missing.json"), &[]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("cannot read"),
        "{}",
        stderr(&output)
    );

    // An illegal move in a record names the game and the ply instead of crashing.
    let output = review_edited(&file, |summary| {
        summary["games"][0]["moves"][1] = json!({"row": 7, "col": 8, "ms": 1});
    });
    assert!(!output.status.success());
    // The other games are still reviewed.
    assert!(
        stdout(&output)
            .contains("game 2: mine (white) lost at ply 9: proven lost from its first move"),
        "{}",
        stdout(&output)
    );
    assert!(
        stdout(&output).contains("1 lost by a fault, 1 not replayable"),
        "{}",
        stdout(&output)
    );
    assert!(
        stderr(&output).contains("1 of the lost games could not be replayed"),
        "{}",
        stderr(&output)
    );
    assert!(
        stderr(&output).contains("game 1: move 7 8 at ply 8"),
        "{}",
        stderr(&output)
    );

    let output = review_edited(&file, |summary| summary["games"][0]["k"] = json!(0));
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("game 1: line length 0 out of range (1 to 15 on this board)"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn review_reads_what_match_writes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json_path = dir.path().join("match.json");
    let output = Command::new(BIN)
        .args([
            "match",
            "--player1",
            "builtin:engine=v1,depth=1,name=weak",
            "--player2",
            "builtin:engine=v2,name=strong",
            "--board",
            "9x9",
            "--time",
            "50",
            "--games",
            "4",
            "--random-opening",
            "2",
            "--seed",
            "3",
            "--quiet",
            "--json",
        ])
        .arg(&json_path)
        .output()
        .expect("run match");
    assert!(output.status.success(), "{}", stderr(&output));
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).expect("read")).expect("json");
    let losses = summary["losses"].as_u64().expect("losses");
    let output = review(&json_path, &["--player", "weak", "--time", "100"]);
    let text = stdout(&output);
    assert!(output.status.success(), "{text}{}", stderr(&output));
    let game_lines = text.lines().filter(|l| l.starts_with("game ")).count();
    assert_eq!(game_lines as u64, losses, "{text}");
    assert!(
        text.contains(&format!("weak lost {losses} of 4 games")),
        "{text}"
    );
}
