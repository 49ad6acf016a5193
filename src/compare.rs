//! `connect5 compare`: two runs of a player (two versions, two settings, two time controls) on
//! the same openings, compared game by game. Matches against a far stronger or weaker opponent
//! decide most openings the same way whatever the version, so two runs' scores differ by less
//! than their own error bars; the difference on the same openings has a much smaller error,
//! because each opening's bias cancels out (the pairing of fishtest's pentanomial statistics,
//! applied across runs instead of across colours).

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use connect5::board::Stone;
use connect5::referee::stats::{Tally, Z_975};
use connect5::referee::{load_summary, GameRecord, MatchSummary, Outcome};

#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// The first run: a JSON summary written by `connect5 match --json`.
    #[arg(value_name = "A_JSON")]
    pub a: PathBuf,
    /// The second run, on the same openings (the same `--seed` and `--random-opening`, or the
    /// same `--openings` file).
    #[arg(value_name = "B_JSON")]
    pub b: PathBuf,
    /// The player compared in A, by its name there (default: A's first player).
    #[arg(long, value_name = "NAME")]
    pub player_a: Option<String>,
    /// The player compared in B, by its name there (default: B's first player).
    #[arg(long, value_name = "NAME")]
    pub player_b: Option<String>,
}

pub fn run(args: CompareArgs) -> ExitCode {
    match compare(&args) {
        Ok(report) => {
            print!("{report}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("connect5 compare: {error}");
            ExitCode::FAILURE
        }
    }
}

fn compare(args: &CompareArgs) -> Result<String, String> {
    let a = Run::load(&args.a, args.player_a.as_deref())?;
    let b = Run::load(&args.b, args.player_b.as_deref())?;
    let comparison = Comparison::of(&a.games, &b.games);
    if comparison.differences.is_empty() {
        return Err(format!(
            "no opening of {} was played in {} on the same board with the compared player in the \
             same colours: nothing to compare (were both played with the same --seed and \
             --random-opening, or the same --openings file?)",
            args.a.display(),
            args.b.display()
        ));
    }
    Ok(comparison.report(&a, &b))
}

/// Where a game started: the board's rows and columns, the rule's line and the opening stones.
type Opening = (usize, usize, usize, Vec<(usize, usize)>);

/// The compared player's points in one occurrence of an opening, as black and as white (`None`
/// for a colour it did not play there).
type Slots = [Option<f64>; 2];

/// An opening and which occurrence of it in its run (an openings file may repeat one).
type OpeningKey = (Opening, usize);

/// The compared player's games of one run, by opening: the points it made with each colour it
/// played there.
#[derive(Debug, Default)]
struct Games {
    by_opening: HashMap<OpeningKey, Slots>,
    /// First appearance order of the openings, so that a report is reproducible.
    order: Vec<OpeningKey>,
}

impl Games {
    fn of(summary: &MatchSummary, player: &str) -> Games {
        let mut games = Games::default();
        // How many games of each opening already gave the player each colour: a pair plays its
        // opening once with each colour, and its n-th game with a colour belongs to the n-th
        // occurrence of the opening.
        let mut seen: HashMap<Opening, [usize; 2]> = HashMap::new();
        for game in &summary.games {
            let Some((colour, points)) = points_of(&game.record, player) else {
                continue;
            };
            let r = &game.record;
            let opening = (r.rows, r.cols, r.k, r.opening.clone());
            let counts = seen.entry(opening.clone()).or_insert([0, 0]);
            let key = (opening, counts[colour.index()]);
            counts[colour.index()] += 1;
            let slots = games.by_opening.entry(key.clone()).or_insert_with(|| {
                games.order.push(key.clone());
                [None, None]
            });
            slots[colour.index()] = Some(points);
        }
        games
    }
}

/// The colour `player` had in the game and its points there (1, ½ or 0); `None` when it did not
/// play it.
fn points_of(record: &GameRecord, player: &str) -> Option<(Stone, f64)> {
    let colour = if record.black == player {
        Stone::Black
    } else if record.white == player {
        Stone::White
    } else {
        return None;
    };
    let points = match record.outcome {
        Outcome::Draw => 0.5,
        outcome if outcome == Outcome::win_for(colour) => 1.0,
        _ => 0.0,
    };
    Some((colour, points))
}

/// A run as the comparison reads it.
struct Run {
    file: PathBuf,
    player: String,
    opponent: String,
    games: Games,
}

impl Run {
    fn load(file: &std::path::Path, player: Option<&str>) -> Result<Run, String> {
        let summary = load_summary(file)?;
        let player = summary
            .player_named(player)
            .map_err(|e| format!("{}: {e}", file.display()))?;
        let opponent = if player == summary.player1 {
            summary.player2.clone()
        } else {
            summary.player1.clone()
        };
        Ok(Run {
            file: file.to_path_buf(),
            games: Games::of(&summary, &player),
            player,
            opponent,
        })
    }
}

/// The index of [`Comparison::results`]' tally of both colours together.
const BOTH_COLOURS: usize = 2;

/// The openings both runs played the same way, and what B made of each beside A.
#[derive(Debug, Default)]
struct Comparison {
    /// Per compared opening, B's points a game there less A's.
    differences: Vec<f64>,
    /// The compared games' results from the compared player's side, per run: as black, as white,
    /// and both together.
    results: [[Tally; 3]; 2],
    only_a: usize,
    only_b: usize,
}

impl Comparison {
    fn of(a: &Games, b: &Games) -> Comparison {
        let mut comparison = Comparison::default();
        for key in &a.order {
            let slots_a = a.by_opening[key];
            let Some(slots_b) = b.by_opening.get(key).copied() else {
                comparison.only_a += 1;
                continue;
            };
            // The same colours in both runs, or the opening's bias would not cancel.
            if slots_a.map(|s| s.is_some()) != slots_b.map(|s| s.is_some()) {
                comparison.only_a += 1;
                comparison.only_b += 1;
                continue;
            }
            let mut sums = [0.0; 2];
            for (run, slots) in [slots_a, slots_b].into_iter().enumerate() {
                for (colour, points) in slots.into_iter().enumerate() {
                    if let Some(points) = points {
                        comparison.results[run][colour].add_game(points);
                        comparison.results[run][BOTH_COLOURS].add_game(points);
                        sums[run] += points;
                    }
                }
            }
            let games = slots_a.iter().flatten().count() as f64;
            comparison.differences.push((sums[1] - sums[0]) / games);
        }
        comparison.only_b += b
            .order
            .iter()
            .filter(|key| !a.by_opening.contains_key(*key))
            .count();
        comparison
    }

    /// The mean difference in points a game, and half the width of its 95% interval.
    fn mean_and_margin(&self) -> (f64, f64) {
        let n = self.differences.len() as f64;
        let mean = self.differences.iter().sum::<f64>() / n;
        if self.differences.len() < 2 {
            return (mean, f64::INFINITY);
        }
        let variance = self
            .differences
            .iter()
            .map(|d| (d - mean).powi(2))
            .sum::<f64>()
            / (n - 1.0);
        (mean, Z_975 * (variance / n).sqrt())
    }

    fn report(&self, a: &Run, b: &Run) -> String {
        let mut text = String::new();
        for (label, run, results) in [("A", a, self.results[0]), ("B", b, self.results[1])] {
            let [black, white, all] = results;
            text += &format!(
                "{label}: {} against {} ({}): {} - {} - {} ({:.1}%); as black {} - {} - {}, as \
                 white {} - {} - {}\n",
                run.player,
                run.opponent,
                run.file.display(),
                all.wins,
                all.losses,
                all.draws,
                100.0 * all.score(),
                black.wins,
                black.losses,
                black.draws,
                white.wins,
                white.losses,
                white.draws,
            );
        }
        let compared = self.differences.len();
        let games = self.results[0][BOTH_COLOURS].games();
        text += &format!(
            "compared: {compared} openings played the same way in both runs ({games} games of \
             each); {} only in A, {} only in B\n",
            self.only_a, self.only_b
        );
        let (mean, margin) = self.mean_and_margin();
        let better = self.differences.iter().filter(|&&d| d > 0.0).count();
        let worse = self.differences.iter().filter(|&&d| d < 0.0).count();
        text += &format!(
            "B - A: {:+.1} ± {:.1} points a game (95%); B better on {better} openings, worse on \
             {worse}, the same on {}\n",
            100.0 * mean,
            100.0 * margin,
            compared - better - worse
        );
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn games(list: &[(&[(usize, usize)], Slots)]) -> Games {
        let mut games = Games::default();
        for (opening, slots) in list {
            let key = ((15, 15, 5, opening.to_vec()), 0);
            games.order.push(key.clone());
            games.by_opening.insert(key, *slots);
        }
        games
    }

    #[test]
    fn the_difference_is_taken_opening_by_opening_and_unmatched_ones_are_counted() {
        let a = games(&[
            (&[(7, 7)], [Some(1.0), Some(0.0)]),
            (&[(7, 8)], [Some(0.0), Some(0.0)]),
            (&[(7, 9)], [Some(1.0), Some(0.0)]),
        ]);
        let b = games(&[
            (&[(7, 7)], [Some(1.0), Some(0.0)]),
            (&[(7, 8)], [Some(1.0), Some(0.5)]),
            (&[(8, 8)], [Some(1.0), Some(1.0)]),
        ]);
        let comparison = Comparison::of(&a, &b);
        assert_eq!(comparison.differences, vec![0.0, 0.75]);
        assert_eq!((comparison.only_a, comparison.only_b), (1, 1));
        assert_eq!(
            (
                comparison.results[1][1].wins,
                comparison.results[1][1].losses,
                comparison.results[1][1].draws
            ),
            (0, 1, 1)
        );
        let (mean, margin) = comparison.mean_and_margin();
        assert!((mean - 0.375).abs() < 1e-12);
        // sd of (0, 0.75) is 0.75 / sqrt(2); the margin 1.96 sd / sqrt(2).
        assert!((margin - Z_975 * 0.375).abs() < 1e-12);
    }

    #[test]
    fn an_opening_played_with_other_colours_is_not_compared() {
        let a = games(&[(&[(7, 7)], [Some(1.0), None])]);
        let b = games(&[(&[(7, 7)], [None, Some(0.0)])]);
        let comparison = Comparison::of(&a, &b);
        assert!(comparison.differences.is_empty());
        assert_eq!((comparison.only_a, comparison.only_b), (1, 1));
    }
}
