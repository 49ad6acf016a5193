//! The HTTP API end to end: a real `connect5 serve --http` process, real HTTP/1.1 requests over
//! TCP on 127.0.0.1 (a small client here: the test sees exactly the bytes a client gets).

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use common::{Player, Server};
use serde_json::Value;

/// Generous: a failure guard on a busy machine, never a wait for something to happen.
const READ_LIMIT: Duration = Duration::from_secs(30);

struct HttpServer {
    server: Server,
    http: SocketAddr,
}

impl HttpServer {
    fn start(args: &[&str]) -> HttpServer {
        let mut all = vec!["--http", "127.0.0.1:0"];
        all.extend_from_slice(args);
        let mut server = Server::start(&all);
        let line = server.wait_for_log("serving HTTP on http://");
        let http = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .and_then(|addr| addr.parse().ok())
            .unwrap_or_else(|| panic!("no HTTP address in {line:?}"));
        HttpServer { server, http }
    }

    fn get(&self, path: &str) -> Response {
        request(self.http, "GET", path, None)
    }

    fn post(&self, path: &str, body: &str) -> Response {
        request(self.http, "POST", path, Some(body))
    }

    fn metrics(&self) -> String {
        let response = self.get("/metrics");
        assert_eq!(response.status, 200);
        response.text()
    }
}

#[derive(Debug)]
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    #[track_caller]
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.text()))
    }

    /// The error kind of an error answer.
    #[track_caller]
    fn error_kind(&self) -> String {
        self.json()["error"]["kind"]
            .as_str()
            .unwrap_or_else(|| panic!("no error kind in {:?}", self.text()))
            .to_string()
    }
}

fn send_request(addr: SocketAddr, method: &str, path: &str, body: Option<&str>) -> TcpStream {
    let mut stream = TcpStream::connect(addr).expect("connect to the HTTP server");
    stream
        .set_read_timeout(Some(READ_LIMIT))
        .expect("a read time-out");
    let body = body.unwrap_or("");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(body.as_bytes()))
        .expect("send the request");
    stream
}

/// The status line and headers of a response.
fn read_head(reader: &mut impl BufRead) -> (u16, Vec<(String, String)>) {
    let mut status_line = String::new();
    reader
        .read_line(&mut status_line)
        .expect("read the status line");
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("read a header");
        let line = line.trim_end();
        if line.is_empty() {
            return (status, headers);
        }
        let (name, value) = line.split_once(':').expect("a header line");
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
}

fn request(addr: SocketAddr, method: &str, path: &str, body: Option<&str>) -> Response {
    let stream = send_request(addr, method, path, body);
    let mut reader = BufReader::new(stream);
    let (status, headers) = read_head(&mut reader);
    let mut body = Vec::new();
    reader.read_to_end(&mut body).expect("read the body");
    let chunked = headers
        .iter()
        .any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        body = dechunk(&body);
    }
    Response {
        status,
        headers,
        body,
    }
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    while let Some(end) = raw.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(std::str::from_utf8(&raw[..end]).unwrap_or("0"), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        body.extend_from_slice(&raw[end + 2..end + 2 + size]);
        raw = &raw[end + 2 + size + 2..];
    }
    body
}

/// A server-sent event stream being read, chunk by chunk.
struct EventStream {
    reader: BufReader<TcpStream>,
    text: String,
}

impl EventStream {
    fn open(server: &HttpServer, body: &str) -> EventStream {
        let stream = send_request(server.http, "POST", "/v1/analyse", Some(body));
        let mut reader = BufReader::new(stream);
        let (status, headers) = read_head(&mut reader);
        assert_eq!(status, 200, "{headers:?}");
        let content_type = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.clone());
        assert_eq!(content_type.as_deref(), Some("text/event-stream"));
        EventStream {
            reader,
            text: String::new(),
        }
    }

    /// The next event's name and data (comments, the keep-alives, skipped); `None` at the end.
    fn next_event(&mut self) -> Option<(String, Value)> {
        loop {
            if let Some(end) = self.text.find("\n\n") {
                let block: String = self.text.drain(..end + 2).collect();
                let mut name = String::from("message");
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(value) = line.strip_prefix("event:") {
                        name = value.trim().to_string();
                    } else if let Some(value) = line.strip_prefix("data:") {
                        data.push_str(value.trim());
                    }
                }
                if data.is_empty() {
                    continue;
                }
                let value = serde_json::from_str(&data)
                    .unwrap_or_else(|e| panic!("event data not JSON ({e}): {data:?}"));
                return Some((name, value));
            }
            let mut size_line = String::new();
            self.reader
                .read_line(&mut size_line)
                .expect("read a chunk size");
            let size = usize::from_str_radix(size_line.trim(), 16).unwrap_or(0);
            if size == 0 {
                return None;
            }
            let mut chunk = vec![0; size + 2];
            self.reader.read_exact(&mut chunk).expect("read a chunk");
            self.text
                .push_str(&String::from_utf8_lossy(&chunk[..size]).replace("\r\n", "\n"));
        }
    }
}

/// A 15×15 opening: black h8, white i9.
const OPENING: &str = r#""size": {"rows": 15, "cols": 15}, "moves": [[7, 7], [6, 8]]"#;

#[track_caller]
fn assert_legal(answer: &Value, occupied: &[(u64, u64)], rows: u64, cols: u64) -> (u64, u64) {
    let row = answer["move"]["row"].as_u64().expect("a row");
    let col = answer["move"]["col"].as_u64().expect("a column");
    assert!(row < rows && col < cols, "{answer}");
    assert!(!occupied.contains(&(row, col)), "occupied cell: {answer}");
    (row, col)
}

#[test]
fn a_move_request_is_answered_with_a_legal_move_and_its_search() {
    let server = HttpServer::start(&[]);
    let response = server.post("/v1/move", &format!(r#"{{{OPENING}, "time_ms": 300}}"#));
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(response.header("content-type"), Some("application/json"));
    let answer = response.json();
    assert_legal(&answer, &[(7, 7), (6, 8)], 15, 15);
    assert_eq!(answer["side"], "black");
    assert_eq!(answer["source"], "search");
    assert!(answer["depth"].as_u64().expect("a depth") >= 1, "{answer}");
    assert!(answer["nodes"].as_u64().expect("nodes") > 0, "{answer}");
    assert_eq!(
        answer["pv"][0], answer["move"],
        "the best line starts with the move"
    );
    assert!(
        answer["time_ms"].as_u64().expect("a time") <= 300,
        "{answer}"
    );
    // The name is the gomoku players' one: column letter, row from the bottom.
    let (row, col) = (
        answer["move"]["row"].as_u64().unwrap_or(0),
        answer["move"]["col"].as_u64().unwrap_or(0),
    );
    let name = format!("{}{}", char::from(b'a' + col as u8), 15 - row);
    assert_eq!(answer["move"]["name"], name.as_str());

    // The same position as rows: white to move after three stones.
    let response = server.post(
        "/v1/move",
        r#"{"rows": ["00000", "0NB00", "00000", "00000", "00N00"], "time_ms": 200}"#,
    );
    let answer = response.json();
    assert_eq!(answer["side"], "white", "{answer}");
    assert_legal(&answer, &[(1, 1), (1, 2), (4, 2)], 5, 5);

    // A win in one needs no search.
    let response = server.post(
        "/v1/move",
        r#"{"rows": ["NNNN0000", "BBB00000", "00000000", "0000000B", "00000000", "00000000", "00000000", "00000000"], "time_ms": 1000}"#,
    );
    let answer = response.json();
    assert_eq!(answer["source"], "certain", "{answer}");
    assert_eq!(
        (
            answer["move"]["row"].as_u64(),
            answer["move"]["col"].as_u64()
        ),
        (Some(0), Some(4))
    );
}

#[test]
fn every_wrong_request_gets_its_error_kind_and_the_line_protocols_message() {
    let server = HttpServer::start(&[]);
    let cases: &[(&str, &str, u16, &str)] = &[
        (
            "/v1/move",
            r#"{"rows": ["000", "00"], "time_ms": 5}"#,
            400,
            "bad-row-length",
        ),
        (
            "/v1/move",
            r#"{"rows": ["0X0", "000", "000"], "time_ms": 5}"#,
            400,
            "unknown-character",
        ),
        (
            "/v1/move",
            r#"{"rows": ["NN0", "000", "000"], "time_ms": 5}"#,
            400,
            "impossible-counts",
        ),
        (
            "/v1/move",
            r#"{"rows": ["NNN", "BB0", "000"], "time_ms": 5}"#,
            400,
            "game-over",
        ),
        (
            "/v1/move",
            r#"{"rows": ["NBN", "NBB", "BNN"], "time_ms": 5}"#,
            400,
            "board-full",
        ),
        (
            "/v1/move",
            r#"{"rows": ["000", "000", "000"]}"#,
            400,
            "missing-time",
        ),
        (
            "/v1/move",
            r#"{"rows": ["000", "000", "000"], "time_ms": -1}"#,
            400,
            "bad-time",
        ),
        (
            "/v1/move",
            r#"{"rows": ["000", "000", "000"], "k": 7, "time_ms": 5}"#,
            400,
            "k-out-of-range",
        ),
        (
            "/v1/move",
            r#"{"size": {"rows": 200, "cols": 3}, "time_ms": 5}"#,
            400,
            "dimensions-out-of-range",
        ),
        (
            "/v1/move",
            r#"{"size": {"rows": 3, "cols": 3}, "moves": [[1, 1], [1, 1]], "time_ms": 5}"#,
            400,
            "bad-move",
        ),
        (
            "/v1/move",
            r#"{"size": {"rows": 3, "cols": 3}, "moves": [[0, 3]], "time_ms": 5}"#,
            400,
            "bad-move",
        ),
        ("/v1/move", "{not json", 400, "bad-json"),
        (
            "/v1/move",
            r#"{"rows": ["000"], "colour": "red", "time_ms": 5}"#,
            400,
            "bad-json",
        ),
        (
            "/v1/analyse",
            r#"{"rows": ["000", "00"]}"#,
            400,
            "bad-row-length",
        ),
        (
            "/v1/morpion/move",
            r#"{"grid": "XX", "agent": "perfect"}"#,
            400,
            "bad-grid",
        ),
        (
            "/v1/morpion/move",
            r#"{"grid": "XXXOO....", "agent": "perfect"}"#,
            400,
            "bad-grid",
        ),
        (
            "/v1/morpion/move",
            r#"{"grid": "X........", "agent": "deep-blue"}"#,
            400,
            "bad-agent",
        ),
        ("/v2/move", "{}", 404, "not-found"),
    ];
    let spec = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/openapi.yaml"))
        .expect("docs/openapi.yaml");
    for &(path, body, status, kind) in cases {
        assert!(
            spec.contains(kind),
            "docs/openapi.yaml does not list {kind}"
        );
        let response = server.post(path, body);
        assert_eq!(
            (response.status, response.error_kind().as_str()),
            (status, kind),
            "{path} {body}: {}",
            response.text()
        );
        let message = response.json()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(message.starts_with(&format!("{kind}: ")), "{message}");
    }
    let response = server.get("/v1/move");
    assert_eq!(
        (response.status, response.error_kind().as_str()),
        (405, "method-not-allowed")
    );
    let huge = format!(r#"{{"rows": ["{}"], "time_ms": 5}}"#, "0".repeat(2 << 20));
    let response = server.post("/v1/move", &huge);
    assert_eq!(
        (response.status, response.error_kind().as_str()),
        (413, "body-too-large")
    );

    // The same position over the line protocol gets the same message.
    let mut session = server.server.session();
    let (line, _) = session.ask("3 3\nNN0\n000\n000\n5\n");
    let http = server.post(
        "/v1/move",
        r#"{"rows": ["NN0", "000", "000"], "time_ms": 5}"#,
    );
    assert_eq!(
        line,
        format!(
            "ERROR {}",
            http.json()["error"]["message"].as_str().unwrap_or_default()
        )
    );

    // Nothing wrong was fatal: the server still answers.
    let response = server.post("/v1/move", &format!(r#"{{{OPENING}, "time_ms": 50}}"#));
    assert_eq!(response.status, 200, "{}", response.text());
}

#[test]
fn concurrent_requests_are_all_answered_and_counted() {
    let server = HttpServer::start(&[]);
    const CLIENTS: usize = 12;
    let answers: Vec<Response> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|i| {
                let http = server.http;
                scope.spawn(move || {
                    // Each client its own position: black's first stone moves along the diagonal.
                    let body = format!(
                        r#"{{"size": {{"rows": 15, "cols": 15}}, "moves": [[{i}, {i}], [0, 14]], "time_ms": 400}}"#
                    );
                    request(http, "POST", "/v1/move", Some(&body))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a client thread"))
            .collect()
    });
    for (i, response) in answers.iter().enumerate() {
        assert_eq!(response.status, 200, "{}", response.text());
        let i = i as u64;
        assert_legal(&response.json(), &[(i, i), (0, 14)], 15, 15);
    }
    let metrics = server.metrics();
    let answered: u64 = metrics
        .lines()
        .filter(|l| l.starts_with("connect5_replies_total{front=\"http\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum();
    assert_eq!(answered, CLIENTS as u64, "{metrics}");
    assert!(
        metrics.contains(&format!(
            "connect5_http_responses_total{{route=\"/v1/move\",status=\"200\"}} {CLIENTS}"
        )),
        "{metrics}"
    );
    assert!(
        metrics.contains("connect5_late_replies_total{front=\"http\"} 0"),
        "{metrics}"
    );
    assert!(
        metrics.contains(&format!(
            "connect5_reply_seconds_count{{front=\"http\"}} {CLIENTS}"
        )),
        "{metrics}"
    );
}

#[test]
fn an_analysis_streams_deeper_iterations_and_ends_with_the_answer() {
    let server = HttpServer::start(&[]);
    let mut events = EventStream::open(&server, &format!(r#"{{{OPENING}, "time_ms": 500}}"#));
    let mut depths = Vec::new();
    let done = loop {
        let (name, data) = events
            .next_event()
            .expect("an event before the stream ends");
        match name.as_str() {
            "progress" => {
                assert_legal(&data, &[(7, 7), (6, 8)], 15, 15);
                assert_eq!(data["pv"][0], data["move"]);
                depths.push(data["depth"].as_u64().expect("a depth"));
            }
            "done" => break data,
            other => panic!("unexpected event {other}: {data}"),
        }
    };
    assert!(depths.len() >= 2, "{depths:?}");
    assert!(depths.windows(2).all(|w| w[0] < w[1]), "{depths:?}");
    assert_legal(&done, &[(7, 7), (6, 8)], 15, 15);
    assert_eq!(done["source"], "search");
    assert_eq!(done["depth"].as_u64(), depths.last().copied(), "{done}");
    assert!(events.next_event().is_none(), "the stream ends after done");
}

#[test]
fn an_analysis_whose_client_leaves_stops_its_search_and_frees_its_slot() {
    let mut server = HttpServer::start(&[]);
    // A minute of analysis, abandoned after two iterations.
    let mut events = EventStream::open(&server, &format!(r#"{{{OPENING}, "time_ms": 60000}}"#));
    for _ in 0..2 {
        let (name, _) = events.next_event().expect("a progress event");
        assert_eq!(name, "progress");
    }
    let left = Instant::now();
    drop(events);
    server
        .server
        .wait_for_log("the client left: search stopped");
    server
        .server
        .wait_for_log("an abandoned search stopped and freed its slot");
    let health = server.get("/healthz").json();
    assert_eq!(health["searches_running"], 0, "{health}");
    assert!(
        left.elapsed() < Duration::from_secs(20),
        "the search ran on for {:?}",
        left.elapsed()
    );
}

#[test]
fn health_metrics_and_the_web_board_are_served() {
    let server = HttpServer::start(&[]);
    let health = server.get("/healthz");
    assert_eq!(health.status, 200);
    let health = health.json();
    assert_eq!(health["status"], "ok");
    assert_eq!(health["version"], env!("CARGO_PKG_VERSION"));
    assert!(health["search_slots"].as_u64().expect("slots") >= 1);

    let mut session = server.server.session();
    let _ = session.ask("5 5\n00000\n00000\n00N00\n00000\n00000\n100\n");
    // The session counts its reply once it is written, a moment after the client has read it.
    let counted = "connect5_replies_total{front=\"line\",outcome=\"searched\"} 1";
    let deadline = Instant::now() + READ_LIMIT;
    let metrics = loop {
        let metrics = server.get("/metrics");
        if metrics.text().contains(counted) || Instant::now() > deadline {
            break metrics;
        }
    };
    assert_eq!(metrics.status, 200);
    assert!(metrics
        .header("content-type")
        .unwrap_or_default()
        .starts_with("text/plain; version=0.0.4"));
    let text = metrics.text();
    for name in [
        "# TYPE connect5_replies_total counter",
        "# TYPE connect5_reply_seconds histogram",
        "# TYPE connect5_late_replies_total counter",
        "# TYPE connect5_searches_running gauge",
        "# TYPE connect5_searches_waiting gauge",
        "# TYPE connect5_connections gauge",
        "connect5_connections{front=\"line\"} 1",
        "connect5_replies_total{front=\"line\",outcome=\"searched\"} 1",
    ] {
        assert!(text.contains(name), "missing {name:?}:\n{text}");
    }

    let page = server.get("/");
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let html = page.text();
    for file in ["app.js", "style.css"] {
        assert!(html.contains(file), "the page does not load {file}");
        let response = server.get(&format!("/{file}"));
        assert_eq!(response.status, 200);
        assert!(!response.body.is_empty());
    }
}

#[test]
fn the_morpion_lab_answers_with_its_agents() {
    let server = HttpServer::start(&[]);
    // X threatens the top row: the perfect player blocks, and knows every other move loses.
    let response = server.post(
        "/v1/morpion/move",
        r#"{"grid": "XX..O....", "agent": "perfect"}"#,
    );
    assert_eq!(response.status, 200, "{}", response.text());
    let answer = response.json();
    assert_eq!(answer["cell"], 2, "{answer}");
    assert_eq!(answer["values"][2], 0, "{answer}");
    assert_eq!(answer["values"][3], -1, "{answer}");
    assert!(answer["values"][0].is_null(), "occupied: {answer}");

    let response = server.post(
        "/v1/morpion/move",
        r#"{"grid": "X........", "agent": "menace"}"#,
    );
    let answer = response.json();
    let beads: Vec<u64> = answer["beads"]
        .as_array()
        .expect("MENACE's beads")
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    assert_eq!(beads.len(), 9, "{answer}");
    assert_eq!(beads[0], 0, "no bead for an occupied cell: {answer}");
    let cell = answer["cell"].as_u64().expect("a cell") as usize;
    assert!(
        cell != 0 && beads[cell] > 0,
        "MENACE plays a cell it has beads for: {answer}"
    );

    let response = server.post(
        "/v1/morpion/move",
        r#"{"grid": "X...O...X", "agent": "rl"}"#,
    );
    let cell = response.json()["cell"].as_u64().expect("a cell");
    assert!(![0, 4, 8].contains(&cell), "{}", response.text());
}

#[test]
fn a_shutdown_lets_an_http_move_in_flight_finish_then_stops_both_front_ends() {
    let mut server = HttpServer::start(&[]);
    let http = server.http;
    let in_flight = std::thread::spawn(move || {
        request(
            http,
            "POST",
            "/v1/move",
            Some(&format!(r#"{{{OPENING}, "time_ms": 1500}}"#)),
        )
    });
    // The request is being answered once a search holds a slot.
    let deadline = Instant::now() + READ_LIMIT;
    while server.get("/healthz").json()["searches_running"] == 0 {
        assert!(Instant::now() < deadline, "the search never started");
        std::thread::yield_now();
    }
    let mut session = server.server.session();
    session.send("shutdown\n");
    let answered = in_flight.join().expect("the client thread");
    assert_eq!(answered.status, 200, "{}", answered.text());
    assert_legal(&answered.json(), &[(7, 7), (6, 8)], 15, 15);
    let status = server.server.wait_exit();
    assert!(status.success(), "{status:?}");
    assert!(TcpStream::connect(http).is_err(), "HTTP still accepts");
}

#[test]
fn a_body_that_does_not_arrive_in_time_is_refused_and_the_server_goes_on() {
    let server = HttpServer::start(&["--request-timeout", "1"]);
    let mut stream = TcpStream::connect(server.http).expect("connect");
    stream
        .set_read_timeout(Some(READ_LIMIT))
        .expect("a read time-out");
    stream
        .write_all(b"POST /v1/move HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"rows\":")
        .expect("send part of a request");
    let mut reader = BufReader::new(stream);
    let (status, _) = read_head(&mut reader);
    assert_eq!(status, 408);
    let response = server.post("/v1/move", &format!(r#"{{{OPENING}, "time_ms": 50}}"#));
    assert_eq!(response.status, 200, "{}", response.text());
}

#[test]
fn connections_beyond_the_limit_are_refused_busy_and_counted() {
    let server = HttpServer::start(&["--max-connections", "1", "--search-slots", "1"]);
    // One connection held open (a kept-alive client between requests)…
    let mut held = TcpStream::connect(server.http).expect("connect");
    held.set_read_timeout(Some(READ_LIMIT))
        .expect("a read time-out");
    held.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .expect("send");
    let mut reader = BufReader::new(held);
    let (status, headers) = read_head(&mut reader);
    assert_eq!(status, 200);
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .expect("a content length");
    let mut body = vec![0; length];
    reader.read_exact(&mut body).expect("the body");
    let health: Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!(health["search_slots"], 1, "--search-slots sets the slots");
    // …so the next one is refused with the API's error body.
    let refused = server.get("/healthz");
    assert_eq!(
        (refused.status, refused.error_kind().as_str()),
        (503, "busy")
    );
    drop(reader);
    // Once the held connection is gone its place is free again (the server notices the close
    // asynchronously: ask until it has, within the limit).
    let deadline = Instant::now() + READ_LIMIT;
    let metrics = loop {
        let response = server.get("/metrics");
        if response.status == 200 {
            break response.text();
        }
        assert!(Instant::now() < deadline, "the place never came back");
    };
    assert!(
        metrics.contains("connect5_connections_refused_total{front=\"http\"} "),
        "{metrics}"
    );
    let refused: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("connect5_connections_refused_total{front=\"http\"} "))
        .and_then(|n| n.parse().ok())
        .expect("the refused count");
    assert!(refused >= 1, "{metrics}");
}
