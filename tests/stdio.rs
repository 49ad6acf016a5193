//! `connect5 stdio`: the protocol on stdin/stdout, through the real binary.

mod common;

use common::{board, board_with, good_request, legal_reply, one_empty_cell, Player, StdioPlayer};
use connect5::board::{Board, Move, Rule, Stone};

#[test]
fn prints_the_default_banner_then_ready() {
    let mut player = StdioPlayer::spawn(&[]);
    assert_eq!(player.line(), connect5::protocol::default_banner());
    assert_eq!(player.line(), "READY");
    player.send("0\n");
    player.expect_eof();
    assert!(player.wait_exit().success());
}

#[test]
fn banner_lines_and_ready_word_are_configurable() {
    let mut player = StdioPlayer::spawn(&[
        "--banner",
        "Équipe 7: Alice & Bob",
        "--banner",
        "second line",
        "--ready-word",
        "PRET",
    ]);
    assert_eq!(player.line(), "Équipe 7: Alice & Bob");
    assert_eq!(player.line(), "second line");
    assert_eq!(player.line(), "PRET");
    let (good, answer) = good_request(4);
    assert_eq!(player.ask(&good).0, answer.to_string());
}

#[test]
fn answers_several_requests_then_ends_on_zero() {
    let mut player = StdioPlayer::spawn(&[]);
    player.expect_ready("READY");
    for index in 0..9 {
        let (good, answer) = good_request(index);
        assert_eq!(player.ask(&good).0, answer.to_string());
    }
    // Positions with many legal moves: any empty cell is a valid reply.
    let open = board_with(15, 15, &[(7, 7), (7, 8)], &[(8, 8)]);
    player.play(&open, Rule::for_board(15, 15), 100);
    let rect = board_with(6, 11, &[], &[]);
    player.play(&rect, Rule::for_board(6, 11), 100);
    player.send("0\n");
    player.expect_eof();
    assert!(player.wait_exit().success());
}

#[test]
fn zero_right_after_ready_ends_the_session() {
    let mut player = StdioPlayer::spawn(&[]);
    player.expect_ready("READY");
    player.send("0\n");
    player.expect_eof();
    assert!(player.wait_exit().success());
}

#[test]
fn end_of_input_ends_the_session() {
    let mut player = StdioPlayer::spawn(&[]);
    player.expect_ready("READY");
    let (good, answer) = good_request(2);
    assert_eq!(player.ask(&good).0, answer.to_string());
    player.close_input();
    player.expect_eof();
    assert!(player.wait_exit().success());
}

#[test]
fn end_of_input_inside_a_request_is_reported() {
    let mut player = StdioPlayer::spawn(&[]);
    player.expect_ready("READY");
    player.send("3 3\n000\n");
    player.close_input();
    let error = player.line();
    assert!(
        error.starts_with("ERROR incomplete-request: ") && error.contains("1 of 3 rows"),
        "got {error:?}"
    );
    player.expect_eof();
    assert!(player.wait_exit().success());
}

#[test]
fn shutdown_ends_the_process() {
    for word in ["shutdown", "SHUTDOWN"] {
        let mut player = StdioPlayer::spawn(&[]);
        player.expect_ready("READY");
        let (good, answer) = good_request(7);
        assert_eq!(player.ask(&good).0, answer.to_string());
        player.send(&format!("{word}\n"));
        player.expect_eof();
        assert!(player.wait_exit().success(), "after {word:?}");
    }
}

/// The end-to-end smoke test of stdio mode (the error table itself is in tests/session.rs):
/// errors, a certain answer and a real search written at once, with trace logs on. Stdout must
/// carry exactly the protocol lines, one per request, in order; the logs go to stderr.
#[test]
fn smoke_errors_and_real_moves_with_trace_logs() {
    let mut player = StdioPlayer::spawn_with_env(&[], &[("RUST_LOG", "trace")]);
    player.expect_ready("READY");
    let open = board_with(9, 9, &[(4, 4)], &[]);
    let (good, answer) = good_request(4);
    let text = [
        "three three\n000\n000\n000\n100\n".to_string(),
        good.clone(),
        "3 3\n000\n0X0\n000\n100\n".to_string(),
        common::request(&open, 50),
        format!("{}\n000\n000\n000\n100\n", "3".repeat(5000)),
        common::request(&open, 50),
        "3 3\nNNN\nBB0\n000\n100\n".to_string(),
        good,
        "0\n".to_string(),
    ]
    .concat();
    player.send(&text);
    assert!(player.line().starts_with("ERROR bad-dimensions: "));
    assert_eq!(player.line(), answer.to_string());
    assert!(player.line().starts_with("ERROR unknown-character: "));
    legal_reply(&open, &player.line());
    assert!(player.line().starts_with("ERROR line-too-long: "));
    legal_reply(&open, &player.line());
    assert!(player.line().starts_with("ERROR game-over: "));
    assert_eq!(player.line(), answer.to_string());
    // Nothing else on stdout: no log line slipped in among the replies.
    player.expect_eof();
    assert!(player.wait_exit().success());
    // The replies to the searches are logged whether a search or, on a machine too busy for the
    // search to finish, the watchdog gave them.
    let log = player.stderr();
    assert!(
        log.contains("bad request") && (log.contains("answered") || log.contains("instant move")),
        "the errors and the searches should be logged on stderr at this level; stderr was:\n{log}"
    );
}

#[test]
fn crlf_nul_bytes_and_padding_are_tolerated() {
    let mut player = StdioPlayer::spawn(&[]);
    player.expect_ready("READY");
    let target = one_empty_cell(Move::new(1, 2));
    let rows = target.to_rows();
    let answer = "1 2";

    // Java on Windows: CRLF everywhere.
    let crlf = format!(
        "3 3\r\n{}\r\n{}\r\n{}\r\n250\r\n",
        rows[0], rows[1], rows[2]
    );
    // The 2009-2011 referee: a NUL byte before the newline of every line.
    let nul = format!(
        "3 3\0\n{}\0\n{}\0\n{}\0\n250\0\n",
        rows[0], rows[1], rows[2]
    );
    // Both at once.
    let nul_crlf = format!(
        "3 3\0\r\n{}\0\r\n{}\0\r\n{}\0\r\n250\0\r\n",
        rows[0], rows[1], rows[2]
    );
    // Spaces and tabs around and inside the lines.
    let spaced = |row: &str| row.chars().map(|c| format!("{c} ")).collect::<String>();
    let padded = format!(
        "  3\t 3  \n {} \n\t{}\t\n{}   \n  250 \n",
        spaced(&rows[0]),
        rows[1],
        spaced(&rows[2])
    );
    // Lowercase stones.
    let lower = format!(
        "3 3\n{}\n{}\n{}\n250\n",
        rows[0].to_lowercase(),
        rows[1].to_lowercase(),
        rows[2].to_lowercase()
    );
    // A UTF-8 byte-order mark before the dimension line (some Windows tools write one).
    let bom = format!("\u{feff}3 3\n{}\n{}\n{}\n250\n", rows[0], rows[1], rows[2]);
    // Empty lines between requests.
    let blank_lines_first = format!("\n\r\n3 3\n{}\n{}\n{}\n250\n", rows[0], rows[1], rows[2]);
    for (what, text) in [
        ("CRLF", crlf),
        ("NUL", nul),
        ("NUL and CRLF", nul_crlf),
        ("padding", padded),
        ("lowercase", lower),
        ("byte-order mark", bom),
        ("blank lines", blank_lines_first),
    ] {
        assert_eq!(player.ask(&text).0, answer, "request with {what}: {text:?}");
    }
    player.send("0\0\r\n");
    player.expect_eof();
}

#[test]
fn an_explicit_k_sets_the_winning_length() {
    let mut player = StdioPlayer::spawn(&[]);
    player.expect_ready("READY");
    let rows = ["NNN0", "BBB0", "0000", "0000"];
    let text = |dims: &str| format!("{dims}\n{}\n100\n", rows.join("\n"));
    // Four in a row on 4x4 by default: three is no win, the game goes on.
    let (reply, _) = player.ask(&text("4 4"));
    legal_reply(&board(&rows), &reply);
    // With K = 3, black's three has already won.
    let (reply, _) = player.ask(&text("4 4 3"));
    assert!(reply.starts_with("ERROR game-over: "), "got {reply:?}");
    // K = 4 written out is the default.
    let (reply, _) = player.ask(&text("4 4 4"));
    legal_reply(&board(&rows), &reply);
    // K = 2 on 3x3: two adjacent stones have already won.
    let (reply, _) = player.ask("3 3 2\nNN0\nB00\nB00\n100\n");
    assert!(reply.starts_with("ERROR game-over: "), "got {reply:?}");
}

#[test]
fn overline_wins_option_counts_six_as_a_win() {
    let rows = ["NNNNNN00", "BBBBB000", "00000000", "00000000", "0000000B"];
    let text = format!("5 8\n{}\n100\n", rows.join("\n"));
    let mut exact = StdioPlayer::spawn(&[]);
    exact.expect_ready("READY");
    // Exact five: black's six is no win, white's five is.
    let (reply, _) = exact.ask(&text);
    assert!(
        reply.starts_with("ERROR game-over: ") && reply.contains("white"),
        "got {reply:?}"
    );
    let rows_six_only = ["NNNNNN00", "BBBB0000", "00000000", "0000B000", "0000000B"];
    let text_six_only = format!("5 8\n{}\n100\n", rows_six_only.join("\n"));
    let (reply, _) = exact.ask(&text_six_only);
    legal_reply(&board(&rows_six_only), &reply);

    let mut freestyle = StdioPlayer::spawn(&["--overline-wins"]);
    freestyle.expect_ready("READY");
    let (reply, _) = freestyle.ask(&text_six_only);
    assert!(
        reply.starts_with("ERROR game-over: ") && reply.contains("black"),
        "got {reply:?}"
    );
}

#[test]
fn a_request_followed_by_end_of_input_is_still_answered() {
    let mut player = StdioPlayer::spawn(&[]);
    player.expect_ready("READY");
    let (good, answer) = good_request(6);
    player.send(&good);
    player.close_input();
    assert_eq!(player.line(), answer.to_string());
    player.expect_eof();
    assert!(player.wait_exit().success());
}

#[test]
fn sigterm_ends_an_idle_stdio_player_with_status_zero() {
    let mut player = StdioPlayer::spawn(&[]);
    player.expect_ready("READY");
    let (good, answer) = good_request(1);
    assert_eq!(player.ask(&good).0, answer.to_string());
    player.signal("TERM");
    // The input stays open, as a referee's would: the player must not wait for it to close.
    let next = player.next_within(std::time::Duration::from_secs(5));
    assert_eq!(
        next,
        common::Next::Eof,
        "SIGTERM did not end the player within 5 s while its input was open"
    );
    assert!(player.wait_exit().success());
}

/// A signal while a request is being answered: the answer is written, then the process exits 0.
/// (How the stop grace cuts a longer search short is tested in-process, in tests/session.rs.)
#[test]
fn sigterm_during_a_search_lets_it_answer_then_exits() {
    let mut player = StdioPlayer::spawn_with_env(&["--max-budget", "500"], &[("RUST_LOG", "info")]);
    player.expect_ready("READY");
    let mut board = Board::new(15, 15).expect("board");
    board.play(Move::new(7, 7), Stone::Black).expect("empty");
    player.send(&common::request(&board, 3_600_000));
    // Logged once the request has been read in full, just before its search: from then on the
    // signal finds the request in flight.
    player.wait_for_log("budget clipped");
    player.signal("TERM");
    match player.next() {
        common::Next::Line(reply) => {
            legal_reply(&board, &reply);
        }
        other => panic!("expected a move, got {other:?}\n{}", player.stderr()),
    }
    player.expect_eof();
    assert!(player.wait_exit().success());
}

#[test]
fn a_decimal_time_is_accepted() {
    let mut player = StdioPlayer::spawn(&[]);
    player.expect_ready("READY");
    for time in ["250.0", "99.5", "0.0"] {
        let (good, answer) = good_request(5);
        let text = good.replace("\n100\n", &format!("\n{time}\n"));
        assert_ne!(text, good, "the good request ends with its time line");
        assert_eq!(player.ask(&text).0, answer.to_string(), "time {time}");
    }
}

/// After a broken dimension line the decoder skips single-token lines; a bare `0` still ends
/// the session there, and `shutdown` still stops.
#[test]
fn while_skipping_a_broken_request_zero_and_shutdown_still_work() {
    let mut player = StdioPlayer::spawn(&[]);
    player.expect_ready("READY");
    player.send("7 x\n0000000\n");
    assert!(player.line().starts_with("ERROR bad-dimensions: "));
    player.send("0\n");
    player.expect_eof();
    assert!(player.wait_exit().success());

    let mut player = StdioPlayer::spawn(&[]);
    player.expect_ready("READY");
    player.send("300 3\n000\nNNN\n");
    assert!(player.line().starts_with("ERROR dimensions-out-of-range: "));
    player.send("shutdown\n");
    player.expect_eof();
    assert!(player.wait_exit().success());
}

#[test]
fn the_smallest_and_thinnest_boards_are_played() {
    let mut player = StdioPlayer::spawn(&[]);
    player.expect_ready("READY");
    // 1x1: K = 1, black's one move wins.
    assert_eq!(player.ask("1 1\n0\n100\n").0, "0 0");
    let (reply, _) = player.ask("1 1\nN\n100\n");
    assert!(reply.starts_with("ERROR game-over: "), "got {reply:?}");
    for (rows, cols) in [(2, 2), (4, 4), (1, 128), (128, 1), (2, 9), (4, 3)] {
        let position = board_with(rows, cols, &[(0, 0)], &[]);
        player.play(&position, Rule::for_board(rows, cols), 50);
    }
}

/// READY tells the referee the player is up; a SIGTERM right after it must already be the
/// graceful stop (exit 0), not the default action of the signal.
#[test]
fn a_signal_right_after_ready_is_a_clean_stop() {
    for _ in 0..6 {
        let mut player = StdioPlayer::spawn(&[]);
        player.expect_ready("READY");
        player.signal("TERM");
        player.close_input();
        let status = player.wait_exit();
        assert!(status.success(), "exit status {status}");
    }
}
