//! The state file: MENACE's boxes and RL's averages, kept between runs (`--state FILE`).
//!
//! JSON, one table per learning player, under a slot name: `menace` / `rl` for the first player of
//! that kind on the command line, `menace#2` / `rl#2` for a second one (MENACE against MENACE).
//! Saving writes a temporary file next to the target and renames it over the target, so a crash
//! leaves the old file or the new one, never half of one. A file that cannot be read back exactly
//! (bad JSON, unknown format, impossible positions or counts) is reported and left untouched.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::agents::Agent;
use super::arena::Player;
use super::grid::{Grid, GridParseError, Status, CELLS};
use super::menace::{Menace, MenaceTableError};
use super::rl::{Estimate, Rl, RlTableError};

const FORMAT: &str = "connect5 morpion state";
const VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Document {
    format: String,
    version: u32,
    players: BTreeMap<String, Table>,
}

#[derive(Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
enum Table {
    Menace { boxes: Vec<BoxEntry> },
    Rl { moves: Vec<MoveEntry> },
}

#[derive(Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BoxEntry {
    position: String,
    beads: [u32; CELLS],
}

#[derive(Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct MoveEntry {
    position: String,
    cell: usize,
    /// Sum of the scores (+1 won, -1 lost, 0 drawn) of the games averaged, and their number
    /// (the initial "as if played once" included): Ŝ = total / count.
    total: i64,
    count: u64,
}

/// Why a state file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("state file {}: directory {} does not exist", path.display(), directory.display())]
    MissingDirectory { path: PathBuf, directory: PathBuf },
    #[error("cannot read state file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "state file {} is damaged: {damage}; it was left untouched (repair it, or remove it to start afresh)",
        path.display()
    )]
    Damaged { path: PathBuf, damage: Damage },
    #[error("cannot encode the state: {0}")]
    Encode(serde_json::Error),
    #[error("state file {} has no file name", path.display())]
    NoFileName { path: PathBuf },
    #[error("cannot write state file {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What is wrong inside a damaged state file.
#[derive(Debug, thiserror::Error)]
pub enum Damage {
    #[error("not valid JSON ({0})")]
    Json(serde_json::Error),
    #[error("format {format:?} version {version}, expected {FORMAT:?} version {VERSION}")]
    Format { format: String, version: u32 },
    #[error("{slot}: {entry}")]
    Entry { slot: String, entry: EntryError },
}

/// A saved entry that no game could have produced.
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    #[error(transparent)]
    Grid(#[from] GridParseError),
    #[error("position {0:?} cannot occur in a game")]
    ImpossiblePosition(String),
    #[error("cell {0} out of range")]
    CellOutOfRange(usize),
    #[error(transparent)]
    Menace(#[from] MenaceTableError),
    #[error(transparent)]
    Rl(#[from] RlTableError),
}

/// The tables of a state file, checked when read.
pub struct StateFile {
    path: PathBuf,
    menaces: BTreeMap<String, Menace>,
    rls: BTreeMap<String, Rl>,
}

impl StateFile {
    /// Reads `path`; a missing file is an empty state (created at the first save).
    pub fn load(path: &Path) -> Result<StateFile, StateError> {
        let mut state = StateFile {
            path: path.to_path_buf(),
            menaces: BTreeMap::new(),
            rls: BTreeMap::new(),
        };
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // Say now, not after hours of training, that the file could never be written.
                let directory = match path.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p,
                    _ => Path::new("."),
                };
                if !directory.is_dir() {
                    return Err(StateError::MissingDirectory {
                        path: path.to_path_buf(),
                        directory: directory.to_path_buf(),
                    });
                }
                return Ok(state);
            }
            Err(source) => {
                return Err(StateError::Read {
                    path: path.to_path_buf(),
                    source,
                })
            }
        };
        let damaged = |damage: Damage| StateError::Damaged {
            path: path.to_path_buf(),
            damage,
        };
        let document: Document =
            serde_json::from_str(&text).map_err(|e| damaged(Damage::Json(e)))?;
        if document.format != FORMAT || document.version != VERSION {
            return Err(damaged(Damage::Format {
                format: document.format,
                version: document.version,
            }));
        }
        for (slot, table) in document.players {
            let damaged_entry = |entry| {
                damaged(Damage::Entry {
                    slot: slot.clone(),
                    entry,
                })
            };
            match table {
                Table::Menace { boxes } => {
                    let menace = menace_of(boxes).map_err(damaged_entry)?;
                    state.menaces.insert(slot, menace);
                }
                Table::Rl { moves } => {
                    let rl = rl_of(moves).map_err(damaged_entry)?;
                    state.rls.insert(slot, rl);
                }
            }
        }
        Ok(state)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The saved MENACE of a slot, if any.
    pub fn menace(&self, slot: &str) -> Option<Menace> {
        self.menaces.get(slot).cloned()
    }

    pub fn rl(&self, slot: &str) -> Option<Rl> {
        self.rls.get(slot).cloned()
    }

    pub fn put_menace(&mut self, slot: &str, menace: &Menace) {
        self.menaces.insert(slot.to_string(), menace.clone());
    }

    pub fn put_rl(&mut self, slot: &str, rl: &Rl) {
        self.rls.insert(slot.to_string(), rl.clone());
    }

    /// Writes the file: a temporary file in the same directory, then a rename over the target.
    pub fn save(&self) -> Result<(), StateError> {
        let mut players = BTreeMap::new();
        for (slot, menace) in &self.menaces {
            let mut boxes: Vec<(Grid, [u32; CELLS])> = menace.table().collect();
            boxes.sort_by_key(|(g, _)| *g);
            let boxes = boxes
                .into_iter()
                .map(|(grid, beads)| BoxEntry {
                    position: grid.to_text(),
                    beads,
                })
                .collect();
            players.insert(slot.clone(), Table::Menace { boxes });
        }
        for (slot, rl) in &self.rls {
            let mut moves: Vec<(Grid, usize, Estimate)> = rl.table().collect();
            moves.sort_by_key(|(g, c, _)| (*g, *c));
            let moves = moves
                .into_iter()
                .map(|(grid, cell, e)| MoveEntry {
                    position: grid.to_text(),
                    cell,
                    total: e.total,
                    count: e.count,
                })
                .collect();
            players.insert(slot.clone(), Table::Rl { moves });
        }
        let document = Document {
            format: FORMAT.to_string(),
            version: VERSION,
            players,
        };
        let text = serde_json::to_string(&document).map_err(StateError::Encode)?;
        write_atomically(&self.path, text.as_bytes())
    }
}

/// A run's state file, if it has one, and the slot there of each of its two players (`None` for
/// a player that learns nothing).
pub struct SavedLearners {
    state: Option<StateFile>,
    slots: [Option<String>; 2],
}

impl SavedLearners {
    /// Reads the state file now, so that a damaged one stops the run before any game.
    pub fn open(path: Option<&Path>, slots: [Option<String>; 2]) -> Result<Self, StateError> {
        let state = path.map(StateFile::load).transpose()?;
        Ok(SavedLearners { state, slots })
    }

    /// Gives each learner the table saved in its slot, if there is one.
    pub fn restore(&self, players: [&mut Player; 2]) {
        let Some(state) = &self.state else {
            return;
        };
        for (player, slot) in players.into_iter().zip(&self.slots) {
            let Some(slot) = slot else {
                continue;
            };
            match &mut player.agent {
                Agent::Menace(menace) => {
                    if let Some(saved) = state.menace(slot) {
                        *menace = saved;
                    }
                }
                Agent::Rl(rl) => {
                    if let Some(saved) = state.rl(slot) {
                        *rl = saved;
                    }
                }
                _ => {}
            }
        }
    }

    /// Writes the learners' tables to the state file (nothing without a file or a learner).
    pub fn keep(&mut self, players: [&Player; 2]) -> Result<(), StateError> {
        let Some(state) = &mut self.state else {
            return Ok(());
        };
        if self.slots.iter().all(Option::is_none) {
            return Ok(());
        }
        for (player, slot) in players.into_iter().zip(&self.slots) {
            let Some(slot) = slot else {
                continue;
            };
            match &player.agent {
                Agent::Menace(menace) => state.put_menace(slot, menace),
                Agent::Rl(rl) => state.put_rl(slot, rl),
                _ => {}
            }
        }
        state.save()?;
        tracing::info!("state saved to {}", state.path().display());
        Ok(())
    }
}

fn menace_of(boxes: Vec<BoxEntry>) -> Result<Menace, EntryError> {
    let entries = boxes
        .into_iter()
        .map(|b| Ok((parse_position(&b.position)?, b.beads)))
        .collect::<Result<Vec<_>, EntryError>>()?;
    Ok(Menace::from_table(entries)?)
}

fn rl_of(moves: Vec<MoveEntry>) -> Result<Rl, EntryError> {
    let entries = moves
        .into_iter()
        .map(|m| {
            let grid = parse_position(&m.position)?;
            if m.cell >= CELLS {
                return Err(EntryError::CellOutOfRange(m.cell));
            }
            let estimate = Estimate {
                total: m.total,
                count: m.count,
            };
            Ok((grid, m.cell, estimate))
        })
        .collect::<Result<Vec<_>, EntryError>>()?;
    Ok(Rl::from_table(entries)?)
}

fn parse_position(text: &str) -> Result<Grid, EntryError> {
    let grid = Grid::parse(text)?;
    if grid.status() == Status::Impossible {
        return Err(EntryError::ImpossiblePosition(text.to_string()));
    }
    Ok(grid)
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), StateError> {
    let file_name = path.file_name().ok_or_else(|| StateError::NoFileName {
        path: path.to_path_buf(),
    })?;
    let mut temporary_name = std::ffi::OsString::from(".");
    temporary_name.push(file_name);
    temporary_name.push(format!(".tmp{}", std::process::id()));
    let temporary = path.with_file_name(temporary_name);
    let result = (|| {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    result.map_err(|source| {
        let _ = std::fs::remove_file(&temporary);
        StateError::Write {
            path: path.to_path_buf(),
            source,
        }
    })
}
