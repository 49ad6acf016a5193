//! The brain's state between commands: the game, the clock the manager described, a `BOARD`
//! block being read. Pure: it turns command lines into lines to print or a position to search,
//! and a search's decision into the reply; `gomocup::run` does the I/O and the searching.

use std::time::Duration;

use super::command::{
    format_point, parse_command, Command, CommandError, Field, RULE_CARO, RULE_EXACT_FIVE,
    RULE_RENJU,
};
use crate::board::{Board, Move, Rule, Stone};
use crate::engine::types::mate_distance;
use crate::engine::{self, Clock, Decision, EngineConfig};

/// How the brain plays and talks, from its command line.
#[derive(Clone, Debug)]
pub struct BrainConfig {
    pub engine: EngineConfig,
    /// Search information as `MESSAGE` lines after each move.
    pub messages: bool,
    /// The time a move may take until the manager sends `INFO timeout_turn`.
    pub default_turn: Duration,
    /// Five or more wins until the manager sends `INFO rule`.
    pub overline_wins: bool,
}

/// What the brain does with a line.
#[derive(Debug)]
pub enum Step {
    /// Print these lines (possibly none) and wait for the next command.
    Say(Vec<String>),
    /// Search this position; then give the decision to [`Brain::played`].
    Think(Think),
    /// `END`: exit.
    Quit,
}

/// A position to search and the time it may take.
#[derive(Clone, Debug)]
pub struct Think {
    pub board: Board,
    pub rule: Rule,
    pub budget: Duration,
    pub engine: EngineConfig,
}

/// A `BOARD` (or `YXBOARD`) block being read.
#[derive(Debug, Default)]
struct BoardBlock {
    /// `BOARD`: the brain moves at `DONE`; `YXBOARD`: it only takes the position.
    then_move: bool,
    stones: Vec<(Move, Field)>,
    /// The first bad line; the block is refused at `DONE`.
    error: Option<String>,
}

/// `INFO time_left` at or above this means the match has no time limit.
const NO_MATCH_LIMIT_MS: i64 = 2_147_483_647;
/// The least transposition table a search gets, whatever `max_memory` says.
const MIN_HASH_BYTES: usize = 1 << 20;

pub struct Brain {
    config: BrainConfig,
    board: Option<Board>,
    overline_wins: bool,
    turn: Duration,
    /// `timeout_match`; `None` when the match has no clock.
    match_total: Option<Duration>,
    /// What is left of the match clock (from `INFO time_left`, less this brain's own thinking
    /// since). `None` when the match has no clock.
    match_left: Option<Duration>,
    /// `max_memory` in bytes; `None` for no limit.
    max_memory: Option<usize>,
    /// Yixin's `max_depth`: the deepest iteration of a search.
    max_depth: Option<u32>,
    /// `max_node`: the nodes a search may visit (Yixin's and Rapfi's key).
    max_nodes: Option<u64>,
    block: Option<BoardBlock>,
}

impl Brain {
    pub fn new(config: BrainConfig) -> Brain {
        Brain {
            turn: config.default_turn,
            overline_wins: config.overline_wins,
            config,
            board: None,
            match_total: None,
            match_left: None,
            max_memory: None,
            max_depth: None,
            max_nodes: None,
            block: None,
        }
    }

    /// Whether a `BOARD` block is being read (its lines are stones until `DONE`).
    pub fn in_board_block(&self) -> bool {
        self.block.is_some()
    }

    /// The rule of the current game.
    fn rule(&self, board: &Board) -> Rule {
        Rule {
            overline_wins: self.overline_wins,
            ..Rule::for_board(board.rows(), board.cols())
        }
    }

    /// Handles one line from the manager.
    pub fn handle(&mut self, line: &str) -> Step {
        // A stray blank line gets no answer: the manager would take it for the answer to its
        // next command.
        if line
            .trim_matches(|c: char| c.is_whitespace() || c == '\0')
            .is_empty()
        {
            return Step::Say(Vec::new());
        }
        let command = match parse_command(line, self.in_board_block()) {
            Ok(command) => command,
            Err(CommandError::Unknown(why)) => return say(format!("UNKNOWN {why}")),
            Err(CommandError::Bad(why)) => {
                if let Some(block) = &mut self.block {
                    block.error.get_or_insert(why);
                    return Step::Say(Vec::new());
                }
                return error(why);
            }
        };
        match command {
            Command::Start(size) => self.start(size, size),
            Command::RectStart { width, height } => self.start(width, height),
            Command::Restart => match &self.board {
                Some(board) => {
                    let (rows, cols) = (board.rows(), board.cols());
                    self.start(cols, rows)
                }
                None => error("RESTART before START: no board size known".to_string()),
            },
            // On an empty board the brain opens; on any other it moves in the position it has.
            Command::Begin => self.think(),
            Command::Turn(mv) => self.opponent_move(mv),
            Command::Board { then_move } => {
                if self.board.is_none() {
                    return no_game("BOARD");
                }
                self.block = Some(BoardBlock {
                    then_move,
                    ..BoardBlock::default()
                });
                Step::Say(Vec::new())
            }
            Command::Stone { at, field } => {
                if let Some(block) = &mut self.block {
                    block.stones.push((at, field));
                }
                Step::Say(Vec::new())
            }
            Command::Done => self.finish_board_block(),
            Command::TakeBack(mv) => self.take_back(mv),
            Command::Play(mv) => self.play_confirmed(mv),
            Command::Info { key, value } => self.info(&key, &value),
            Command::End => Step::Quit,
            Command::About => say(about()),
            // Nothing is being searched when a command is read: the stop came too late.
            Command::Stop => Step::Say(Vec::new()),
            Command::HashClear => self.clear_table(),
        }
    }

    /// `YXHASHCLEAR`: the table kept from move to move is dropped, so the next search starts
    /// empty, as a fresh brain's would. No reply: Yixin's protocol has none.
    fn clear_table(&mut self) -> Step {
        if let Some(memory) = &self.config.engine.memory {
            memory.clear();
        }
        Step::Say(Vec::new())
    }

    fn start(&mut self, width: usize, height: usize) -> Step {
        match Board::new(height, width) {
            Ok(board) => {
                self.board = Some(board);
                self.block = None;
                self.match_left = self.match_total;
                say("OK".to_string())
            }
            Err(why) => error(format!("cannot play a {width}x{height} board: {why}")),
        }
    }

    /// Puts a stone of the side to move on `mv` (the command `what` placed it); `Err` is the
    /// reply that refuses it, the board unchanged (boxed: a refusal is rare, a `Step` large).
    fn place(&mut self, what: &str, mv: Move) -> Result<(), Box<Step>> {
        let Some(board) = &mut self.board else {
            return Err(Box::new(no_game(what)));
        };
        let refuse = |why: String| Box::new(error(format!("{what} {}: {why}", format_point(mv))));
        check_cell(board, mv).map_err(refuse)?;
        let side = board
            .side_to_move()
            .map_err(|counts| refuse(counts.to_string()))?;
        board.play(mv, side).map_err(|why| refuse(why.to_string()))
    }

    fn opponent_move(&mut self, mv: Move) -> Step {
        match self.place("TURN", mv) {
            Ok(()) => self.think(),
            Err(refusal) => *refusal,
        }
    }

    fn play_confirmed(&mut self, mv: Move) -> Step {
        match self.place("PLAY", mv) {
            Ok(()) => say(format_point(mv)),
            Err(refusal) => *refusal,
        }
    }

    fn take_back(&mut self, mv: Move) -> Step {
        let Some(board) = &mut self.board else {
            return no_game("TAKEBACK");
        };
        if !board.contains(mv) {
            return error(format!(
                "TAKEBACK {}: outside the {}x{} board",
                format_point(mv),
                board.cols(),
                board.rows()
            ));
        }
        if board.is_empty_cell(mv) {
            return error(format!("TAKEBACK {}: no stone there", format_point(mv)));
        }
        match board.set(mv, None) {
            Ok(()) => say("OK".to_string()),
            Err(why) => error(format!("TAKEBACK {}: {why}", format_point(mv))),
        }
    }

    fn finish_board_block(&mut self) -> Step {
        let Some(block) = self.block.take() else {
            return error("DONE without BOARD".to_string());
        };
        if let Some(why) = block.error {
            return error(why);
        }
        let Some(current) = &self.board else {
            return no_game("BOARD");
        };
        let mut board = match Board::new(current.rows(), current.cols()) {
            Ok(board) => board,
            Err(why) => return error(format!("BOARD: {why}")),
        };
        let own_count = block.stones.iter().filter(|s| s.1 == Field::Own).count();
        let opponent_count = block
            .stones
            .iter()
            .filter(|s| s.1 == Field::Opponent)
            .count();
        // The brain moves next, so it has as many stones as the opponent (it is black) or one
        // fewer (it is white).
        let own = if own_count == opponent_count {
            Stone::Black
        } else if own_count + 1 == opponent_count {
            Stone::White
        } else {
            return error(format!(
                "BOARD: {own_count} own and {opponent_count} opponent stones; the brain to move \
                 has as many stones as its opponent or one fewer"
            ));
        };
        for &(at, field) in &block.stones {
            let stone = match field {
                Field::Own => own,
                Field::Opponent => own.opponent(),
                Field::Continuous => continue,
            };
            if let Err(why) = check_cell(&board, at) {
                return error(format!("BOARD {}: {why}", format_point(at)));
            }
            if board.play(at, stone).is_err() {
                return error(format!("BOARD {}: cannot be played", format_point(at)));
            }
        }
        self.board = Some(board);
        if block.then_move {
            self.think()
        } else {
            Step::Say(Vec::new())
        }
    }

    fn info(&mut self, key: &str, value: &str) -> Step {
        let number = || {
            value.parse::<i64>().map_err(|_| {
                format!(
                    "INFO {key}: {:?} is not a whole number",
                    value.chars().take(40).collect::<String>()
                )
            })
        };
        let millis = |ms: i64| Duration::from_millis(ms.max(0) as u64);
        match key {
            "timeout_turn" => match number() {
                Ok(ms) => self.turn = millis(ms),
                Err(why) => return error(why),
            },
            "timeout_match" => match number() {
                Ok(ms) if ms > 0 => {
                    self.match_total = Some(millis(ms));
                    if self.match_left.is_none() {
                        self.match_left = self.match_total;
                    }
                }
                Ok(_) => {
                    self.match_total = None;
                    self.match_left = None;
                }
                Err(why) => return error(why),
            },
            "time_left" => match number() {
                // A manager without a match clock sends 2147483647 (or more).
                Ok(ms) if ms >= NO_MATCH_LIMIT_MS => self.match_left = None,
                Ok(ms) => self.match_left = Some(millis(ms)),
                Err(why) => return error(why),
            },
            "max_memory" => match number() {
                Ok(bytes) if bytes > 0 => self.max_memory = Some(bytes as usize),
                Ok(_) => self.max_memory = None,
                Err(why) => return error(why),
            },
            "rule" => match number() {
                Ok(bits) if bits < 0 => return error(format!("INFO rule {bits}: not a rule")),
                Ok(bits) => {
                    let bits = bits as u32;
                    if bits & RULE_RENJU != 0 {
                        return error(format!(
                            "INFO rule {bits}: renju is not supported (exact five or freestyle)"
                        ));
                    }
                    if bits & RULE_CARO != 0 {
                        return error(format!(
                            "INFO rule {bits}: caro is not supported (exact five or freestyle)"
                        ));
                    }
                    self.overline_wins = bits & RULE_EXACT_FIVE == 0;
                }
                Err(why) => return error(why),
            },
            "max_depth" => match number() {
                Ok(depth) if depth > 0 => {
                    self.max_depth = Some(depth.min(i64::from(u32::MAX)) as u32)
                }
                Ok(_) => self.max_depth = None,
                Err(why) => return error(why),
            },
            "max_node" => match number() {
                Ok(nodes) if nodes > 0 => self.max_nodes = Some(nodes as u64),
                Ok(_) => self.max_nodes = None,
                Err(why) => return error(why),
            },
            "game_type" => {
                if let Err(why) = number() {
                    return error(why);
                }
            }
            // `evaluate`, `folder`, Yixin's `thread_num`… and any key of a later protocol: the
            // protocol says a brain ignores the keys it does not use.
            _ => {}
        }
        Step::Say(Vec::new())
    }

    /// The position on the board, to be searched now.
    fn think(&mut self) -> Step {
        let Some(board) = &self.board else {
            return no_game("a move");
        };
        let rule = self.rule(board);
        if let Err(why) = engine::side_to_move(board, rule) {
            return error(format!("no move to play: {why}"));
        }
        let clock = Clock {
            turn: Some(self.turn),
            match_left: self.match_left,
            increment: Duration::ZERO,
        };
        let mut engine = self.config.engine.clone();
        engine.max_depth = self.max_depth.or(engine.max_depth);
        engine.max_nodes = self.max_nodes.or(engine.max_nodes);
        if let Some(bytes) = self.max_memory {
            // Half of the allowance: the rest is the board, the search's lists and the program.
            engine.hash_bytes = engine.hash_bytes.min(bytes / 2).max(MIN_HASH_BYTES);
        }
        Step::Think(Think {
            board: board.clone(),
            rule,
            budget: clock.budget(),
            engine,
        })
    }

    /// Plays the brain's decision on its board; returns the lines to print (the search's
    /// `MESSAGE` when enabled, then the move). `elapsed` is the time the move took.
    pub fn played(&mut self, decision: &Decision, elapsed: Duration) -> Vec<String> {
        if let Some(left) = &mut self.match_left {
            *left = left.saturating_sub(elapsed);
        }
        let mut lines = Vec::new();
        let Some(board) = &mut self.board else {
            return vec!["ERROR no game".to_string()];
        };
        let own = match board.side_to_move() {
            Ok(side) => side,
            Err(counts) => return vec![format!("ERROR {counts}")],
        };
        if board.play(decision.mv, own).is_err() {
            return vec![format!(
                "ERROR the search chose {}, which cannot be played",
                format_point(decision.mv)
            )];
        }
        if self.config.messages {
            lines.push(format!("MESSAGE {}", search_summary(decision, elapsed)));
        }
        lines.push(format_point(decision.mv));
        lines
    }
}

fn say(line: String) -> Step {
    Step::Say(vec![line])
}

fn error(why: String) -> Step {
    say(format!("ERROR {why}"))
}

fn no_game(what: &str) -> Step {
    error(format!("{what} before START: no game"))
}

fn check_cell(board: &Board, mv: Move) -> Result<(), String> {
    if !board.contains(mv) {
        return Err(format!(
            "outside the {}x{} board (x < {}, y < {})",
            board.cols(),
            board.rows(),
            board.cols(),
            board.rows()
        ));
    }
    if !board.is_empty_cell(mv) {
        return Err("the cell is occupied".to_string());
    }
    Ok(())
}

/// The `ABOUT` line.
pub fn about() -> String {
    format!(
        "name=\"connect5\", version=\"{}\", author=\"the connect5 developers\", country=\"France\"",
        env!("CARGO_PKG_VERSION")
    )
}

/// A search's figures as one line: depth, score or distance to a proven result, nodes, speed,
/// time and the expected line of play.
pub fn search_summary(decision: &Decision, elapsed: Duration) -> String {
    let score = match mate_distance(decision.score) {
        Some(plies) if plies > 0 => format!("win in {plies} plies"),
        Some(plies) => format!("loss in {} plies", -plies),
        None => format!("{:+}", decision.score),
    };
    let seconds = elapsed.as_secs_f64();
    let speed = if seconds > 0.0 {
        (decision.nodes as f64 / seconds) as u64
    } else {
        0
    };
    let line: Vec<String> = decision.pv.iter().map(|&mv| format_point(mv)).collect();
    format!(
        "depth {} score {} nodes {} speed {} n/s time {} ms pv {}",
        decision.depth,
        score,
        decision.nodes,
        speed,
        elapsed.as_millis(),
        line.join(" ")
    )
}
