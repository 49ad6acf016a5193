//! What a match prints: a line per finished game and the running score, as cutechess-cli prints
//! them; Elo, LOS, draw ratio and SPRT at the end; a progress bar when on a terminal; a JSON
//! summary on request.

use std::collections::{BTreeMap, HashMap};
use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use super::game::{GameRecord, Outcome};
use super::schedule::{Colours, Finished, OpeningsSource};
use super::stats::{format_elo, Sprt, SprtStatus, Tally};

/// Points the first player scored in a game.
fn first_points(finished: &Finished) -> f64 {
    match (finished.record.outcome, finished.first_is_black) {
        (Outcome::Draw, _) => 0.5,
        (Outcome::BlackWins, true) | (Outcome::WhiteWins, false) => 1.0,
        _ => 0.0,
    }
}

/// A game as the JSON summary lists it.
#[derive(Serialize)]
pub struct GameSummary {
    pub game: usize,
    pub first_player_black: bool,
    pub result: &'static str,
    #[serde(flatten)]
    pub record: GameRecord,
}

#[derive(Serialize)]
pub struct SprtSummary {
    #[serde(flatten)]
    pub test: Sprt,
    pub llr: f64,
    pub lower_bound: f64,
    pub upper_bound: f64,
    /// H0 or H1 once a bound was crossed (the decision stands), else continue.
    pub status: SprtStatus,
    pub decided_after_games: Option<u64>,
}

/// The JSON summary of a match.
#[derive(Serialize)]
pub struct Summary {
    pub player1: String,
    pub player2: String,
    pub board: String,
    pub k: usize,
    /// The per-move time (`--time`), or none under `--tc`.
    pub time_ms: Option<u64>,
    /// The time control as `--tc` gave it.
    pub tc: Option<String>,
    pub strict: bool,
    /// Where the openings came from: enough to play them again.
    pub openings: OpeningsSource,
    pub games_planned: usize,
    pub games_played: u64,
    /// The first player's colour in every game under `--first-colour`; `null` for pairs with
    /// colours swapped (the pentanomial counts only those).
    pub first_colour: Option<&'static str>,
    #[serde(flatten)]
    pub tally: Tally,
    pub score: f64,
    /// `null` for a clean sweep (infinite).
    pub elo: Option<f64>,
    pub elo_error: Option<f64>,
    pub los: f64,
    pub draw_ratio: f64,
    /// How many games ended each way (line, board-full, time, illegal-move …).
    pub terminations: BTreeMap<String, u64>,
    /// How much of its thinking time each player used, first player first.
    pub time_use: [Option<TimeUse>; 2],
    pub sprt: Option<SprtSummary>,
    pub games: Vec<GameSummary>,
}

/// How much of its thinking time a player used over a match's moves.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TimeUse {
    pub moves: usize,
    pub median_ms: u64,
    pub max_ms: u64,
    /// The median and the largest share of a move's budget that move took (1.0 = all of it).
    pub median_share: f64,
    pub max_share: f64,
    /// The median share over the moves that searched (took more than a tenth of their budget):
    /// the forced replies and proven wins answered at once are left out.
    pub median_searched_share: f64,
}

/// A move that took more than this share of its budget searched rather than answered at once.
const SEARCHED_SHARE: f64 = 0.1;

/// The time `player` took on each of its moves, with the budget it had: a game's moves
/// alternate from black, whose first move follows the opening's stones.
fn moves_of<'a>(
    games: &'a [GameSummary],
    player: &'a str,
) -> impl Iterator<Item = (u64, u64)> + 'a {
    games.iter().flat_map(move |game| {
        let record = &game.record;
        let black_first = record.opening.len().is_multiple_of(2);
        record.moves.iter().enumerate().filter_map(move |(i, mv)| {
            let by_black = (i % 2 == 0) == black_first;
            let name = if by_black {
                &record.black
            } else {
                &record.white
            };
            (name == player).then_some((mv.ms, mv.budget_ms))
        })
    })
}

/// The time use of `player` over `games` (`None` when it made no move).
pub fn time_use(games: &[GameSummary], player: &str) -> Option<TimeUse> {
    let mut ms: Vec<u64> = Vec::new();
    let mut shares: Vec<f64> = Vec::new();
    for (took, budget) in moves_of(games, player) {
        ms.push(took);
        if budget > 0 {
            shares.push(took as f64 / budget as f64);
        }
    }
    if ms.is_empty() {
        return None;
    }
    ms.sort_unstable();
    shares.sort_by(f64::total_cmp);
    let searched: Vec<f64> = shares
        .iter()
        .copied()
        .filter(|&share| share > SEARCHED_SHARE)
        .collect();
    Some(TimeUse {
        moves: ms.len(),
        median_ms: ms[ms.len() / 2],
        max_ms: ms[ms.len() - 1],
        median_share: shares.get(shares.len() / 2).copied().unwrap_or(0.0),
        max_share: shares.last().copied().unwrap_or(0.0),
        median_searched_share: searched.get(searched.len() / 2).copied().unwrap_or(0.0),
    })
}

pub struct Reporter {
    names: [String; 2],
    planned: usize,
    quiet: bool,
    tally: Tally,
    colours: Colours,
    /// First player's points in the first finished game of each pair still waiting for its twin.
    half_pairs: HashMap<usize, f64>,
    sprt: Option<Sprt>,
    /// The test's decision and the games played when it was taken: it stands even if games
    /// still under way then move the ratio back.
    sprt_decision: Option<(SprtStatus, u64)>,
    bar: ProgressBar,
    pub games: Vec<GameSummary>,
    terminations: BTreeMap<String, u64>,
}

impl Reporter {
    pub fn new(
        names: [String; 2],
        planned: usize,
        colours: Colours,
        sprt: Option<Sprt>,
        quiet: bool,
    ) -> Reporter {
        let bar = if std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(
                Some(planned as u64),
                ProgressDrawTarget::stderr_with_hz(4),
            );
            if let Ok(style) = ProgressStyle::with_template(
                "[{elapsed_precise}] {wide_bar} {pos}/{len} games  {msg}",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar
        } else {
            ProgressBar::hidden()
        };
        Reporter {
            names,
            planned,
            quiet,
            tally: Tally::default(),
            colours,
            half_pairs: HashMap::new(),
            sprt,
            sprt_decision: None,
            bar,
            games: Vec::new(),
            terminations: BTreeMap::new(),
        }
    }

    /// Prints above the progress bar (or plainly when there is none).
    fn say(&self, line: &str) {
        self.bar.suspend(|| println!("{line}"));
    }

    fn score_line(&self) -> String {
        let t = &self.tally;
        format!(
            "Score of {} vs {}: {} - {} - {}  [{:.3}] {}",
            self.names[0],
            self.names[1],
            t.wins,
            t.losses,
            t.draws,
            t.score(),
            t.games()
        )
    }

    fn sprt_line(&self) -> Option<String> {
        let sprt = self.sprt?;
        let llr = sprt.llr(&self.tally);
        let (lower, upper) = sprt.bounds();
        let share = if llr >= 0.0 { llr / upper } else { llr / lower } * 100.0;
        let verdict = match self.sprt_decision {
            None | Some((SprtStatus::Continue, _)) => String::new(),
            Some((status, games)) => {
                let hypothesis = if status == SprtStatus::H1 { "H1" } else { "H0" };
                if games == self.tally.games() {
                    format!(" - {hypothesis} was accepted")
                } else {
                    format!(" - {hypothesis} was accepted after {games} games")
                }
            }
        };
        Some(format!(
            "SPRT: llr {llr:.3} ({share:.1}%), lbound {lower:.2}, ubound {upper:.2}{verdict}"
        ))
    }

    /// Takes a finished game; returns whether the SPRT (if any) has now concluded.
    pub fn add(&mut self, finished: Finished) -> bool {
        let points = first_points(&finished);
        self.tally.add_game(points);
        if let Some(pair) = self.colours.pair(finished.index) {
            match self.half_pairs.remove(&pair) {
                Some(other) => self.tally.add_pair(other, points),
                None => {
                    self.half_pairs.insert(pair, points);
                }
            }
        }
        *self
            .terminations
            .entry(finished.record.termination.name())
            .or_default() += 1;
        let record = &finished.record;
        if !self.quiet {
            self.say(&format!(
                "Finished game {} ({} vs {}): {} {{{}}}",
                finished.index + 1,
                record.black,
                record.white,
                record.outcome.notation(),
                record.reason
            ));
            self.say(&self.score_line());
        }
        if let (Some(sprt), None) = (self.sprt, self.sprt_decision) {
            let status = sprt.status(sprt.llr(&self.tally));
            if status != SprtStatus::Continue {
                self.sprt_decision = Some((status, self.tally.games()));
            }
        }
        if let Some(line) = self.sprt_line() {
            if !self.quiet {
                self.say(&line);
            }
        }
        self.bar.inc(1);
        self.bar.set_message(format!(
            "{}-{}-{} [{:.3}] Elo {}",
            self.tally.wins,
            self.tally.losses,
            self.tally.draws,
            self.tally.score(),
            format_elo(self.tally.elo())
        ));
        self.games.push(GameSummary {
            game: finished.index + 1,
            first_player_black: finished.first_is_black,
            result: finished.record.outcome.notation(),
            record: finished.record,
        });
        self.sprt_decision.is_some()
    }

    /// Prints a line of its own (above the progress bar).
    pub fn note(&self, line: &str) {
        self.say(line);
    }

    /// Prints the closing lines.
    pub fn finish(&mut self) {
        self.bar.finish_and_clear();
        let t = self.tally;
        if self.quiet {
            self.say(&self.score_line());
        }
        let margin = t.error_margin();
        self.say(&format!(
            "Elo difference: {} +/- {}, LOS: {:.1} %, DrawRatio: {:.1} %",
            format_elo(t.elo()),
            format_elo(margin),
            t.los() * 100.0,
            t.draw_ratio() * 100.0
        ));
        let p = t.pentanomial;
        match self.colours {
            Colours::Swapped => self.say(&format!(
                "Ptnml(0-2): [{}, {}, {}, {}, {}]",
                p[0], p[1], p[2], p[3], p[4]
            )),
            Colours::Fixed(colour) => self.say(&format!(
                "{} had {} in every game, one game per opening",
                self.names[0],
                colour.name()
            )),
        }
        let ends: Vec<String> = self
            .terminations
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        self.say(&format!("Game endings: {}", ends.join(", ")));
        for name in &self.names {
            if let Some(used) = time_use(&self.games, name) {
                self.say(&format!(
                    "Time used by {name}: median {} ms ({:.0}% of its budget; {:.0}% over the moves that searched), max {} ms ({:.0}%), over {} moves",
                    used.median_ms,
                    used.median_share * 100.0,
                    used.median_searched_share * 100.0,
                    used.max_ms,
                    used.max_share * 100.0,
                    used.moves
                ));
            }
        }
        if let Some(line) = self.sprt_line() {
            self.say(&line);
        }
        if (t.games() as usize) < self.planned {
            self.say(&format!(
                "Match stopped after {} of {} games",
                t.games(),
                self.planned
            ));
        }
    }

    pub fn summary(
        self,
        board: String,
        k: usize,
        time_ms: Option<u64>,
        tc: Option<String>,
        strict: bool,
        openings: OpeningsSource,
    ) -> Summary {
        let t = self.tally;
        let finite = |x: f64| x.is_finite().then_some(x + 0.0);
        let sprt = self.sprt.map(|test| {
            let llr = test.llr(&t);
            let (lower_bound, upper_bound) = test.bounds();
            SprtSummary {
                test,
                llr,
                lower_bound,
                upper_bound,
                status: self
                    .sprt_decision
                    .map_or(SprtStatus::Continue, |(status, _)| status),
                decided_after_games: self.sprt_decision.map(|(_, games)| games),
            }
        });
        let mut games = self.games;
        games.sort_by_key(|g| g.game);
        let time_use = [
            time_use(&games, &self.names[0]),
            time_use(&games, &self.names[1]),
        ];
        let [player1, player2] = self.names;
        Summary {
            player1,
            player2,
            board,
            k,
            time_ms,
            tc,
            strict,
            openings,
            games_planned: self.planned,
            games_played: t.games(),
            first_colour: match self.colours {
                Colours::Swapped => None,
                Colours::Fixed(colour) => Some(colour.name()),
            },
            tally: t,
            score: t.score(),
            elo: finite(t.elo()),
            elo_error: finite(t.error_margin()),
            los: t.los(),
            draw_ratio: t.draw_ratio(),
            terminations: self.terminations,
            time_use,
            sprt,
            games,
        }
    }
}
