//! `connect5 openings` end to end: the real binary draws and searches openings, writes the
//! balanced ones to a file, and `connect5 match --openings` plays from exactly those.

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_connect5");

fn openings(out: &Path, extra: &[&str]) -> Output {
    Command::new(BIN)
        .arg("openings")
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("run connect5 openings")
}

/// The report's candidate lines: offsets, score, and whether the opening was kept.
fn candidates(stdout: &str) -> Vec<(String, i64, bool)> {
    stdout
        .lines()
        .filter_map(|line| {
            let (head, tail) = line.split_once(" score ")?;
            let offsets = head.trim().split_once(char::is_whitespace)?.1.trim();
            let mut words = tail.split_whitespace();
            let score = words.next()?.parse().ok()?;
            let kept = match words.last()? {
                "kept" => true,
                "-" => false,
                _ => return None,
            };
            Some((offsets.to_string(), score, kept))
        })
        .collect()
}

const SEARCH: &[&str] = &[
    "--board",
    "15x15",
    "--stones",
    "3",
    "--opening-radius",
    "3",
    "--depth",
    "4",
    "--seed",
    "11",
];

#[test]
fn the_kept_openings_are_the_balanced_candidates_and_a_match_plays_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("balanced.txt");
    let margin = 60;
    let output = openings(
        &file,
        &[SEARCH, &["--count", "4", "--margin", &margin.to_string()]].concat(),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen = candidates(&stdout);
    let kept: Vec<&String> = seen.iter().filter(|c| c.2).map(|c| &c.0).collect();
    assert_eq!(kept.len(), 4, "{stdout}");
    for (offsets, score, was_kept) in &seen {
        assert_eq!(*was_kept, score.abs() <= margin, "{offsets}: {score}");
    }
    let written = std::fs::read_to_string(&file).expect("openings file");
    assert_eq!(written.lines().collect::<Vec<_>>(), kept);

    // A match from the file starts each pair from its openings, in order.
    let json = dir.path().join("match.json");
    let played = Command::new(BIN)
        .args([
            "match",
            "--player1",
            "builtin:depth=1",
            "--player2",
            "builtin:depth=1",
        ])
        .args([
            "--board",
            "15x15",
            "--games",
            "8",
            "--time",
            "200",
            "--openings",
        ])
        .arg(&file)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("run connect5 match");
    assert!(
        played.status.success(),
        "{}",
        String::from_utf8_lossy(&played.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("summary")).expect("json");
    let games = summary["games"].as_array().expect("games");
    assert_eq!(games.len(), 8);
    for (index, game) in games.iter().enumerate() {
        let opening: Vec<String> = game["opening"]
            .as_array()
            .expect("opening")
            .iter()
            .map(|cell| {
                let row = cell[0].as_i64().expect("row") - 7;
                let col = cell[1].as_i64().expect("col") - 7;
                format!("{col},{row}")
            })
            .collect();
        assert_eq!(&opening.join(", "), kept[index / 2], "game {}", index + 1);
    }
}

#[test]
fn the_same_seed_keeps_the_same_openings_whatever_the_concurrency() {
    let dir = tempfile::tempdir().expect("temp dir");
    let one = dir.path().join("one.txt");
    let two = dir.path().join("two.txt");
    let args = [SEARCH, &["--count", "5", "--margin", "80"]].concat();
    assert!(
        openings(&one, &[&args[..], &["--concurrency", "1"]].concat())
            .status
            .success()
    );
    assert!(
        openings(&two, &[&args[..], &["--concurrency", "2"]].concat())
            .status
            .success()
    );
    let read = |path: &Path| std::fs::read_to_string(path).expect("openings file");
    assert_eq!(read(&one), read(&two));
    assert_eq!(read(&one).lines().count(), 5);
}

#[test]
fn impossible_requests_fail_with_one_line_that_names_the_problem() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("never.txt");
    let cases: &[(&[&str], &str)] = &[
        (&["--count", "0"], "--count 0"),
        (&["--margin=-5"], "--margin -5"),
        (&["--board", "15x"], "not LxC"),
        (&["--board", "3x3", "--stones", "9"], "does not fit"),
        (
            &["--count", "50", "--candidates", "3", "--depth", "2"],
            "kept",
        ),
    ];
    for (extra, needle) in cases {
        let output = openings(&file, extra);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{extra:?} succeeded");
        assert_eq!(stderr.lines().count(), 1, "{extra:?}: {stderr}");
        assert!(stderr.contains(needle), "{extra:?}: {stderr}");
        assert!(!file.exists(), "{extra:?} wrote a file");
    }
    let unwritable = dir.path().join("no-such-dir").join("x.txt");
    let output = openings(
        &unwritable,
        &[SEARCH, &["--count", "1", "--margin", "100000"]].concat(),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("cannot write"), "{stderr}");
}
