//! `connect5 tune` end to end: the real binary reading a match summary that `connect5 match` wrote.

use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_connect5");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run connect5")
}

/// The count a run of `tune` reports just before `what` ("3 positions fitted").
fn count_before(output: &Output, what: &str) -> usize {
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    let (before, _) = text
        .split_once(what)
        .unwrap_or_else(|| panic!("no {what:?} in {text}"));
    before
        .rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count before {what:?} in {text}"))
}

/// The number of positions a dry run of `tune` reports fitting.
fn positions_fitted(output: &Output) -> usize {
    count_before(output, " positions fitted")
}

/// A dry run of a comparison fit of the games in `json` with `options`, checked to succeed.
fn comparison_dry_run(json: &str, options: &[&str]) -> Output {
    let mut args = vec!["tune", "--comparison", "--dry-run"];
    args.extend_from_slice(options);
    args.push(json);
    let dry = run(&args);
    assert!(dry.status.success(), "{dry:?}");
    dry
}

/// Plays `games` short games on 11×11 between two fixed-depth engines into the summary `json`.
fn play_games(json: &str, games: &str, seed: &str) {
    let played = run(&[
        "match",
        "--player1",
        "builtin:engine=v2,depth=2,name=a",
        "--player2",
        "builtin:engine=v2,depth=3,name=b",
        "--board",
        "11x11",
        "--games",
        games,
        "--random-opening",
        "3",
        "--seed",
        seed,
        "--quiet",
        "--json",
        json,
    ]);
    assert!(played.status.success(), "{played:?}");
}

#[test]
fn quiet_keeps_only_the_positions_without_a_three_and_writes_nothing_on_a_dry_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("games.json");
    let json_arg = json.to_str().expect("utf-8 path");
    play_games(json_arg, "6", "5");
    let out = dir.path().join("fit.txt");
    let out_arg = out.to_str().expect("utf-8 path");
    let all = run(&["tune", "--dry-run", "--out", out_arg, json_arg]);
    let quiet = run(&["tune", "--dry-run", "--quiet", "--out", out_arg, json_arg]);
    assert!(
        all.status.success() && quiet.status.success(),
        "{all:?} {quiet:?}"
    );
    let (all, quiet) = (positions_fitted(&all), positions_fitted(&quiet));
    assert!(
        quiet > 0 && quiet < all,
        "quiet positions {quiet} of {all}: the openings are quiet, the ends of games are not"
    );
    assert!(!out.exists(), "a dry run writes nothing");
}

/// (own, opp) of every combination line of a tables file.
fn combination_values(text: &str) -> Vec<(i64, i64)> {
    text.lines()
        .filter(|l| l.starts_with("combination"))
        .map(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            let value = |name: &str| -> i64 {
                let at = fields.iter().position(|&f| f == name).expect(name);
                fields[at + 1].parse().expect("a number")
            };
            (value("own"), value("opp"))
        })
        .collect()
}

/// The shipped tables' combination values.
fn shipped_values() -> Vec<(i64, i64)> {
    combination_values(include_str!("../src/engine/v2/eval_weights.txt"))
}

/// Runs `tune` with `args` and a short, large-stepped fit (30 steps of 5) written to `fit`;
/// returns the file's text, checked to hold as many combinations as the shipped tables and to
/// have moved some of them.
fn short_fit(args: &[&str], fit: &str) -> String {
    let text = short_fit_tables(args, fit);
    let (new, shipped) = (combination_values(&text), shipped_values());
    assert_eq!(new.len(), shipped.len());
    assert_ne!(new, shipped, "30 steps of 5 moved no value");
    text
}

#[test]
fn search_labels_are_saved_read_back_and_fitted_with_the_ratios_kept() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = |name: &str| dir.path().join(name).to_str().expect("utf-8").to_string();
    let (json, labels, fit) = (path("games.json"), path("d2.labels"), path("fit.txt"));
    play_games(&json, "4", "9");
    let labelled = run(&[
        "tune",
        "--dry-run",
        "--label-depth",
        "2",
        "--label-every",
        "3",
        "--jobs",
        "2",
        "--save-labels",
        &labels,
        &json,
    ]);
    assert!(labelled.status.success(), "{labelled:?}");
    let saved = std::fs::read_to_string(&labels).expect("the labels were written");
    assert!(saved.lines().count() > 0, "no position labelled");
    for line in saved.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields.len(), 4, "GAME K SCORE ROWS: {line}");
        assert_eq!(fields[1], "5", "the exact-five rule: {line}");
        fields[2].parse::<i32>().expect("a score");
        assert_eq!(fields[3].split('/').count(), 11, "11 rows: {line}");
    }
    let reread = run(&["tune", "--dry-run", "--labels", &labels]);
    assert!(reread.status.success(), "{reread:?}");
    assert_eq!(positions_fitted(&reread), positions_fitted(&labelled));

    let new = combination_values(&short_fit(&["--labels", &labels, "--keep-ratios"], &fit));
    let shipped = shipped_values();
    for (&(own, opp), &(shipped_own, shipped_opp)) in new.iter().zip(&shipped) {
        if shipped_opp == 0 {
            assert_eq!(own, shipped_own, "kept where the opponent's value is 0");
        } else {
            let ratio = shipped_own as f64 / shipped_opp as f64;
            assert!(
                (own as f64 - ratio * opp as f64).abs() <= 1.0 + ratio,
                "own {own} opp {opp}: ratio {ratio} not kept"
            );
        }
    }
}

#[test]
fn the_games_of_two_labels_files_are_held_out_as_different_games() {
    let dir = tempfile::tempdir().expect("temp dir");
    let empty = "0".repeat(11);
    let rows = |first: &str| {
        let mut rows = vec![first.to_string()];
        rows.extend(std::iter::repeat_n(empty.clone(), 10));
        rows.join("/")
    };
    // One opening's pair of games (1 and 2), as every labelling run numbers its first games.
    let text = format!(
        "1 5 40 {}\n2 5 -30 {}\n",
        rows("NB000N00000"),
        rows("NBN00B00000")
    );
    let (first, second) = (dir.path().join("a.labels"), dir.path().join("b.labels"));
    std::fs::write(&first, &text).expect("write");
    std::fs::write(&second, &text).expect("write");
    let output = run(&[
        "tune",
        "--dry-run",
        "--hold-out-every",
        "2",
        "--labels",
        first.to_str().expect("utf-8"),
        "--labels",
        second.to_str().expect("utf-8"),
    ]);
    assert!(output.status.success(), "{output:?}");
    // The second file's games follow the first's (3 and 4, the second pair): held out.
    assert_eq!(positions_fitted(&output), 2, "{output:?}");
    assert_eq!(count_before(&output, " held out"), 2, "{output:?}");

    // With nothing held out, the report says so rather than a loss over no position.
    let none_held = run(&[
        "tune",
        "--dry-run",
        "--hold-out-every",
        "0",
        "--labels",
        first.to_str().expect("utf-8"),
    ]);
    assert!(none_held.status.success(), "{none_held:?}");
    let stderr = String::from_utf8_lossy(&none_held.stderr);
    assert!(stderr.contains("(held out none)"), "{stderr}");
    assert!(!stderr.contains("0.00000"), "{stderr}");
}

#[test]
fn a_malformed_labels_file_is_named_with_its_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let labels = dir.path().join("bad.labels");
    std::fs::write(&labels, "3 3 120 0N0/000/000\n4 3 many 0N0/0B0/000\n").expect("write");
    let output = run(&[
        "tune",
        "--dry-run",
        "--labels",
        labels.to_str().expect("utf-8"),
    ]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("line 2") && stderr.contains("score \"many\" is not a number"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
}

#[test]
fn a_comparison_fit_learns_from_one_player_and_writes_tables_that_move() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = |name: &str| dir.path().join(name).to_str().expect("utf-8").to_string();
    let (json, fit) = (path("games.json"), path("fit.txt"));
    play_games(&json, "6", "9");
    // Positions a dry run fits, with `player` the options choosing whose moves.
    let positions = |player: &[&str]| {
        let mut options = vec!["--hold-out-every", "0"];
        options.extend_from_slice(player);
        positions_fitted(&comparison_dry_run(&json, &options))
    };
    let (a, b) = (
        positions(&["--moves-of", "a"]),
        positions(&["--moves-of", "b"]),
    );
    let both = positions(&[]);
    assert!(a > 0 && b > 0 && a + b == both, "a {a}, b {b}, both {both}");
    let (black, white) = (
        positions(&["--side", "black"]),
        positions(&["--side", "white"]),
    );
    assert!(
        black > 0 && white > 0 && black + white == both,
        "black {black}, white {white}, both {both}"
    );
    let winners = positions(&["--winners"]);
    assert!(
        winners > 0 && winners < both,
        "winners {winners}, both {both}"
    );
    let text = short_fit(
        &[
            "--comparison",
            "--moves-of",
            "b",
            "--hold-out-every",
            "2",
            &json,
        ],
        &fit,
    );
    assert!(
        text.contains("first choice in"),
        "the header says the fit's figures"
    );

    // With --threat-only the comparison fit moves the threat term alone.
    let text = short_fit_tables(&["--comparison", "--threat-only", &json], &fit);
    assert_eq!(combination_values(&text), shipped_values(), "tables kept");
    assert!(!threat_values(&text).is_empty(), "no threat value moved");
}

#[test]
fn comparison_options_need_the_comparison_fit() {
    let out = run(&["tune", "--candidates", "8", "games.json"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--comparison"), "{err}");
    // Whose moves to learn from means nothing to a fit of results: refused, not ignored.
    for whose in [
        &["--side", "black"][..],
        &["--winners"],
        &["--moves-of", "a"],
    ] {
        let mut args = vec!["tune"];
        args.extend_from_slice(whose);
        args.push("games.json");
        let out = run(&args);
        assert!(!out.status.success(), "{whose:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--ordering|--comparison"), "{whose:?}: {err}");
    }
}

#[test]
fn the_held_out_games_are_whole_pairs_so_a_player_is_measured_with_both_colours() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("games.json");
    let json = json.to_str().expect("utf-8 path");
    // Two pairs: with every second pair held out, games 3 and 4 are, one with `a` black and
    // one with `a` white (holding out every second game would hold out `a` with one colour).
    play_games(json, "4", "8");
    for side in ["black", "white"] {
        let dry = comparison_dry_run(
            json,
            &["--hold-out-every", "2", "--moves-of", "a", "--side", side],
        );
        let (fitted, held_out) = (positions_fitted(&dry), count_before(&dry, " held out"));
        assert!(
            fitted > 0 && held_out > 0,
            "a's {side} moves: {fitted} fitted, {held_out} held out"
        );
    }
}

/// The combination values of the shipped move-ordering tables.
fn shipped_ordering_values() -> Vec<(i64, i64)> {
    combination_values(include_str!("../src/engine/v2/ordering_weights.txt"))
}

/// The boards of a labels file (its last field).
fn labelled_boards(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.split_whitespace().last().map(str::to_string))
        .collect()
}

#[test]
fn the_ordering_learns_the_moves_searches_play_in_positions_of_their_trees() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = |name: &str| dir.path().join(name).to_str().expect("utf-8").to_string();
    let (json, roots, trees, fit) = (
        path("games.json"),
        path("roots.moves"),
        path("trees.moves"),
        path("fit.txt"),
    );
    play_games(&json, "4", "11");
    let label = |out: &str, tree: &[&str]| {
        let mut args = vec![
            "tune",
            "--ordering",
            "--dry-run",
            "--label-depth",
            "2",
            "--label-every",
            "1",
            "--save-labels",
            out,
        ];
        args.extend_from_slice(tree);
        args.push(&json);
        let labelled = run(&args);
        assert!(labelled.status.success(), "{labelled:?}");
        let text = std::fs::read_to_string(out).expect("the labels were written");
        assert!(text.lines().count() > 0, "no position labelled");
        (labelled, text)
    };
    let (_, game_positions) = label(&roots, &[]);
    let (labelled, tree_positions) = label(&trees, &["--tree-depth", "4", "--tree-every", "7"]);
    for line in tree_positions.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields.len(), 4, "GAME K MOVE ROWS: {line}");
        let (row, col) = fields[2].split_once(',').expect("ROW,COL");
        let (row, col): (usize, usize) = (row.parse().expect("row"), col.parse().expect("col"));
        let rows: Vec<&str> = fields[3].split('/').collect();
        assert_eq!(rows.len(), 11, "11 rows: {line}");
        assert_eq!(
            rows[row].as_bytes()[col],
            b'0',
            "the search's move is an empty cell: {line}"
        );
    }
    let in_games = labelled_boards(&game_positions);
    assert!(
        labelled_boards(&tree_positions)
            .iter()
            .any(|board| !in_games.contains(board)),
        "the trees reach positions the games did not"
    );

    let reread = run(&["tune", "--ordering", "--dry-run", "--labels", &trees]);
    assert!(reread.status.success(), "{reread:?}");
    assert_eq!(positions_fitted(&reread), positions_fitted(&labelled));
    let fitted = run(&[
        "tune",
        "--ordering",
        "--labels",
        &trees,
        "--epochs",
        "30",
        "--learning-rate",
        "5",
        "--out",
        &fit,
    ]);
    assert!(fitted.status.success(), "{fitted:?}");
    let new = combination_values(&std::fs::read_to_string(&fit).expect("the fit wrote"));
    let shipped = shipped_ordering_values();
    assert_eq!(new.len(), shipped.len());
    assert_ne!(new, shipped, "30 steps of 5 moved no value");
}

#[test]
fn a_labelled_move_on_a_stone_is_named_with_its_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let moves = dir.path().join("bad.moves");
    let empty = "00000/00000/00N00/00000/00000";
    std::fs::write(&moves, format!("1 5 0,0 {empty}\n2 5 2,2 {empty}\n")).expect("write");
    let read = run(&[
        "tune",
        "--ordering",
        "--dry-run",
        "--labels",
        moves.to_str().expect("utf-8"),
    ]);
    assert!(!read.status.success());
    let stderr = String::from_utf8_lossy(&read.stderr);
    assert!(
        stderr.contains("line 2") && stderr.contains("move 2,2 is not an empty cell"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
}

/// The tables file a fit of 30 steps of 5 with `args` writes to `fit`.
fn short_fit_tables(args: &[&str], fit: &str) -> String {
    let mut all = vec!["tune"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--epochs", "30", "--learning-rate", "5", "--out", fit]);
    let fitted = run(&all);
    assert!(fitted.status.success(), "{fitted:?}");
    std::fs::read_to_string(fit).expect("the fit wrote its tables")
}

/// (mask, value) of every threat line of a tables file.
fn threat_values(text: &str) -> Vec<(usize, i64)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("threat "))
        .map(|l| {
            let (mask, value) = l.split_once(' ').expect("threat MASK VALUE");
            (
                mask.parse().expect("a mask"),
                value.trim().parse().expect("a value"),
            )
        })
        .collect()
}

#[test]
fn a_threat_only_fit_of_the_positions_facing_an_open_three_moves_their_threat_values_alone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let empty = "0".repeat(11);
    let rows = |lines: &[(usize, &str)]| {
        let mut rows = vec![empty.clone(); 11];
        for &(row, text) in lines {
            rows[row] = text.to_string();
        }
        rows.join("/")
    };
    // White to move facing black's open three on row 5; then black to move with no three.
    let facing = rows(&[(0, "B0000000000"), (5, "000NNN00000"), (10, "0000000000B")]);
    let quiet = rows(&[(0, "B0000000000"), (5, "000N0N00000"), (10, "0000000000B")]);
    let text = format!("1 5 -250 {facing}\n2 5 40 {quiet}\n3 5 -250 {facing}\n4 5 40 {quiet}\n");
    let labels = dir.path().join("s.labels");
    std::fs::write(&labels, text).expect("write");
    let labels = labels.to_str().expect("utf-8");
    let dry = |extra: &[&str]| {
        let mut args = vec![
            "tune",
            "--dry-run",
            "--hold-out-every",
            "0",
            "--labels",
            labels,
        ];
        args.extend_from_slice(extra);
        let output = run(&args);
        assert!(output.status.success(), "{output:?}");
        positions_fitted(&output)
    };
    assert_eq!(dry(&[]), 4);
    assert_eq!(dry(&["--facing-open-three"]), 2);

    let fit = dir.path().join("fit.txt");
    let text = short_fit_tables(
        &[
            "--hold-out-every",
            "0",
            "--labels",
            labels,
            "--threat-only",
            "--facing-open-three",
        ],
        fit.to_str().expect("utf-8"),
    );
    assert_eq!(combination_values(&text), shipped_values(), "tables kept");
    let threats = threat_values(&text);
    // The opponent's win-next class is bit 9 of the mask (bits 5-9 are the opponent's).
    assert!(
        threats.len() == 1 && threats[0].0 & 1 << 9 != 0 && threats[0].1 != 0,
        "one threat value moved, of a mask where the opponent has an open three: {threats:?}"
    );

    // The per-combination tables are what --keep-ratios and --fixed-threat constrain.
    let both = run(&[
        "tune",
        "--dry-run",
        "--labels",
        labels,
        "--threat-only",
        "--fixed-threat",
    ]);
    assert!(!both.status.success(), "{both:?}");
}
