//! The web board (src/http/web) in a real browser: `connect5 serve --http` and headless Chromium
//! driven through WebDriver (chromedriver) with fantoccini. It plays a whole game by clicks and
//! keys, analyses a position and reads the live updates, plays the morpion lab against MENACE,
//! and takes screenshots (target/screenshots/, and docs/screenshots/ when
//! `CONNECT5_SCREENSHOTS=docs`).
//!
//! Needs Debian's `chromium` and `chromium-driver` (`CONNECT5_CHROMIUM` and
//! `CONNECT5_CHROMEDRIVER` override their paths). Without them the test prints a notice and
//! passes, unless `CONNECT5_REQUIRE_BROWSER` is set (as CI does), when it fails.
//!
//! Every wait polls the page for a condition with a time limit; the limits are failure guards,
//! never a way to let something happen.

mod common;

use std::future::Future;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use common::Server;
use fantoccini::{Client, ClientBuilder, Locator};
use serde::Deserialize;
use serde_json::{json, Value};

/// How long one condition may take before the test fails: generous, for a busy 2-core machine.
const WAIT: Duration = Duration::from_secs(40);
/// The whole browser session: a failure guard against a hung browser.
const WHOLE_TEST: Duration = Duration::from_secs(240);
/// How often a condition is checked.
const POLL: Duration = Duration::from_millis(40);

fn path_from_env(variable: &str, default: &str) -> PathBuf {
    std::env::var_os(variable)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(default))
}

/// Chromium and chromedriver, or why they cannot be used.
fn browser() -> Result<(PathBuf, PathBuf), String> {
    let chromium = path_from_env("CONNECT5_CHROMIUM", "/usr/bin/chromium");
    let driver = path_from_env("CONNECT5_CHROMEDRIVER", "/usr/bin/chromedriver");
    let missing: Vec<String> = [&chromium, &driver]
        .iter()
        .filter(|path| !path.is_file())
        .map(|path| path.display().to_string())
        .collect();
    if missing.is_empty() {
        Ok((chromium, driver))
    } else {
        Err(format!(
            "{} not found (Debian packages chromium and chromium-driver)",
            missing.join(" and ")
        ))
    }
}

/// The address from the server's `serving HTTP on http://ADDR/` log line.
fn http_address(server: &mut Server) -> SocketAddr {
    let line = server.wait_for_log("serving HTTP on http://");
    line.split("serving HTTP on http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|text| text.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP address in the log line {line:?}"))
}

/// chromedriver as a child process on a free port of 127.0.0.1, killed (by its handle) on drop.
struct Driver {
    child: Child,
    port: u16,
    log: Arc<Mutex<Vec<String>>>,
}

impl Driver {
    fn start(path: &Path) -> Driver {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port for chromedriver")
            .port();
        let mut child = Command::new(path)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", path.display()));
        let log = Arc::new(Mutex::new(Vec::new()));
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        collect_lines(stdout, Arc::clone(&log));
        collect_lines(stderr, Arc::clone(&log));
        let mut driver = Driver { child, port, log };
        driver.wait_ready();
        driver
    }

    /// Waits until chromedriver accepts connections (or has exited: then the test fails).
    fn wait_ready(&mut self) {
        let start = Instant::now();
        let addr = SocketAddr::from(([127, 0, 0, 1], self.port));
        loop {
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("chromedriver exited ({status})\n{}", self.log());
            }
            assert!(
                start.elapsed() < WAIT,
                "chromedriver does not listen on port {} after {WAIT:?}\n{}",
                self.port,
                self.log()
            );
            thread::sleep(POLL);
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn log(&self) -> String {
        self.log.lock().map(|l| l.join("\n")).unwrap_or_default()
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn collect_lines<R: Read + Send + 'static>(source: R, log: Arc<Mutex<Vec<String>>>) {
    thread::spawn(move || {
        for line in BufReader::new(source).lines() {
            let Ok(line) = line else { return };
            if let Ok(mut log) = log.lock() {
                log.push(line);
            }
        }
    });
}

/// One cell of `#board`, as the DOM shows it.
#[derive(Debug, Clone, Deserialize)]
struct Cell {
    row: usize,
    col: usize,
    stone: Option<String>,
    last: bool,
    win: bool,
    best: bool,
    beads: Option<String>,
}

const READ_BOARD: &str = "return Array.from(document.querySelectorAll('#board [data-row][data-col]')).map((c) => ({
    row: Number(c.dataset.row), col: Number(c.dataset.col), stone: c.dataset.stone || null,
    last: c.classList.contains('last'), win: c.classList.contains('win'),
    best: c.classList.contains('best'), beads: c.dataset.beads === undefined ? null : c.dataset.beads,
}));";

/// The page under test, with the checks the test needs.
struct Page {
    client: Client,
    screenshots: Vec<PathBuf>,
}

impl Page {
    async fn js(&self, script: &str) -> Value {
        self.client
            .execute(script, Vec::new())
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    async fn element(&self, id: &str) -> fantoccini::elements::Element {
        self.client
            .find(Locator::Id(id))
            .await
            .unwrap_or_else(|e| panic!("no element #{id}: {e}"))
    }

    async fn text(&self, id: &str) -> String {
        self.element(id)
            .await
            .text()
            .await
            .unwrap_or_else(|e| panic!("cannot read the text of #{id}: {e}"))
    }

    async fn click(&self, id: &str) {
        self.element(id)
            .await
            .click()
            .await
            .unwrap_or_else(|e| panic!("cannot click #{id}: {e}"));
    }

    async fn set_input(&self, id: &str, value: &str) {
        let input = self.element(id).await;
        input.clear().await.expect("clear an input");
        input.send_keys(value).await.expect("type into an input");
    }

    async fn select(&self, id: &str, value: &str) {
        self.element(id)
            .await
            .select_by_value(value)
            .await
            .unwrap_or_else(|e| panic!("cannot select {value} in #{id}: {e}"));
    }

    async fn board(&self) -> Vec<Cell> {
        serde_json::from_value(self.js(READ_BOARD).await).expect("the board's cells")
    }

    async fn engine_busy(&self) -> bool {
        self.js("return document.body.dataset.engineBusy").await == json!("1")
    }

    async fn click_cell(&self, row: usize, col: usize) {
        let selector = format!("#board [data-row=\"{row}\"][data-col=\"{col}\"]");
        self.client
            .find(Locator::Css(&selector))
            .await
            .unwrap_or_else(|e| panic!("no cell {row} {col}: {e}"))
            .click()
            .await
            .unwrap_or_else(|e| panic!("cannot click cell {row} {col}: {e}"));
    }

    /// Polls `probe` until it gives a value; fails the test after [`WAIT`].
    async fn wait_for<T, F, Fut>(&self, what: &str, mut probe: F) -> T
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Option<T>>,
    {
        let start = Instant::now();
        loop {
            if let Some(value) = probe().await {
                return value;
            }
            if start.elapsed() > WAIT {
                let status = self.text("status").await;
                panic!("waited {WAIT:?} for {what}; the status line says {status:?}");
            }
            tokio::time::sleep(POLL).await;
        }
    }

    async fn wait_engine_idle(&self) {
        self.wait_for("the engine's answer", || async {
            (!self.engine_busy().await).then_some(())
        })
        .await;
    }

    async fn screenshot(&mut self, name: &str) {
        self.js("window.scrollTo(0, 0)").await;
        let png = self.client.screenshot().await.expect("a screenshot");
        assert!(png.starts_with(b"\x89PNG"), "the screenshot is not a PNG");
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut folders = vec![root.join("target").join("screenshots")];
        if std::env::var("CONNECT5_SCREENSHOTS").as_deref() == Ok("docs") {
            folders.push(root.join("docs").join("screenshots"));
        }
        for folder in folders {
            std::fs::create_dir_all(&folder)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", folder.display()));
            let path = folder.join(name);
            std::fs::write(&path, &png)
                .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
            self.screenshots.push(path);
        }
    }
}

fn stone_at(cells: &[Cell], row: usize, col: usize) -> Option<&str> {
    cells
        .iter()
        .find(|c| c.row == row && c.col == col)
        .and_then(|c| c.stone.as_deref())
}

fn counts(cells: &[Cell]) -> (usize, usize) {
    let black = cells
        .iter()
        .filter(|c| c.stone.as_deref() == Some("black"))
        .count();
    let white = cells
        .iter()
        .filter(|c| c.stone.as_deref() == Some("white"))
        .count();
    (black, white)
}

/// The cells marked `win` must be one line of exactly five stones of `colour`: consecutive in
/// one direction, with no stone of that colour just beyond either end.
fn assert_winning_line(cells: &[Cell], colour: &str) {
    let mut line: Vec<(usize, usize)> = cells
        .iter()
        .filter(|c| c.win)
        .map(|c| (c.row, c.col))
        .collect();
    assert_eq!(line.len(), 5, "the winning line {line:?} is not 5 cells");
    for &(row, col) in &line {
        assert_eq!(
            stone_at(cells, row, col),
            Some(colour),
            "cell {row} {col} of the winning line is not {colour}"
        );
    }
    line.sort();
    let step = |a: (usize, usize), b: (usize, usize)| {
        (b.0 as isize - a.0 as isize, b.1 as isize - a.1 as isize)
    };
    let direction = step(line[0], line[1]);
    assert!(
        [(0, 1), (1, 0), (1, 1), (1, -1)].contains(&direction),
        "the winning cells {line:?} are not neighbours"
    );
    for pair in line.windows(2) {
        assert_eq!(
            step(pair[0], pair[1]),
            direction,
            "the winning cells {line:?} are not one straight line"
        );
    }
    let beyond = |(row, col): (usize, usize), sign: isize| {
        let r = row as isize + sign * direction.0;
        let c = col as isize + sign * direction.1;
        if r < 0 || c < 0 {
            return None;
        }
        stone_at(cells, r as usize, c as usize)
    };
    assert_ne!(
        beyond(line[0], -1),
        Some(colour),
        "the line is longer than 5"
    );
    assert_ne!(
        beyond(line[4], 1),
        Some(colour),
        "the line is longer than 5"
    );
}

/// A whole game on 7×7 (exact five), the human's moves by keyboard and clicks.
async fn play_a_game(page: &mut Page) {
    page.set_input("rows", "7").await;
    page.set_input("cols", "7").await;
    page.set_input("time", "100").await;
    page.select("colour", "black").await;
    page.click("new-game").await;
    let cells = page.board().await;
    assert_eq!(cells.len(), 49, "a 7×7 board has 49 cells");
    assert!(
        cells.iter().all(|c| c.stone.is_none()),
        "a new board is empty"
    );
    assert!(page.text("status").await.contains("Your move"));

    // The first move by keyboard: the cursor starts in the centre (3 3); three steps left, Enter.
    let board = page.element("board").await;
    page.js("document.getElementById('board').focus()").await;
    let left: char = fantoccini::key::Key::Left.into();
    let enter: char = fantoccini::key::Key::Enter.into();
    board
        .send_keys(&format!("{left}{left}{left}{enter}"))
        .await
        .expect("keys on the board");
    let cells = page.board().await;
    assert_eq!(
        stone_at(&cells, 3, 0),
        Some("black"),
        "Enter played a4 (3 0)"
    );
    assert!(
        cells.iter().any(|c| c.row == 3 && c.col == 0 && c.last),
        "the last move is marked"
    );

    // Then the human plays the first empty cell of rows 3, 2, 4, 1, 5, 0, 6 in turn.
    let order: Vec<(usize, usize)> = [3, 2, 4, 1, 5, 0, 6]
        .iter()
        .flat_map(|&row| (0..7).map(move |col| (row, col)))
        .collect();
    let mut human_moves = 1;
    let status = loop {
        page.wait_engine_idle().await;
        let status = page.text("status").await;
        assert!(!status.contains("Error"), "the API failed: {status}");
        let cells = page.board().await;
        let (black, white) = counts(&cells);
        if status.contains("wins") || status.contains("Draw") {
            break status;
        }
        assert_eq!(
            (black, white),
            (human_moves, human_moves),
            "the engine (white) answers each of black's moves once: {status}"
        );
        assert!(
            status.contains("Your move"),
            "not the human's turn: {status}"
        );
        let &(row, col) = order
            .iter()
            .find(|&&(row, col)| stone_at(&cells, row, col).is_none())
            .expect("an empty cell while the game goes on");
        page.click_cell(row, col).await;
        human_moves += 1;
        assert!(human_moves <= 25, "the game does not end");
    };

    let cells = page.board().await;
    let (black, white) = counts(&cells);
    assert!(
        black == white || black == white + 1,
        "impossible counts {black} black, {white} white"
    );
    let moves = page
        .js("return document.querySelectorAll('#moves button[data-ply]:not([data-ply=\"0\"])').length")
        .await;
    assert_eq!(moves, json!(black + white), "the move list has every stone");
    if status.contains("Black wins") {
        assert_winning_line(&cells, "black");
    } else if status.contains("White wins") {
        assert_winning_line(&cells, "white");
    } else {
        assert!(status.contains("Draw"), "{status}");
        assert!(
            cells.iter().all(|c| c.stone.is_some()),
            "a draw on a full board"
        );
        assert!(cells.iter().all(|c| !c.win));
    }
    let info = page.text("engine-info").await;
    assert!(
        info.contains("depth") && info.contains("nodes"),
        "the engine's last answer: {info:?}"
    );
    page.screenshot("web-board-game.png").await;
}

/// Analysis of a 15×15 position: at least two live updates of the depth, increasing; the best
/// move marked on an empty cell; Stop closes the stream.
async fn analyse_a_position(page: &mut Page) {
    page.select("mode", "analyse").await;
    page.set_input("analysis-time", "30000").await;
    // A quiet opening (black h8 i8, white h9 i7; black to move): no quick forced win, so the
    // search deepens for the whole budget.
    let mut rows = vec!["000000000000000".to_string(); 15];
    rows[6] = "0000000B0000000".to_string();
    rows[7] = "0000000NN000000".to_string();
    rows[8] = "00000000B000000".to_string();
    let text = format!("15 15\n{}\n", rows.join("\n"));
    page.set_input("position-text", &text).await;
    page.click("paste-position").await;
    let first = page
        .wait_for("a first analysis update", || async {
            let depth = page.text("analysis-depth").await;
            depth.parse::<u32>().ok()
        })
        .await;
    let second = page
        .wait_for("a deeper analysis update", || async {
            let depth = page.text("analysis-depth").await;
            depth.parse::<u32>().ok().filter(|&d| d > first)
        })
        .await;
    assert!(second > first);
    assert_eq!(
        page.js("return document.body.dataset.analysing").await,
        json!("1"),
        "the updates came while the stream was open"
    );
    let pv = page.text("analysis-pv").await;
    assert!(
        pv.split_whitespace().all(|name| {
            let letters = name.trim_end_matches(|c: char| c.is_ascii_digit());
            !letters.is_empty()
                && letters.chars().all(|c| c.is_ascii_lowercase())
                && name[letters.len()..].parse::<u32>().is_ok()
        }) && !pv.trim().is_empty(),
        "the best line is not in h8 form: {pv:?}"
    );
    let score = page.text("analysis-score").await;
    assert!(score != "–" && !score.is_empty(), "no score: {score:?}");
    assert!(page.text("analysis-nps").await.contains("nodes/s"));
    let cells = page.board().await;
    let best: Vec<&Cell> = cells.iter().filter(|c| c.best).collect();
    assert_eq!(best.len(), 1, "one best move marked");
    assert!(best[0].stone.is_none(), "the best move is not played");
    assert_eq!(counts(&cells), (2, 2), "the pasted position");
    page.screenshot("web-board-analysis.png").await;
    page.click("analyse-stop").await;
    page.wait_for("the analysis to stop", || async {
        (page.js("return document.body.dataset.analysing").await == json!("0")).then_some(())
    })
    .await;
    page.click("copy-position").await;
    let copied = page
        .element("position-text")
        .await
        .prop("value")
        .await
        .expect("the textarea's value")
        .unwrap_or_default();
    assert_eq!(copied, text, "copy gives back the pasted position");
}

/// The morpion lab against MENACE, which opens (you play O): its bead counts appear on the
/// board after each of its moves.
async fn play_morpion(page: &mut Page) {
    page.select("mode", "morpion").await;
    page.select("morpion-agent", "menace").await;
    page.select("morpion-side", "O").await;
    page.click("new-game").await;
    let mut agent_moves_seen = 0;
    let status = loop {
        page.wait_engine_idle().await;
        let status = page.text("status").await;
        assert!(!status.contains("Error"), "the API failed: {status}");
        let cells = page.board().await;
        assert_eq!(cells.len(), 9, "the morpion board is 3×3");
        let (x, o) = counts(&cells);
        if x == o + 1 {
            assert!(
                cells.iter().any(|c| c.beads.is_some()),
                "MENACE's bead counts are not shown after its move {x}"
            );
            agent_moves_seen += 1;
            if agent_moves_seen == 1 {
                let notes = page.text("morpion-notes").await;
                assert!(notes.contains("beads"), "the lab's panel: {notes:?}");
                page.screenshot("web-board-morpion.png").await;
            }
        }
        if status.contains("wins") || status.contains("Draw") {
            break status;
        }
        assert_eq!(x, o + 1, "MENACE (X) answers each of O's moves: {status}");
        let free = [4, 0, 8, 2, 6, 1, 3, 5, 7]
            .iter()
            .map(|&i| (i / 3, i % 3))
            .find(|&(row, col)| stone_at(&cells, row, col).is_none())
            .expect("a free cell while the game goes on");
        page.click_cell(free.0, free.1).await;
    };
    assert!(
        status.contains("X wins") || status.contains("O wins") || status.contains("Draw"),
        "{status}"
    );
    assert!(agent_moves_seen >= 1, "MENACE never moved");
}

/// A phone-sized window (390×844 CSS pixels): the board fits the width.
async fn phone_sized(page: &mut Page) {
    page.select("mode", "play").await;
    page.select("colour", "black").await;
    page.set_input("rows", "15").await;
    page.set_input("cols", "15").await;
    page.click("new-game").await;
    page.client
        .set_window_size(390, 844)
        .await
        .expect("resize the window");
    // The window's frame, if any, takes some of it: size the viewport itself.
    let inner = page
        .js("return [window.innerWidth, window.innerHeight]")
        .await;
    let inner: (u32, u32) = serde_json::from_value(inner).expect("the viewport's size");
    if inner != (390, 844) {
        page.client
            .set_window_size(390 + 390 - inner.0.min(390), 844 + 844 - inner.1.min(844))
            .await
            .expect("resize the window");
    }
    page.click_cell(7, 7).await;
    page.wait_engine_idle().await;
    let cells = page.board().await;
    assert_eq!(stone_at(&cells, 7, 7), Some("black"), "the click played h8");
    assert_eq!(counts(&cells), (1, 1), "the engine answered");
    let fits = page
        .js("const r = document.getElementById('board').getBoundingClientRect();
             return [r.right, document.documentElement.clientWidth, document.documentElement.scrollWidth];")
        .await;
    let fits: (f64, f64, f64) = serde_json::from_value(fits).expect("the board's width");
    assert!(
        fits.0 <= fits.1 + 0.5,
        "the board ({} px) is wider than the viewport ({} px)",
        fits.0,
        fits.1
    );
    assert!(
        fits.2 <= fits.1 + 0.5,
        "the page scrolls sideways on a phone"
    );
    page.screenshot("web-board-phone.png").await;
}

async fn session(client: Client, url: String) -> Vec<PathBuf> {
    let mut page = Page {
        client,
        screenshots: Vec::new(),
    };
    page.client.goto(&url).await.expect("open the web board");
    page.wait_for("the board", || async {
        let cells = page
            .js("return document.querySelectorAll('#board [data-row]').length")
            .await;
        (cells.as_u64().unwrap_or(0) > 0).then_some(())
    })
    .await;
    assert_eq!(page.client.title().await.expect("title"), "connect5");
    play_a_game(&mut page).await;
    analyse_a_position(&mut page).await;
    play_morpion(&mut page).await;
    phone_sized(&mut page).await;
    page.screenshots
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_board_plays_analyses_and_runs_the_morpion_lab() {
    let (chromium, driver_path) = match browser() {
        Ok(paths) => paths,
        Err(why) if std::env::var_os("CONNECT5_REQUIRE_BROWSER").is_some() => {
            panic!("CONNECT5_REQUIRE_BROWSER is set but the browser test cannot run: {why}")
        }
        Err(why) => {
            // Straight to stderr, past the test harness' capture, so that the skip is seen.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED the web board test: {why}; set CONNECT5_REQUIRE_BROWSER to fail instead"
            );
            return;
        }
    };
    let started = Instant::now();
    let mut server = Server::start(&["--http", "127.0.0.1:0"]);
    let http = http_address(&mut server);
    let driver = Driver::start(&driver_path);
    let profile = tempfile::tempdir().expect("a browser profile folder");
    let mut args: Vec<String> = [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1200,1000",
    ]
    .iter()
    .map(|arg| arg.to_string())
    .collect();
    args.push(format!("--user-data-dir={}", profile.path().display()));
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".to_string(),
        json!({ "binary": chromium.to_string_lossy(), "args": args }),
    );
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    let client = ClientBuilder::new(connector)
        .capabilities(capabilities)
        .connect(&driver.url())
        .await
        .unwrap_or_else(|e| panic!("cannot open a browser session: {e}\n{}", driver.log()));

    // The session runs as a task so that the browser is closed even when a check fails.
    let task = tokio::spawn(session(client.clone(), format!("http://{http}/")));
    let outcome = tokio::time::timeout(WHOLE_TEST, task).await;
    let _ = client.close().await;
    match outcome {
        Ok(Ok(screenshots)) => {
            for path in screenshots {
                eprintln!("screenshot: {}", path.display());
            }
        }
        Ok(Err(error)) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        Ok(Err(error)) => panic!("the browser session failed: {error}"),
        Err(_) => panic!(
            "the browser session took more than {WHOLE_TEST:?}\n--- server log ---\n{}",
            server.log()
        ),
    }
    eprintln!("the web board test took {:?}", started.elapsed());
    drop(driver);
}
