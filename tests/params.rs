//! The search's tunable constants from the command line (`--param NAME=VALUE`, a builtin
//! player's `NAME=VALUE`): the real binary, as a tuner drives it.

use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_connect5");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run connect5")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The total of `connect5 bench`'s fixed-depth searches (deterministic for one binary).
fn bench_nodes(extra: &[&str]) -> u64 {
    let mut args = vec!["bench", "--depth", "5"];
    args.extend_from_slice(extra);
    let output = run(&args);
    assert!(output.status.success(), "bench failed: {}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.lines()
        .find_map(|line| {
            let (key, value) = line.split_once(':')?;
            (key.trim() == "nodes").then(|| value.trim().parse().ok())?
        })
        .unwrap_or_else(|| panic!("no node total in {text}"))
}

/// `connect5 params`' default of one constant, as it prints it.
fn listed_default(name: &str) -> String {
    let output = run(&["params"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.lines()
        .find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some(name)).then(|| words.next().map(str::to_string))?
        })
        .unwrap_or_else(|| panic!("{name} not listed in {text}"))
}

#[test]
fn a_parameter_changes_the_search_and_its_default_changes_nothing() {
    let shipped = bench_nodes(&[]);
    let default = format!(
        "move_count_exponent={}",
        listed_default("move_count_exponent")
    );
    assert_eq!(
        bench_nodes(&["--param", &default]),
        shipped,
        "the listed default given explicitly"
    );
    let narrower = bench_nodes(&[
        "--param",
        "move_count_exponent=0.8",
        "--param",
        "quiet_limit_slope=1",
    ]);
    // A different tree, not necessarily a smaller one: with fewer quiet moves searched a cut can
    // come later or a re-search be needed (with session 36's tables this pruning searches more
    // nodes at depth 5, with session 33's fewer).
    assert_ne!(
        narrower, shipped,
        "pruning more searched the same {shipped} nodes: the parameters did not reach the search"
    );
    // Reverse futility pruning off cuts nothing early: a fifth to a quarter more nodes with
    // session 33's and session 36's tables, far from the noise of the ordering.
    let unpruned = bench_nodes(&["--param", "reverse_futility_depth=0"]);
    assert!(
        unpruned > shipped,
        "without reverse futility pruning {unpruned} nodes against {shipped}"
    );
}

#[test]
fn wider_limits_where_the_side_to_move_is_behind_reach_the_search_only_when_asked() {
    let shipped = bench_nodes(&[]);
    // The factor's default is 1: the limits of every node, whatever the margin says.
    assert_eq!(
        bench_nodes(&[
            "--param",
            "behind_limit_factor=1",
            "--param",
            "behind_margin=0"
        ]),
        shipped,
        "a factor of 1 changed the search"
    );
    let wider = bench_nodes(&[
        "--param",
        "behind_limit_factor=3",
        "--param",
        "behind_margin=0",
    ]);
    assert_ne!(
        wider, shipped,
        "wider limits behind searched the same {shipped} nodes: the parameter did not reach the search"
    );
}

#[test]
fn a_bad_parameter_is_refused_with_a_line_that_names_it() {
    for (args, mentions) in [
        (
            vec!["gomocup", "--param", "lmr_divisr=2"],
            "unknown parameter \"lmr_divisr\"",
        ),
        (
            vec!["bench", "--param", "lmr_divisor=two"],
            "\"two\" is not a number",
        ),
        (
            vec!["stdio", "--param", "aspiration_window=0"],
            "aspiration_window: 0 is outside 1 to 2000",
        ),
        (vec!["play", "--param", "lmr_base"], "is not NAME=VALUE"),
    ] {
        let output = Command::new(BIN)
            .args(&args)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run connect5");
        assert!(!output.status.success(), "{args:?} was accepted");
        assert!(
            stderr(&output).contains(mentions),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn a_builtin_player_takes_parameters_and_refuses_bad_ones() {
    let played = run(&[
        "match",
        "--player1",
        "builtin:engine=v2,depth=2,lmr_divisor=3,killer_first=0,name=tuned",
        "--player2",
        "builtin:engine=v2,depth=2,name=shipped",
        "--board",
        "9x9",
        "--games",
        "2",
        "--random-opening",
        "3",
        "--seed",
        "5",
        "--quiet",
    ]);
    assert!(played.status.success(), "{}", stderr(&played));
    let report = String::from_utf8_lossy(&played.stdout);
    assert!(report.contains("tuned"), "{report}");

    let refused = run(&[
        "match",
        "--player1",
        "builtin:engine=v2,lmr_divisor=-1",
        "--player2",
        "builtin",
        "--games",
        "2",
    ]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("lmr_divisor: -1 is outside 0.5 to 10"),
        "{}",
        stderr(&refused)
    );
}

/// The data lines (not the comments) of an evaluation table file.
fn table_data(text: &str) -> Vec<String> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// `connect5 params OPTION` writes `shipped` (the table file built in) with the defaults, and
/// with `PARAM` raised by 50 moves only the cells that have a `pattern` line.
fn check_table_command(option: &str, shipped: &str, param: &str, pattern: &str) {
    let shipped = std::fs::read_to_string(format!(
        "{}/src/engine/v2/{shipped}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("read the shipped table");
    let defaults = run(&["params", option]);
    assert!(defaults.status.success(), "{}", stderr(&defaults));
    let written = String::from_utf8_lossy(&defaults.stdout).into_owned();
    assert_eq!(table_data(&written), table_data(&shipped));

    let raised = format!(
        "{param}={}",
        listed_default(param).parse::<f64>().expect("a number") + 50.0
    );
    let changed = run(&["params", option, "--param", &raised]);
    assert!(changed.status.success(), "{}", stderr(&changed));
    let changed = String::from_utf8_lossy(&changed.stdout).into_owned();
    let moved: Vec<(String, String)> = table_data(&changed)
        .into_iter()
        .zip(table_data(&shipped))
        .filter(|(new, old)| new != old)
        .collect();
    assert!(!moved.is_empty());
    assert!(
        moved.iter().all(|(new, _)| new.contains(pattern)),
        "only the cells with a {pattern} line move: {moved:?}"
    );
    assert!(changed.contains(&raised), "the header names the values");
}

#[test]
fn the_eval_table_command_writes_the_shipped_table_and_follows_the_formula() {
    check_table_command("--eval-table", "eval_weights.txt", "eval_f3", "F3");
}

#[test]
fn the_ordering_table_command_writes_the_shipped_table_and_follows_the_formula() {
    check_table_command("--ordering-table", "ordering_weights.txt", "order_b3", "B3");
}
