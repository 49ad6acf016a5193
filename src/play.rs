//! `connect5 play`: a person plays the engine in the terminal, on any board size (3×3 included).
//! The board goes to stdout, moves are read from stdin as `row col`, so it works through a pipe
//! as well as at a keyboard.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use connect5::board::{Board, Move, Rule, Stone};
use connect5::engine::params::ParamArgs;
use connect5::engine::{Deadline, EngineConfig, EngineKind, GameMemory};
use connect5::pool::{SearchFailure, SearchPool};
use connect5::referee::parse_board;

#[derive(clap::Args, Debug)]
pub struct PlayArgs {
    /// Board size, rows x columns (`15x15`, `9x9`, `3x3`; one number for a square).
    #[arg(long, default_value = "15x15", value_name = "LxC")]
    pub board: String,
    /// Length of the winning line (default: 5, or the short side on boards smaller than 5x5).
    #[arg(long)]
    pub k: Option<usize>,
    /// Your colour: black (X) moves first.
    #[arg(long = "color", alias = "colour", value_enum, default_value_t = Stone::Black)]
    pub colour: Stone,
    /// The engine's thinking time per move, in milliseconds.
    #[arg(long = "time", default_value_t = 1000, value_name = "MS")]
    pub time_ms: u64,
    /// Which search plays: v2 (the tournament engine) or v1 (the baseline).
    #[arg(long, value_enum, default_value_t = EngineKind::default())]
    pub engine: EngineKind,
    /// Stop the engine's search at this depth (plies), whatever time is left.
    #[arg(long)]
    pub depth: Option<u32>,
    /// Transposition-table size, in MiB.
    #[arg(long, value_name = "MB", default_value_t = 64)]
    pub hash: usize,
    #[command(flatten)]
    pub params: ParamArgs,
}

fn symbol(stone: Option<Stone>) -> char {
    match stone {
        Some(Stone::Black) => 'X',
        Some(Stone::White) => 'O',
        None => '.',
    }
}

fn digits(n: usize) -> usize {
    n.max(1).to_string().len()
}

/// The board with row numbers on the left and column numbers on top (0-based, as moves are
/// typed).
fn render(board: &Board) -> String {
    let label = digits(board.rows() - 1);
    let cell = digits(board.cols() - 1) + 1;
    let mut text = format!("{:label$}", "");
    for col in 0..board.cols() {
        text.push_str(&format!("{col:>cell$}"));
    }
    text.push('\n');
    for row in 0..board.rows() {
        text.push_str(&format!("{row:>label$}"));
        for col in 0..board.cols() {
            let mark = symbol(board.get(Move::new(row, col)));
            text.push_str(&format!("{mark:>cell$}"));
        }
        text.push('\n');
    }
    text
}

/// Reads `row col` (also `row,col`) and checks it against the board.
fn parse_move(line: &str, board: &Board) -> Result<Move, String> {
    let tokens: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
        .collect();
    let [row, col] = tokens.as_slice() else {
        return Err(format!(
            "{:?} not understood: type the row and the column, e.g. `{} {}`",
            line.trim(),
            board.rows() / 2,
            board.cols() / 2
        ));
    };
    let (Ok(row), Ok(col)) = (row.parse::<usize>(), col.parse::<usize>()) else {
        return Err(format!(
            "{:?} not understood: row and column are numbers from 0",
            line.trim()
        ));
    };
    let mv = Move::new(row, col);
    if !board.contains(mv) {
        return Err(format!(
            "{mv} is outside the board: rows 0 to {}, columns 0 to {}",
            board.rows() - 1,
            board.cols() - 1
        ));
    }
    if !board.is_empty_cell(mv) {
        return Err(format!("{mv} is already taken"));
    }
    Ok(mv)
}

fn line_name(rule: Rule) -> String {
    match rule.k {
        5 => "five in a row".to_string(),
        3 => "three in a row".to_string(),
        k => format!("{k} in a row"),
    }
}

pub fn run(args: PlayArgs) -> ExitCode {
    // Through a pipe nothing echoes what was typed: echo it, so the transcript reads as a game.
    let echo = !std::io::stdin().is_terminal();
    let result = play(
        &args,
        &mut std::io::stdin().lock(),
        &mut std::io::stdout(),
        echo,
    );
    crate::command_status("play", result)
}

/// Plays one game, reading the person's moves from `input` and writing everything to `output`
/// (with the typed lines too when `echo`).
fn play<R: BufRead, W: Write>(
    args: &PlayArgs,
    input: &mut R,
    output: &mut W,
    echo: bool,
) -> Result<(), String> {
    let (mut board, rule, config) = game_settings(args)?;
    let pool = SearchPool::with_slots(config.hash_bytes, 1);
    let (rows, cols) = (board.rows(), board.cols());
    let human = args.colour;
    let io = terminal_error;
    writeln!(
        output,
        "Connect5 on {rows}x{cols}, {} wins (exactly; a longer line does not). You are {} ({}), the engine is {} ({}).\nType `row col` (0-based) for your move, `quit` to stop.",
        line_name(rule),
        human.name(),
        symbol(Some(human)),
        human.opponent().name(),
        symbol(Some(human.opponent()))
    )
    .map_err(io)?;
    let mut stone = Stone::Black;
    loop {
        if board.is_full() {
            write!(output, "{}", render(&board)).map_err(io)?;
            writeln!(output, "Draw: the board is full.").map_err(io)?;
            return Ok(());
        }
        let mv = if stone == human {
            write!(output, "{}", render(&board)).map_err(io)?;
            match ask_move(&board, stone, input, output, echo)? {
                Some(mv) => mv,
                None => {
                    writeln!(output, "Game abandoned.").map_err(io)?;
                    return Ok(());
                }
            }
        } else {
            engine_move(&pool, &board, rule, stone, args.time_ms, &config, output)?
        };
        board
            .play(mv, stone)
            .map_err(|e| format!("{} played an impossible move {mv}: {e}", stone.name()))?;
        if board.wins_at(mv, stone, rule) {
            write!(output, "{}", render(&board)).map_err(io)?;
            let who = if stone == human { "you" } else { "the engine" };
            writeln!(
                output,
                "{} ({who}) wins with {}.",
                capitalized(stone),
                line_name(rule)
            )
            .map_err(io)?;
            return Ok(());
        }
        stone = stone.opponent();
    }
}

/// The empty board, the rule and the engine's settings the arguments ask for.
fn game_settings(args: &PlayArgs) -> Result<(Board, Rule, EngineConfig), String> {
    let (rows, cols) = parse_board(&args.board)?;
    let rule = Rule::for_board_with_k(rows, cols, args.k).map_err(|longest| {
        format!(
            "--k {} out of range: 1 to {longest} on a {rows}x{cols} board",
            args.k.unwrap_or_default()
        )
    })?;
    if !(1..=65_536).contains(&args.hash) {
        return Err(format!("--hash {} out of range: 1 to 65536 MiB", args.hash));
    }
    let config = EngineConfig {
        kind: args.engine,
        hash_bytes: args.hash << 20,
        max_depth: args.depth,
        max_nodes: None,
        // One game: the table is kept from one engine move to the next.
        memory: Some(Arc::new(GameMemory::new())),
        progress: None,
        params: args.params.search_params(),
    };
    let board = Board::new(rows, cols).map_err(|e| e.to_string())?;
    Ok((board, rule, config))
}

/// The engine's move, searched through the pool for `time_ms`, and said on `output`.
fn engine_move<W: Write>(
    pool: &SearchPool,
    board: &Board,
    rule: Rule,
    stone: Stone,
    time_ms: u64,
    config: &EngineConfig,
    output: &mut W,
) -> Result<Move, String> {
    let start = Instant::now();
    let deadline = Deadline::for_budget(start, Duration::from_millis(time_ms), 1);
    let decision =
        pool.search_here(board, rule, &deadline, config)
            .map_err(|failure| match failure {
                SearchFailure::NoMove(why) => format!("the engine has no move: {why}"),
                other => format!("the engine gave no move: {other}"),
            })?;
    writeln!(
        output,
        "Engine ({} {}) plays {} (depth {}, {} ms)",
        stone.name(),
        symbol(Some(stone)),
        decision.mv,
        decision.depth,
        start.elapsed().as_millis()
    )
    .map_err(terminal_error)?;
    Ok(decision.mv)
}

fn terminal_error(error: std::io::Error) -> String {
    format!("cannot write to the terminal: {error}")
}

fn capitalized(stone: Stone) -> &'static str {
    match stone {
        Stone::Black => "Black",
        Stone::White => "White",
    }
}

/// Asks until a legal move is typed; `None` at end of input or `quit`.
fn ask_move<R: BufRead, W: Write>(
    board: &Board,
    stone: Stone,
    input: &mut R,
    output: &mut W,
    echo: bool,
) -> Result<Option<Move>, String> {
    let io = |e: std::io::Error| format!("cannot use the terminal: {e}");
    loop {
        write!(
            output,
            "Your move ({} {}): ",
            stone.name(),
            symbol(Some(stone))
        )
        .map_err(io)?;
        output.flush().map_err(io)?;
        let mut line = String::new();
        if input.read_line(&mut line).map_err(io)? == 0 {
            writeln!(output).map_err(io)?;
            return Ok(None);
        }
        if echo {
            writeln!(output, "{}", line.trim_end()).map_err(io)?;
        }
        if matches!(line.trim(), "quit" | "q" | "exit") {
            return Ok(None);
        }
        match parse_move(&line, board) {
            Ok(mv) => return Ok(Some(mv)),
            Err(why) => writeln!(output, "{why}; try again.").map_err(io)?,
        }
    }
}
