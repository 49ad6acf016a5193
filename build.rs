//! Turns the learned tables of engine v2 (`src/engine/v2/eval_weights.txt` and
//! `ordering_weights.txt`, written by `connect5 tune`) into constant tables, so that a malformed
//! file stops the build instead of a search.

use std::fmt::Write as _;
use std::path::Path;

const WEIGHTS: &str = "src/engine/v2/eval_weights.txt";
const ORDERING: &str = "src/engine/v2/ordering_weights.txt";
const COMBINATIONS: usize = 715;
const THREAT_MASKS: usize = 1024;

fn read(path: &str) -> Tables {
    println!("cargo:rerun-if-changed={path}");
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|error| panic!("cannot read {path}: {error}"));
    parse(&text).unwrap_or_else(|error| panic!("{path}: {error}"))
}

fn main() {
    let tables = read(WEIGHTS);
    let ordering = read(ORDERING);
    if ordering.threat.iter().any(|&v| v != 0) {
        panic!("{ORDERING}: the ordering has no threat term");
    }
    let mut out = String::new();
    for (name, values) in [
        ("OWN", &tables.own[..]),
        ("OPP", &tables.opp[..]),
        ("THREAT", &tables.threat[..]),
        ("ORDER_OWN", &ordering.own[..]),
        ("ORDER_OPP", &ordering.opp[..]),
    ] {
        let list: Vec<String> = values.iter().map(i32::to_string).collect();
        let _ = writeln!(
            out,
            "pub const {name}: [i32; {}] = [{}];",
            values.len(),
            list.join(", ")
        );
    }
    let dir = std::env::var("OUT_DIR").unwrap_or_else(|_| panic!("cargo sets OUT_DIR"));
    let target = Path::new(&dir).join("eval_weights.rs");
    std::fs::write(&target, out)
        .unwrap_or_else(|error| panic!("cannot write {}: {error}", target.display()));
}

struct Tables {
    own: Vec<i32>,
    opp: Vec<i32>,
    threat: Vec<i32>,
}

fn number<T: std::str::FromStr>(word: Option<&str>, line: usize) -> Result<T, String> {
    word.and_then(|w| w.parse().ok())
        .ok_or_else(|| format!("line {line}: a number is missing or malformed"))
}

fn parse(text: &str) -> Result<Tables, String> {
    let mut tables = Tables {
        own: vec![0; COMBINATIONS],
        opp: vec![0; COMBINATIONS],
        threat: vec![0; THREAT_MASKS],
    };
    let mut seen = vec![false; COMBINATIONS];
    for (n, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.first().copied() {
            Some("combination") if words.len() == 10 && words[6] == "own" && words[8] == "opp" => {
                let index: usize = number(words.get(1).copied(), n)?;
                if index >= COMBINATIONS || seen[index] {
                    return Err(format!(
                        "line {n}: combination {index} out of range or repeated"
                    ));
                }
                seen[index] = true;
                tables.own[index] = number(words.get(7).copied(), n)?;
                tables.opp[index] = number(words.get(9).copied(), n)?;
            }
            Some("threat") if words.len() == 3 => {
                let mask: usize = number(words.get(1).copied(), n)?;
                if mask >= THREAT_MASKS {
                    return Err(format!("line {n}: threat mask {mask} out of range"));
                }
                tables.threat[mask] = number(words.get(2).copied(), n)?;
            }
            _ => {
                return Err(format!(
                    "line {n}: not a combination or threat line: {line}"
                ))
            }
        }
    }
    match seen.iter().position(|&s| !s) {
        Some(missing) => Err(format!("combination {missing} is missing")),
        None => Ok(tables),
    }
}
