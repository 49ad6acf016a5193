//! `connect5 compare` end to end: the real binary reading match summaries written by hand (whose
//! difference is known) and by `connect5 match` itself.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_connect5");

fn compare(a: &Path, b: &Path, extra: &[&str]) -> Output {
    Command::new(BIN)
        .arg("compare")
        .arg(a)
        .arg(b)
        .args(extra)
        .output()
        .expect("run connect5 compare")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A game of `player` against "other" from `opening`, `player` with `colour`, which `player`
/// wins, loses or draws (`points` 1, 0 or 0.5).
fn game(number: usize, player: &str, colour: &str, opening: (usize, usize), points: f64) -> Value {
    let (black, white) = if colour == "black" {
        (player, "other")
    } else {
        ("other", player)
    };
    let outcome = if points == 0.5 {
        "draw"
    } else if (points == 1.0) == (colour == "black") {
        "blackwins"
    } else {
        "whitewins"
    };
    json!({
        "game": number, "black": black, "white": white, "rows": 15, "cols": 15, "k": 5,
        "opening": [[opening.0, opening.1]], "moves": [], "outcome": outcome,
        "termination": if outcome == "draw" { "board-full" } else { "line" },
        "reason": "by hand",
    })
}

/// A summary of `player`'s games: per opening, its points as black then as white.
fn write_run(
    dir: &Path,
    file: &str,
    player: &str,
    pairs: &[((usize, usize), f64, f64)],
) -> PathBuf {
    let mut games = Vec::new();
    for &(opening, as_black, as_white) in pairs {
        games.push(game(games.len() + 1, player, "black", opening, as_black));
        games.push(game(games.len() + 1, player, "white", opening, as_white));
    }
    let summary = json!({"player1": player, "player2": "other", "games": games});
    let path = dir.join(file);
    std::fs::write(&path, summary.to_string()).expect("write summary");
    path
}

#[test]
fn the_difference_of_two_runs_is_taken_on_the_openings_they_share() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = write_run(
        dir.path(),
        "a.json",
        "old",
        &[
            ((7, 7), 1.0, 0.0),
            ((7, 8), 0.0, 0.0),
            ((7, 9), 1.0, 0.0),
            ((9, 9), 1.0, 1.0),
        ],
    );
    let b = write_run(
        dir.path(),
        "b.json",
        "new",
        &[
            ((7, 7), 1.0, 0.0),
            ((7, 8), 1.0, 0.0),
            ((7, 9), 1.0, 0.5),
            ((3, 3), 0.0, 0.0),
        ],
    );
    let output = compare(&a, &b, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    // Three openings in common: B gains 0, ½ and ¼ a game there, a mean of +25 points.
    assert!(
        text.contains("compared: 3 openings played the same way in both runs (6 games of each); 1 only in A, 1 only in B"),
        "{text}"
    );
    assert!(text.contains("B - A: +25.0 ± "), "{text}");
    assert!(
        text.contains("B better on 2 openings, worse on 0, the same on 1"),
        "{text}"
    );
    assert!(
        text.contains("A: old against other")
            && text.contains("2 - 4 - 0 (33.3%); as black 2 - 1 - 0, as white 0 - 3 - 0"),
        "{text}"
    );
    assert!(
        text.contains("B: new against other") && text.contains("3 - 2 - 1 (58.3%)"),
        "{text}"
    );
    // The other way round the sign turns.
    let output = compare(&b, &a, &[]);
    assert!(
        stdout(&output).contains("B - A: -25.0 ± "),
        "{}",
        stdout(&output)
    );
}

#[test]
fn a_named_player_is_compared_and_an_unknown_one_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = write_run(
        dir.path(),
        "a.json",
        "old",
        &[((7, 7), 1.0, 0.0), ((7, 8), 1.0, 1.0)],
    );
    let b = write_run(
        dir.path(),
        "b.json",
        "new",
        &[((7, 7), 0.0, 0.0), ((7, 8), 1.0, 1.0)],
    );
    // "other" is the opponent in both: its side of the same games, A's 1 of 4 against B's 3.
    let output = compare(&a, &b, &["--player-a", "other", "--player-b", "other"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("B - A: +25.0 ± "),
        "{}",
        stdout(&output)
    );
    let output = compare(&a, &b, &["--player-b", "nobody"]);
    assert!(!output.status.success());
    let error = stderr(&output);
    assert!(
        error.contains("b.json") && error.contains("no player \"nobody\" in this match"),
        "{error}"
    );
    assert_eq!(error.lines().count(), 1, "{error}");
}

#[test]
fn runs_without_a_common_opening_or_not_summaries_are_refused_in_one_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = write_run(dir.path(), "a.json", "old", &[((7, 7), 1.0, 0.0)]);
    let b = write_run(dir.path(), "b.json", "new", &[((8, 8), 1.0, 0.0)]);
    let output = compare(&a, &b, &[]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("nothing to compare"),
        "{}",
        stderr(&output)
    );
    let garbage = dir.path().join("garbage.json");
    std::fs::write(&garbage, "{\"player1\": 3}").expect("write");
    let output = compare(&a, &garbage, &[]);
    assert!(!output.status.success());
    let error = stderr(&output);
    assert!(
        error.contains("is not a `connect5 match --json` summary"),
        "{error}"
    );
    assert_eq!(error.lines().count(), 1, "{error}");
}

/// Two matches of fixed-depth players (whose games are the same every time) on the openings of
/// one seed: every opening lines up, and the runs are the same game for game.
#[test]
fn two_runs_of_match_on_one_seed_line_up_opening_by_opening() {
    let dir = tempfile::tempdir().expect("temp dir");
    let run = |file: &str| {
        let path = dir.path().join(file);
        let output = Command::new(BIN)
            .args([
                "match",
                "--player1",
                "builtin:engine=v1,depth=2,name=deeper",
                "--player2",
                "builtin:engine=v1,depth=1,name=shallow",
                "--board",
                "9x9",
                "--games",
                "6",
                "--random-opening",
                "2",
                "--seed",
                "11",
                "--quiet",
                "--json",
            ])
            .arg(&path)
            .output()
            .expect("run match");
        assert!(output.status.success(), "{}", stderr(&output));
        path
    };
    let (a, b) = (run("a.json"), run("b.json"));
    let output = compare(&a, &b, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains("compared: 3 openings played the same way in both runs (6 games of each); 0 only in A, 0 only in B"),
        "{text}"
    );
    assert!(text.contains("B - A: +0.0 ± 0.0 points a game"), "{text}");
    assert!(text.contains("worse on 0, the same on 3"), "{text}");
}
