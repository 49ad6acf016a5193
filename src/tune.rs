//! `connect5 tune`: fits the evaluation's tables (the library's `engine::tuning`) to played games,
//! either to their results or to the scores of searches of their positions, and writes them where
//! the build reads them. docs/engine.md gives the commands that made the shipped tables.

use std::path::PathBuf;
use std::process::ExitCode;

use connect5::board::{Board, Move, Rule, Stone};
use connect5::engine::is_mate;
use connect5::engine::tuning::{
    self, comparison_sample, eval_features, ordering_sample, FitPositions, FitSettings,
    OrderingSample, OrderingWeights, Sample, Weights,
};
use connect5::referee::{load_summary, GameRecord, Outcome, Termination};

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("move_fit").args(["ordering", "comparison"])))]
pub struct TuneArgs {
    /// Match summaries (`connect5 match --json`) whose games are the data.
    #[arg(value_name = "MATCH_JSON", required_unless_present = "labels")]
    files: Vec<PathBuf>,
    /// Label the games' positions with the score of a search of this many plies instead of
    /// their game's result (the evaluation is fitted to what the search sees from them); with
    /// --ordering, with the move that search plays instead of the move of the game.
    #[arg(long, value_name = "PLIES", conflicts_with = "comparison")]
    label_depth: Option<u32>,
    /// With --label-depth: label one position in this many of each game.
    #[arg(long, value_name = "N", default_value_t = 4, requires = "label_depth")]
    label_every: usize,
    /// With --label-depth: label, instead of the games' positions, positions of the trees of
    /// searches of this many plies rooted at them (where the search orders its moves: at
    /// nodes with no threat to answer and two plies or more to go, as often as it visits them).
    #[arg(long, value_name = "PLIES", requires = "label_depth")]
    tree_depth: Option<u32>,
    /// With --tree-depth: one node in this many of each tree.
    #[arg(long, value_name = "N", default_value_t = 50, requires = "tree_depth")]
    tree_every: u64,
    /// With --label-depth: searches run at once (one thread each).
    #[arg(long, default_value_t = 2, requires = "label_depth")]
    jobs: usize,
    /// With --label-depth: also write the labelled positions to this file (read back with
    /// --labels, so that fits of other settings need not search again).
    #[arg(long, value_name = "FILE", requires = "label_depth")]
    save_labels: Option<PathBuf>,
    /// Labelled positions written by --save-labels, fitted instead of game results (with
    /// --ordering, a file of moves written by `--ordering --save-labels`).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["comparison", "label_depth", "files"])]
    labels: Vec<PathBuf>,
    /// Fit the move-ordering tables to the moves played instead of the evaluation to the results.
    #[arg(long)]
    ordering: bool,
    /// Fit the evaluation's tables to the moves played instead of the results: the evaluation
    /// of the position after each candidate move, compared (comparison training).
    #[arg(long, conflicts_with_all = ["ordering", "label_depth", "labels"])]
    comparison: bool,
    /// With --comparison: the candidates of a position, the move played and the ones the
    /// shipped ordering ranks first.
    #[arg(long, value_name = "N", default_value_t = 16, requires = "comparison")]
    candidates: usize,
    /// With --comparison: weight of the pull of the games' positions' evaluations towards
    /// their values before the fit (the comparisons alone leave the evaluation's level free).
    #[arg(long, default_value_t = 1.0, requires = "comparison")]
    anchor: f64,
    /// With --ordering or --comparison: learn only from the moves of the player of this name
    /// (a strong one).
    #[arg(long, value_name = "NAME", requires = "move_fit")]
    moves_of: Option<String>,
    /// With --ordering or --comparison: learn only from the moves of this colour.
    #[arg(long, value_enum, value_name = "COLOUR", requires = "move_fit")]
    side: Option<Stone>,
    /// With --ordering or --comparison: learn only from the moves of each game's winner.
    #[arg(long, requires = "move_fit")]
    winners: bool,
    /// Where to write the fitted tables (default: where the build reads them,
    /// src/engine/v2/eval_weights.txt or ordering_weights.txt); `cargo build` builds them in.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
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
    /// Both games of every Nth pair (games 2N - 1 and 2N, 4N - 1 and 4N, ...: each opening with
    /// both colour assignments) are held out of the fit and only measured (0: none).
    #[arg(long, value_name = "N", default_value_t = 10)]
    hold_out_every: usize,
    /// Fit only on quiet positions: neither side can make a four (no three on the board); with
    /// --comparison, also only the moves that make no three.
    #[arg(long)]
    quiet: bool,
    /// Keep each combination's ratio of the side to move's value to the opponent's (fit one value
    /// per combination).
    #[arg(long, conflicts_with = "ordering")]
    keep_ratios: bool,
    /// Leave the threat term as it is.
    #[arg(long, conflicts_with = "ordering")]
    fixed_threat: bool,
    /// Fit only the threat term (the value of which threat classes each side has); the
    /// per-combination tables stay as they are.
    #[arg(long, conflicts_with_all = ["ordering", "fixed_threat", "keep_ratios"])]
    threat_only: bool,
    /// Fit only on the positions where the side to move faces an open three (the leaves the
    /// search's quiescence searches on): with --threat-only, the threat values of those positions
    /// alone are fitted.
    #[arg(long, conflicts_with_all = ["ordering", "comparison", "quiet"])]
    facing_open_three: bool,
    /// Report the losses of the current tables and stop, writing nothing.
    #[arg(long)]
    dry_run: bool,
}

pub fn run(args: TuneArgs) -> ExitCode {
    let result = if args.ordering {
        tune_ordering(&args)
    } else if args.comparison {
        tune_comparison(&args)
    } else {
        tune(&args)
    };
    crate::command_status("tune", result)
}

/// The samples of the fit and of the held-out check (evaluation samples, or a move fit's), and
/// how many games gave them.
struct Data<T = Sample> {
    fit: Vec<T>,
    held_out: Vec<T>,
    games: usize,
}

impl<T> Data<T> {
    fn new() -> Data<T> {
        Data {
            fit: Vec::new(),
            held_out: Vec::new(),
            games: 0,
        }
    }

    /// The samples of the game numbered `game` in its match.
    fn add(&mut self, args: &TuneArgs, game: usize, samples: impl IntoIterator<Item = T>) {
        if is_held_out(args, game) {
            self.held_out.extend(samples);
        } else {
            self.fit.extend(samples);
        }
    }
}

/// Whether the game numbered `game` (from 1: in its match, or for labelled positions across
/// the files labelled) is held out: both games of every `--hold-out-every`th pair of games. A
/// match plays each opening as games 2k - 1 and 2k with the colours swapped, so holding out
/// single games by number would hold out one colour assignment only (every tenth game is always
/// the second of its pair).
fn is_held_out(args: &TuneArgs, game: usize) -> bool {
    let pair = game.saturating_sub(1) / 2 + 1;
    args.hold_out_every > 0 && pair.is_multiple_of(args.hold_out_every)
}

/// The positions an evaluation fit reads, from the command line.
fn fit_positions(args: &TuneArgs) -> FitPositions {
    if args.quiet {
        FitPositions::Quiet
    } else if args.facing_open_three {
        FitPositions::FacingOpenThree
    } else {
        FitPositions::All
    }
}

/// The held-out loss for the reports, to five places, or `none` when nothing is held out (a mean
/// over no position would print as a loss of zero).
fn held_out_loss(held_out: &[Sample], weights: &Weights, scale: f64) -> String {
    if held_out.is_empty() {
        "none".to_string()
    } else {
        format!("{:.5}", tuning::loss(held_out, weights, scale))
    }
}

fn load(args: &TuneArgs) -> Result<Data, String> {
    let mut data = Data::new();
    for path in &args.files {
        let summary = load_summary(path)?;
        for game in &summary.games {
            let Some(samples) = samples_of(&game.record, fit_positions(args))
                .map_err(|e| format!("{} game {}: {e}", path.display(), game.game))?
            else {
                continue;
            };
            data.games += 1;
            data.add(args, game.game, samples);
        }
    }
    if data.fit.is_empty() {
        return Err("no position to fit: the files hold no game ended by the board".into());
    }
    Ok(data)
}

/// The positions of a game the evaluation decides, labelled with the result for their side to
/// move; `None` for a game that ended by a fault (its result says nothing of the positions).
fn samples_of(record: &GameRecord, positions: FitPositions) -> Result<Option<Vec<Sample>>, String> {
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
            eval_features(&position.board, rule, positions).map(|features| Sample {
                features,
                result: result_for(position.side),
            })
        })
        .collect();
    Ok(Some(samples))
}

/// Logistic scale of a fit to search scores (evaluation units): a score of this much is a 73%
/// expectation, the range where the shipped tables' middle-game scores lie.
const LABEL_SCALE: f64 = 400.0;

/// What a search says of a position for a fit: its score (the evaluation's fit) or the move it
/// plays (the move ordering's), one field of a labels file.
trait Label: Sized + Send {
    /// The label of `board`'s side to move from a search of `depth` plies; `None` where the
    /// search's rules decide the position without the evaluation.
    fn search(board: &Board, rule: Rule, depth: u32) -> Option<Self>;
    fn to_field(&self) -> String;
    fn from_field(text: &str) -> Result<Self, String>;
    /// Whether the label can be `board`'s.
    fn check(&self, _board: &Board) -> Result<(), String> {
        Ok(())
    }
}

impl Label for i32 {
    fn search(board: &Board, rule: Rule, depth: u32) -> Option<i32> {
        tuning::search_label(board, rule, depth)
    }

    fn to_field(&self) -> String {
        self.to_string()
    }

    fn from_field(text: &str) -> Result<i32, String> {
        text.parse()
            .map_err(|_| format!("score {text:?} is not a number in range"))
    }
}

impl Label for Move {
    fn search(board: &Board, rule: Rule, depth: u32) -> Option<Move> {
        tuning::search_move(board, rule, depth)
    }

    fn to_field(&self) -> String {
        format!("{},{}", self.row, self.col)
    }

    fn from_field(text: &str) -> Result<Move, String> {
        let bad = || format!("move {text:?} is not ROW,COL");
        let (row, col) = text.split_once(',').ok_or_else(bad)?;
        Ok(Move::new(
            row.parse().map_err(|_| bad())?,
            col.parse().map_err(|_| bad())?,
        ))
    }

    fn check(&self, board: &Board) -> Result<(), String> {
        if board.is_empty_cell(*self) {
            Ok(())
        } else {
            Err(format!(
                "move {} is not an empty cell of the board",
                self.to_field()
            ))
        }
    }
}

/// A position labelled by a search for its side to move; `game` numbers the game it came from
/// (the hold-out keeps a game's positions together).
struct Labelled<T> {
    game: usize,
    rule: Rule,
    board: Board,
    label: T,
}

impl<T: Label> Labelled<T> {
    /// One line of a labels file: `GAME K LABEL ROW/ROW/...`.
    fn to_line(&self) -> String {
        format!(
            "{} {} {} {}",
            self.game,
            self.rule.k,
            self.label.to_field(),
            self.board.to_rows().join("/")
        )
    }

    fn from_line(line: &str) -> Result<Labelled<T>, String> {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [game, k, label, rows] = fields[..] else {
            return Err(format!("expected GAME K LABEL ROWS, found {line:?}"));
        };
        let number = |text: &str, what: &str| {
            text.parse::<usize>()
                .map_err(|_| format!("{what} {text:?} is not a number in range"))
        };
        let board = Board::from_rows(&rows.split('/').collect::<Vec<_>>())?;
        let k = number(k, "line length")?;
        let rule = Rule::for_board_with_k(board.rows(), board.cols(), Some(k))
            .map_err(|longest| format!("line length {k} out of range (1 to {longest})"))?;
        let label = T::from_field(label)?;
        label.check(&board)?;
        Ok(Labelled {
            game: number(game, "game")?,
            rule,
            board,
            label,
        })
    }
}

/// The labelled positions: read from --labels files, or sampled from the games (or from the
/// trees of searches rooted at them, with --tree-depth) and searched.
fn labelled_positions<T: Label>(args: &TuneArgs) -> Result<Vec<Labelled<T>>, String> {
    let Some(depth) = args.label_depth else {
        let mut labelled = Vec::new();
        // Each file numbers its games from 1: the games of later files are numbered after the
        // earlier files' last, so that the hold-out never pairs two unrelated games.
        let mut games_before = 0;
        for path in &args.labels {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let mut last_game = games_before;
            for (index, line) in text.lines().enumerate() {
                let mut position = Labelled::<T>::from_line(line)
                    .map_err(|e| format!("{} line {}: {e}", path.display(), index + 1))?;
                position.game += games_before;
                last_game = last_game.max(position.game);
                labelled.push(position);
            }
            // Even, so that a match's pairs of games (2k - 1, 2k) stay pairs.
            games_before = last_game + last_game % 2;
        }
        return Ok(labelled);
    };
    let every = args.label_every.max(1);
    let mut roots = Vec::new();
    let mut games = 0;
    for path in &args.files {
        let summary = load_summary(path)?;
        for game in &summary.games {
            let context = |e: String| format!("{} game {}: {e}", path.display(), game.game);
            let rule = game.record.rule().map_err(context)?;
            games += 1;
            let replayed = game.record.replay().map_err(context)?;
            // A different phase in each game, so every ply is sampled somewhere.
            roots.extend(
                replayed
                    .into_iter()
                    .filter(|m| (m.ply + games) % every == 0)
                    .map(|m| (games, rule, m.board)),
            );
        }
    }
    let total = roots.len();
    match args.tree_depth {
        Some(tree_depth) => eprintln!(
            "{games} games: labelling by searches of depth {depth} one in {} of the nodes of \
             searches of depth {tree_depth} from {total} positions",
            args.tree_every
        ),
        None => {
            eprintln!("{games} games: labelling {total} positions by searches of depth {depth}")
        }
    }
    let positions_of = |rule: Rule, board: &Board| match args.tree_depth {
        Some(tree_depth) => tuning::search_tree_positions(board, rule, tree_depth, args.tree_every),
        None => vec![board.clone()],
    };
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut labelled: Vec<(usize, Vec<Labelled<T>>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..args.jobs.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((game, rule, root)) = roots.get(i) else {
                            return done;
                        };
                        if (i + 1).is_multiple_of(1000) {
                            eprintln!("{} of {total} positions done", i + 1);
                        }
                        let found = positions_of(*rule, root)
                            .into_iter()
                            .filter_map(|board| {
                                T::search(&board, *rule, depth).map(|label| Labelled {
                                    game: *game,
                                    rule: *rule,
                                    board,
                                    label,
                                })
                            })
                            .collect();
                        done.push((i, found));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().unwrap_or_default())
            .collect()
    });
    labelled.sort_unstable_by_key(|&(i, _)| i);
    let labelled: Vec<Labelled<T>> = labelled.into_iter().flat_map(|(_, l)| l).collect();
    if let Some(path) = &args.save_labels {
        let text: String = labelled.iter().map(|l| l.to_line() + "\n").collect();
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        eprintln!(
            "{} labelled positions written to {}",
            labelled.len(),
            path.display()
        );
    }
    Ok(labelled)
}

/// The samples of a fit to search scores: each position's target is the score's expectation
/// under the fit's logistic scale.
fn load_labelled(args: &TuneArgs) -> Result<Data, String> {
    let scale = args.scale.unwrap_or(LABEL_SCALE);
    labelled_samples(args, |position: &Labelled<i32>| {
        // A proven win or loss is the threat searches' to find, not the evaluation's to predict.
        if is_mate(position.label) {
            return None;
        }
        let features = eval_features(&position.board, position.rule, fit_positions(args))?;
        Some(Sample {
            features,
            result: tuning::sigmoid(f64::from(position.label) / scale),
        })
    })
}

/// The samples `sample` makes of the labelled positions (those it makes one of), each game's
/// held out or fitted together.
fn labelled_samples<L: Label, T>(
    args: &TuneArgs,
    sample: impl Fn(&Labelled<L>) -> Option<T>,
) -> Result<Data<T>, String> {
    let mut data = Data::new();
    let mut last_game = None;
    for position in labelled_positions::<L>(args)? {
        if last_game != Some(position.game) {
            data.games += 1;
            last_game = Some(position.game);
        }
        data.add(args, position.game, sample(&position));
    }
    if data.fit.is_empty() {
        return Err("no labelled position to fit".into());
    }
    Ok(data)
}

fn tune(args: &TuneArgs) -> Result<(), String> {
    let searched = args.label_depth.is_some() || !args.labels.is_empty();
    let data = if searched {
        load_labelled(args)?
    } else {
        load(args)?
    };
    let current = Weights::current();
    // Search scores are in the evaluation's own units: no offset to find, and the scale only
    // says over which range of scores the fit weighs its errors.
    let (fitted_scale, offset) = if searched {
        (LABEL_SCALE, 0.0)
    } else {
        tuning::fit_scale(&data.fit, &current)
    };
    let scale = args.scale.unwrap_or(fitted_scale);
    let start = tuning::shifted(&current, offset);
    let losses = |weights: &Weights| {
        (
            tuning::loss(&data.fit, weights, scale),
            held_out_loss(&data.held_out, weights, scale),
        )
    };
    let before = losses(&start);
    eprintln!(
        "{} games, {} positions fitted, {} held out; scale {scale:.1}, offset {offset:.0}; loss \
         of the current tables {:.5} (held out {})",
        data.games,
        data.fit.len(),
        data.held_out.len(),
        before.0,
        before.1
    );
    if searched {
        eprintln!(
            "least possible loss (the labels' own entropy) {:.5}",
            tuning::least_loss(&data.fit)
        );
    }
    if args.dry_run {
        return Ok(());
    }
    let settings = FitSettings {
        scale,
        epochs: args.epochs,
        learning_rate: args.learning_rate,
        l2: args.l2,
        keep_ratios: args.keep_ratios,
        fit_threat: !args.fixed_threat,
        fit_tables: !args.threat_only,
    };
    let fitted = tuning::fit(&data.fit, &start, settings, |epoch, loss| {
        eprintln!("epoch {epoch}: loss {loss:.5}");
    });
    let after = losses(&fitted);
    eprintln!("fitted tables: loss {:.5} (held out {})", after.0, after.1);
    let header = format!(
        "The learned evaluation of engine v2 (docs/engine.md, \"Learned evaluation\"), read at \
         build time by build.rs.\n\
         Written by `connect5 tune {}`\n\
         from {} games ({} positions fitted, {} held out); logistic scale {scale:.1}; the\n\
         current tables shifted by {offset:.0}: loss {:.5} -> {:.5}, held out {} -> {}.",
        std::env::args().skip(2).collect::<Vec<_>>().join(" "),
        data.games,
        data.fit.len(),
        data.held_out.len(),
        before.0,
        after.0,
        before.1,
        after.1
    );
    write(args, "eval_weights.txt", &fitted.to_text(&header))
}

fn tune_comparison(args: &TuneArgs) -> Result<(), String> {
    let data = load_moves(args, |board, rule, played| {
        comparison_sample(board, rule, played, args.candidates, args.quiet)
    })?;
    let start = Weights::current();
    let temperature = args
        .scale
        .unwrap_or_else(|| tuning::fit_comparison_temperature(&data.fit, &start));
    let report = |weights: &Weights| {
        let (fit_loss, _) = tuning::comparison_loss(&data.fit, weights, temperature);
        if data.held_out.is_empty() {
            return format!("loss {fit_loss:.4} (no position held out)");
        }
        let (held_loss, first) = tuning::comparison_loss(&data.held_out, weights, temperature);
        format!(
            "loss {fit_loss:.4} (held out {held_loss:.4}); the move played is the evaluation's \
             first choice in {:.1}% of the held-out positions",
            100.0 * first
        )
    };
    let before = report(&start);
    data.announce(temperature, &before);
    if args.dry_run {
        return Ok(());
    }
    let settings = move_fit_settings(args, temperature, !args.fixed_threat);
    let fitted = tuning::fit_comparison(&data.fit, &start, settings, args.anchor, |epoch, loss| {
        eprintln!("epoch {epoch}: loss {loss:.5}");
    });
    let after = report(&fitted);
    eprintln!("fitted tables: {after}");
    let header = format!(
        "The learned evaluation of engine v2 (docs/engine.md, \"Learned evaluation\"), read at \
         build time by build.rs.\n\
         Written by `connect5 tune {}`\n\
         from {} games ({} positions fitted, {} held out); softmax temperature {temperature:.1}.\n\
         Before: {before}.\n\
         After: {after}.",
        std::env::args().skip(2).collect::<Vec<_>>().join(" "),
        data.games,
        data.fit.len(),
        data.held_out.len(),
    );
    write(args, "eval_weights.txt", &fitted.to_text(&header))
}

fn write(args: &TuneArgs, default_name: &str, text: &str) -> Result<(), String> {
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("src/engine/v2").join(default_name));
    std::fs::write(&out, text).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    eprintln!("written to {}", out.display());
    Ok(())
}

/// The settings of a fit to the moves played, from the command line.
fn move_fit_settings(args: &TuneArgs, temperature: f64, fit_threat: bool) -> FitSettings {
    FitSettings {
        scale: temperature,
        epochs: args.epochs,
        learning_rate: args.learning_rate,
        l2: args.l2,
        keep_ratios: false,
        fit_threat,
        fit_tables: !args.threat_only,
    }
}

impl<T> Data<T> {
    /// Says what a move fit fits, before the fit.
    fn announce(&self, temperature: f64, current: &str) {
        eprintln!(
            "{} games, {} positions fitted, {} held out; temperature {temperature:.1}; current \
             tables: {current}",
            self.games,
            self.fit.len(),
            self.held_out.len()
        );
    }
}

/// One sample per move of the games (of `--moves-of`'s player only, if given) that `sample`
/// makes of the position before it, the rule and the move played.
fn load_moves<T>(
    args: &TuneArgs,
    sample: impl Fn(&Board, Rule, Move) -> Option<T>,
) -> Result<Data<T>, String> {
    let mut data = Data::new();
    for path in &args.files {
        let summary = load_summary(path)?;
        for game in &summary.games {
            let record = &game.record;
            let rule = record
                .rule()
                .map_err(|e| format!("{} game {}: {e}", path.display(), game.game))?;
            let replayed = record
                .replay()
                .map_err(|e| format!("{} game {}: {e}", path.display(), game.game))?;
            data.games += 1;
            let mover = |side: Stone| match side {
                Stone::Black => &record.black,
                Stone::White => &record.white,
            };
            let samples = replayed
                .iter()
                .filter(|m| {
                    args.moves_of
                        .as_ref()
                        .is_none_or(|name| mover(m.side) == name)
                        && args.side.is_none_or(|side| m.side == side)
                        && (!args.winners || record.outcome == Outcome::win_for(m.side))
                })
                .filter_map(|m| sample(&m.board, rule, m.played));
            data.add(args, game.game, samples);
        }
    }
    if data.fit.is_empty() {
        return Err("no move to learn from in these files".into());
    }
    Ok(data)
}

/// The ordering samples of positions labelled with a search's move (--label-depth or --labels).
fn load_searched_moves(args: &TuneArgs) -> Result<Data<OrderingSample>, String> {
    labelled_samples(args, |position: &Labelled<Move>| {
        ordering_sample(&position.board, position.rule, position.label)
    })
}

fn tune_ordering(args: &TuneArgs) -> Result<(), String> {
    let data = if args.label_depth.is_some() || !args.labels.is_empty() {
        load_searched_moves(args)?
    } else {
        load_moves(args, ordering_sample)?
    };
    let start = OrderingWeights::current();
    let temperature = args
        .scale
        .unwrap_or_else(|| tuning::fit_temperature(&data.fit, &start));
    let report = |weights: &OrderingWeights| {
        let fit_loss = tuning::ordering_loss(&data.fit, weights, temperature);
        if data.held_out.is_empty() {
            return format!("loss {fit_loss:.4} (no position held out)");
        }
        let (first, top5) = tuning::ordering_hits(&data.held_out, weights, 5);
        format!(
            "loss {fit_loss:.4} (held out {:.4}); the move played is first in {:.1}% of the held-out \
             positions, in the first five in {:.1}%",
            tuning::ordering_loss(&data.held_out, weights, temperature),
            100.0 * first,
            100.0 * top5
        )
    };
    let before = report(&start);
    data.announce(temperature, &before);
    if args.dry_run {
        return Ok(());
    }
    let settings = move_fit_settings(args, temperature, false);
    let fitted = tuning::fit_ordering(&data.fit, &start, settings, |epoch, loss| {
        eprintln!("epoch {epoch}: loss {loss:.5}");
    });
    let after = report(&fitted);
    eprintln!("fitted tables: {after}");
    let header = format!(
        "The move-ordering tables of engine v2 (docs/engine.md, \"Issue 13, session 48\"), read\n\
         at build time by build.rs. Written by `connect5 tune {}`\n\
         from {} games ({} positions fitted, {} held out); softmax temperature {temperature:.1}.\n\
         Before: {before}.\n\
         After: {after}.",
        std::env::args().skip(2).collect::<Vec<_>>().join(" "),
        data.games,
        data.fit.len(),
        data.held_out.len(),
    );
    write(args, "ordering_weights.txt", &fitted.to_text(&header))
}
