//! `connect5 tune`: fits the evaluation's tables to the results of played games (the library's
//! `engine::tuning`) and writes them where the build reads them. docs/engine.md gives the
//! commands that made the shipped tables.

use std::path::PathBuf;
use std::process::ExitCode;

use connect5::board::Stone;
use connect5::engine::tuning::{self, eval_features, FitSettings, Sample, Weights};
use connect5::referee::{load_summary, GameRecord, Outcome, Termination};

#[derive(clap::Args, Debug)]
pub struct TuneArgs {
    /// Match summaries (`connect5 match --json`) whose games are the data.
    #[arg(required = true, value_name = "MATCH_JSON")]
    files: Vec<PathBuf>,
    /// Where to write the fitted tables; `cargo build` builds them into the engine.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "src/engine/v2/eval_weights.txt"
    )]
    out: PathBuf,
    /// Passes over the data.
    #[arg(long, default_value_t = 1500)]
    epochs: usize,
    /// Adam's step, in evaluation units.
    #[arg(long, default_value_t = 1.0)]
    learning_rate: f64,
    /// Pull of every value towards the tables the engine has now.
    #[arg(long, default_value_t = 1e-7)]
    l2: f64,
    /// Logistic scale of the evaluation (default: the one that best fits the current tables).
    #[arg(long)]
    scale: Option<f64>,
    /// Every Nth game is held out of the fit and only measured (0: none).
    #[arg(long, value_name = "N", default_value_t = 10)]
    hold_out_every: usize,
    /// Report the losses of the current tables and stop, writing nothing.
    #[arg(long)]
    dry_run: bool,
}

pub fn run(args: TuneArgs) -> ExitCode {
    match tune(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("connect5 tune: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The samples of the fit and of the held-out check, and how many games gave them.
struct Data {
    fit: Vec<Sample>,
    held_out: Vec<Sample>,
    games: usize,
}

fn load(args: &TuneArgs) -> Result<Data, String> {
    let mut data = Data {
        fit: Vec::new(),
        held_out: Vec::new(),
        games: 0,
    };
    for path in &args.files {
        let summary = load_summary(path)?;
        for game in &summary.games {
            let Some(samples) = samples_of(&game.record)
                .map_err(|e| format!("{} game {}: {e}", path.display(), game.game))?
            else {
                continue;
            };
            data.games += 1;
            let held_out =
                args.hold_out_every > 0 && data.games.is_multiple_of(args.hold_out_every);
            if held_out {
                data.held_out.extend(samples);
            } else {
                data.fit.extend(samples);
            }
        }
    }
    if data.fit.is_empty() {
        return Err("no position to fit: the files hold no game ended by the board".into());
    }
    Ok(data)
}

/// The positions of a game the evaluation decides, labelled with the result for their side to
/// move; `None` for a game that ended by a fault (its result says nothing of the positions).
fn samples_of(record: &GameRecord) -> Result<Option<Vec<Sample>>, String> {
    if !matches!(
        record.termination,
        Termination::Line | Termination::BoardFull
    ) {
        return Ok(None);
    }
    let rule = record.rule()?;
    let result_for = |side: Stone| match record.outcome {
        Outcome::Draw => 0.5,
        outcome if outcome == Outcome::win_for(side) => 1.0,
        _ => 0.0,
    };
    let samples = record
        .replay()?
        .into_iter()
        .filter_map(|position| {
            eval_features(&position.board, rule).map(|features| Sample {
                features,
                result: result_for(position.side),
            })
        })
        .collect();
    Ok(Some(samples))
}

fn tune(args: &TuneArgs) -> Result<(), String> {
    let data = load(args)?;
    let current = Weights::current();
    let (fitted_scale, offset) = tuning::fit_scale(&data.fit, &current);
    let scale = args.scale.unwrap_or(fitted_scale);
    let start = tuning::shifted(&current, offset);
    let losses = |weights: &Weights| {
        (
            tuning::loss(&data.fit, weights, scale),
            tuning::loss(&data.held_out, weights, scale),
        )
    };
    let before = losses(&start);
    eprintln!(
        "{} games, {} positions fitted, {} held out; scale {scale:.1}, offset {offset:.0}; loss \
         of the current tables {:.5} (held out {:.5})",
        data.games,
        data.fit.len(),
        data.held_out.len(),
        before.0,
        before.1
    );
    if args.dry_run {
        return Ok(());
    }
    let settings = FitSettings {
        scale,
        epochs: args.epochs,
        learning_rate: args.learning_rate,
        l2: args.l2,
    };
    let fitted = tuning::fit(&data.fit, &start, settings, |epoch, loss| {
        eprintln!("epoch {epoch}: loss {loss:.5}");
    });
    let after = losses(&fitted);
    eprintln!(
        "fitted tables: loss {:.5} (held out {:.5})",
        after.0, after.1
    );
    let header = format!(
        "The learned evaluation of engine v2 (docs/engine.md, \"Learned evaluation\"), read at \
         build time by build.rs.\n\
         Written by `connect5 tune {}`\n\
         from {} games ({} positions fitted, {} held out); logistic scale {scale:.1}; the\n\
         current tables shifted by {offset:.0}: loss {:.5} -> {:.5}, held out {:.5} -> {:.5}.\n\
         \n\
         combination INDEX P1 P2 P3 P4 own OWN opp OPP: a cell whose four directional patterns\n\
         are P1..P4 (weakest first) is worth OWN to the side to move and costs OPP when it is the\n\
         opponent's cell; the evaluation sums them over empty cells.\n\
         threat MASK VALUE: added for the classes present: bits 0-4 the side to move's Three,\n\
         DoubleThree, Four, FourThree, WinNext; bits 5-9 the opponent's. Masks not listed are 0.",
        std::env::args().skip(2).collect::<Vec<_>>().join(" "),
        data.games,
        data.fit.len(),
        data.held_out.len(),
        before.0,
        after.0,
        before.1,
        after.1
    );
    std::fs::write(&args.out, fitted.to_text(&header))
        .map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    eprintln!("written to {}", args.out.display());
    Ok(())
}
