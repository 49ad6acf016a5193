//! The players a match can seat: the engine in-process, a program speaking the Connect5 protocol
//! on its standard streams, a Connect5 TCP server, or a Gomocup brain. One trait, so the game loop
//! never knows which it talks to; one file per kind.

mod builtin;
mod child;
mod gomocup;
mod process;
mod tcp;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::board::{Board, Move, Rule};
use crate::engine::params::{ParamError, SearchParams};
use crate::engine::{Clock, EngineConfig, EngineKind};
use crate::pool::SearchPool;
use crate::protocol::parse_reply;

pub use builtin::BuiltinPlayer;
pub use child::kill_all_players;
pub use gomocup::GomocupPlayer;
pub use process::ProcessPlayer;
pub use tcp::TcpPlayer;

/// How long a program or server may take to print its banner and `READY` (a Gomocup brain: to
/// answer `START`). The course referee waits forever; a match runner cannot.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(10);

/// The memory a Gomocup brain is allowed unless `memory=` says otherwise: Gomocup's and
/// c-gomoku-cli's 350 MB.
pub const DEFAULT_BRAIN_MEMORY: u64 = 350 << 20;

/// A move as a player answered it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub mv: Move,
    /// From the moment the request's last byte was flushed to the moment the answer line was
    /// read: the runner's own work is not charged to the player.
    pub elapsed: Duration,
}

/// Everything that can go wrong while asking a player for a move; each loses the game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The answer line is not a move.
    Unparsable { line: String, elapsed: Duration },
    /// The player answered with an error instead of a move (a Gomocup `ERROR` or `UNKNOWN`).
    Refused(String),
    /// The process ended, or the connection closed, before answering.
    Crashed(String),
    /// No answer within the longest wait the time rules allow; the player was killed.
    NoAnswer { waited: Duration },
    /// The player could not be started or reached.
    Unavailable(String),
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::Unparsable { line, .. } => {
                let shown: String = line.chars().take(60).collect();
                write!(f, "unparsable answer {shown:?}")
            }
            Fault::Refused(why) | Fault::Crashed(why) => write!(f, "{why}"),
            Fault::NoAnswer { waited } => write!(f, "no answer within {} ms", waited.as_millis()),
            Fault::Unavailable(why) => write!(f, "unavailable: {why}"),
        }
    }
}

/// Which time rules judge a player's replies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeRules {
    /// The course referee's: under a per-move time, up to half the budget late is tolerated and
    /// paid back on the next move (unless the match is `--strict`). Connect5-protocol players.
    Course,
    /// The Gomocup managers': a move over its time loses (beyond the match's tolerance).
    Gomocup,
}

/// What a player is told about its time for one move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveTime {
    /// The thinking time of this move, as the Connect5 protocol sends it: the player's clock
    /// turned into one move's share, less any overrun being paid back.
    pub budget: Duration,
    /// The player's clock as the Gomocup protocol describes it (`timeout_turn`, `time_left`).
    pub clock: Clock,
    /// The match clock's initial time (`timeout_match`), when the match has one.
    pub match_total: Option<Duration>,
}

/// One seat at the board. A player lives for the whole match and plays many games; after a fault
/// it starts afresh (new process, new connection) when the next game is prepared.
pub trait Player: Send {
    fn name(&self) -> &str;
    /// Which time rules judge its replies.
    fn time_rules(&self) -> TimeRules;
    /// Gets ready for a new game: starts the process or opens the connection if there is none.
    fn prepare(&mut self) -> Result<(), Fault>;
    /// Asks for a move on `board` with `time` to think; waits at most `limit` (from the moment
    /// the request is sent) before giving up on the player.
    fn ask(
        &mut self,
        board: &Board,
        rule: Rule,
        time: &MoveTime,
        limit: Duration,
    ) -> Result<Answer, Fault>;
    /// Ends the player for good (end of match).
    fn close(&mut self);
    /// This player's own thinking time per move (`time=`), instead of the match's.
    fn time_per_move(&self) -> Option<Duration> {
        None
    }
}

/// A player with a thinking time of its own (`time=MS`), for matches such as an engine at 400 ms
/// against itself at 100 ms.
struct OwnTime {
    inner: Box<dyn Player>,
    time: Duration,
}

impl Player for OwnTime {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn time_rules(&self) -> TimeRules {
        self.inner.time_rules()
    }
    fn prepare(&mut self) -> Result<(), Fault> {
        self.inner.prepare()
    }
    fn ask(
        &mut self,
        board: &Board,
        rule: Rule,
        time: &MoveTime,
        limit: Duration,
    ) -> Result<Answer, Fault> {
        self.inner.ask(board, rule, time, limit)
    }
    fn close(&mut self) {
        self.inner.close()
    }
    fn time_per_move(&self) -> Option<Duration> {
        Some(self.time)
    }
}

/// What `--player1`/`--player2` describe.
#[derive(Clone, Debug)]
pub enum PlayerKind {
    Builtin(EngineConfig),
    /// Program and arguments, run with the Connect5 protocol on stdin/stdout.
    Process(Vec<String>),
    /// `HOST:PORT` of a Connect5 TCP server.
    Tcp(String),
    /// Program and arguments of a Gomocup brain, and the memory it is allowed (`INFO
    /// max_memory`, bytes).
    Gomocup {
        words: Vec<String>,
        max_memory: u64,
    },
}

impl PlayerKind {
    /// Whether the player is a program the match runs (its stderr goes to a log file).
    pub fn runs_a_program(&self) -> bool {
        matches!(self, PlayerKind::Process(_) | PlayerKind::Gomocup { .. })
    }
}

/// A player as the command line describes it.
#[derive(Clone, Debug)]
pub struct PlayerSpec {
    pub name: String,
    pub kind: PlayerKind,
    /// Thinking time per move of this player, when not the match's.
    pub time: Option<Duration>,
}

/// Why a player description (`--player1`, `--player2`) was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlayerSpecError {
    #[error("a player has exactly one kind (builtin, cmd:, tcp: or gomocup:)")]
    TwoKinds,
    #[error(
        "no player kind given: expected builtin[:options], cmd:PROGRAM, tcp:HOST:PORT or gomocup:PROGRAM"
    )]
    NoKind,
    #[error(
        "unknown player token {0:?}: expected builtin[:options], cmd:PROGRAM, tcp:HOST:PORT, gomocup:PROGRAM or key=value"
    )]
    UnknownToken(String),
    #[error("builtin option {0:?} is not key=value (engine=, depth=, nodes=, hash=, name=)")]
    BuiltinOptionNotKeyValue(String),
    #[error("unclosed quote in command {0:?}")]
    UnclosedQuote(String),
    /// `cmd:` or `gomocup:` with nothing after it.
    #[error("{0}: needs a program to run")]
    NoProgram(&'static str),
    #[error("tcp address {0:?} is not HOST:PORT")]
    NotHostPort(String),
    #[error("name= needs a name")]
    EmptyName,
    /// `key=value` whose value does not parse; `expected` says what it should be.
    #[error("{key}={value:?} is not {expected}")]
    NotANumber {
        key: &'static str,
        value: String,
        expected: &'static str,
    },
    #[error("hash={0} out of range: 1 to 65536 MiB")]
    HashOutOfRange(usize),
    /// The engine's own message (`unknown engine …`).
    #[error("{0}")]
    UnknownEngine(String),
    #[error("{key}= applies to {kind} players only")]
    WrongKind { key: String, kind: &'static str },
    #[error(
        "unknown player option {0:?} (name=, time=, engine=, depth=, nodes=, hash=, memory=, cmd=, tcp=, gomocup=, or a search parameter of a builtin player)"
    )]
    UnknownOption(String),
    /// A search parameter (`engine::params`) of a builtin player that does not parse.
    #[error("{0}")]
    Param(ParamError),
}

/// One word of a player description.
enum SpecToken<'a> {
    /// A kind, with the `key=value,…` list that may follow `builtin:` (empty for other kinds).
    Kind(PlayerKind, &'a str),
    /// A `key=value` option.
    Option(&'a str, &'a str),
}

/// Parses a player description: tokens that are either a kind (`builtin[:key=value,…]`,
/// `cmd:PROGRAM ARGS`, `tcp:HOST:PORT`, `gomocup:PROGRAM ARGS`) or `key=value` options (`name=`,
/// `time=`, `cmd=`, `tcp=`, `gomocup=`, `engine=`, `depth=`, `nodes=`, `hash=`, `memory=`).
pub fn parse_player_spec(tokens: &[String]) -> Result<PlayerSpec, PlayerSpecError> {
    let mut kind: Option<PlayerKind> = None;
    let mut options: Vec<(&str, &str)> = Vec::new();
    for token in tokens.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
        match parse_spec_token(token)? {
            SpecToken::Kind(new_kind, builtin_options) => {
                if kind.replace(new_kind).is_some() {
                    return Err(PlayerSpecError::TwoKinds);
                }
                for option in builtin_options.split(',').filter(|o| !o.trim().is_empty()) {
                    let (key, value) = option.split_once('=').ok_or_else(|| {
                        PlayerSpecError::BuiltinOptionNotKeyValue(option.to_string())
                    })?;
                    options.push((key.trim(), value.trim()));
                }
            }
            SpecToken::Option(key, value) => options.push((key.trim(), value.trim())),
        }
    }
    // Options apply once every token is read: `depth=3 builtin` is as good as `builtin depth=3`.
    let mut draft = DraftSpec {
        kind: kind.ok_or(PlayerSpecError::NoKind)?,
        name: None,
        time: None,
    };
    for (key, value) in options {
        draft.apply(key, value)?;
    }
    Ok(draft.finish())
}

fn parse_spec_token(token: &str) -> Result<SpecToken<'_>, PlayerSpecError> {
    let after = |prefixes: [&str; 2]| prefixes.iter().find_map(|p| token.strip_prefix(p));
    if token == "builtin" {
        Ok(SpecToken::Kind(
            PlayerKind::Builtin(EngineConfig::default()),
            "",
        ))
    } else if let Some(options) = token.strip_prefix("builtin:") {
        Ok(SpecToken::Kind(
            PlayerKind::Builtin(EngineConfig::default()),
            options,
        ))
    } else if let Some(command) = after(["cmd:", "cmd="]) {
        let words = program_words(command, "cmd")?;
        Ok(SpecToken::Kind(PlayerKind::Process(words), ""))
    } else if let Some(command) = after(["gomocup:", "gomocup="]) {
        let words = program_words(command, "gomocup")?;
        let max_memory = DEFAULT_BRAIN_MEMORY;
        Ok(SpecToken::Kind(
            PlayerKind::Gomocup { words, max_memory },
            "",
        ))
    } else if let Some(address) = after(["tcp:", "tcp="]) {
        if !address.contains(':') {
            return Err(PlayerSpecError::NotHostPort(address.to_string()));
        }
        Ok(SpecToken::Kind(PlayerKind::Tcp(address.to_string()), ""))
    } else if let Some((key, value)) = token.split_once('=') {
        Ok(SpecToken::Option(key, value))
    } else {
        Err(PlayerSpecError::UnknownToken(token.to_string()))
    }
}

/// A player spec whose kind is known, while its options are applied.
struct DraftSpec {
    kind: PlayerKind,
    name: Option<String>,
    time: Option<Duration>,
}

impl DraftSpec {
    fn apply(&mut self, key: &str, value: &str) -> Result<(), PlayerSpecError> {
        match (key, &mut self.kind) {
            ("name", _) if value.is_empty() => return Err(PlayerSpecError::EmptyName),
            ("name", _) => self.name = Some(value.to_string()),
            ("time", _) => {
                let ms = parse_number("time", value, "a whole number of milliseconds")?;
                self.time = Some(Duration::from_millis(ms));
            }
            ("engine" | "depth" | "nodes" | "hash", PlayerKind::Builtin(config)) => {
                apply_engine_option(config, key, value)?
            }
            ("engine" | "depth" | "nodes" | "hash", _) => {
                return Err(PlayerSpecError::WrongKind {
                    key: key.to_string(),
                    kind: "builtin",
                })
            }
            (param, PlayerKind::Builtin(config)) if SearchParams::is_known(param) => {
                Arc::make_mut(&mut config.params)
                    .set(param, value)
                    .map_err(PlayerSpecError::Param)?
            }
            ("memory", PlayerKind::Gomocup { max_memory, .. }) => {
                let mb: u64 = parse_number("memory", value, "a size in MiB")?;
                *max_memory = mb << 20;
            }
            ("memory", _) => {
                return Err(PlayerSpecError::WrongKind {
                    key: key.to_string(),
                    kind: "gomocup",
                })
            }
            (other, _) => return Err(PlayerSpecError::UnknownOption(other.to_string())),
        }
        Ok(())
    }

    fn finish(self) -> PlayerSpec {
        let name = self.name.unwrap_or_else(|| default_name(&self.kind));
        PlayerSpec {
            name,
            kind: self.kind,
            time: self.time,
        }
    }
}

/// `engine=`, `depth=`, `nodes=` or `hash=` of a builtin player.
fn apply_engine_option(
    config: &mut EngineConfig,
    key: &str,
    value: &str,
) -> Result<(), PlayerSpecError> {
    match key {
        "engine" => {
            config.kind = value
                .parse::<EngineKind>()
                .map_err(PlayerSpecError::UnknownEngine)?
        }
        "depth" => {
            let depth: u32 = parse_number("depth", value, "a whole number of plies")?;
            config.max_depth = Some(depth.max(1));
        }
        "nodes" => {
            // The Gomocup brain's `INFO max_node`: the search stops at that many nodes (0: no
            // limit), so that a match between builtin players repeats on any machine and load.
            let nodes: u64 = parse_number("nodes", value, "a whole number of nodes")?;
            config.max_nodes = (nodes > 0).then_some(nodes);
        }
        _ => {
            let mb: usize = parse_number("hash", value, "a size in MiB")?;
            if !(1..=65_536).contains(&mb) {
                return Err(PlayerSpecError::HashOutOfRange(mb));
            }
            config.hash_bytes = mb << 20;
        }
    }
    Ok(())
}

/// The number in an option's value; `expected` names what it counts, for the error.
fn parse_number<T: std::str::FromStr>(
    key: &'static str,
    value: &str,
    expected: &'static str,
) -> Result<T, PlayerSpecError> {
    value.parse().map_err(|_| PlayerSpecError::NotANumber {
        key,
        value: value.to_string(),
        expected,
    })
}

fn default_name(kind: &PlayerKind) -> String {
    match kind {
        PlayerKind::Builtin(config) => {
            let engine = match config.kind {
                EngineKind::V1 => "v1",
                EngineKind::V2 => "v2",
            };
            let depth = config
                .max_depth
                .map(|d| format!("-d{d}"))
                .unwrap_or_default();
            let nodes = config
                .max_nodes
                .map(|n| format!("-n{n}"))
                .unwrap_or_default();
            format!("builtin-{engine}{depth}{nodes}")
        }
        PlayerKind::Process(words) | PlayerKind::Gomocup { words, .. } => Path::new(&words[0])
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| words[0].clone()),
        PlayerKind::Tcp(address) => address.clone(),
    }
}

/// The words of a program player's command (`cmd:` or `gomocup:`, named by `kind`), split as a
/// shell would split them (quotes, backslashes), since users type them as one shell word.
fn program_words(command: &str, kind: &'static str) -> Result<Vec<String>, PlayerSpecError> {
    // shell-words' only error is an unclosed quote.
    let words = shell_words::split(command)
        .map_err(|_| PlayerSpecError::UnclosedQuote(command.to_string()))?;
    if words.is_empty() {
        return Err(PlayerSpecError::NoProgram(kind));
    }
    Ok(words)
}

/// Where each player's process keeps its standard error.
#[derive(Clone, Debug)]
pub struct PlayerContext {
    /// Directory for `NAME.stderr.log` files.
    pub log_dir: PathBuf,
    /// Games played at once: the builtin engine keeps a larger safety reserve when crowded.
    pub concurrency: usize,
    pub start_timeout: Duration,
    /// Which worker this instance belongs to (several instances of one player run concurrently).
    pub worker: usize,
}

impl PlayerContext {
    /// Where a program player of this worker keeps its stderr.
    fn log_path(&self, name: &str) -> PathBuf {
        self.log_dir
            .join(format!("{}.{}.stderr.log", sanitize(name), self.worker))
    }
}

/// Builds the player a spec describes. Nothing is started until [`Player::prepare`].
pub fn make_player(spec: &PlayerSpec, context: &PlayerContext) -> Box<dyn Player> {
    let player = make_player_of_kind(spec, context);
    match spec.time {
        Some(time) => Box::new(OwnTime {
            inner: player,
            time,
        }),
        None => player,
    }
}

fn make_player_of_kind(spec: &PlayerSpec, context: &PlayerContext) -> Box<dyn Player> {
    match &spec.kind {
        PlayerKind::Builtin(config) => Box::new(BuiltinPlayer {
            name: spec.name.clone(),
            config: config.clone(),
            concurrency: context.concurrency,
            pool: Arc::new(SearchPool::with_slots(config.hash_bytes, 1)),
        }),
        PlayerKind::Process(words) => Box::new(ProcessPlayer {
            name: spec.name.clone(),
            words: words.clone(),
            log_path: context.log_path(&spec.name),
            start_timeout: context.start_timeout,
            running: None,
        }),
        PlayerKind::Gomocup { words, max_memory } => Box::new(GomocupPlayer::new(
            spec.name.clone(),
            words.clone(),
            context.log_path(&spec.name),
            context.start_timeout,
            *max_memory,
        )),
        PlayerKind::Tcp(address) => Box::new(TcpPlayer {
            name: spec.name.clone(),
            address: address.clone(),
            start_timeout: context.start_timeout,
            connection: None,
        }),
    }
}

/// A name made safe for a file name.
pub fn sanitize(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "player".to_string()
    } else {
        cleaned
    }
}

/// Whether a line is the ready word: `READY`, or `PRET` as the 2020 course edition says it.
fn is_ready_line(line: &str) -> bool {
    let word = line.trim_matches(|c: char| c.is_whitespace() || c == '\0');
    word.eq_ignore_ascii_case("READY") || word.eq_ignore_ascii_case("PRET")
}

fn answer_from_line(line: String, elapsed: Duration) -> Result<Answer, Fault> {
    match parse_reply(&line) {
        Ok(mv) => Ok(Answer { mv, elapsed }),
        Err(_) => Err(Fault::Unparsable { line, elapsed }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn specs_parse_into_kinds_and_names() {
        let spec = parse_player_spec(&words("builtin:engine=v1,depth=2,name=old")).unwrap();
        assert_eq!(spec.name, "old");
        let PlayerKind::Builtin(config) = spec.kind else {
            panic!("not builtin")
        };
        assert_eq!(config.kind, EngineKind::V1);
        assert_eq!(config.max_depth, Some(2));
        assert_eq!(config.max_nodes, None);

        let spec = parse_player_spec(&words("builtin nodes=50000")).unwrap();
        let PlayerKind::Builtin(config) = spec.kind else {
            panic!("not builtin")
        };
        assert_eq!(config.max_nodes, Some(50_000));
        assert_eq!(spec.name, "builtin-v2-n50000");
        let spec = parse_player_spec(&words("builtin nodes=50000 nodes=0")).unwrap();
        assert!(matches!(spec.kind, PlayerKind::Builtin(config) if config.max_nodes.is_none()));

        let spec = parse_player_spec(&["cmd:./connect5 stdio --engine v1".to_string()]).unwrap();
        assert_eq!(spec.name, "connect5");
        assert!(
            matches!(&spec.kind, PlayerKind::Process(w) if *w == words("./connect5 stdio --engine v1"))
        );

        let spec = parse_player_spec(&words("tcp:127.0.0.1:1199 name=server")).unwrap();
        assert!(matches!(&spec.kind, PlayerKind::Tcp(a) if a == "127.0.0.1:1199"));
        assert_eq!(spec.name, "server");
        assert_eq!(spec.time, None);

        let spec = parse_player_spec(&words("builtin:engine=v2,time=400 name=slow")).unwrap();
        assert_eq!(spec.time, Some(Duration::from_millis(400)));
        assert!(parse_player_spec(&words("builtin time=soon")).is_err());
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        assert!(parse_player_spec(&words("name=x")).is_err());
        assert!(parse_player_spec(&words("builtin:engine=v9")).is_err());
        assert!(parse_player_spec(&words("builtin depth=x")).is_err());
        assert!(parse_player_spec(&words("tcp:nowhere")).is_err());
        assert!(parse_player_spec(&words("builtin tcp:a:1")).is_err());
        assert!(parse_player_spec(&words("tcp:a:1 depth=3")).is_err());
        assert!(parse_player_spec(&["cmd:\"unclosed".to_string()]).is_err());
    }

    fn command_words(command: &str) -> Result<Vec<String>, PlayerSpecError> {
        match parse_player_spec(&[format!("cmd:{command}")])?.kind {
            PlayerKind::Process(words) => Ok(words),
            other => panic!("cmd: parsed as {other:?}"),
        }
    }

    #[test]
    fn commands_split_like_a_shell() {
        assert_eq!(
            command_words(r#"bash -c 'echo "a b"' x\ y"#).unwrap(),
            vec!["bash", "-c", "echo \"a b\"", "x y"]
        );
        // As in a shell: inside double quotes a backslash escapes only $ ` " \ and newline.
        assert_eq!(
            command_words(r#"prog "a\"b" "c\d""#).unwrap(),
            vec!["prog", "a\"b", "c\\d"]
        );
        assert_eq!(command_words("  "), Err(PlayerSpecError::NoProgram("cmd")));
        let unclosed = command_words("prog 'a b").unwrap_err();
        assert_eq!(
            unclosed.to_string(),
            r#"unclosed quote in command "prog 'a b""#
        );
    }

    #[test]
    fn errors_name_the_option_and_what_it_should_be() {
        let message = |text: &str| parse_player_spec(&words(text)).unwrap_err().to_string();
        assert_eq!(
            message("builtin depth=x"),
            r#"depth="x" is not a whole number of plies"#
        );
        assert_eq!(
            message("builtin nodes=many"),
            r#"nodes="many" is not a whole number of nodes"#
        );
        assert_eq!(
            message("gomocup:brain nodes=100"),
            "nodes= applies to builtin players only"
        );
        assert_eq!(
            message("builtin hash=0"),
            "hash=0 out of range: 1 to 65536 MiB"
        );
        assert_eq!(
            message("builtin memory=10"),
            "memory= applies to gomocup players only"
        );
        assert_eq!(
            message("tcp:a:1 engine=v1"),
            "engine= applies to builtin players only"
        );
        assert_eq!(
            message("builtin:depth"),
            r#"builtin option "depth" is not key=value (engine=, depth=, nodes=, hash=, name=)"#
        );
        assert_eq!(
            message("builtin:engine=v9"),
            r#"unknown engine "v9" (expected v1 or v2)"#
        );
    }
}
