//! The search position: a padded grid with per-cell, per-direction line states and patterns, all
//! updated incrementally on make/unmake.

use super::eval::CellTables;
use super::pattern::{self, Class, Combos, Pattern, PatternTable, HALF, NUM_CLASSES};
use crate::board::{Board, Move, Stone};
use crate::engine::zobrist::zobrist;

/// Wall cells around the board, so that every key window stays inside the arrays.
pub const PAD: usize = HALF;
pub const EMPTY: u8 = 0;
pub const WALL: u8 = 3;
/// Cells within this Chebyshev distance of a stone are candidate moves.
const NEAR_RADIUS: isize = 2;

/// How the grid holds a stone of `colour` (0 is an empty cell, 3 a wall).
#[inline(always)]
fn stone_code(colour: Stone) -> u8 {
    colour.index() as u8 + 1
}

/// One colour's line state out of a cell's two (see `Position::lines`).
#[inline(always)]
fn line_state(line: u32, colour: Stone) -> u16 {
    (line >> (16 * colour.index())) as u16
}

/// The two colours' line-state changes packed as `Position::lines` keeps them.
#[inline(always)]
fn both_colours(black: u16, white: u16) -> u32 {
    u32::from(black) | u32::from(white) << 16
}

pub struct Position {
    pub rows: usize,
    pub cols: usize,
    pub width: usize,
    cells: Vec<u8>,
    /// Per cell and direction: the relative line states (see `PatternTable`) of both colours,
    /// black's in the low half and white's in the high half, so that a stone shifts both with
    /// one addition (each half stays below 2^16, so no carry crosses between them).
    lines: Vec<[u32; 4]>,
    /// Per cell and colour: four 4-bit directional pattern codes.
    words: Vec<[u16; 2]>,
    class_counts: [[u32; NUM_CLASSES]; 2],
    /// Per colour: the learned values of its cells' combinations, as the side to move's (`OWN`)
    /// and as the opponent's (`OPP`); see `eval.rs`.
    eval_sums: [[i32; 2]; 2],
    near: Vec<u16>,
    /// Cells with a stone within `NEAR_RADIUS` (occupied ones included), in the order they
    /// became near a stone: a `make` appends, its `unmake` truncates.
    candidates: Vec<u32>,
    pub dirs: [isize; 4],
    hash: u64,
    empties: usize,
    stones: usize,
    table: &'static PatternTable,
    combos: &'static Combos,
    tables: &'static CellTables,
    /// One record per `make` of the search, so that `unmake` restores instead of recomputing.
    undo: Vec<Undo>,
    /// The cells each `make` re-read, with their pattern words from before it.
    saved_words: Vec<(u32, [u16; 2])>,
    /// `make_tactical` moves not yet taken back: while there are any, the evaluation's sums
    /// are stale.
    tactical_moves: usize,
}

/// What a `make` changed besides the line states (which `unmake` shifts back).
struct Undo {
    class_counts: [[u32; NUM_CLASSES]; 2],
    eval_sums: [[i32; 2]; 2],
    words_start: usize,
    candidates_len: usize,
    tactical: bool,
}

impl Position {
    /// The position of `board`, evaluated with the shipped tables.
    pub fn new(board: &Board, table: &'static PatternTable) -> Position {
        Position::with_tables(board, table, CellTables::shipped())
    }

    /// The position of `board`, evaluated and its moves ordered with `tables`' values.
    pub fn with_tables(
        board: &Board,
        table: &'static PatternTable,
        tables: &'static CellTables,
    ) -> Position {
        let rows = board.rows();
        let cols = board.cols();
        let width = cols + 2 * PAD;
        let height = rows + 2 * PAD;
        let size = width * height;
        let mut cells = vec![WALL; size];
        for r in 0..rows {
            for c in 0..cols {
                cells[(r + PAD) * width + c + PAD] = EMPTY;
            }
        }
        let w = width as isize;
        let dirs = [1, w, w + 1, w - 1];
        let mut pos = Position {
            rows,
            cols,
            width,
            cells,
            lines: vec![[0; 4]; size],
            words: vec![[0; 2]; size],
            class_counts: [[0; NUM_CLASSES]; 2],
            eval_sums: [[0; 2]; 2],
            near: vec![0; size],
            candidates: Vec::new(),
            dirs,
            hash: 0,
            empties: rows * cols,
            stones: 0,
            table,
            combos: pattern::combos(),
            tables,
            undo: Vec::new(),
            saved_words: Vec::new(),
            tactical_moves: 0,
        };
        // Line states of the empty board: only walls are set.
        for cell in 0..size {
            let (r, c) = ((cell / width) as isize, (cell % width) as isize);
            for (d, (dr, dc)) in [(0isize, 1isize), (1, 0), (1, 1), (1, -1)]
                .into_iter()
                .enumerate()
            {
                for f in 0..2 * HALF {
                    let offset = if f < HALF {
                        f as isize - HALF as isize
                    } else {
                        f as isize - HALF as isize + 1
                    };
                    let (nr, nc) = (r + dr * offset, c + dc * offset);
                    let wall = nr < 0
                        || nc < 0
                        || nr >= height as isize
                        || nc >= w
                        || pos.cells[nr as usize * width + nc as usize] == WALL;
                    if wall {
                        let wall = table.delta(f, false);
                        pos.lines[cell][d] += both_colours(wall, wall);
                    }
                }
            }
            if pos.cells[cell] == EMPTY {
                for colour in Stone::BOTH {
                    let word = pos.word_from_lines(cell, colour);
                    pos.words[cell][colour.index()] = word;
                    pos.add_contribution::<true>(cell, colour, 1);
                }
            }
        }
        for (mv, content) in board.cells() {
            if let Some(stone) = content {
                let cell = pos.cell_of(mv);
                pos.make(cell, stone);
            }
        }
        // The given stones are never taken back: their records would only hold memory.
        pos.undo.clear();
        pos.saved_words.clear();
        pos
    }

    /// The stones as a [`Board`] (`None` only for dimensions no board has, which a position
    /// made from a board never has).
    pub fn to_board(&self) -> Option<Board> {
        let mut board = Board::new(self.rows, self.cols).ok()?;
        for row in 0..self.rows {
            for col in 0..self.cols {
                let mv = Move::new(row, col);
                let stone = match self.cells[self.cell_of(mv)] {
                    EMPTY => None,
                    code if code == stone_code(Stone::Black) => Some(Stone::Black),
                    _ => Some(Stone::White),
                };
                board.set(mv, stone).ok()?;
            }
        }
        Some(board)
    }

    pub fn cell_of(&self, mv: Move) -> usize {
        (mv.row + PAD) * self.width + mv.col + PAD
    }

    pub fn move_of(&self, cell: usize) -> Move {
        Move::new(cell / self.width - PAD, cell % self.width - PAD)
    }

    pub fn centre(&self) -> usize {
        self.cell_of(Move::new(self.rows / 2, self.cols / 2))
    }

    #[inline]
    pub fn is_empty(&self, cell: usize) -> bool {
        self.cells[cell] == EMPTY
    }

    /// Whether `cell` is an empty cell of the board (false for padding and for any index past
    /// it: a cell read from the transposition table may come from another position).
    pub fn is_playable(&self, cell: usize) -> bool {
        self.cells.get(cell) == Some(&EMPTY)
    }

    pub fn hash(&self) -> u64 {
        self.hash
    }

    pub fn empties(&self) -> usize {
        self.empties
    }

    pub fn stones(&self) -> usize {
        self.stones
    }

    /// Whether one of the eight cells around the board cell `cell` holds a stone (the padding
    /// keeps every neighbour's index inside the grid).
    pub fn touches_a_stone(&self, cell: usize) -> bool {
        let w = self.width;
        [w + 1, w, w - 1, 1]
            .into_iter()
            .flat_map(|step| [cell - step, cell + step])
            .any(|n| !matches!(self.cells[n], EMPTY | WALL))
    }

    pub fn candidates(&self) -> &[u32] {
        &self.candidates
    }

    /// Number of empty cells where `colour` would make a pattern of class `class`.
    #[inline]
    pub fn count(&self, colour: Stone, class: Class) -> u32 {
        self.class_counts[colour.index()][class as usize]
    }

    /// Number of empty cells of class `class` or better.
    pub fn count_at_least(&self, colour: Stone, class: Class) -> u32 {
        self.class_counts[colour.index()][class as usize..]
            .iter()
            .sum()
    }

    #[inline]
    pub fn class(&self, cell: usize, colour: Stone) -> Class {
        self.combos.class(self.words[cell][colour.index()])
    }

    #[inline]
    pub fn value(&self, cell: usize, colour: Stone) -> i32 {
        self.combos.value(self.words[cell][colour.index()])
    }

    /// The combination (`pattern::combination_index`) of `colour`'s four patterns at `cell`.
    #[inline]
    pub fn combination(&self, cell: usize, colour: Stone) -> usize {
        self.combos
            .get(self.words[cell][colour.index()])
            .combination
    }

    /// Directional pattern code of `colour` at `cell` in direction `d`.
    #[inline]
    pub fn code(&self, cell: usize, colour: Stone, d: usize) -> Pattern {
        Pattern::from_bits(self.words[cell][colour.index()] >> (4 * d))
    }

    /// The per-combination values this position evaluates and orders moves with.
    #[inline]
    pub fn tables(&self) -> &'static CellTables {
        self.tables
    }

    /// What `colour`'s cells are worth to it as the side to move.
    #[inline]
    pub fn own_sum(&self, colour: Stone) -> i32 {
        debug_assert_eq!(self.tactical_moves, 0, "evaluation inside a tactical make");
        self.eval_sums[colour.index()][0]
    }

    /// What `colour`'s cells cost the side to move when `colour` is its opponent.
    #[inline]
    pub fn opp_sum(&self, colour: Stone) -> i32 {
        debug_assert_eq!(self.tactical_moves, 0, "evaluation inside a tactical make");
        self.eval_sums[colour.index()][1]
    }

    /// How many empty cells of `colour` have each combination (`pattern::combination_index`).
    pub fn combination_counts(&self, colour: Stone) -> Vec<u32> {
        let mut counts = vec![0; pattern::COMBINATIONS];
        for cell in 0..self.cells.len() {
            if self.cells[cell] == EMPTY {
                counts[self
                    .combos
                    .get(self.words[cell][colour.index()])
                    .combination] += 1;
            }
        }
        counts
    }

    /// The empty candidate cells where `colour` has class `class` or better.
    pub fn cells_of_class(&self, colour: Stone, class: Class, out: &mut Vec<usize>) {
        out.clear();
        for &c in &self.candidates {
            let c = c as usize;
            if self.cells[c] == EMPTY && self.class(c, colour) >= class {
                out.push(c);
            }
        }
    }

    /// The first empty cell of the board, in row order.
    pub fn first_empty(&self) -> Option<usize> {
        (0..self.cells.len()).find(|&c| self.cells[c] == EMPTY)
    }

    /// Whether a stone on `a` changes the line patterns of `b`: the same cell, or one on a common
    /// row, column or diagonal within the pattern window.
    #[inline]
    pub fn within_reach(&self, a: usize, b: usize) -> bool {
        let dr = (a / self.width).abs_diff(b / self.width);
        let dc = (a % self.width).abs_diff(b % self.width);
        dr.max(dc) <= HALF && (dr == 0 || dc == 0 || dr == dc)
    }

    /// The class `colour` would have at the empty cell `cell` once its opponent has a stone on
    /// `blocker`, an empty cell within reach of it (`within_reach`), without playing the stone:
    /// only the pattern of the line joining the two cells changes.
    pub fn class_after_block(&self, cell: usize, colour: Stone, blocker: usize) -> Class {
        let dr = (cell / self.width) as isize - (blocker / self.width) as isize;
        let dc = (cell % self.width) as isize - (blocker % self.width) as isize;
        // `cell` is `blocker` plus `j` steps of direction `d`.
        let (d, j) = if dr == 0 {
            (0, dc)
        } else if dc == 0 {
            (1, dr)
        } else if dr == dc {
            (2, dr)
        } else {
            (3, dr)
        };
        debug_assert_eq!(blocker as isize + self.dirs[d] * j, cell as isize);
        debug_assert!(j != 0 && j.unsigned_abs() <= HALF);
        // `blocker` lies `-j` steps from `cell`, the centre of `cell`'s window.
        let field = pattern::field_of_offset(-j);
        let state = line_state(self.lines[cell][d], colour) + self.table.delta(field, false);
        let code = self.table.code_at(state) as u16;
        let word = (self.words[cell][colour.index()] & !(0xF << (4 * d))) | code << (4 * d);
        self.combos.class(word)
    }

    /// The cells on the four lines through `cell`, at most `reach` away from it (walls included:
    /// the padding keeps every index inside the grid for reaches up to `HALF`).
    fn line_neighbours(&self, cell: usize, reach: usize) -> impl Iterator<Item = usize> + '_ {
        self.dirs.iter().flat_map(move |&step| {
            (1..=reach as isize).flat_map(move |i| {
                [cell as isize + step * i, cell as isize - step * i].map(|c| c as usize)
            })
        })
    }

    /// The empty cells within reach of one of `anchors` (on its lines, inside the pattern window)
    /// where `colour` has class `class` or better, each once, in no particular order.
    pub fn cells_of_class_near(
        &self,
        colour: Stone,
        class: Class,
        anchors: &[usize],
        out: &mut Vec<usize>,
    ) {
        out.clear();
        for &anchor in anchors {
            out.extend(
                self.line_neighbours(anchor, HALF)
                    .filter(|&c| self.cells[c] == EMPTY && self.class(c, colour) >= class),
            );
        }
        if anchors.len() > 1 {
            out.sort_unstable();
            out.dedup();
        }
    }

    /// The cell where `colour` makes five, looked for on the lines through `cell` first: after
    /// `colour` makes a four at `cell`, its completion is there.
    pub fn find_win_near(&self, colour: Stone, cell: usize) -> Option<usize> {
        if self.count(colour, Class::Win) == 0 {
            return None;
        }
        self.line_neighbours(cell, HALF - 1)
            .find(|&c| self.cells[c] == EMPTY && self.class(c, colour) == Class::Win)
            .or_else(|| self.find_win(colour))
    }

    /// First empty cell where `colour` makes five.
    pub fn find_win(&self, colour: Stone) -> Option<usize> {
        if self.count(colour, Class::Win) == 0 {
            return None;
        }
        self.candidates
            .iter()
            .map(|&c| c as usize)
            .find(|&c| self.cells[c] == EMPTY && self.class(c, colour) == Class::Win)
    }

    fn word_from_lines(&self, cell: usize, colour: Stone) -> u16 {
        let mut word = 0u16;
        for d in 0..4 {
            word |= (self.table.code_at(line_state(self.lines[cell][d], colour)) as u16) << (4 * d);
        }
        word
    }

    #[inline]
    fn add_contribution<const EVAL: bool>(&mut self, cell: usize, colour: Stone, sign: i32) {
        let combo = self.combos.get(self.words[cell][colour.index()]);
        if sign > 0 {
            self.class_counts[colour.index()][combo.class] += 1;
        } else {
            self.class_counts[colour.index()][combo.class] -= 1;
        }
        if EVAL {
            let sums = &mut self.eval_sums[colour.index()];
            sums[0] += sign * self.tables.own[combo.combination];
            sums[1] += sign * self.tables.opp[combo.combination];
        }
    }

    /// Re-reads the pattern of an empty cell in one direction after its key changed.
    #[inline]
    fn refresh<const EVAL: bool>(&mut self, cell: usize, d: usize) {
        for colour in Stone::BOTH {
            let code = self.table.code_at(line_state(self.lines[cell][d], colour)) as u16;
            let old = self.words[cell][colour.index()];
            let new_word = (old & !(0xF << (4 * d))) | (code << (4 * d));
            if new_word != old {
                let (old, new) = (self.combos.get(old), self.combos.get(new_word));
                self.class_counts[colour.index()][old.class] -= 1;
                self.class_counts[colour.index()][new.class] += 1;
                if EVAL {
                    let sums = &mut self.eval_sums[colour.index()];
                    sums[0] += self.tables.own[new.combination] - self.tables.own[old.combination];
                    sums[1] += self.tables.opp[new.combination] - self.tables.opp[old.combination];
                }
                self.words[cell][colour.index()] = new_word;
            }
        }
    }

    /// Puts a stone of `colour` on the empty cell `cell`.
    pub fn make(&mut self, cell: usize, colour: Stone) {
        self.place::<true>(cell, colour);
    }

    /// `make` for the threat searches, which read patterns and classes but never evaluate: the
    /// evaluation's sums are not updated (the matching `unmake` restores them), which saves 8%
    /// of `connect5 bench`'s instructions.
    pub fn make_tactical(&mut self, cell: usize, colour: Stone) {
        self.place::<false>(cell, colour);
    }

    #[inline(always)]
    fn place<const EVAL: bool>(&mut self, cell: usize, colour: Stone) {
        debug_assert_eq!(self.cells[cell], EMPTY);
        self.undo.push(Undo {
            class_counts: self.class_counts,
            eval_sums: self.eval_sums,
            words_start: self.saved_words.len(),
            candidates_len: self.candidates.len(),
            tactical: !EVAL,
        });
        self.tactical_moves += usize::from(!EVAL);
        for c in Stone::BOTH {
            self.add_contribution::<EVAL>(cell, c, -1);
        }
        self.cells[cell] = stone_code(colour);
        self.hash ^= zobrist(cell, colour);
        self.empties -= 1;
        self.stones += 1;
        self.shift_lines::<true, EVAL>(cell, colour);
        self.touch_near::<true>(cell);
    }

    /// Adds (`PLACE`) or takes away the contribution of a `colour` stone at `cell` to the line
    /// states of the cells within reach in the four directions. Make and unmake are this one
    /// update in opposite directions; placing also saves each cell's pattern words and re-reads
    /// them (removing leaves the words to `unmake`, which puts the saved ones back).
    #[inline(always)]
    fn shift_lines<const PLACE: bool, const EVAL: bool>(&mut self, cell: usize, colour: Stone) {
        // The change of a cell's line state, by where the stone lies from that cell: entry
        // `HALF + k` for a stone `k` steps after it (the centre's entry is unused).
        let deltas: [u32; 2 * HALF + 1] = std::array::from_fn(|k| {
            if k == HALF {
                return 0;
            }
            let f = pattern::field_of_offset(k as isize - HALF as isize);
            let (own, other) = (self.table.delta(f, true), self.table.delta(f, false));
            if colour == Stone::Black {
                both_colours(own, other)
            } else {
                both_colours(other, own)
            }
        });
        for d in 0..4 {
            let step = self.dirs[d];
            for i in 1..=HALF {
                let after = (cell as isize + step * i as isize) as usize;
                self.shift_line::<PLACE, EVAL>(after, d, deltas[HALF - i]);
                let before = (cell as isize - step * i as isize) as usize;
                self.shift_line::<PLACE, EVAL>(before, d, deltas[HALF + i]);
            }
        }
    }

    #[inline(always)]
    fn shift_line<const PLACE: bool, const EVAL: bool>(
        &mut self,
        cell: usize,
        d: usize,
        delta: u32,
    ) {
        let line = &mut self.lines[cell][d];
        if PLACE {
            *line = line.wrapping_add(delta);
            self.save_and_refresh::<EVAL>(cell, d);
        } else {
            *line = line.wrapping_sub(delta);
        }
    }

    /// Only empty cells have patterns to re-read (and so words to save).
    #[inline(always)]
    fn save_and_refresh<const EVAL: bool>(&mut self, cell: usize, d: usize) {
        if self.cells[cell] == EMPTY {
            self.saved_words.push((cell as u32, self.words[cell]));
            self.refresh::<EVAL>(cell, d);
        }
    }

    /// Removes the stone from `cell`, the reverse of the last `make` (moves are taken back in
    /// the reverse order of play; the stones the position was built with are never taken back).
    pub fn unmake(&mut self, cell: usize) {
        debug_assert!(Stone::BOTH
            .iter()
            .any(|&c| self.cells[cell] == stone_code(c)));
        let Some(undo) = self.undo.pop() else {
            // Only a stone the position was built with: leave the position whole and unchanged.
            debug_assert!(false, "unmake without a make");
            return;
        };
        let colour = if self.cells[cell] == stone_code(Stone::Black) {
            Stone::Black
        } else {
            Stone::White
        };
        self.cells[cell] = EMPTY;
        self.hash ^= zobrist(cell, colour);
        self.empties += 1;
        self.stones -= 1;
        self.shift_lines::<false, true>(cell, colour);
        self.touch_near::<false>(cell);
        // The cell's own words were left alone while it held the stone.
        for &(saved, words) in &self.saved_words[undo.words_start..] {
            self.words[saved as usize] = words;
        }
        self.saved_words.truncate(undo.words_start);
        self.class_counts = undo.class_counts;
        self.eval_sums = undo.eval_sums;
        self.tactical_moves -= usize::from(undo.tactical);
        // The cells that came near a stone with this one are the last ones listed.
        self.candidates.truncate(undo.candidates_len);
    }

    /// Counts the stone at `cell` in (`ADD`) or out of the nearness of the cells around it;
    /// a cell whose count becomes one joins the candidates (unmake takes them back in bulk).
    fn touch_near<const ADD: bool>(&mut self, cell: usize) {
        const SPAN: usize = 2 * NEAR_RADIUS as usize + 1;
        let w = self.width as isize;
        for dr in -NEAR_RADIUS..=NEAR_RADIUS {
            // One slice per row of the square, so that the loop needs no bounds checks.
            let start = (cell as isize + dr * w - NEAR_RADIUS) as usize;
            let near = &mut self.near[start..start + SPAN];
            if ADD {
                let cells = &self.cells[start..start + SPAN];
                for (offset, (count, &content)) in near.iter_mut().zip(cells).enumerate() {
                    *count += 1;
                    if *count == 1 && content != WALL {
                        self.candidates.push((start + offset) as u32);
                    }
                }
            } else {
                for count in near {
                    *count -= 1;
                }
            }
        }
    }

    /// Whether two positions hold the same stones, line states, patterns, counts and sums.
    #[cfg(test)]
    pub fn same_state(&self, other: &Position) -> bool {
        self.cells == other.cells
            && self.lines == other.lines
            && self.class_counts == other.class_counts
            && self.eval_sums == other.eval_sums
            && (0..self.cells.len())
                .all(|c| self.cells[c] != EMPTY || self.words[c] == other.words[c])
    }

    /// Whether the incremental patterns, counts and sums equal a recomputation from the lines.
    #[cfg(test)]
    pub fn recomputed_matches(&self) -> bool {
        let mut counts = [[0u32; NUM_CLASSES]; 2];
        let mut sums = [[0i32; 2]; 2];
        for cell in 0..self.cells.len() {
            if self.cells[cell] != EMPTY {
                continue;
            }
            for colour in Stone::BOTH {
                let word = self.word_from_lines(cell, colour);
                if word != self.words[cell][colour.index()] {
                    return false;
                }
                counts[colour.index()][self.combos.class(word) as usize] += 1;
                let combination = self.combos.get(word).combination;
                sums[colour.index()][0] += self.tables.own[combination];
                sums[colour.index()][1] += self.tables.opp[combination];
            }
        }
        counts == self.class_counts && sums == self.eval_sums
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Rule;
    use proptest::prelude::*;

    proptest! {
        /// Any sequence of moves made on any board (sizes from 5 to 20, rectangular, both rules)
        /// and taken back in reverse leaves the position as it was built; after every make the
        /// incremental patterns, counts and sums equal a fresh build of the same stones.
        #[test]
        fn make_and_unmake_are_exact_inverses(
            rows in 5usize..=20,
            cols in 5usize..=20,
            overline_wins in any::<bool>(),
            picks in proptest::collection::vec((0usize..400, 0usize..400), 1..40),
        ) {
            let table = pattern::table_for(5, overline_wins).unwrap();
            let empty = Board::new(rows, cols).unwrap();
            let mut pos = Position::new(&empty, table);
            let hash = pos.hash();
            let mut played = empty.clone();
            let mut moves = Vec::new();
            for (i, &(r, c)) in picks.iter().enumerate() {
                let mv = Move::new(r % rows, c % cols);
                if !played.is_empty_cell(mv) {
                    continue;
                }
                let stone = Stone::BOTH[i % 2];
                pos.make(pos.cell_of(mv), stone);
                played.play(mv, stone).unwrap();
                moves.push(mv);
                prop_assert!(pos.recomputed_matches());
                prop_assert!(pos.same_state(&Position::new(&played, table)));
            }
            // Tactical makes keep the patterns and counts exact and leave the sums to unmake.
            let full = Position::new(&played, table);
            let tactical: Vec<usize> = (0..pos.cells.len())
                .filter(|&c| pos.is_empty(c))
                .take(picks.len() % 7)
                .collect();
            for (i, &cell) in tactical.iter().enumerate() {
                pos.make_tactical(cell, Stone::BOTH[i % 2]);
                prop_assert_eq!(&pos.class_counts, &{
                    let mut fresh = played.clone();
                    for (j, &c) in tactical[..=i].iter().enumerate() {
                        fresh.play(pos.move_of(c), Stone::BOTH[j % 2]).unwrap();
                    }
                    Position::new(&fresh, table).class_counts
                });
            }
            for &cell in tactical.iter().rev() {
                pos.unmake(cell);
            }
            prop_assert!(pos.same_state(&full));
            for &mv in moves.iter().rev() {
                pos.unmake(pos.cell_of(mv));
            }
            prop_assert!(pos.same_state(&Position::new(&empty, table)));
            prop_assert_eq!(pos.hash(), hash);
            prop_assert_eq!(pos.candidates().len(), 0);
        }
    }

    #[test]
    fn incremental_updates_match_a_fresh_build() {
        let rule = Rule::exact(5);
        let table = pattern::table_for(rule.k, rule.overline_wins).unwrap();
        let board = Board::from_rows(&[
            "..........",
            "...NB.....",
            "...NNB....",
            "....BN....",
            "......N...",
            "..........",
            "..........",
        ])
        .unwrap();
        let mut pos = Position::new(&board, table);
        assert!(pos.recomputed_matches());
        let hash = pos.hash();
        let moves = [(0, 0), (6, 9), (3, 3), (5, 5), (0, 9)];
        let mut played = board.clone();
        for (i, &(r, c)) in moves.iter().enumerate() {
            let stone = Stone::BOTH[i % 2];
            pos.make(pos.cell_of(Move::new(r, c)), stone);
            played.play(Move::new(r, c), stone).unwrap();
            assert!(pos.recomputed_matches());
            assert!(pos.same_state(&Position::new(&played, table)));
        }
        for &(r, c) in moves.iter().rev() {
            pos.unmake(pos.cell_of(Move::new(r, c)));
            assert!(pos.recomputed_matches());
        }
        assert_eq!(pos.hash(), hash);
        let fresh = Position::new(&board, table);
        assert_eq!(fresh.candidates().len(), pos.candidates().len());
    }

    #[test]
    fn near_scans_agree_with_full_scans_within_reach() {
        let table = pattern::table_for(5, false).unwrap();
        let board = Board::from_rows(&[
            "...........",
            "..N.N.N....",
            "...BB.N.B..",
            "..N..NN....",
            "...B...B...",
            "....N......",
        ])
        .unwrap();
        let pos = Position::new(&board, table);
        let (mut near, mut all) = (Vec::new(), Vec::new());
        for anchor in (0..pos.cells.len()).filter(|&c| pos.cells[c] != WALL) {
            for class in [Class::Three, Class::Four] {
                pos.cells_of_class_near(Stone::Black, class, &[anchor], &mut near);
                pos.cells_of_class(Stone::Black, class, &mut all);
                all.retain(|&c| c != anchor && pos.within_reach(c, anchor));
                near.sort_unstable();
                all.sort_unstable();
                assert_eq!(near, all, "anchor {anchor} class {class:?}");
            }
        }
        // Two anchors whose reaches overlap: the union of each one's cells, each once.
        let (a, b) = (pos.cell_of(Move::new(1, 3)), pos.cell_of(Move::new(3, 3)));
        pos.cells_of_class_near(Stone::Black, Class::Three, &[a, b], &mut near);
        let mut union = Vec::new();
        for anchor in [a, b] {
            pos.cells_of_class_near(Stone::Black, Class::Three, &[anchor], &mut all);
            union.extend_from_slice(&all);
        }
        let with_repeats = union.len();
        union.sort_unstable();
        union.dedup();
        assert!(
            union.len() < with_repeats,
            "the reaches should share a cell"
        );
        near.sort_unstable();
        assert_eq!(near, union);
        // Black's four (1,2)-(1,6) with (1,3) and (1,5) empty: after (1,3) the five is at (1,5).
        let mut pos = Position::new(&board, table);
        let four = pos.cell_of(Move::new(1, 3));
        pos.make(four, Stone::Black);
        assert_eq!(
            pos.find_win_near(Stone::Black, four),
            pos.find_win(Stone::Black)
        );
        assert_eq!(
            pos.find_win_near(Stone::Black, four),
            Some(pos.cell_of(Move::new(1, 5)))
        );
    }

    #[test]
    fn the_class_after_a_block_is_the_class_after_playing_it() {
        use rand::{rngs::StdRng, Rng, SeedableRng};
        let mut rng = StdRng::seed_from_u64(14);
        let mut compared = 0;
        for overline_wins in [false, true] {
            let table = pattern::table_for(5, overline_wins).unwrap();
            for _ in 0..40 {
                let (rows, cols) = (rng.gen_range(5..=16), rng.gen_range(5..=16));
                let mut board = Board::new(rows, cols).unwrap();
                for i in 0..rng.gen_range(4..40) {
                    let mv = Move::new(rng.gen_range(0..rows), rng.gen_range(0..cols));
                    if board.is_empty_cell(mv) {
                        board.play(mv, Stone::BOTH[i % 2]).unwrap();
                    }
                }
                let mut pos = Position::new(&board, table);
                let empty: Vec<usize> = (0..pos.cells.len()).filter(|&c| pos.is_empty(c)).collect();
                for &blocker in &empty {
                    for colour in Stone::BOTH {
                        let near: Vec<usize> = empty
                            .iter()
                            .copied()
                            .filter(|&c| c != blocker && pos.within_reach(c, blocker))
                            .collect();
                        let predicted: Vec<Class> = near
                            .iter()
                            .map(|&c| pos.class_after_block(c, colour, blocker))
                            .collect();
                        pos.make(blocker, colour.opponent());
                        let played: Vec<Class> =
                            near.iter().map(|&c| pos.class(c, colour)).collect();
                        pos.unmake(blocker);
                        assert_eq!(predicted, played, "{:?}", board.to_rows());
                        compared += near.len();
                    }
                }
            }
        }
        assert!(compared > 10_000, "only {compared} cells compared");
    }

    #[test]
    fn finds_fives_through_the_board() {
        let table = pattern::table_for(5, false).unwrap();
        let board = Board::from_rows(&["NNNN.N..", "BBB.....", "........"]).unwrap();
        let pos = Position::new(&board, table);
        // Filling (0,4) makes six: no five for black.
        assert_eq!(pos.find_win(Stone::Black), None);
        let board = Board::from_rows(&["NNNN...", "BBB....", "......."]).unwrap();
        let pos = Position::new(&board, table);
        assert_eq!(
            pos.find_win(Stone::Black),
            Some(pos.cell_of(Move::new(0, 4)))
        );
    }
}
