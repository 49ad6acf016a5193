//! MENACE, Donald Michie's matchbox machine (1961), as seed 000 specifies it.
//!
//! One box per position up to the eight symmetries of the square, created when first met. A box
//! starts with beads on every empty cell of its (canonical) position: 8, 8, 4, 4, 2, 2, 1, 1, 1 by
//! ply. A move is a bead drawn at random. After the game each drawn bead is removed when the game
//! was lost (unless it is the last bead of its box, so no box ever empties), one more of its colour
//! is added after a draw, three more after a win. The same table serves X and O: a position's
//! stone count says whose box it is.

use std::collections::HashMap;

use rand::rngs::StdRng;
use rand::Rng;

use super::grid::{Grid, CELLS, SYMMETRIES};
use super::stats::Outcome;

/// Beads per empty cell in a new box, by the number of stones already played (ply).
pub const INITIAL_BEADS: [u32; CELLS] = [8, 8, 4, 4, 2, 2, 1, 1, 1];
/// Beads one box may hold: far beyond what training reaches (three beads a won game), and low
/// enough that a box's total always fits the counters.
const MAX_BEADS_PER_BOX: u64 = 1 << 30;
/// Beads added to each played move after a draw and after a win.
pub const DRAW_REWARD: u32 = 1;
pub const WIN_REWARD: u32 = 3;

#[derive(Clone, Debug, Default)]
pub struct Menace {
    /// Beads per cell, in the frame of the canonical position the box belongs to.
    boxes: HashMap<Grid, [u32; CELLS]>,
    /// The beads drawn during the current game: (canonical position, canonical cell).
    drawn: Vec<(Grid, usize)>,
    /// When false (exploitation), beads are still drawn but never changed.
    pub learning: bool,
}

impl Menace {
    pub fn new() -> Menace {
        Menace {
            boxes: HashMap::new(),
            drawn: Vec::new(),
            learning: true,
        }
    }

    /// A fresh box for a canonical position: beads on one cell of each class of moves that the
    /// position's own symmetries make equivalent (as Michie's boxes, which held one colour per
    /// distinct move: the empty board has three, corner, edge and centre).
    fn new_box(canonical: Grid) -> [u32; CELLS] {
        let mut beads = [0; CELLS];
        let initial = INITIAL_BEADS[canonical.stones().min(CELLS - 1)];
        for cell in canonical.empty_cells() {
            if representative(canonical, cell) == cell {
                beads[cell] = initial;
            }
        }
        beads
    }

    /// For each cell of `grid`, the beads of the pile that playing there draws from (cells that
    /// the position's symmetries make equivalent share one pile and show the same count; a box
    /// not yet opened shows its initial beads).
    pub fn beads(&self, grid: Grid) -> [u32; CELLS] {
        let (canonical, s) = grid.canonical();
        let stored = self
            .boxes
            .get(&canonical)
            .copied()
            .unwrap_or_else(|| Menace::new_box(canonical));
        let mut beads = [0; CELLS];
        for (cell, slot) in beads.iter_mut().enumerate() {
            if grid.is_empty_cell(cell) {
                *slot = stored[representative(canonical, SYMMETRIES[s][cell])];
            }
        }
        beads
    }

    /// Number of boxes opened so far.
    pub fn boxes(&self) -> usize {
        self.boxes.len()
    }

    /// Draws a bead from `grid`'s box and remembers it for the end of the game.
    pub fn choose(&mut self, grid: Grid, rng: &mut StdRng) -> usize {
        let (canonical, s) = grid.canonical();
        let beads = *self
            .boxes
            .entry(canonical)
            .or_insert_with(|| Menace::new_box(canonical));
        let total: u32 = beads.iter().sum();
        let canonical_cell = if total == 0 {
            // Only a hand-edited state file can empty a box; play any legal move then.
            let empties: Vec<usize> = canonical.empty_cells().collect();
            empties[rng.gen_range(0..empties.len())]
        } else {
            let mut bead = rng.gen_range(0..total);
            let mut chosen = 0;
            for (cell, &count) in beads.iter().enumerate() {
                if bead < count {
                    chosen = cell;
                    break;
                }
                bead -= count;
            }
            chosen
        };
        self.record_draw(canonical, canonical_cell);
        // Back from the canonical frame: the cell that symmetry `s` sends onto `canonical_cell`.
        SYMMETRIES[s]
            .iter()
            .position(|&target| target == canonical_cell)
            .unwrap_or(canonical_cell)
    }

    /// Remembers that the bead of `cell` was drawn in `grid` (the hand-made games of the tests
    /// use this in place of [`Menace::choose`]).
    pub fn record_move(&mut self, grid: Grid, cell: usize) {
        let (canonical, s) = grid.canonical();
        self.boxes
            .entry(canonical)
            .or_insert_with(|| Menace::new_box(canonical));
        self.record_draw(canonical, representative(canonical, SYMMETRIES[s][cell]));
    }

    fn record_draw(&mut self, canonical: Grid, cell: usize) {
        if self.learning {
            self.drawn.push((canonical, cell));
        }
    }

    /// Applies the end-of-game rule to every bead drawn during the game.
    pub fn finish(&mut self, outcome: Outcome) {
        for (canonical, cell) in std::mem::take(&mut self.drawn) {
            let Some(beads) = self.boxes.get_mut(&canonical) else {
                continue;
            };
            match outcome {
                Outcome::Lost => {
                    let total: u32 = beads.iter().sum();
                    if total > 1 && beads[cell] > 0 {
                        beads[cell] -= 1;
                    }
                }
                Outcome::Drawn => beads[cell] = beads[cell].saturating_add(DRAW_REWARD),
                Outcome::Won => beads[cell] = beads[cell].saturating_add(WIN_REWARD),
            }
        }
    }

    /// Forgets everything learnt (menu choice 5).
    pub fn reset(&mut self) {
        self.boxes.clear();
        self.drawn.clear();
    }

    /// The boxes, for saving: (canonical position, beads).
    pub fn table(&self) -> impl Iterator<Item = (Grid, [u32; CELLS])> + '_ {
        self.boxes.iter().map(|(g, b)| (*g, *b))
    }

    /// Rebuilds a machine from saved boxes, refusing anything no game could have produced.
    pub fn from_table(
        entries: impl IntoIterator<Item = (Grid, [u32; CELLS])>,
    ) -> Result<Menace, MenaceTableError> {
        let mut menace = Menace::new();
        for (grid, beads) in entries {
            if grid.canonical().0 != grid {
                return Err(MenaceTableError::NotCanonical(grid));
            }
            if grid.to_move().is_none() {
                return Err(MenaceTableError::NoMoveToPlay(grid));
            }
            if beads
                .iter()
                .enumerate()
                .any(|(c, &n)| n > 0 && (!grid.is_empty_cell(c) || representative(grid, c) != c))
            {
                return Err(MenaceTableError::BeadsOnWrongCell(grid));
            }
            let total: u64 = beads.iter().map(|&n| u64::from(n)).sum();
            if total == 0 {
                return Err(MenaceTableError::NoBeadLeft(grid));
            }
            if total > MAX_BEADS_PER_BOX {
                return Err(MenaceTableError::TooManyBeads { grid, total });
            }
            if menace.boxes.insert(grid, beads).is_some() {
                return Err(MenaceTableError::Duplicate(grid));
            }
        }
        Ok(menace)
    }
}

/// A saved box that no game could have produced.
#[derive(Debug, thiserror::Error)]
pub enum MenaceTableError {
    #[error("box {0} is not in canonical form")]
    NotCanonical(Grid),
    #[error("box {0} is not a position where a move is played")]
    NoMoveToPlay(Grid),
    #[error("box {0} has beads on an occupied cell or a duplicate of a symmetric move")]
    BeadsOnWrongCell(Grid),
    #[error("box {0} has no bead left")]
    NoBeadLeft(Grid),
    #[error("box {grid} has {total} beads, more than the {MAX_BEADS_PER_BOX} a box may hold")]
    TooManyBeads { grid: Grid, total: u64 },
    #[error("box {0} appears twice")]
    Duplicate(Grid),
}

/// The smallest cell that a symmetry leaving `grid` unchanged sends `cell` to: moves with the same
/// representative lead to symmetric positions.
pub fn representative(grid: Grid, cell: usize) -> usize {
    SYMMETRIES
        .iter()
        .enumerate()
        .filter(|&(s, _)| grid.transformed(s) == grid)
        .map(|(_, perm)| perm[cell])
        .min()
        .unwrap_or(cell)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Stone;

    /// Plays the listed cells from the empty board, MENACE drawing the beads of the X moves.
    fn play_as_x(menace: &mut Menace, cells: &[usize]) -> Vec<Grid> {
        let mut grid = Grid::EMPTY;
        let mut before_x_moves = Vec::new();
        for &cell in cells {
            let side = grid.to_move().unwrap();
            if side == Stone::Black {
                before_x_moves.push(grid);
                menace.record_move(grid, cell);
            }
            grid = grid.with(cell, side);
        }
        before_x_moves
    }

    #[test]
    fn initial_beads_follow_the_ply() {
        let menace = Menace::new();
        assert_eq!(menace.beads(Grid::EMPTY), [8; 9]);
        let after_two = Grid::parse("XO.......").unwrap();
        let beads = menace.beads(after_two);
        assert_eq!(beads[0], 0);
        assert_eq!(beads[1], 0);
        assert!(beads[2..].iter().all(|&b| b == 4));
        let ply8 = Grid::parse("XOXOXOOX.").unwrap();
        assert_eq!(menace.beads(ply8)[8], 1);
    }

    #[test]
    fn win_adds_three_draw_adds_one_loss_removes_one() {
        // X: 4, 0, 8 wins on the diagonal (O plays 1 and 2).
        let cells = [4, 1, 0, 2, 8];
        let mut menace = Menace::new();
        let positions = play_as_x(&mut menace, &cells);
        menace.finish(Outcome::Won);
        assert_eq!(menace.beads(positions[0])[4], 8 + 3);
        assert_eq!(menace.beads(positions[1])[0], 4 + 3);
        assert_eq!(menace.beads(positions[2])[8], 2 + 3);
        // Untouched cells keep their initial beads.
        assert_eq!(menace.beads(positions[0])[0], 8);

        let mut menace = Menace::new();
        let positions = play_as_x(&mut menace, &cells);
        menace.finish(Outcome::Drawn);
        assert_eq!(menace.beads(positions[0])[4], 9);

        let mut menace = Menace::new();
        let positions = play_as_x(&mut menace, &cells);
        menace.finish(Outcome::Lost);
        assert_eq!(menace.beads(positions[0])[4], 7);
        assert_eq!(menace.beads(positions[2])[8], 1);
    }

    #[test]
    fn symmetric_positions_share_a_box() {
        let mut menace = Menace::new();
        // X in a corner, then a win; the same corner seen rotated must show the same reward.
        menace.record_move(Grid::EMPTY, 0);
        menace.finish(Outcome::Won);
        // The four corners are one move of the empty board: one pile, three beads more.
        let beads = menace.beads(Grid::EMPTY);
        assert_eq!([beads[0], beads[2], beads[6], beads[8]], [11, 11, 11, 11]);
        assert_eq!([beads[1], beads[4]], [8, 8]);
        let rotated = Grid::parse("..X......").unwrap();
        let original = Grid::parse("X........").unwrap();
        // Both are "X in a corner, O to move": one box, seen in two frames.
        menace.record_move(original, 4);
        menace.finish(Outcome::Won);
        assert_eq!(menace.beads(rotated)[4], 8 + 3);
    }

    #[test]
    fn the_last_bead_of_a_box_is_never_removed() {
        let mut menace = Menace::new();
        // Ply 8: one empty cell, one bead. Losing with it leaves the bead in place.
        let grid = Grid::parse("XOXXOOOX.").unwrap();
        assert_eq!(grid.to_move(), Some(Stone::Black));
        menace.record_move(grid, 8);
        menace.finish(Outcome::Lost);
        assert_eq!(menace.beads(grid)[8], 1);
        // Ply 6 with three empty cells and one bead each: two losses leave one bead.
        let grid = Grid::parse("XOXOOX...").unwrap();
        for _ in 0..5 {
            menace.record_move(grid, 6);
            menace.finish(Outcome::Lost);
            menace.record_move(grid, 7);
            menace.finish(Outcome::Lost);
            menace.record_move(grid, 8);
            menace.finish(Outcome::Lost);
        }
        let beads = menace.beads(grid);
        assert_eq!(beads[6] + beads[7] + beads[8], 1);
    }

    #[test]
    fn exploitation_changes_nothing() {
        let mut menace = Menace::new();
        menace.learning = false;
        menace.record_move(Grid::EMPTY, 4);
        menace.finish(Outcome::Won);
        assert_eq!(menace.beads(Grid::EMPTY)[4], 8);
    }
}
