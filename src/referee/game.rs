//! One game between two players: ask, time, check, play, until someone wins or the game is
//! adjudicated.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::player::{Fault, MoveTime, Player, TimeRules};
use crate::board::{Board, Move, Rule, Stone};
use crate::engine::Clock;

/// The time rules of a match.
#[derive(Clone, Copy, Debug)]
pub struct TimeControl {
    /// Thinking time of every move (`--time`, the turn part of `--tc`); `None` when only the
    /// match clock counts.
    pub per_move: Option<Duration>,
    /// Each player's clock for a whole game (`--tc 60+0.5`), when there is one.
    pub match_time: Option<Duration>,
    /// Added to a player's match clock after each of its moves.
    pub increment: Duration,
    /// Any overrun loses, for Connect5-protocol players too (instead of the course referee's
    /// "50% late, paid back next move").
    pub strict: bool,
    /// Taken off every measured reply before judging it (the course referee takes 50 ms; the
    /// Gomocup managers call it the tolerance), for the transport and the scheduler rather than
    /// the player.
    pub grace: Duration,
}

/// One player's clock during a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlayerClock {
    /// Overrun of the last move, taken off the next one's budget (course rules).
    carry: Duration,
    /// What is left of the match clock.
    left: Option<Duration>,
}

/// What the time rules say about one reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeVerdict {
    /// In time; `carry` is the overrun taken off the next move's budget (zero when on time).
    InTime { carry: Duration },
    /// Too late: the game is lost.
    Lost { allowed: Duration },
}

/// The time of one move: what the player is told, and the longest reply accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveAllowance {
    pub time: MoveTime,
    pub allowed: Duration,
    /// Whether the course referee's tolerance applies (a late reply is paid back, not lost).
    course: bool,
}

impl TimeControl {
    /// A player's clock at the start of a game.
    pub fn new_clock(&self) -> PlayerClock {
        PlayerClock {
            carry: Duration::ZERO,
            left: self.match_time,
        }
    }

    /// The time of a player's next move. `own` is the player's own time per move (`time=`).
    /// Connect5-protocol players under a per-move time follow the course referee (a budget less
    /// the overrun being paid back; half of it late tolerated unless strict); everything else
    /// follows the Gomocup managers (a move over its turn time or its match clock loses).
    pub fn allowance(
        &self,
        rules: TimeRules,
        own: Option<Duration>,
        clock: &PlayerClock,
    ) -> MoveAllowance {
        let turn = own.or(self.per_move);
        let player_clock = Clock {
            turn,
            match_left: clock.left,
            increment: self.increment,
        };
        let course = rules == TimeRules::Course && clock.left.is_none();
        let time = MoveTime {
            budget: if course {
                player_clock.budget().saturating_sub(clock.carry)
            } else {
                player_clock.budget()
            },
            clock: player_clock,
            match_total: self.match_time,
        };
        let allowed = if course {
            if self.strict {
                time.budget + self.grace
            } else {
                time.budget + time.budget / 2 + self.grace
            }
        } else {
            let limits = [turn, clock.left];
            limits
                .iter()
                .flatten()
                .min()
                .map_or(time.budget, |&limit| limit)
                + self.grace
        };
        MoveAllowance {
            time,
            allowed,
            course,
        }
    }

    /// Judges a reply that took `elapsed`.
    pub fn judge(&self, allowance: &MoveAllowance, elapsed: Duration) -> TimeVerdict {
        if elapsed > allowance.allowed {
            return TimeVerdict::Lost {
                allowed: allowance.allowed,
            };
        }
        let carry = if allowance.course {
            elapsed
                .saturating_sub(self.grace)
                .saturating_sub(allowance.time.budget)
        } else {
            Duration::ZERO
        };
        TimeVerdict::InTime { carry }
    }

    /// The clock after a move in time that took `elapsed`.
    pub fn after_move(&self, clock: &mut PlayerClock, elapsed: Duration, carry: Duration) {
        clock.carry = carry;
        if let Some(left) = &mut clock.left {
            *left = left.saturating_sub(elapsed) + self.increment;
        }
    }
}

/// How a game ended, colour-wise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    BlackWins,
    WhiteWins,
    Draw,
}

impl Outcome {
    pub fn win_for(stone: Stone) -> Outcome {
        match stone {
            Stone::Black => Outcome::BlackWins,
            Stone::White => Outcome::WhiteWins,
        }
    }

    /// The result as match runners print it, black (who moves first) on the left.
    pub fn notation(self) -> &'static str {
        match self {
            Outcome::BlackWins => "1-0",
            Outcome::WhiteWins => "0-1",
            Outcome::Draw => "1/2-1/2",
        }
    }
}

/// Why the game ended; every loss that is not a five names the fault.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Termination {
    /// A line of exactly K (K or more under the freestyle rule).
    Line,
    BoardFull,
    MoveLimit,
    IllegalMove,
    Unparsable,
    /// The player answered an error instead of a move.
    Refused,
    Crash,
    Time,
    /// The player could not be started or reached.
    Unavailable,
}

impl Termination {
    /// The name the JSON summary gives it (`line`, `board-full`, `time` …).
    pub fn name(&self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| format!("{self:?}"))
    }
}

/// One move as played, with the time its player took.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayedMove {
    pub row: usize,
    pub col: usize,
    pub ms: u64,
    /// The thinking time the player was given for this move (absent in summaries written
    /// before it was recorded).
    #[serde(default)]
    pub budget_ms: u64,
}

/// Everything a game leaves behind.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GameRecord {
    pub black: String,
    pub white: String,
    pub rows: usize,
    pub cols: usize,
    pub k: usize,
    /// Stones on the board before the first move, black first, alternating.
    pub opening: Vec<(usize, usize)>,
    pub moves: Vec<PlayedMove>,
    pub outcome: Outcome,
    pub termination: Termination,
    /// One sentence, as shown in braces on the "Finished game" line.
    pub reason: String,
}

/// Game settings shared by every game of a match.
#[derive(Clone, Copy, Debug)]
pub struct GameSettings {
    pub rows: usize,
    pub cols: usize,
    pub rule: Rule,
    pub time: TimeControl,
    /// Moves (after the opening) after which the game is drawn.
    pub max_moves: Option<usize>,
}

fn capitalized(stone: Stone) -> &'static str {
    match stone {
        Stone::Black => "Black",
        Stone::White => "White",
    }
}

/// Plays one game from `opening` (legal stones, black first, alternating) between `black` and
/// `white`. Never fails: whatever a player does wrong is a verdict.
pub fn play_game(
    black: &mut dyn Player,
    white: &mut dyn Player,
    opening: &[Move],
    settings: &GameSettings,
) -> GameRecord {
    let mut game = GameInProgress::new(black.name(), white.name(), opening, settings);
    let over = match prepare_both(black, white) {
        Ok(()) => game.play_out(black, white),
        Err(over) => over,
    };
    game.into_record(opening, over)
}

/// How a game ended: the record's last three fields.
#[derive(Debug)]
struct GameOver {
    outcome: Outcome,
    termination: Termination,
    reason: String,
}

impl GameOver {
    /// `colour` lost; `why` completes "Black wins: white …".
    fn loss(colour: Stone, termination: Termination, why: &str) -> GameOver {
        let winner = colour.opponent();
        GameOver {
            outcome: Outcome::win_for(winner),
            termination,
            reason: format!("{} wins: {} {why}", capitalized(winner), colour.name()),
        }
    }

    fn draw(termination: Termination, reason: String) -> GameOver {
        GameOver {
            outcome: Outcome::Draw,
            termination,
            reason,
        }
    }
}

/// A player that cannot start loses before the first move, whoever moves first.
fn prepare_both(black: &mut dyn Player, white: &mut dyn Player) -> Result<(), GameOver> {
    let unavailable =
        |colour, fault: Fault| GameOver::loss(colour, Termination::Unavailable, &fault.to_string());
    black
        .prepare()
        .map_err(|fault| unavailable(Stone::Black, fault))?;
    white
        .prepare()
        .map_err(|fault| unavailable(Stone::White, fault))
}

/// The state of a game between moves.
struct GameInProgress<'a> {
    settings: &'a GameSettings,
    names: [String; 2],
    board: Board,
    to_move: Stone,
    clocks: [PlayerClock; 2],
    moves: Vec<PlayedMove>,
}

impl<'a> GameInProgress<'a> {
    fn new(black: &str, white: &str, opening: &[Move], settings: &'a GameSettings) -> Self {
        let mut board = match Board::new(settings.rows, settings.cols) {
            Ok(board) => board,
            Err(error) => unreachable_board(error),
        };
        let mut to_move = Stone::Black;
        for &mv in opening {
            // Openings are checked when loaded; a stone that does not fit is skipped, not fatal.
            if board.play(mv, to_move).is_ok() {
                to_move = to_move.opponent();
            }
        }
        GameInProgress {
            settings,
            names: [black.to_string(), white.to_string()],
            board,
            to_move,
            clocks: [settings.time.new_clock(); 2],
            moves: Vec::new(),
        }
    }

    /// Plays moves until the game is over.
    fn play_out(&mut self, black: &mut dyn Player, white: &mut dyn Player) -> GameOver {
        loop {
            if let Some(draw) = self.adjudicated_draw() {
                return draw;
            }
            let player: &mut dyn Player = match self.to_move {
                Stone::Black => &mut *black,
                Stone::White => &mut *white,
            };
            if let Err(over) = self.play_turn(player) {
                return over;
            }
        }
    }

    /// A draw by full board or by the move limit, before the next move is asked for.
    fn adjudicated_draw(&self) -> Option<GameOver> {
        let played = self.moves.len();
        if self.board.is_full() {
            Some(GameOver::draw(
                Termination::BoardFull,
                "Draw by full board".to_string(),
            ))
        } else if self.settings.max_moves.is_some_and(|max| played >= max) {
            Some(GameOver::draw(
                Termination::MoveLimit,
                format!("Draw by move limit ({played} moves)"),
            ))
        } else {
            None
        }
    }

    /// Asks the player to move for one move, judges it, and plays it.
    fn play_turn(&mut self, player: &mut dyn Player) -> Result<(), GameOver> {
        let colour = self.to_move;
        let allowance = self.settings.time.allowance(
            player.time_rules(),
            player.time_per_move(),
            &self.clocks[colour.index()],
        );
        // A little past the allowed time, so that an answer arriving right at the limit is judged
        // on its own timestamp rather than lost to the wait.
        let limit = allowance.allowed + Duration::from_millis(20);
        let answer = player
            .ask(&self.board, self.settings.rule, &allowance.time, limit)
            .map_err(|fault| loss_by_fault(colour, fault, &allowance))?;
        self.charge_time(&allowance, answer.elapsed)?;
        self.place(answer.mv)?;
        self.moves.push(PlayedMove {
            row: answer.mv.row,
            col: answer.mv.col,
            ms: answer.elapsed.as_millis() as u64,
            budget_ms: allowance.time.budget.as_millis() as u64,
        });
        if self.board.wins_at(answer.mv, colour, self.settings.rule) {
            return Err(self.win_by_line());
        }
        self.to_move = colour.opponent();
        Ok(())
    }

    /// Judges a reply's time, and runs the mover's clock down when it was in time.
    fn charge_time(
        &mut self,
        allowance: &MoveAllowance,
        elapsed: Duration,
    ) -> Result<(), GameOver> {
        let time = &self.settings.time;
        match time.judge(allowance, elapsed) {
            TimeVerdict::Lost { allowed } => Err(GameOver::loss(
                self.to_move,
                Termination::Time,
                &format!(
                    "lost on time: answered in {} ms, {} ms allowed (budget {} ms)",
                    elapsed.as_millis(),
                    allowed.as_millis(),
                    allowance.time.budget.as_millis()
                ),
            )),
            TimeVerdict::InTime { carry } => {
                time.after_move(&mut self.clocks[self.to_move.index()], elapsed, carry);
                Ok(())
            }
        }
    }

    /// Plays the mover's answer, which loses when the move is illegal.
    fn place(&mut self, mv: Move) -> Result<(), GameOver> {
        let illegal = if !self.board.contains(mv) {
            format!(
                "{mv} is outside the {}x{} board",
                self.board.rows(),
                self.board.cols()
            )
        } else if !self.board.is_empty_cell(mv) {
            format!("{mv} is occupied")
        } else if self.board.play(mv, self.to_move).is_err() {
            mv.to_string()
        } else {
            return Ok(());
        };
        Err(GameOver::loss(
            self.to_move,
            Termination::IllegalMove,
            &format!("played an illegal move: {illegal}"),
        ))
    }

    fn win_by_line(&self) -> GameOver {
        let k = self.settings.rule.k;
        let line = if k == 5 {
            "five".to_string()
        } else {
            format!("{k} in a row")
        };
        GameOver {
            outcome: Outcome::win_for(self.to_move),
            termination: Termination::Line,
            reason: format!("{} wins by {line}", capitalized(self.to_move)),
        }
    }

    fn into_record(self, opening: &[Move], over: GameOver) -> GameRecord {
        let [black, white] = self.names;
        GameRecord {
            black,
            white,
            rows: self.settings.rows,
            cols: self.settings.cols,
            k: self.settings.rule.k,
            opening: opening.iter().map(|m| (m.row, m.col)).collect(),
            moves: self.moves,
            outcome: over.outcome,
            termination: over.termination,
            reason: over.reason,
        }
    }
}

/// The verdict on a player that did not answer with a move.
fn loss_by_fault(colour: Stone, fault: Fault, allowance: &MoveAllowance) -> GameOver {
    let termination = match &fault {
        Fault::Unparsable { .. } => Termination::Unparsable,
        Fault::Refused(_) => Termination::Refused,
        Fault::Crashed(_) => Termination::Crash,
        Fault::NoAnswer { .. } => Termination::Time,
        Fault::Unavailable(_) => Termination::Unavailable,
    };
    let why = match fault {
        Fault::NoAnswer { .. } => format!(
            "lost on time: no answer within {} ms (budget {} ms)",
            allowance.allowed.as_millis(),
            allowance.time.budget.as_millis()
        ),
        Fault::Unparsable { .. } => format!("sent an {fault}"),
        other => other.to_string(),
    };
    GameOver::loss(colour, termination, &why)
}

/// The board size is validated when the match is set up.
fn unreachable_board(error: crate::board::BoardError) -> ! {
    panic!("board size validated before the match: {error}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::referee::player::Answer;
    use std::collections::VecDeque;

    /// Plays a list of moves (then the first empty cell), each "taking" `elapsed`, and records
    /// the budgets it was given.
    struct Scripted {
        moves: VecDeque<Move>,
        elapsed: Duration,
        budgets: Vec<Duration>,
    }

    fn scripted(moves: &[(usize, usize)], elapsed_ms: u64) -> Scripted {
        Scripted {
            moves: moves.iter().map(|&(r, c)| Move::new(r, c)).collect(),
            elapsed: Duration::from_millis(elapsed_ms),
            budgets: Vec::new(),
        }
    }

    impl Player for Scripted {
        fn name(&self) -> &str {
            "scripted"
        }
        fn time_rules(&self) -> TimeRules {
            TimeRules::Course
        }
        fn prepare(&mut self) -> Result<(), Fault> {
            Ok(())
        }
        fn ask(
            &mut self,
            board: &Board,
            _rule: Rule,
            time: &MoveTime,
            _limit: Duration,
        ) -> Result<Answer, Fault> {
            self.budgets.push(time.budget);
            let mv = match self.moves.pop_front() {
                Some(mv) => mv,
                None => board.empty_cells().next().expect("a cell to play"),
            };
            Ok(Answer {
                mv,
                elapsed: self.elapsed,
            })
        }
        fn close(&mut self) {}
    }

    fn settings(strict: bool) -> GameSettings {
        GameSettings {
            rows: 9,
            cols: 9,
            rule: Rule::exact(5),
            time: TimeControl {
                per_move: Some(Duration::from_millis(100)),
                match_time: None,
                increment: Duration::ZERO,
                strict,
                grace: Duration::ZERO,
            },
            max_moves: None,
        }
    }

    #[test]
    fn a_six_is_no_win_and_the_game_goes_on_to_a_five() {
        let mut black = scripted(&[(0, 0), (0, 1), (0, 2), (0, 4), (0, 5), (0, 3)], 0);
        let mut white = scripted(&[(4, 0), (4, 1), (4, 2), (6, 6), (4, 3), (4, 4)], 0);
        let record = play_game(&mut black, &mut white, &[], &settings(false));
        assert_eq!(record.outcome, Outcome::WhiteWins);
        assert_eq!(record.termination, Termination::Line);
        assert_eq!(record.moves.len(), 12);
        assert_eq!(record.reason, "White wins by five");
    }

    #[test]
    fn a_player_always_late_pays_back_until_it_loses() {
        // 120 ms every move on a 100 ms budget: budgets 100, 80, 60; lost on the third.
        let mut late = scripted(&[], 120);
        let mut prompt = scripted(&[], 0);
        let record = play_game(&mut late, &mut prompt, &[], &settings(false));
        assert_eq!(record.termination, Termination::Time);
        assert_eq!(record.outcome, Outcome::WhiteWins);
        let ms: Vec<u128> = late.budgets.iter().map(Duration::as_millis).collect();
        assert_eq!(ms, vec![100, 80, 60]);
        assert!(record.reason.contains("budget 60 ms"), "{}", record.reason);

        let mut late = scripted(&[], 120);
        let mut prompt = scripted(&[], 0);
        let record = play_game(&mut late, &mut prompt, &[], &settings(true));
        assert_eq!(record.termination, Termination::Time);
        assert_eq!(late.budgets.len(), 1);
    }

    #[test]
    fn illegal_moves_and_the_move_limit_are_adjudicated() {
        let mut black = scripted(&[(4, 4)], 0);
        let mut white = scripted(&[(4, 4)], 0);
        let record = play_game(&mut black, &mut white, &[], &settings(false));
        assert_eq!(record.termination, Termination::IllegalMove);
        assert_eq!(record.outcome, Outcome::BlackWins);
        assert!(record.reason.contains("4 4 is occupied"));

        let mut limited = settings(false);
        limited.max_moves = Some(3);
        let opening = [Move::new(4, 4), Move::new(4, 5)];
        let mut black = scripted(&[], 0);
        let mut white = scripted(&[], 0);
        let record = play_game(&mut black, &mut white, &opening, &limited);
        assert_eq!(record.termination, Termination::MoveLimit);
        assert_eq!(record.outcome, Outcome::Draw);
        assert_eq!(record.moves.len(), 3);
        assert_eq!(record.opening, vec![(4, 4), (4, 5)]);
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn per_move(budget: u64, strict: bool, grace: u64) -> TimeControl {
        TimeControl {
            per_move: Some(ms(budget)),
            match_time: None,
            increment: Duration::ZERO,
            strict,
            grace: ms(grace),
        }
    }

    /// Judges a reply of `elapsed` ms and moves the clock on; returns the verdict.
    fn reply(
        tc: &TimeControl,
        rules: TimeRules,
        clock: &mut PlayerClock,
        elapsed: u64,
    ) -> (MoveAllowance, TimeVerdict) {
        let allowance = tc.allowance(rules, None, clock);
        let verdict = tc.judge(&allowance, ms(elapsed));
        if let TimeVerdict::InTime { carry } = verdict {
            tc.after_move(clock, ms(elapsed), carry);
        }
        (allowance, verdict)
    }

    #[test]
    fn tolerant_rules_carry_the_overrun_and_compound() {
        let tc = per_move(100, false, 0);
        let mut clock = tc.new_clock();
        let (_, verdict) = reply(&tc, TimeRules::Course, &mut clock, 100);
        assert_eq!(verdict, TimeVerdict::InTime { carry: ms(0) });
        // Always 120 ms: 100 (20 over, tolerated) → 80 (40 over, tolerated) → 60 (60 over: lost).
        let (first, verdict) = reply(&tc, TimeRules::Course, &mut clock, 120);
        assert_eq!(first.time.budget, ms(100));
        assert_eq!(verdict, TimeVerdict::InTime { carry: ms(20) });
        let (second, verdict) = reply(&tc, TimeRules::Course, &mut clock, 120);
        assert_eq!(second.time.budget, ms(80));
        assert_eq!(verdict, TimeVerdict::InTime { carry: ms(40) });
        let (third, verdict) = reply(&tc, TimeRules::Course, &mut clock, 120);
        assert_eq!(third.time.budget, ms(60));
        assert!(matches!(verdict, TimeVerdict::Lost { .. }));
        let fresh = tc.new_clock();
        let allowance = tc.allowance(TimeRules::Course, Some(ms(400)), &fresh);
        assert_eq!(allowance.time.budget, ms(400));
        assert!(matches!(
            tc.judge(&tc.allowance(TimeRules::Course, None, &fresh), ms(151)),
            TimeVerdict::Lost { .. }
        ));
    }

    #[test]
    fn strict_rules_lose_any_overrun_beyond_the_grace() {
        let tc = per_move(100, true, 50);
        let allowance = tc.allowance(TimeRules::Course, None, &tc.new_clock());
        assert_eq!(
            tc.judge(&allowance, ms(150)),
            TimeVerdict::InTime { carry: ms(0) }
        );
        assert!(matches!(
            tc.judge(&allowance, ms(151)),
            TimeVerdict::Lost { .. }
        ));
    }

    #[test]
    fn gomocup_rules_lose_any_overrun_even_when_the_match_is_tolerant() {
        let tc = per_move(300, false, 20);
        let mut clock = tc.new_clock();
        let (allowance, verdict) = reply(&tc, TimeRules::Gomocup, &mut clock, 320);
        assert_eq!(allowance.time.budget, ms(300));
        assert_eq!(allowance.time.clock.turn, Some(ms(300)));
        assert_eq!(verdict, TimeVerdict::InTime { carry: ms(0) });
        let (_, verdict) = reply(&tc, TimeRules::Gomocup, &mut clock, 321);
        assert!(matches!(verdict, TimeVerdict::Lost { .. }));
    }

    #[test]
    fn a_match_clock_runs_down_gains_its_increment_and_loses_when_out() {
        let tc = TimeControl {
            per_move: None,
            match_time: Some(ms(1_000)),
            increment: ms(100),
            strict: false,
            grace: ms(0),
        };
        let mut clock = tc.new_clock();
        let (allowance, _) = reply(&tc, TimeRules::Gomocup, &mut clock, 400);
        assert_eq!(allowance.time.clock.match_left, Some(ms(1_000)));
        assert_eq!(allowance.time.match_total, Some(ms(1_000)));
        // A share of the clock, not all of it: 1000/20 + 75% of the increment.
        assert_eq!(allowance.time.budget, ms(125));
        assert_eq!(allowance.allowed, ms(1_000));
        assert_eq!(clock.left, Some(ms(700)));
        // Connect5 players under a match clock are judged by the clock too, without a carry.
        let (allowance, verdict) = reply(&tc, TimeRules::Course, &mut clock, 650);
        assert_eq!(allowance.allowed, ms(700));
        assert_eq!(verdict, TimeVerdict::InTime { carry: ms(0) });
        assert_eq!(clock.left, Some(ms(150)));
        let (_, verdict) = reply(&tc, TimeRules::Course, &mut clock, 151);
        assert!(matches!(verdict, TimeVerdict::Lost { .. }));
    }
}
