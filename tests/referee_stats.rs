//! The match statistics against values computed independently (Python's math module, from the
//! formulas cited in src/referee/stats.rs).

use connect5::referee::stats::{
    elo_from_score, error_margin, likelihood_of_superiority, score_from_elo, Sprt, SprtStatus,
    Tally,
};

fn close(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= tolerance
}

#[test]
fn a_sixty_percent_score_is_seventy_elo() {
    assert!(close(elo_from_score(0.6), 70.4365, 1e-3));
    assert!(close(elo_from_score(0.4), -70.4365, 1e-3));
    assert!(close(elo_from_score(0.5), 0.0, 1e-9));
    assert!(close(score_from_elo(70.4365), 0.6, 1e-6));
    assert!(elo_from_score(1.0).is_infinite());
}

#[test]
fn error_margin_and_los_match_cutechess_formulas() {
    // 60 wins, 40 losses: margin 70.571, LOS 97.725 %.
    assert!(close(error_margin(60, 40, 0), 70.5712, 1e-3));
    assert!(close(likelihood_of_superiority(60, 40), 0.977_250, 1e-6));
    // 30 wins, 20 losses, 50 draws: +34.86 +/- 48.47, LOS 92.135 %.
    let tally = Tally {
        wins: 30,
        losses: 20,
        draws: 50,
        pentanomial: [0; 5],
    };
    assert!(close(tally.elo(), 34.8601, 1e-3));
    assert!(close(tally.error_margin(), 48.4702, 1e-3));
    assert!(close(tally.los(), 0.921_350, 1e-6));
    assert!(close(tally.draw_ratio(), 0.5, 1e-12));
    assert!(close(likelihood_of_superiority(10, 10), 0.5, 1e-6));
}

#[test]
fn sprt_llr_and_bounds_match_the_gsprt_formula() {
    let sprt = Sprt::parse(&["elo0=0".into(), "elo1=10".into()]).unwrap();
    let (lower, upper) = sprt.bounds();
    assert!(close(lower, -2.944_439, 1e-6));
    assert!(close(upper, 2.944_439, 1e-6));
    // Over finished pairs (pentanomial).
    let pairs = Tally {
        wins: 40,
        losses: 30,
        draws: 50,
        pentanomial: [5, 10, 20, 15, 10],
    };
    assert!(close(sprt.llr(&pairs), 0.564_093, 1e-5));
    // Games whose pair is not finished carry no weight yet.
    let unpaired = Tally {
        wins: 1,
        losses: 0,
        draws: 0,
        pentanomial: [0; 5],
    };
    assert_eq!(sprt.llr(&unpaired), 0.0);
    // A clean sweep moves the test, but not to a bound after one pair.
    let sweep = |pairs: u64| Tally {
        wins: 2 * pairs,
        losses: 0,
        draws: 0,
        pentanomial: [0, 0, 0, 0, pairs],
    };
    assert!(sprt.llr(&sweep(1)) > 0.0);
    assert_eq!(sprt.status(sprt.llr(&sweep(1))), SprtStatus::Continue);
    assert!(sprt.llr(&sweep(40)) > upper);
    assert_eq!(sprt.status(3.0), SprtStatus::H1);
    assert_eq!(sprt.status(-3.0), SprtStatus::H0);
    assert_eq!(sprt.status(0.0), SprtStatus::Continue);
}

#[test]
fn sprt_options_are_checked() {
    let parse = |text: &str| Sprt::parse(&[text.to_string()]);
    assert!(parse("elo0=0,elo1=5,alpha=0.1,beta=0.2").is_ok());
    assert!(parse("elo0=5 elo1=0").is_err());
    assert!(parse("elo0=0").is_err());
    assert!(parse("elo0=0 elo1=5 alpha=2").is_err());
    assert!(parse("elo0=0 elo1=x").is_err());
    assert!(parse("gamma=1").is_err());
}
