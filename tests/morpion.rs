//! `connect5 morpion` driven as a user drives it: command lines, standard input, state files.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn morpion(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_connect5"))
        .arg("morpion")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the connect5 binary runs");
    let mut input = child.stdin.take().expect("stdin is piped");
    // The program may stop reading early (a finished game): a broken pipe is no failure here.
    let _ = input.write_all(stdin.as_bytes());
    drop(input);
    child.wait_with_output().expect("the process ends")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// (won, lost, drawn) from a line "player N (...): This player has won A games, lost B games and
/// C were draws. ..." of the output.
fn record(output: &str, player: usize) -> (u64, u64, u64) {
    let prefix = format!("player {player} (");
    let line = output
        .lines()
        .rev()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no record of player {player} in:\n{output}"));
    let numbers: Vec<u64> = line
        .split("This player has won ")
        .nth(1)
        .expect("the seed's words")
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .take(3)
        .map(|s| s.parse().unwrap())
        .collect();
    (numbers[0], numbers[1], numbers[2])
}

#[test]
fn analyze_computes_the_seeds_facts() {
    let output = morpion(&["analyze"], "");
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for fact in [
        "positions reachable from the empty board: 5,478",
        "terminal positions: 958 (626 X wins, 316 O wins, 16 draws)",
        "attractor of X: 2,936; attractor of O: 1,474; draw region: 1,068",
        "minimax values (X's view): +1: 2,936, -1: 1,474, 0: 1,068; empty board: 0",
        "positions up to symmetry: 765",
        "games: 255,168 (",
        "up to symmetry: 26,830",
        "minimax from the empty board: 549,946 nodes visited, 255,168 sequences",
        "7,330 sequences (leaves)",
        "engine solver agrees with the game-graph minimax on 4,520 of 4,520 non-terminal positions",
    ] {
        assert!(text.contains(fact), "missing {fact:?} in:\n{text}");
    }
    for depth in [1, 3, 5, 9] {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("depth {depth}: chosen [")))
            .unwrap_or_else(|| panic!("no evaluation row for depth {depth}:\n{text}"));
        // 72 positions two moves in, 7 moves each.
        assert!(line.ends_with("all moves [100, 276, 128]"), "{line}");
    }
    // At depth 9 the heuristic strategy sees every game to its end: it never picks a losing move.
    assert!(text.contains("depth 9: chosen [0, "), "{text}");
}

#[test]
fn perfect_never_loses_to_random_as_x_or_o() {
    let output = morpion(&["-t", "300", "perfect", "random", "--seed", "11"], "");
    assert!(output.status.success(), "{}", stderr(&output));
    let (won, lost, drawn) = record(&stdout(&output), 1);
    assert_eq!(lost, 0);
    assert_eq!(won + drawn, 300);
    let output = morpion(&["-t", "300", "random", "ai", "--seed", "12"], "");
    let (_, lost, _) = record(&stdout(&output), 2);
    assert_eq!(lost, 0);
    let output = morpion(&["-t", "20", "perfect", "perfect"], "");
    assert_eq!(record(&stdout(&output), 1), (0, 0, 20));
}

#[test]
fn the_attractor_and_deep_heuristic_players_never_lose_to_perfect() {
    for (x, o) in [
        ("attractor", "perfect"),
        ("perfect", "attractor"),
        ("heuristic:9", "perfect"),
    ] {
        let output = morpion(&["-t", "30", x, o, "--seed", "5"], "");
        assert!(output.status.success(), "{}", stderr(&output));
        assert_eq!(record(&stdout(&output), 1), (0, 0, 30), "{x} vs {o}");
    }
}

#[test]
fn a_human_plays_in_the_terminal_and_cannot_beat_perfect() {
    // The human tries every cell in turn; taken cells and nonsense are refused and asked again.
    let moves = "4\nnonsense\n0\n1\n2\n3\n4\n5\n6\n7\n8\n".repeat(2);
    let output = morpion(&["-s", "human", "perfect", "--seed", "3"], &moves);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains(" 0 | 1 | 2"),
        "cells are numbered for the human:\n{text}"
    );
    assert!(text.contains("X to play: "));
    assert!(text.contains("\"nonsense\" is not a free cell"));
    assert!(
        text.contains("Result: DRAW") || text.contains("Result: OWIN"),
        "{text}"
    );
    let (won, _, _) = record(&text, 1);
    assert_eq!(won, 0);
}

#[test]
fn the_end_of_input_stops_a_human_game_cleanly() {
    let output = morpion(&["-s", "human", "random"], "");
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("the input ended before the human played"));
}

#[test]
fn bad_command_lines_get_a_one_line_error() {
    for args in [
        vec!["-s", "random"],
        vec!["-t", "many", "random", "random"],
        vec!["-s", "random", "wizard"],
        vec!["-s", "random", "heuristic:12"],
        vec!["--nope"],
        vec!["-s", "-t", "3", "random", "random"],
        vec!["-s", "random", "rl", "-p", "10", "human"],
        vec!["-t", "5", "random", "rl", "-p"],
    ] {
        let output = morpion(&args, "");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let message = stderr(&output);
        assert_eq!(message.trim().lines().count(), 1, "{args:?}: {message}");
        assert!(message.starts_with("connect5 morpion: "), "{message}");
    }
}

#[test]
fn help_lists_every_option() {
    // -h and --help must get past the top-level parser to the morpion one.
    for flag in ["--help", "-h"] {
        let output = morpion(&[flag], "");
        assert!(output.status.success(), "{flag}: {}", stderr(&output));
        let text = stdout(&output);
        for option in ["-s", "-t <N>", "-p <M>", "--state <FILE>", "--seed <N>"] {
            assert!(text.contains(option), "{flag}: no {option} in:\n{text}");
        }
    }
}

#[test]
fn rl_learns_against_random_and_plays_greedily_afterwards() {
    let output = morpion(
        &["-t", "500", "random", "rl", "-p", "3000", "--seed", "7"],
        "",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains("training, 3000 games against each other:"),
        "{text}"
    );
    // A random O wins about 29% of its games against a random X; the trained agent far more.
    let (won, lost, _) = record(&text, 2);
    assert!(won > 300 && won > 5 * lost, "{text}");
}

#[test]
fn menace_training_is_saved_and_used_again() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("menace.json");
    let state_arg = state.to_str().unwrap();
    let output = morpion(
        &[
            "-t", "500", "menace", "perfect", "--state", state_arg, "--seed", "1",
        ],
        "",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let (_, lost_training, _) = record(&stdout(&output), 1);
    assert!(
        lost_training > 0,
        "an untrained MENACE loses to perfect at first"
    );
    let saved = std::fs::read(&state).expect("the state file was written");

    // Loaded again, used in exploitation mode: the trained machine (almost) never loses, where a
    // fresh one loses most games.
    let trained = morpion(
        &[
            "-t", "100", "menace", "perfect", "-p", "0", "--state", state_arg, "--seed", "2",
        ],
        "",
    );
    let fresh = morpion(
        &["-t", "100", "menace", "perfect", "-p", "0", "--seed", "2"],
        "",
    );
    let (_, lost_trained, _) = record(&stdout(&trained), 1);
    let (_, lost_fresh, _) = record(&stdout(&fresh), 1);
    assert!(lost_trained <= 5, "{}", stdout(&trained));
    assert!(lost_fresh >= 30, "{}", stdout(&fresh));

    // Round trip: loading and saving with no game in between rewrites the same bytes.
    let output = morpion(&["-t", "0", "menace", "rl", "--state", state_arg], "");
    assert!(output.status.success(), "{}", stderr(&output));
    let rewritten = std::fs::read(&state).unwrap();
    let text = String::from_utf8(rewritten.clone()).unwrap();
    assert!(text.starts_with(&String::from_utf8(saved[..40].to_vec()).unwrap()));
    // The RL slot was added, the MENACE slot kept byte for byte.
    let menace_part = |bytes: &[u8]| {
        let text = String::from_utf8(bytes.to_vec()).unwrap();
        let start = text.find("\"menace\"").unwrap();
        let end = text[start..].find("]}]}").unwrap();
        text[start..start + end].to_string()
    };
    assert_eq!(menace_part(&saved), menace_part(&rewritten));
    assert!(text.contains("\"rl\""));
    let no_temporary_left = std::fs::read_dir(dir.path()).unwrap().count() == 1;
    assert!(no_temporary_left);
}

#[test]
fn rl_state_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("rl.json");
    let state_arg = state.to_str().unwrap();
    let output = morpion(
        &[
            "-t", "300", "rl", "random", "--state", state_arg, "--seed", "4",
        ],
        "",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let first = std::fs::read(&state).unwrap();
    let output = morpion(&["-t", "0", "rl", "random", "--state", state_arg], "");
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(std::fs::read(&state).unwrap(), first);
}

fn assert_refused_and_untouched(dir: &Path, content: &str, why: &str) {
    let state = dir.join("damaged.json");
    std::fs::write(&state, content).unwrap();
    let output = morpion(
        &[
            "-t",
            "10",
            "menace",
            "random",
            "--state",
            state.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(output.status.code(), Some(1), "{why}");
    let message = stderr(&output);
    assert!(message.contains("is damaged"), "{why}: {message}");
    assert!(message.contains(why), "{why}: {message}");
    assert!(stdout(&output).is_empty(), "no game was played");
    assert_eq!(std::fs::read_to_string(&state).unwrap(), content);
}

#[test]
fn a_damaged_state_file_is_reported_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let header = r#"{"format":"connect5 morpion state","version":1,"players":"#;
    assert_refused_and_untouched(dir.path(), "{ this is not json", "not valid JSON");
    assert_refused_and_untouched(
        dir.path(),
        &format!(
            r#"{header}{{"menace":{{"kind":"menace","boxes":[{{"position":"X........","beads":[0,0,0,0,0,0,0,0,0]}}]}}}}}}"#
        ),
        "no bead left",
    );
    assert_refused_and_untouched(
        dir.path(),
        &format!(
            r#"{header}{{"menace":{{"kind":"menace","boxes":[{{"position":"XX.......","beads":[0,0,1,0,0,0,0,0,0]}}]}}}}}}"#
        ),
        "cannot occur",
    );
    assert_refused_and_untouched(
        dir.path(),
        &format!(
            r#"{header}{{"rl":{{"kind":"rl","moves":[{{"position":".........","cell":4,"total":7,"count":3}}]}}}}}}"#
        ),
        "impossible",
    );
    assert_refused_and_untouched(
        dir.path(),
        r#"{"format":"something else","version":1,"players":{}}"#,
        "format",
    );
}

/// Reads the child's output until it ends with one of `markers`; returns which one (`None` at the
/// end of the output). The output is ASCII.
fn read_until(out: &mut impl std::io::Read, seen: &mut String, markers: &[&str]) -> Option<usize> {
    let mut byte = [0u8; 1];
    // Only output that arrives from now on counts: `seen` may already end with a marker.
    loop {
        match out.read(&mut byte) {
            Ok(1) => seen.push(byte[0] as char),
            _ => return None,
        }
        if let Some(i) = markers.iter().position(|m| seen.ends_with(m)) {
            return Some(i);
        }
    }
}

/// The free cells of the last board drawn in `seen` (numbered for the human).
fn free_cells_of_last_board(seen: &str) -> Vec<char> {
    let rows: Vec<&str> = seen.lines().filter(|l| l.contains(" | ")).collect();
    rows[rows.len().saturating_sub(3)..]
        .iter()
        .flat_map(|row| row.chars().filter(|c| c.is_ascii_digit()))
        .collect()
}

#[test]
fn the_menace_menu_trains_plays_and_resets() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("menu.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_connect5"))
        .args([
            "morpion",
            "menace",
            "--state",
            state.to_str().unwrap(),
            "--seed",
            "9",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = child.stdout.take().unwrap();
    let mut seen = String::new();
    assert_eq!(read_until(&mut output, &mut seen, &["(Q)uit\n"]), Some(0));
    assert!(seen.contains("(2) Train Menace against perfect player"));
    assert!(seen.contains("(5) Delete (both) Menace training sets"));

    // Train against random.
    writeln!(input, "3").unwrap();
    assert_eq!(read_until(&mut output, &mut seen, &["(Q)uit\n"]), Some(0));
    assert!(seen.contains("player 1: This player has won "), "{seen}");
    assert!(seen.contains("player 2: This player has won "), "{seen}");

    // Play MENACE: it opens as X, the human answers on a free cell each time.
    writeln!(input, "1").unwrap();
    loop {
        match read_until(&mut output, &mut seen, &["O to play: ", "Result: "]) {
            Some(0) => {
                let free = free_cells_of_last_board(&seen);
                assert!(!free.is_empty(), "{seen}");
                writeln!(input, "{}", free[0]).unwrap();
            }
            Some(_) => break,
            None => panic!("the game did not end:\n{seen}"),
        }
    }
    assert_eq!(read_until(&mut output, &mut seen, &["(Q)uit\n"]), Some(0));
    // 500 training games and the game against the human: MENACE's own record counts them all.
    let last = seen
        .lines()
        .rfind(|l| l.starts_with("This player has won "))
        .expect("MENACE's record after the human game");
    let numbers: Vec<u64> = last
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    assert_eq!(numbers[0] + numbers[1] + numbers[2], 501, "{last}");
    writeln!(input, "q").unwrap();
    drop(input);
    assert!(child.wait().unwrap().success());
    let trained = std::fs::read_to_string(&state).unwrap();
    assert!(trained.contains("\"menace\""));

    // Choice 5 forgets both machines; the saved file then holds no box.
    let output = morpion(&["menace", "--state", state.to_str().unwrap()], "5\nq\n");
    assert!(stdout(&output).contains("Both MENACE training sets deleted."));
    let reset = std::fs::read_to_string(&state).unwrap();
    assert!(reset.contains(r#""boxes":[]"#), "{reset}");
}
