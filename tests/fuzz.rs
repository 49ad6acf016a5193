//! Property tests of the two protocol parsers, the Connect5 request decoder and the Gomocup brain's
//! command handling, on generated and mutated input: whatever the lines, nothing panics, every
//! reply or error is one line, and what is well formed is understood exactly.
//!
//! The default run tries 20,000 inputs of each kind (under a second). The long run (the fuzzing figure of
//! docs/fuzzing.md) sets the count: `FUZZ_CASES=10000000 cargo test --release --test fuzz`.

use std::time::Duration;

use connect5::board::{Board, Move, Rule, Stone};
use connect5::engine::{self, Decision};
use connect5::gomocup::{Brain, BrainConfig, Step};
use connect5::protocol::{encode_request, Decoder, Event, Input, MAX_LINE_BYTES};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        // The long run must not stop on its own time budget.
        timeout: 0,
        ..ProptestConfig::default()
    }
}

/// A position with legal counts: up to `stones` alternating stones on a `rows`×`cols` board.
fn position() -> impl Strategy<Value = Board> {
    (1usize..=12, 1usize..=12)
        .prop_flat_map(|(rows, cols)| {
            let cells = rows * cols;
            (
                Just((rows, cols)),
                proptest::sample::subsequence((0..cells).collect::<Vec<_>>(), 0..=cells.min(20)),
            )
        })
        .prop_map(|((rows, cols), chosen)| {
            let mut board = Board::new(rows, cols).expect("a size in range");
            let mut stone = Stone::Black;
            for cell in chosen {
                if board
                    .play(Move::new(cell / cols, cell % cols), stone)
                    .is_ok()
                {
                    stone = stone.opponent();
                }
            }
            board
        })
}

/// Text a Connect5 referee might send, well formed or not.
fn connect5_line() -> impl Strategy<Value = String> {
    prop_oneof![
        // Anything at all.
        ".{0,40}",
        // Dimension lines, in range or not, with K or junk.
        (0u32..200, 0u32..200).prop_map(|(l, c)| format!("{l} {c}")),
        (0u32..20, 0u32..20, 0u32..30).prop_map(|(l, c, k)| format!("{l} {c} {k}")),
        "[0-9 ]{0,12}",
        // Rows: the cell alphabet and its neighbours.
        "[0BN. bnX\t\r\u{0}]{0,30}",
        // Time lines.
        "-?[0-9]{0,12}(\\.[0-9]{0,4})?",
        Just("0".to_string()),
        Just("shutdown".to_string()),
        Just(String::new()),
    ]
}

/// A request as a referee writes it, then damaged: characters replaced, inserted or removed.
fn mutated_request() -> impl Strategy<Value = Vec<String>> {
    (
        position(),
        0u64..100_000,
        proptest::collection::vec((any::<prop::sample::Index>(), 0u8..3, any::<char>()), 0..4),
    )
        .prop_map(|(board, budget, mutations)| {
            let rule = Rule::for_board(board.rows(), board.cols());
            let mut text: Vec<char> = encode_request(&board, rule, budget).chars().collect();
            for (at, kind, c) in mutations {
                if text.is_empty() {
                    break;
                }
                let i = at.index(text.len());
                match kind {
                    0 => text[i] = c,
                    1 => text.insert(i, c),
                    _ => {
                        text.remove(i);
                    }
                }
            }
            text.into_iter()
                .collect::<String>()
                .split('\n')
                .map(str::to_string)
                .collect()
        })
}

/// Feeds lines (a line of `MAX_LINE_BYTES` or more goes in as the transport hands it over: too
/// long) and checks every event.
fn feed_all(decoder: &mut Decoder, lines: &[String]) -> Result<(), TestCaseError> {
    for line in lines {
        let input = if line.len() >= MAX_LINE_BYTES {
            Input::TooLong
        } else {
            Input::Line(line)
        };
        if let Some(Event::Error(error)) = decoder.feed(input) {
            let text = error.to_string();
            prop_assert!(!text.contains('\n'), "a two-line error: {text:?}");
            prop_assert!(!text.is_empty());
        }
    }
    Ok(())
}

/// After whatever came before, once the decoder is back at a dimension line (the session's
/// `finish` at the end of input does that), a good request is decoded exactly.
fn good_request_is_understood(decoder: &mut Decoder, board: &Board) -> Result<(), TestCaseError> {
    decoder.finish();
    let rule = Rule::for_board(board.rows(), board.cols());
    let text = encode_request(board, rule, 1234);
    let mut last = None;
    for line in text.lines() {
        last = decoder.feed(Input::Line(line));
    }
    match (last, engine::side_to_move(board, rule)) {
        (Some(Event::Request(request)), Ok(side)) => {
            prop_assert_eq!(&request.board, board);
            prop_assert_eq!(request.side, side);
            prop_assert_eq!(request.budget, Duration::from_millis(1234));
        }
        // A finished game or a full board is refused, with a one-line reason.
        (Some(Event::Error(error)), Err(_)) => prop_assert!(!error.to_string().contains('\n')),
        (other, expected) => prop_assert!(false, "{other:?} for {expected:?}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_decoder_survives_any_lines(
        lines in proptest::collection::vec(connect5_line(), 0..24),
        board in position(),
    ) {
        let mut decoder = Decoder::new(false);
        feed_all(&mut decoder, &lines)?;
        good_request_is_understood(&mut decoder, &board)?;
    }

    #[test]
    fn the_decoder_survives_damaged_requests(
        requests in proptest::collection::vec(mutated_request(), 1..4),
        board in position(),
    ) {
        let mut decoder = Decoder::new(false);
        for lines in &requests {
            feed_all(&mut decoder, lines)?;
        }
        good_request_is_understood(&mut decoder, &board)?;
    }

    #[test]
    fn a_brain_survives_any_manager_lines(
        lines in proptest::collection::vec(gomocup_line(), 0..24),
    ) {
        let mut brain = Brain::new(BrainConfig {
            engine: engine::EngineConfig::default(),
            messages: true,
            default_turn: Duration::from_millis(100),
            overline_wins: false,
        });
        for line in &lines {
            let replies = match brain.handle(line) {
                Step::Say(replies) => replies,
                // The search itself is the engine's business: an instant move stands for it.
                Step::Think(think) => {
                    let mv = engine::instant_move(&think.board, think.rule);
                    prop_assert!(mv.is_ok(), "the brain asked for a move in {:?}", think.board);
                    let mv = mv.unwrap_or(Move::new(0, 0));
                    let decision = Decision { mv, score: 0, depth: 0, nodes: 0, pv: vec![mv] };
                    brain.played(&decision, Duration::ZERO)
                }
                Step::Quit => break,
            };
            for reply in &replies {
                prop_assert!(!reply.contains('\n'), "a two-line reply {reply:?}");
                let known = ["OK", "ERROR ", "UNKNOWN ", "MESSAGE ", "name="]
                    .iter()
                    .any(|start| reply.starts_with(start))
                    || is_point(reply);
                prop_assert!(known, "reply {reply:?} to {line:?}");
            }
        }
    }
}

fn is_point(text: &str) -> bool {
    text.split_once(',').is_some_and(|(x, y)| {
        !x.is_empty()
            && !y.is_empty()
            && x.bytes().all(|b| b.is_ascii_digit())
            && y.bytes().all(|b| b.is_ascii_digit())
    })
}

/// Lines a Gomocup manager might send, well formed or not (board sizes kept small, so that the
/// stand-in for a search stays quick).
fn gomocup_line() -> impl Strategy<Value = String> {
    let word = prop_oneof![
        Just("START"),
        Just("RECTSTART"),
        Just("RESTART"),
        Just("BEGIN"),
        Just("TURN"),
        Just("BOARD"),
        Just("YXBOARD"),
        Just("DONE"),
        Just("TAKEBACK"),
        Just("PLAY"),
        Just("INFO"),
        Just("ABOUT"),
        Just("YXSTOP"),
        Just("start"),
        Just("FOO"),
    ];
    let argument = prop_oneof![
        (0u32..24).prop_map(|n| n.to_string()),
        (0u32..24, 0u32..24).prop_map(|(x, y)| format!("{x},{y}")),
        (0u32..24, 0u32..24, 0u32..5).prop_map(|(x, y, f)| format!("{x},{y},{f}")),
        "(timeout_turn|timeout_match|time_left|max_memory|rule|game_type|max_depth|max_node|folder) -?[0-9]{0,12}",
        ".{0,20}",
        Just(String::new()),
    ];
    prop_oneof![
        (word, argument.clone()).prop_map(|(w, a)| format!("{w} {a}")),
        (0u32..24, 0u32..24, 0u32..5).prop_map(|(x, y, f)| format!("{x},{y},{f}")),
        argument,
        ".{0,40}",
    ]
}
