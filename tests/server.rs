//! `connect5 serve`: the protocol over TCP, through the real binary and real sockets.

mod common;

use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::process::Command;
use std::time::Duration;

use common::{board_with, good_request, Next, Player, Server, TcpClient};
use connect5::board::Rule;

/// A new connection must not be served: refused outright, or closed without a word.
fn assert_not_served(addr: SocketAddr) {
    if let Ok(mut client) = TcpClient::try_connect(addr) {
        let next = client.next();
        assert_eq!(next, Next::Eof, "a connection after the stop was served");
    }
}

#[test]
fn each_connection_gets_banner_ready_and_answers() {
    let mut server = Server::start(&[]);
    let mut first = server.connect();
    let mut second = server.connect();
    for client in [&mut first, &mut second] {
        assert_eq!(client.line(), connect5::protocol::default_banner());
        assert_eq!(client.line(), "READY");
    }
    for index in 0..9 {
        let (good, answer) = good_request(index);
        assert_eq!(first.ask(&good).0, answer.to_string());
        let (good, answer) = good_request(8 - index);
        assert_eq!(second.ask(&good).0, answer.to_string());
    }
    let open = board_with(13, 13, &[(6, 6)], &[]);
    first.play(&open, Rule::for_board(13, 13), 100);
    // `0` ends one session; the server and the other session go on.
    first.send("0\n");
    first.expect_eof();
    let (good, answer) = good_request(3);
    assert_eq!(second.ask(&good).0, answer.to_string());
    let mut third = server.session();
    assert_eq!(third.ask(&good).0, answer.to_string());
    assert!(server.running());
}

#[test]
fn end_of_input_ends_a_connection_only() {
    let mut server = Server::start(&[]);
    let mut client = server.session();
    let (good, answer) = good_request(5);
    client.send(&good);
    client.close_output();
    // The request sent before the end of input is still answered.
    assert_eq!(client.line(), answer.to_string());
    client.expect_eof();
    let mut other = server.session();
    assert_eq!(other.ask(&good).0, answer.to_string());
    assert!(server.running());
}

#[test]
fn banner_and_ready_word_are_configurable() {
    let server = Server::start(&[
        "--banner",
        "team one",
        "--banner",
        "v0",
        "--ready-word",
        "PRET",
    ]);
    let mut client = server.connect();
    assert_eq!(client.line(), "team one");
    assert_eq!(client.line(), "v0");
    assert_eq!(client.line(), "PRET");
    let (good, answer) = good_request(1);
    assert_eq!(client.ask(&good).0, answer.to_string());
}

#[test]
fn listens_on_a_bare_port_argument() {
    // Ask the system for a free port, then hand it to the server.
    let port = {
        let probe = TcpListener::bind("127.0.0.1:0").expect("bind a probe");
        probe.local_addr().expect("probe address").port()
    };
    let server = Server::start_exact(&[&port.to_string()]);
    assert_eq!(server.addr, SocketAddr::from(([127, 0, 0, 1], port)));
    let mut client = server.session();
    let (good, answer) = good_request(6);
    assert_eq!(client.ask(&good).0, answer.to_string());
}

#[test]
fn the_default_address_is_port_1199_on_localhost() {
    let output = Command::new(common::binary())
        .args(["serve", "--help"])
        .output()
        .expect("run connect5 serve --help");
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(help.contains("127.0.0.1:1199"), "help says:\n{help}");
}

#[test]
fn refuses_a_bad_listen_address_with_a_clear_error() {
    // A port already taken.
    let taken = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("address").to_string();
    let output = Command::new(common::binary())
        .args(["serve", "--listen", &addr])
        .output()
        .expect("run connect5 serve");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&addr) && stderr.contains("cannot listen"),
        "stderr:\n{stderr}"
    );
    assert!(!stderr.contains("panicked"), "stderr:\n{stderr}");
}

/// How a stop went for a session that had sent a request before the stop.
#[derive(Debug, PartialEq, Eq)]
enum InFlight {
    /// The request was answered (legally), then the connection closed.
    Answered,
    /// The connection closed without a word: the session had not started reading the request
    /// when the stop came, so it was not in flight yet. Legitimate, but proves nothing.
    NotYetRead,
}

/// Reads what a session that had a request out gets after the stop: its answer then the end, or
/// the end alone; anything else fails the test.
fn after_the_stop<P: Player>(client: &mut P, check: impl Fn(&str)) -> InFlight {
    match client.next() {
        Next::Eof => InFlight::NotYetRead,
        Next::Line(reply) => {
            check(&reply);
            client.expect_eof();
            InFlight::Answered
        }
        Next::TimedOut => panic!("no answer and no end after the stop"),
    }
}

/// Starts a server with three sessions (idle; a request partly sent, rows but no time line; a
/// long search), stops it with `stop`, and checks what each gets and that the server exits 0.
/// Returns how the partly sent request and the long search fared.
///
/// Nothing a client sees proves the server has read the bytes it sent, so a session may
/// legitimately be stopped before it has read its request; the partial request is therefore sent
/// in the same write as a complete request before it, whose answer shows the session was about to
/// read it, and the callers repeat the scenario until the requests were in flight. The search asks
/// for an hour and is clipped to 600 ms: the server logs the clipping once it has read the request
/// in full, and the stop comes after that line, while the search runs.
fn stop_with_requests_in_flight(stop: impl Fn(&mut Server)) -> (InFlight, InFlight) {
    let mut server =
        Server::start_logging(&["--listen", "127.0.0.1:0", "--max-budget", "600"], "info");
    let mut idle = server.session();

    let mut partial = server.session();
    let (first, first_answer) = good_request(0);
    let (second, second_answer) = good_request(4);
    let (second_head, time_line) = second
        .trim_end()
        .rsplit_once('\n')
        .expect("a request has several lines");
    partial.send(&format!("{first}{second_head}\n"));
    assert_eq!(partial.line(), first_answer.to_string());

    let mut searching = server.session();
    let (warm_up, warm_answer) = good_request(8);
    let middle = board_with(15, 15, &[(7, 7), (8, 8), (6, 6)], &[(7, 8), (8, 7)]);
    searching.send(&format!("{warm_up}{}", common::request(&middle, 3_600_000)));
    assert_eq!(searching.line(), warm_answer.to_string());
    server.wait_for_log("budget clipped");

    stop(&mut server);
    server.wait_for_log("no new connections");
    assert_not_served(server.addr);
    idle.expect_eof();

    let search = after_the_stop(&mut searching, |reply| {
        common::legal_reply(&middle, reply);
    });
    // The session waits for the time line only if it had read the rest before the stop.
    // (A session already closed may refuse it; what it answered is what counts.)
    let _ = partial.try_send(&format!("{time_line}\n"));
    let partial_fate = after_the_stop(&mut partial, |reply| {
        assert_eq!(reply, second_answer.to_string());
    });
    let status = server.wait_exit();
    assert!(status.success(), "exit status {status}");
    (partial_fate, search)
}

/// Repeats the scenario until both requests were in flight at the stop (nearly always the
/// first time; a busy machine can delay a session's reading past the stop).
fn requests_in_flight_are_answered(stop: impl Fn(&mut Server)) {
    let mut outcomes = Vec::new();
    for _ in 0..8 {
        let outcome = stop_with_requests_in_flight(&stop);
        if outcome == (InFlight::Answered, InFlight::Answered) {
            return;
        }
        outcomes.push(outcome);
    }
    panic!("requests sent before the stop were never answered: {outcomes:?}");
}

#[test]
fn shutdown_from_a_client_stops_the_server_after_answering_requests_in_flight() {
    requests_in_flight_are_answered(|server| {
        let mut stopper = server.session();
        stopper.send("shutdown\n");
        stopper.expect_eof();
        server.wait_for_log("shutdown requested");
    });
}

#[test]
fn sigterm_stops_the_server_after_answering_requests_in_flight() {
    requests_in_flight_are_answered(|server| {
        server.signal("TERM");
        server.wait_for_log("signal received");
    });
}

#[test]
fn sigint_stops_the_server_after_answering_requests_in_flight() {
    requests_in_flight_are_answered(|server| {
        server.signal("INT");
        server.wait_for_log("signal received");
    });
}

#[test]
fn shutdown_is_case_insensitive_and_tolerates_crlf() {
    let mut server = Server::start(&[]);
    let mut stopper = server.session();
    stopper.send("  ShutDown\r\n");
    stopper.expect_eof();
    server.wait_for_log("shutdown requested");
    assert!(server.wait_exit().success());
}

#[test]
fn a_failing_connection_never_disturbs_the_others() {
    let mut server = Server::start(&[]);
    let mut steady = server.session();
    let mut round = 0;
    let mut steady_plays = |steady: &mut TcpClient| {
        let (good, answer) = good_request(round);
        round += 1;
        assert_eq!(steady.ask(&good).0, answer.to_string());
    };
    steady_plays(&mut steady);

    // Connects and leaves at once, before reading anything.
    drop(server.connect());
    steady_plays(&mut steady);

    // Leaves in the middle of a request.
    let mut half = server.session();
    half.send("15 15\n000000000000000\n0000");
    drop(half);
    steady_plays(&mut steady);

    // Leaves while its search runs, so the reply goes to a closed socket.
    let mut gone = server.session();
    let open = board_with(15, 15, &[(7, 7)], &[]);
    gone.send(&common::request(&open, 300));
    drop(gone);
    steady_plays(&mut steady);

    // A megabyte without a newline, then leaves.
    let flood = server.session();
    let junk = vec![b'7'; 1 << 20];
    // The server may close on us mid-way; that is fine.
    let _ = flood
        .stream()
        .try_clone()
        .and_then(|mut s| s.write_all(&junk));
    drop(flood);
    steady_plays(&mut steady);

    // Binary junk and invalid UTF-8: an error, then it is served normally.
    let mut garbage = server.session();
    garbage.send_bytes(b"\xff\xfe\x00\x01\x02 \xc3\x28\n");
    let error = garbage.line();
    assert!(error.starts_with("ERROR bad-dimensions: "), "got {error:?}");
    let (good, answer) = good_request(2);
    assert_eq!(garbage.ask(&good).0, answer.to_string());
    steady_plays(&mut steady);

    // Half-closed before the banner was read.
    let mut mute = server.connect();
    mute.close_output();
    steady_plays(&mut steady);

    // Still accepting, still running, nothing panicked.
    let mut late = server.session();
    let (good, answer) = good_request(7);
    assert_eq!(late.ask(&good).0, answer.to_string());
    steady_plays(&mut steady);
    assert!(server.running());
    assert!(!server.log().contains("panicked"), "{}", server.log());
}

#[test]
fn serves_256_connections_at_once() {
    let server = Server::start(&[]);
    let mut clients: Vec<TcpClient> = (0..256).map(|_| server.session()).collect();
    // Half of them with a real search to run, all at the same time.
    let open = board_with(15, 15, &[(7, 7), (8, 8)], &[(7, 8)]);
    let open_request = common::request(&open, 500);
    for (index, client) in clients.iter_mut().enumerate() {
        if index % 2 == 0 {
            client.send(&good_request(index).0);
        } else {
            client.send(&open_request);
        }
    }
    for (index, client) in clients.iter_mut().enumerate() {
        let reply = client.line();
        if index % 2 == 0 {
            assert_eq!(reply, good_request(index).1.to_string(), "client {index}");
        } else {
            common::legal_reply(&open, &reply);
        }
    }
    // Read from /proc: a Linux machine without it is broken, elsewhere the check cannot be made.
    match server.peak_resident_bytes() {
        Some(peak) => assert!(peak < 512 << 20, "the server peaked at {} MiB", peak >> 20),
        None if cfg!(target_os = "linux") => panic!("cannot read the server's /proc/PID/status"),
        None => eprintln!("note: no /proc here: the server's peak memory is not checked"),
    }
    for client in &mut clients {
        client.send("0\n");
    }
    for client in &mut clients {
        client.expect_eof();
    }
}

#[test]
fn connections_over_the_limit_get_a_one_line_error() {
    let server = Server::start(&["--max-connections", "2"]);
    let mut first = server.session();
    let mut second = server.session();
    let mut third = server.connect();
    let refusal = third.line();
    assert!(refusal.starts_with("ERROR busy"), "got {refusal:?}");
    third.expect_eof();
    for client in [&mut first, &mut second] {
        let (good, answer) = good_request(3);
        assert_eq!(client.ask(&good).0, answer.to_string());
    }
}

#[test]
fn a_request_trickled_byte_by_byte_is_answered() {
    let server = Server::start(&[]);
    let mut client = server.session();
    let (good, answer) = good_request(3);
    for byte in good.bytes() {
        client.send_bytes(&[byte]);
    }
    assert_eq!(client.line(), answer.to_string());
    // And with CRLF and NUL bytes split across writes.
    let split = good.replace('\n', "\0\r\n");
    for chunk in split.as_bytes().chunks(2) {
        client.send_bytes(chunk);
    }
    assert_eq!(client.line(), answer.to_string());
}

#[test]
fn a_client_that_never_reads_its_replies_does_not_stall_the_others() {
    let mut server = Server::start(&[]);
    let deaf = server.session();
    // Each `x y` line earns a line of error of about 100 bytes: ten megabytes of replies in all,
    // more than the socket buffers hold, so the server ends up blocked writing to this client.
    let mut flood_stream = deaf.stream().try_clone().expect("clone the socket");
    let flooder = std::thread::spawn(move || {
        let lines = "x y\n".repeat(100_000);
        // Fails once the test closes the connection; that is the end of the flood.
        let _ = flood_stream.write_all(lines.as_bytes());
    });
    let mut steady = server.session();
    for index in 0..20 {
        let (good, answer) = good_request(index);
        assert_eq!(steady.ask(&good).0, answer.to_string());
    }
    let open = board_with(15, 15, &[(7, 7)], &[]);
    steady.play(&open, Rule::for_board(15, 15), 200);
    let _ = deaf.stream().shutdown(std::net::Shutdown::Both);
    drop(deaf);
    flooder.join().expect("the flooding thread");
    let mut late = server.session();
    let (good, answer) = good_request(4);
    assert_eq!(late.ask(&good).0, answer.to_string());
    assert!(server.running());
}

/// The `listening on` line tells a supervisor the server is up; a SIGTERM right after it must
/// already be the graceful stop (exit 0), not the default action of the signal.
#[test]
fn a_signal_right_after_the_listening_line_is_a_clean_stop() {
    for signal in ["TERM", "INT"].repeat(8) {
        let mut server = Server::start(&[]);
        server.signal(signal);
        let status = server.wait_exit();
        assert!(status.success(), "SIG{signal}: exit status {status}");
    }
}

/// The end-to-end smoke test of the TCP server (the error table itself is in tests/session.rs):
/// a few errors, a certain answer and a real search, each error followed by the session going on,
/// then `shutdown`. Logs, even at the most detailed level, go to stderr: stdout stays empty.
#[test]
fn smoke_errors_and_a_real_move_with_trace_logs() {
    let mut server = Server::start_logging(&["--listen", "127.0.0.1:0"], "trace");
    let mut client = server.session();
    let (good, answer) = good_request(2);
    for (bad, kind) in [
        ("3 -3\n000\n000\n000\n100\n", "bad-dimensions"),
        ("3 3 4\n000\n000\n000\n100\n", "k-out-of-range"),
        ("3 3\nNN0\n000\n000\n100\n", "impossible-counts"),
        ("3 3\n000\n000\n000\nsoon\n", "bad-time"),
    ] {
        let error = client.ask(bad).0;
        assert!(
            error.starts_with(&format!("ERROR {kind}: ")),
            "{bad:?}: got {error:?}"
        );
        assert_eq!(client.ask(&good).0, answer.to_string(), "after {bad:?}");
    }
    let open = board_with(11, 11, &[(5, 5)], &[]);
    client.play(&open, Rule::for_board(11, 11), 100);
    client.send("shutdown\n");
    client.expect_eof();
    assert!(server.wait_exit().success());
    assert_eq!(server.stdout_after_exit(), Vec::<String>::new());
    assert!(server.log().contains("bad request"), "{}", server.log());
    // Answered by its search, or by the watchdog on a machine too busy for the search to finish.
    let log = server.log();
    assert!(
        log.contains("answered") || log.contains("instant move"),
        "the reply to the search should be logged:\n{log}"
    );
}

/// Sessions share nothing: a request half sent on one connection does not mix with the requests
/// of another.
#[test]
fn interleaved_requests_on_two_connections_stay_apart() {
    let server = Server::start(&[]);
    let mut first = server.session();
    let mut second = server.session();
    let (first_request, first_answer) = good_request(2);
    let (second_request, second_answer) = good_request(6);
    let first_lines: Vec<&str> = first_request.lines().collect();
    let second_lines: Vec<&str> = second_request.lines().collect();
    // Line by line, alternating; the second connection finishes first.
    for (a, b) in first_lines
        .iter()
        .zip(&second_lines)
        .take(first_lines.len() - 1)
    {
        first.send(&format!("{a}\n"));
        second.send(&format!("{b}\n"));
    }
    second.send(&format!("{}\n", second_lines[second_lines.len() - 1]));
    assert_eq!(second.line(), second_answer.to_string());
    first.send(&format!("{}\n", first_lines[first_lines.len() - 1]));
    assert_eq!(first.line(), first_answer.to_string());
}

// ---------------------------------------------------------------------------------------------
// No client can take the engine away from the others

/// A 20×20 middle game (no win in one, nothing forced): only a search answers it.
fn open_position_request(budget_ms: u64) -> String {
    let board = board_with(
        20,
        20,
        &[(9, 9), (10, 10), (9, 11)],
        &[(10, 9), (11, 11), (8, 10)],
    );
    connect5::protocol::encode_request(&board, Rule::for_board(20, 20), budget_ms)
}

#[test]
fn a_client_that_leaves_stops_its_search_and_frees_the_slot() {
    let mut server = Server::start_logging(&["--listen", "127.0.0.1:0"], "debug");
    // More abandoned searches than the machine has slots (two per core), each asking for hours.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for _ in 0..2 * cores + 2 {
        let mut client = server.session();
        client.send(&open_position_request(36_000_000));
        drop(client);
    }
    for _ in 0..2 * cores + 2 {
        server.wait_for_log("the client left");
    }
    // A newcomer's search gets a slot and runs: its reply comes from a search, in its budget.
    let mut client = server.session();
    let (reply, latency) = client.ask(&open_position_request(1000));
    assert!(common::parse_move(&reply).is_some(), "{reply:?}");
    assert!(latency < Duration::from_millis(1050), "{latency:?}");
    let answered = server.wait_for_log("answered");
    assert!(answered.contains("depth="), "{answered}");
    assert!(
        !server.log().contains("no search slot in time"),
        "{}",
        server.log()
    );
}

#[test]
fn a_budget_beyond_the_maximum_is_clipped_and_still_answered() {
    let mut server = Server::start(&["--max-budget", "300"]);
    let mut client = server.session();
    let (reply, latency) = client.ask(&open_position_request(36_000_000));
    assert!(common::parse_move(&reply).is_some(), "{reply:?}");
    // A guard far beyond 300 ms and far below the hours asked for.
    assert!(latency < Duration::from_secs(5), "{latency:?}");
    server.wait_for_log("budget clipped");
}

#[test]
fn a_certain_answer_does_not_wait_for_a_search_slot() {
    let mut server = Server::start_logging(&["--listen", "127.0.0.1:0"], "debug");
    // Every slot busy with a long search of clients that stay.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut busy: Vec<TcpClient> = (0..2 * cores)
        .map(|_| {
            let mut client = server.session();
            client.send(&open_position_request(20_000));
            client
        })
        .collect();
    // Black to move with a four on row 0: the win in one is answered at once.
    let win = board_with(
        20,
        20,
        &[(0, 0), (0, 1), (0, 2), (0, 3)],
        &[(5, 5), (6, 6), (7, 7), (9, 9)],
    );
    let mut client = server.session();
    let (reply, latency) = client.ask(&connect5::protocol::encode_request(
        &win,
        Rule::for_board(20, 20),
        20_000,
    ));
    assert_eq!(reply, "0 4");
    assert!(latency < Duration::from_secs(2), "{latency:?}");
    // The busy clients leave: their searches stop.
    busy.clear();
    server.wait_for_log("the client left");
}

/// The time-out flags reach the sessions (their exact behaviour is tested in-process, in
/// tests/session.rs): a silent client and a request that never ends, side by side, are closed
/// after the second the flags allow, each with its reason.
#[test]
fn the_time_out_flags_close_silent_clients_with_the_reason() {
    let server = Server::start(&["--idle-timeout", "1", "--request-timeout", "1"]);
    let mut idle = server.session();
    let mut slow = server.session();
    slow.send("15 15\n000000000000000\n");
    assert_eq!(
        idle.line(),
        "ERROR idle: no request for 1 s; closing the connection"
    );
    assert_eq!(
        slow.line(),
        "ERROR timeout: a request did not arrive in full within 1 s; closing the connection"
    );
    idle.expect_eof();
    slow.expect_eof();
}

#[test]
fn one_address_cannot_take_every_connection() {
    let mut server = Server::start_logging(
        &[
            "--listen",
            "127.0.0.1:0",
            "--max-connections",
            "8",
            "--max-connections-per-ip",
            "2",
        ],
        "debug",
    );
    let mut first = server.session();
    let mut second = server.session();
    let mut third = server.connect();
    let refusal = third.line();
    assert!(
        refusal.starts_with("ERROR busy: your address already holds 2 connections"),
        "{refusal:?}"
    );
    third.expect_eof();
    for client in [&mut first, &mut second] {
        let (good, answer) = good_request(1);
        assert_eq!(client.ask(&good).0, answer.to_string());
    }
    // A connection that ends gives its place back (once the server has seen it end).
    drop(first);
    server.wait_for_log("session over");
    let mut again = server.session();
    let (good, answer) = good_request(2);
    assert_eq!(again.ask(&good).0, answer.to_string());
}

/// This machine's address on its way out (not loopback), if it has one: what the kernel would use
/// to reach a documentation address (no packet is sent).
fn outward_address() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.254:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[test]
fn shutdown_is_refused_to_remote_clients_unless_allowed() {
    let Some(ip) = outward_address() else {
        eprintln!("no non-loopback address on this machine: the remote half is not tested");
        return;
    };
    let listen = format!("{ip}:0");
    let mut server = Server::start_exact(&["--listen", &listen]);
    let mut remote = server.session();
    remote.send("shutdown\n");
    let line = remote.line();
    assert!(line.starts_with("ERROR shutdown refused"), "{line:?}");
    // The session goes on, and so does the server.
    let (good, answer) = good_request(4);
    assert_eq!(remote.ask(&good).0, answer.to_string());
    assert!(server.running());
    drop(remote);
    drop(server);

    let mut allowed = Server::start_exact(&["--listen", &listen, "--remote-shutdown"]);
    let mut remote = allowed.session();
    remote.send("shutdown\n");
    assert!(allowed.wait_exit().success());
}

#[test]
fn a_server_without_the_shutdown_command_refuses_it_to_every_client_and_stops_on_a_signal() {
    let mut server = Server::start(&["--no-shutdown-command"]);
    let mut local = server.session();
    local.send("shutdown\n");
    let line = local.line();
    assert!(
        line.starts_with("ERROR shutdown refused") && line.contains("--no-shutdown-command"),
        "{line:?}"
    );
    let (good, answer) = good_request(4);
    assert_eq!(local.ask(&good).0, answer.to_string());
    assert!(server.running());
    server.signal("TERM");
    assert!(server.wait_exit().success());
}
