//! Tactical suite: positions with proved answers, on boards from 8×8 to 32×32 (rectangular ones
//! included). Every claim about a position (a win in one, a VCF of n fours, the absence of one
//! after a defence, a double three that no reply survives) is proved here by a small brute force over `connect5::board` that shares no
//! code with the engine; the engine's chosen move is then checked against that proof.
//!
//! The VCF and defence positions were found by sampling random stone clusters and keeping those
//! whose brute-force proof has the wanted length; the proof is re-run here, so a position that
//! stopped meaning what its test says would fail the precondition asserts, not pass silently.

use connect5::board::{Board, Move, Rule, Stone, DIRECTIONS};
use connect5::engine::{think, Deadline, Decision, EngineConfig, EngineKind};

pub mod proof {
    use super::*;

    /// Empty cells where `stone` makes a winning line at once.
    pub fn winning_cells(board: &Board, stone: Stone, rule: Rule) -> Vec<Move> {
        board
            .empty_cells()
            .filter(|&m| board.wins_at(m, stone, rule))
            .collect()
    }

    /// Empty cells on the four lines through `mv`, at most `reach` steps away.
    fn line_cells(board: &Board, mv: Move, reach: usize) -> Vec<Move> {
        let mut cells = Vec::new();
        for dir in DIRECTIONS {
            for sign in [1isize, -1] {
                for i in 1..=reach as isize {
                    if let Some(c) = board.step(mv, (dir.0 * sign, dir.1 * sign), i) {
                        if board.is_empty_cell(c) {
                            cells.push(c);
                        }
                    }
                }
            }
        }
        cells
    }

    /// Winning cells of `stone` created by its stone on `mv` (any new winning line must pass
    /// through `mv`: a stone elsewhere can only turn a five into an overline, never the reverse).
    pub fn new_winning_cells(board: &Board, mv: Move, stone: Stone, rule: Rule) -> Vec<Move> {
        let mut cells: Vec<Move> = line_cells(board, mv, rule.k)
            .into_iter()
            .filter(|&c| board.wins_at(c, stone, rule))
            .collect();
        cells.sort();
        cells.dedup();
        cells
    }

    /// Whether playing `mv` could make a four for `stone`: some line through it holds at least
    /// k-2 other stones of `stone` within reach (a cheap filter; the proof checks the real thing).
    fn could_make_four(board: &Board, mv: Move, stone: Stone, rule: Rule) -> bool {
        DIRECTIONS.iter().any(|&dir| {
            let mut own = 0;
            for sign in [1isize, -1] {
                for i in 1..rule.k as isize {
                    if let Some(c) = board.step(mv, (dir.0 * sign, dir.1 * sign), i) {
                        if board.get(c) == Some(stone) {
                            own += 1;
                        }
                    }
                }
            }
            own + 2 >= rule.k
        })
    }

    /// Whether `att`, to move, wins by continuous fours: at most `fours` moves that each threaten
    /// an immediate win, every defender reply forced, then the winning line. Exhaustive.
    pub fn has_vcf(board: &mut Board, att: Stone, rule: Rule, fours: u32) -> bool {
        if !winning_cells(board, att, rule).is_empty() {
            return true;
        }
        let def = att.opponent();
        let def_wins = winning_cells(board, def, rule);
        if def_wins.len() >= 2 || fours == 0 {
            return false;
        }
        let candidates: Vec<Move> = if def_wins.len() == 1 {
            def_wins
        } else {
            board
                .empty_cells()
                .filter(|&m| could_make_four(board, m, att, rule))
                .collect()
        };
        candidates
            .into_iter()
            .any(|m| wins_by_four(board, m, att, rule, fours))
    }

    /// Whether `att` playing `mv` (with the defender left without a win in one) is the first
    /// four of a VCF of at most `fours` fours, or wins at once.
    pub fn wins_by_four(board: &mut Board, mv: Move, att: Stone, rule: Rule, fours: u32) -> bool {
        if board.wins_at(mv, att, rule) {
            return true;
        }
        if fours == 0 {
            return false;
        }
        let def = att.opponent();
        board.set(mv, Some(att)).expect("cell on the board");
        let result = if !winning_cells(board, def, rule).is_empty() {
            false
        } else {
            let completions = new_winning_cells(board, mv, att, rule);
            match completions.len() {
                0 => false,
                1 => {
                    board.set(completions[0], Some(def)).expect("cell");
                    let r = has_vcf(board, att, rule, fours - 1);
                    board.set(completions[0], None).expect("cell");
                    r
                }
                _ => true,
            }
        };
        board.set(mv, None).expect("cell on the board");
        result
    }

    /// Whether `att` playing the quiet move `mv` wins whatever the defender answers: after every
    /// reply on any empty cell, `att` has a VCF of at most `fours` fours. Exhaustive.
    pub fn wins_against_every_reply(
        board: &mut Board,
        mv: Move,
        att: Stone,
        rule: Rule,
        fours: u32,
    ) -> bool {
        let def = att.opponent();
        board.set(mv, Some(att)).expect("cell on the board");
        let replies: Vec<Move> = board.empty_cells().collect();
        let result = replies.into_iter().all(|reply| {
            if board.wins_at(reply, def, rule) {
                return false;
            }
            board.set(reply, Some(def)).expect("cell on the board");
            let wins = has_vcf(board, att, rule, fours);
            board.set(reply, None).expect("cell on the board");
            wins
        });
        board.set(mv, None).expect("cell on the board");
        result
    }

    /// Fewest fours of a VCF for `att` (0 = wins at once), up to `max`.
    pub fn vcf_length(board: &mut Board, att: Stone, rule: Rule, max: u32) -> Option<u32> {
        (0..=max).find(|&n| has_vcf(board, att, rule, n))
    }
}

use proof::*;

fn board(rows: &[&str]) -> Board {
    Board::from_rows(rows).expect("valid test board")
}

/// The engine's move for the side to move, at a fixed depth (deterministic, no clock).
fn engine_move(board: &Board, rule: Rule, depth: u32) -> Decision {
    let config = EngineConfig {
        kind: EngineKind::V2,
        hash_bytes: 8 << 20,
        max_depth: Some(depth),
        ..EngineConfig::default()
    };
    think(board, rule, &Deadline::unlimited(), &config).expect("position has a move")
}

fn side(board: &Board) -> Stone {
    board.side_to_move().expect("legal counts")
}

#[test]
fn wins_in_one_and_ignores_the_overline_gap() {
    // Black's row-0 gap would make six (no win); the column-7 four is real.
    let b = board(&[
        "NNNN.N..", "........", ".B.....N", "...B...N", ".B.....N", "...B...N", "B.......",
        "BBB....B",
    ]);
    let rule = Rule::exact(5);
    assert!(!b.wins_at(Move::new(0, 4), Stone::Black, rule));
    assert_eq!(winning_cells(&b, Stone::Black, rule).len(), 2);
    let d = engine_move(&b, rule, 4);
    assert!(b.wins_at(d.mv, Stone::Black, rule), "played {}", d.mv);
    // Under the freestyle rule the gap wins too; the engine must still play a win.
    let free = Rule {
        k: 5,
        overline_wins: true,
    };
    assert!(b.wins_at(Move::new(0, 4), Stone::Black, free));
    let d = engine_move(&b, free, 4);
    assert!(b.wins_at(d.mv, Stone::Black, free), "played {}", d.mv);
}

#[test]
fn blocks_a_real_four_and_not_a_false_one() {
    // Black's own "four" in row 1 only makes six; white's diagonal four must be blocked.
    let b = board(&[
        "............",
        "BNNNN.N.....",
        "..N.........",
        "...B........",
        "....B.......",
        ".....B......",
        "......B.....",
        "............",
        "............",
        "B....N.....B",
    ]);
    let rule = Rule::exact(5);
    assert_eq!(side(&b), Stone::Black);
    assert!(winning_cells(&b, Stone::Black, rule).is_empty());
    assert_eq!(winning_cells(&b, Stone::White, rule), vec![Move::new(7, 7)]);
    let d = engine_move(&b, rule, 4);
    let mut after = b.clone();
    after.play(d.mv, Stone::Black).unwrap();
    assert!(
        winning_cells(&after, Stone::White, rule).is_empty(),
        "played {}",
        d.mv
    );
    assert!(
        d.score < connect5::engine::WIN_THRESHOLD,
        "no win to claim: {}",
        d.score
    );
}

#[test]
fn turns_an_open_three_into_a_win() {
    let b = board(&[
        ".........",
        ".........",
        ".........",
        "..NNN....",
        ".........",
        "....B....",
        "...B.....",
        ".........",
        "........B",
    ]);
    let rule = Rule::exact(5);
    let mut probe = b.clone();
    assert_eq!(vcf_length(&mut probe, Stone::White, rule, 3), None);
    let d = engine_move(&b, rule, 4);
    let mut proof = b.clone();
    assert!(
        wins_by_four(&mut proof, d.mv, Stone::Black, rule, 3),
        "played {}",
        d.mv
    );
    assert!(d.score > connect5::engine::WIN_THRESHOLD);
}

#[test]
fn wins_with_a_double_three_when_no_four_can_answer_on_11x14() {
    // Black has two crossing twos and no four anywhere; white's stones make nothing.
    let b = board(&[
        "B.............",
        "..............",
        "..............",
        "......N.......",
        "......N.......",
        "....NN........",
        "..............",
        "..............",
        "..............",
        "..............",
        "B.....B......B",
    ]);
    let rule = Rule::exact(5);
    assert_eq!(side(&b), Stone::Black);
    let mut probe = b.clone();
    assert_eq!(
        vcf_length(&mut probe, Stone::Black, rule, 4),
        None,
        "no VCF: the win needs threes"
    );
    // A single open three is answered: the proof tells the two apart.
    assert!(!wins_against_every_reply(
        &mut probe,
        Move::new(5, 3),
        Stone::Black,
        rule,
        1
    ));
    let d = engine_move(&b, rule, 4);
    let mut proof = b.clone();
    assert!(
        wins_against_every_reply(&mut proof, d.mv, Stone::Black, rule, 1),
        "played {}, which some reply survives",
        d.mv
    );
    assert!(
        d.score > connect5::engine::WIN_THRESHOLD,
        "score {}",
        d.score
    );
}

/// Checks a VCF position: the attacker to move has a VCF of exactly `fours` fours (proved), and
/// the engine's move starts one.
fn check_vcf(rows: &[&str], fours: u32) {
    let b = board(rows);
    let rule = Rule::for_board(b.rows(), b.cols());
    let att = side(&b);
    let mut probe = b.clone();
    assert!(winning_cells(&b, att.opponent(), rule).is_empty());
    assert_eq!(vcf_length(&mut probe, att, rule, fours), Some(fours));
    let d = engine_move(&b, rule, 4);
    assert!(
        wins_by_four(&mut probe, d.mv, att, rule, fours + 2),
        "{}x{}: engine played {}, not the start of a VCF",
        b.rows(),
        b.cols(),
        d.mv
    );
    assert!(d.score > connect5::engine::WIN_THRESHOLD);
}

#[test]
fn vcf_of_three_fours_on_8x8() {
    check_vcf(
        &[
            "BB.NN...", ".BN.B..N", "..N....B", ".B..B..B", "....N..N", "BNN.N...", "N..B....",
            "...BN..B",
        ],
        3,
    );
}

#[test]
fn vcf_of_four_fours_on_12x20() {
    check_vcf(
        &[
            "...........N.N...B..",
            "..........N..BB..N..",
            ".........B.B.NB.....",
            "..........B.....N...",
            ".........N.N..NNB...",
            ".............B......",
            ".........N.B........",
            "...........B...N....",
            ".............B......",
            "....................",
            "....................",
            "....................",
        ],
        4,
    );
}

#[test]
fn vcf_of_five_fours_on_20x20() {
    check_vcf(
        &[
            "....................",
            "....................",
            "....................",
            "....................",
            "....................",
            "..............B.....",
            "...........B........",
            "...............N....",
            ".............NB.N...",
            ".............N.....N",
            "...........N..B....B",
            "............B.NB..NN",
            "....................",
            "...........B..B.N.B.",
            "....................",
            "....................",
            "....................",
            "....................",
            "....................",
            "....................",
        ],
        5,
    );
}

#[test]
fn vcf_of_six_fours_on_32x32() {
    check_vcf(
        &[
            "................................",
            "................................",
            "................................",
            "................................",
            "................................",
            "................................",
            "................................",
            "................................",
            "................................",
            "................................",
            "................................",
            "................................",
            "...........................N....",
            "....................B...........",
            "....................N.....NBN...",
            ".....................B..........",
            ".....................BN.N.N.....",
            "......................BBB.......",
            ".....................N..B...N...",
            "....................N.B..N......",
            ".....................B......B...",
            "................................",
            "................................",
            "................................",
            "................................",
            "................................",
            "................................",
            "................................",
            "................................",
            "................................",
            "................................",
            "................................",
        ],
        6,
    );
}

/// Checks a defence position: the opponent (not to move) has a VCF of `fours` fours if we pass;
/// after the engine's move it has none within `fours + 2` (proved exhaustively).
fn check_defence(rows: &[&str], fours: u32) {
    let b = board(rows);
    let rule = Rule::for_board(b.rows(), b.cols());
    let me = side(&b);
    let opp = me.opponent();
    let mut probe = b.clone();
    assert!(winning_cells(&b, me, rule).is_empty());
    assert!(winning_cells(&b, opp, rule).is_empty());
    assert_eq!(vcf_length(&mut probe, opp, rule, fours), Some(fours));
    let d = engine_move(&b, rule, 4);
    probe.play(d.mv, me).unwrap();
    assert!(
        winning_cells(&probe, opp, rule).is_empty() && !has_vcf(&mut probe, opp, rule, fours + 2),
        "{}x{}: after {} the opponent still wins by fours",
        b.rows(),
        b.cols(),
        d.mv
    );
}

#[test]
fn defends_against_a_vcf_of_three_on_15x15() {
    check_defence(
        &[
            "...............",
            "...............",
            "...............",
            "...............",
            "...............",
            "........N...BN.",
            ".......N...N...",
            "........N..B...",
            "...............",
            "..........NB...",
            ".......B.B.B...",
            ".............B.",
            "...............",
            "........NN..B..",
            "...............",
        ],
        3,
    );
}

#[test]
fn defends_against_a_vcf_of_four_on_10x14() {
    check_defence(
        &[
            "..............",
            "..............",
            "......N.NB..B.",
            ".........B....",
            "....N..B......",
            "..............",
            "....NB...B..N.",
            "...........NB.",
            "...........B..",
            ".....N.BN.N...",
        ],
        4,
    );
}

#[test]
fn answers_a_legal_move_on_every_shape_even_without_time() {
    use std::time::{Duration, Instant};
    let shapes = [
        (5, 5),
        (6, 9),
        (8, 8),
        (15, 15),
        (7, 40),
        (128, 128),
        (128, 5),
    ];
    for (rows, cols) in shapes {
        for budget_ms in [0u64, 20] {
            let mut b = Board::new(rows, cols).unwrap();
            let rule = Rule::for_board(rows, cols);
            // A few stones near the centre, alternating colours.
            for i in 0..6usize {
                let mv = Move::new(
                    (rows / 2 + i % 3).min(rows - 1),
                    (cols / 2 + i / 2).min(cols - 1),
                );
                if b.is_empty_cell(mv) {
                    let s = side(&b);
                    b.play(mv, s).unwrap();
                }
            }
            if b.winner(rule).is_some() {
                continue;
            }
            let deadline =
                Deadline::for_budget(Instant::now(), Duration::from_millis(budget_ms), 1);
            let config = EngineConfig {
                kind: EngineKind::V2,
                ..EngineConfig::default()
            };
            let d = think(&b, rule, &deadline, &config).unwrap();
            assert!(
                b.is_empty_cell(d.mv),
                "{rows}x{cols}: illegal move {}",
                d.mv
            );
        }
    }
}

#[test]
fn other_line_lengths_are_played_correctly() {
    // Four in a row (k = 4): black wins at once at (2, 4); with k = 6 the generic engine answers.
    let b = board(&[
        "..........",
        "..........",
        ".NNN......",
        ".BBB......",
        "..........",
        "..........",
    ]);
    let rule = Rule::exact(4);
    let d = engine_move(&b, rule, 3);
    assert!(b.wins_at(d.mv, Stone::Black, rule), "played {}", d.mv);
    let d = engine_move(&b, Rule::exact(6), 2);
    assert!(b.is_empty_cell(d.mv));
}
