//! Match statistics: Elo difference with its 95% error margin, likelihood of superiority, and the
//! sequential probability ratio test.
//!
//! Sources of the formulas (ideas, no code, taken from):
//! - Elo from a score and its error margin as cutechess-cli computes them (`elo.cpp`): the score
//!   of each game is a trinomial variable (1, ½, 0); the 95% interval of the mean score is mapped
//!   through the logistic Elo curve and half its width is the margin.
//! - LOS = ½·(1 + erf((W − L) / √(2(W + L)))), as cutechess-cli and fastchess print it.
//! - SPRT: the generalised SPRT approximation of Michel Van den Bergh ("A practical introduction
//!   to the GSPRT", used by fishtest and fastchess): with the mean score s̄ and its variance σ² per
//!   observation, LLR = N·(s₁ − s₀)·(2s̄ − s₀ − s₁) / (2σ²), where s₀, s₁ are the expected scores at
//!   elo0, elo1 on the logistic curve. The observations are the finished pairs of games (same
//!   opening, colours swapped), pentanomial (pair score 0, ¼, ½, ¾, 1) as fastchess counts them,
//!   which removes the opening's bias from the variance; the bounds are Wald's ln(β/(1−α)) and
//!   ln((1−β)/α).

use serde::Serialize;

/// Results from the first player's point of view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub wins: u64,
    pub losses: u64,
    pub draws: u64,
    /// Completed pairs by the first player's points in the pair: 0, ½, 1, 1½, 2.
    pub pentanomial: [u64; 5],
}

impl Tally {
    pub fn games(&self) -> u64 {
        self.wins + self.losses + self.draws
    }

    /// Mean score per game, 0 to 1 (½ before any game).
    pub fn score(&self) -> f64 {
        let n = self.games();
        if n == 0 {
            0.5
        } else {
            (self.wins as f64 + self.draws as f64 / 2.0) / n as f64
        }
    }

    pub fn draw_ratio(&self) -> f64 {
        let n = self.games();
        if n == 0 {
            0.0
        } else {
            self.draws as f64 / n as f64
        }
    }

    pub fn elo(&self) -> f64 {
        elo_from_score(self.score())
    }

    pub fn error_margin(&self) -> f64 {
        error_margin(self.wins, self.losses, self.draws)
    }

    pub fn los(&self) -> f64 {
        likelihood_of_superiority(self.wins, self.losses)
    }

    /// Adds one finished game, given the first player's points in it (0, ½, 1).
    pub fn add_game(&mut self, points: f64) {
        match points {
            p if p > 0.75 => self.wins += 1,
            p if p < 0.25 => self.losses += 1,
            _ => self.draws += 1,
        }
    }

    /// Adds one finished pair, given the first player's points in each of its games (0, ½, 1).
    pub fn add_pair(&mut self, first: f64, second: f64) {
        let half_points = ((first + second) * 2.0).round().clamp(0.0, 4.0) as usize;
        self.pentanomial[half_points] += 1;
    }
}

/// Elo difference that gives an expected score `score` on the logistic curve.
pub fn elo_from_score(score: f64) -> f64 {
    if score <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if score >= 1.0 {
        return f64::INFINITY;
    }
    -400.0 * (1.0 / score - 1.0).log10()
}

/// Expected score of a player `elo` points stronger.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Two-sided 97.5% quantile of the standard normal distribution: a 95% interval is this many
/// standard deviations either side.
pub const Z_975: f64 = 1.959_963_984_540_054;

/// Half-width of the 95% confidence interval of the Elo difference (trinomial model).
pub fn error_margin(wins: u64, losses: u64, draws: u64) -> f64 {
    let n = (wins + losses + draws) as f64;
    if n == 0.0 {
        return f64::INFINITY;
    }
    let (w, l, d) = (wins as f64 / n, losses as f64 / n, draws as f64 / n);
    let mu = w + d / 2.0;
    let variance = w * (1.0 - mu).powi(2) + l * mu.powi(2) + d * (0.5 - mu).powi(2);
    let stdev = (variance / n).sqrt();
    let high = elo_from_score(mu + Z_975 * stdev);
    let low = elo_from_score(mu - Z_975 * stdev);
    (high - low) / 2.0
}

/// Probability that the first player is the stronger, from wins and losses (draws carry no
/// information here).
pub fn likelihood_of_superiority(wins: u64, losses: u64) -> f64 {
    if wins + losses == 0 {
        return 0.5;
    }
    let (w, l) = (wins as f64, losses as f64);
    0.5 * (1.0 + erf((w - l) / (2.0 * (w + l)).sqrt()))
}

/// The error function, by the Chebyshev-fitted rational approximation of `erfc` given in
/// Numerical Recipes (fractional error below 1.2e-7 everywhere).
pub fn erf(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let tail = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        1.0 - tail
    } else {
        tail - 1.0
    }
}

/// A sequential probability ratio test between two Elo hypotheses.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
}

/// Why `--sprt` was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SprtError {
    #[error("SPRT option {0:?} is not key=value")]
    NotKeyValue(String),
    #[error("SPRT {key}={value:?} is not a number")]
    NotANumber { key: String, value: String },
    #[error("unknown SPRT option {0:?} (elo0, elo1, alpha, beta)")]
    UnknownOption(String),
    #[error("SPRT needs elo0= and elo1=")]
    NoBounds,
    #[error("SPRT needs elo0 < elo1 (got {elo0} and {elo1})")]
    BoundsOutOfOrder { elo0: f64, elo1: f64 },
    /// `alpha=` or `beta=` (named by `name`) outside (0, 0.5).
    #[error("SPRT {name}={value} must be between 0 and 0.5")]
    ErrorRateOutOfRange { name: &'static str, value: f64 },
}

/// What the test says so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SprtStatus {
    Continue,
    /// The lower bound was crossed: the difference is at most elo0.
    H0,
    /// The upper bound was crossed: the difference is at least elo1.
    H1,
}

impl Sprt {
    /// Parses `elo0=0 elo1=5 alpha=0.05 beta=0.05` (any order; alpha and beta default to 0.05).
    pub fn parse(tokens: &[String]) -> Result<Sprt, SprtError> {
        let (mut elo0, mut elo1, mut alpha, mut beta) = (None, None, 0.05, 0.05);
        for token in tokens.iter().flat_map(|t| t.split([',', ' '])) {
            if token.is_empty() {
                continue;
            }
            let (key, value) = token
                .split_once('=')
                .ok_or_else(|| SprtError::NotKeyValue(token.to_string()))?;
            let number: f64 = value
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| SprtError::NotANumber {
                    key: key.to_string(),
                    value: value.to_string(),
                })?;
            match key {
                "elo0" => elo0 = Some(number),
                "elo1" => elo1 = Some(number),
                "alpha" => alpha = number,
                "beta" => beta = number,
                other => return Err(SprtError::UnknownOption(other.to_string())),
            }
        }
        let (Some(elo0), Some(elo1)) = (elo0, elo1) else {
            return Err(SprtError::NoBounds);
        };
        if elo1 <= elo0 {
            return Err(SprtError::BoundsOutOfOrder { elo0, elo1 });
        }
        for (name, p) in [("alpha", alpha), ("beta", beta)] {
            if !(p > 0.0 && p < 0.5) {
                return Err(SprtError::ErrorRateOutOfRange { name, value: p });
            }
        }
        Ok(Sprt {
            elo0,
            elo1,
            alpha,
            beta,
        })
    }

    /// Wald's (lower, upper) bounds of the log-likelihood ratio.
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// Log-likelihood ratio of H1 against H0 over the finished pairs (a game whose twin is still
    /// being played does not count yet, as in fastchess; 0 before the first pair).
    pub fn llr(&self, tally: &Tally) -> f64 {
        let values = [0.0, 0.25, 0.5, 0.75, 1.0];
        let (count, mean, variance) = moments(&tally.pentanomial, &values);
        if count == 0.0 || variance <= 1e-12 {
            return 0.0;
        }
        let s0 = score_from_elo(self.elo0);
        let s1 = score_from_elo(self.elo1);
        count * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * variance)
    }

    pub fn status(&self, llr: f64) -> SprtStatus {
        let (lower, upper) = self.bounds();
        if llr >= upper {
            SprtStatus::H1
        } else if llr <= lower {
            SprtStatus::H0
        } else {
            SprtStatus::Continue
        }
    }
}

/// Number of observations, mean and variance of a discrete sample given by counts per value.
/// Outcomes never seen count as half an observation, so that a clean sweep (whose sample variance
/// is zero) still moves the test, but only as fast as its evidence warrants: fishtest and fastchess
/// put 0.001 there, which accepts H1 after a single won pair; with half a count, a run of won pairs
/// takes about fourteen pairs to cross the bound of elo0=0 elo1=20 at 5%, and the half count
/// vanishes against the hundreds of observations of a real test.
fn moments(counts: &[u64], values: &[f64]) -> (f64, f64, f64) {
    let real: u64 = counts.iter().sum();
    if real == 0 {
        return (0.0, 0.0, 0.0);
    }
    let counts: Vec<f64> = counts
        .iter()
        .map(|&c| if c == 0 { 0.5 } else { c as f64 })
        .collect();
    let n: f64 = counts.iter().sum();
    let mean = counts.iter().zip(values).map(|(c, v)| c * v).sum::<f64>() / n;
    let variance = counts
        .iter()
        .zip(values)
        .map(|(c, v)| c * (v - mean).powi(2))
        .sum::<f64>()
        / n;
    (real as f64, mean, variance)
}

/// An Elo figure as match runners print it (`inf` for a clean sweep).
pub fn format_elo(elo: f64) -> String {
    if elo.is_infinite() {
        if elo > 0.0 { "inf" } else { "-inf" }.to_string()
    } else if elo.is_nan() {
        "nan".to_string()
    } else {
        // Adding zero turns -0.0 into 0.0, so an even score does not print as "-0.0".
        format!("{:.1}", elo + 0.0)
    }
}
