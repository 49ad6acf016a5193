//! `connect5 tune` end to end: the real binary reading a match summary that `connect5 match` wrote.

use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_connect5");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run connect5")
}

/// The number of positions a dry run of `tune` reports fitting.
fn positions_fitted(output: &Output) -> usize {
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    let before = text
        .split(" positions fitted")
        .next()
        .unwrap_or_else(|| panic!("no count in {text}"));
    before
        .rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {text}"))
}

#[test]
fn quiet_keeps_only_the_positions_without_a_three_and_writes_nothing_on_a_dry_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("games.json");
    let json_arg = json.to_str().expect("utf-8 path");
    let played = run(&[
        "match",
        "--player1",
        "builtin:engine=v2,depth=2,name=a",
        "--player2",
        "builtin:engine=v2,depth=3,name=b",
        "--board",
        "11x11",
        "--games",
        "6",
        "--random-opening",
        "3",
        "--seed",
        "5",
        "--quiet",
        "--json",
        json_arg,
    ]);
    assert!(played.status.success(), "{:?}", played);
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
