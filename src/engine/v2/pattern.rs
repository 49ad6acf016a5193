//! Line patterns under the exact-k rule, precomputed once per rule into lookup tables.
//!
//! The idea is Rapfi's (Dai et al., "Rapfi: distilling efficient neural network for the game of
//! gomoku", and its classical evaluator): every empty cell keeps, per direction, a key made of the
//! ten cells around it (five on each side, two bits each), and a table maps that key to what
//! playing the cell would make in that line: a five, an open four, a four, an open three …
//! Here the table is derived from the rule itself by a small recursive classifier, so the
//! exact-five subtleties (a "four" whose completion makes six is no four; a run that is already
//! an overline is dead) come out of the definition instead of hand-written cases.

use std::sync::OnceLock;

/// Per-direction pattern codes, ordered by strength.
pub const DEAD: u8 = 0;
pub const B1: u8 = 1;
pub const F1: u8 = 2;
pub const B2: u8 = 3;
pub const F2: u8 = 4;
pub const B3: u8 = 5;
pub const F3: u8 = 6;
pub const B4: u8 = 7;
pub const F4: u8 = 8;
pub const F5: u8 = 9;

/// Cells seen on each side of the centre.
pub const HALF: usize = 5;

const REL_EMPTY: u8 = 0;
const REL_OWN: u8 = 1;
const REL_BLOCKED: u8 = 2;
const LINE: usize = 2 * HALF + 1;
const CENTRE: usize = HALF;
/// Relative states: eight inner cells with three states, the two outermost only own or not.
const REL_STATES: usize = 6561 * 4;
const UNKNOWN: u8 = 0xFF;

/// Classifies lines for one rule, memoised over relative line states.
struct Classifier {
    k: usize,
    overline_wins: bool,
    memo: Vec<u8>,
}

fn rel_index(line: &[u8; LINE]) -> usize {
    let mut idx = 0usize;
    for &i in &[1usize, 2, 3, 4, 6, 7, 8, 9] {
        idx = idx * 3 + line[i] as usize;
    }
    idx = idx * 2 + usize::from(line[0] == REL_OWN);
    idx * 2 + usize::from(line[LINE - 1] == REL_OWN)
}

fn run_through_centre(line: &[u8; LINE]) -> usize {
    let left = line[..CENTRE]
        .iter()
        .rev()
        .take_while(|&&c| c == REL_OWN)
        .count();
    let right = line[CENTRE + 1..]
        .iter()
        .take_while(|&&c| c == REL_OWN)
        .count();
    1 + left + right
}

fn demote(code: u8) -> u8 {
    match code {
        F4 => F3,
        B4 => B3,
        F3 => F2,
        B3 => B2,
        F2 => F1,
        B2 => B1,
        _ => DEAD,
    }
}

impl Classifier {
    fn wins(&self, run: usize) -> bool {
        if self.overline_wins {
            run >= self.k
        } else {
            run == self.k
        }
    }

    /// What the centre (already holding an own stone) amounts to in this line.
    fn classify(&mut self, line: &mut [u8; LINE]) -> u8 {
        let idx = rel_index(line);
        if self.memo[idx] != UNKNOWN {
            return self.memo[idx];
        }
        let run = run_through_centre(line);
        let result = if self.wins(run) {
            F5
        } else if run > self.k {
            // Already an overline through the centre: no stone added later can shorten it.
            DEAD
        } else {
            let inner = (1..LINE - 1).filter(|&i| i != CENTRE);
            let mut completions = 0;
            for e in inner.clone() {
                if line[e] == REL_EMPTY {
                    line[e] = REL_OWN;
                    if self.wins(run_through_centre(line)) {
                        completions += 1;
                    }
                    line[e] = REL_EMPTY;
                }
            }
            match completions {
                0 => {
                    let mut best = DEAD;
                    for e in inner {
                        if line[e] == REL_EMPTY {
                            line[e] = REL_OWN;
                            best = best.max(demote(self.classify(line)));
                            line[e] = REL_EMPTY;
                        }
                    }
                    best
                }
                1 => B4,
                _ => F4,
            }
        };
        self.memo[idx] = result;
        result
    }
}

/// Tables indexed by a `u16` cover every `u16`, so that a lookup needs no bounds check.
const U16_RANGE: usize = 1 << 16;

/// The pattern table of one rule, indexed by a *relative* line state: for one colour, each of
/// the eight inner neighbours is empty, own or blocked (opponent or wall), and each of the two
/// outermost is own or not (they only matter by making an overline). That is 3^8 * 4 = 26 244
/// states, a table small enough to stay in the first-level cache. Positions keep, per cell,
/// direction and colour, the state index itself, updated by adding a per-field delta when a
/// stone lands nearby, so a lookup is one load.
pub struct PatternTable {
    /// Only the first `REL_STATES` entries are reachable; the rest stay `DEAD`.
    codes: Box<[u8; U16_RANGE]>,
    /// Index increment when field `f` turns from empty to own (`[f][1]`) or blocked (`[f][0]`).
    deltas: [[u16; 2]; 2 * HALF],
}

/// Position in the line (0..=10, centre 5) of key field `f` (0..10, the centre skipped).
fn field_to_line(f: usize) -> usize {
    if f < HALF {
        f
    } else {
        f + 1
    }
}

impl PatternTable {
    fn build(k: usize, overline_wins: bool) -> PatternTable {
        let mut classifier = Classifier {
            k,
            overline_wins,
            memo: vec![UNKNOWN; REL_STATES],
        };
        let mut deltas = [[0u16; 2]; 2 * HALF];
        for (f, delta) in deltas.iter_mut().enumerate() {
            let pos = field_to_line(f);
            for (own, slot) in delta.iter_mut().enumerate() {
                let mut line = [REL_EMPTY; LINE];
                line[pos] = if own == 1 { REL_OWN } else { REL_BLOCKED };
                if (pos == 0 || pos == LINE - 1) && own == 0 {
                    // The outermost cells only matter as own stones.
                    line[pos] = REL_EMPTY;
                }
                *slot = rel_index(&line) as u16;
            }
        }
        let mut codes = Box::new([DEAD; U16_RANGE]);
        for (idx, code) in codes.iter_mut().enumerate().take(REL_STATES) {
            *code = classifier.classify(&mut decode(idx));
        }
        PatternTable { codes, deltas }
    }

    /// State-index increment when the cell of field `f` gets a stone that is `own` or not.
    #[inline]
    pub fn delta(&self, f: usize, own: bool) -> u16 {
        self.deltas[f][usize::from(own)]
    }

    /// Pattern made by playing the centre of a line in relative state `index`.
    #[inline]
    pub fn code_at(&self, index: u16) -> u8 {
        self.codes[index as usize]
    }

    /// Pattern made by `colour` (0 black, 1 white) playing the centre of a line whose ten
    /// neighbours are `key` (two bits per field: 0 empty, 1 black, 2 white, 3 wall).
    #[cfg(test)]
    pub fn code(&self, key: u32, colour: usize) -> u8 {
        let mut index = 0u16;
        for f in 0..2 * HALF {
            let value = (key >> (2 * f)) & 3;
            if value != 0 {
                index += self.delta(f, value as usize == colour + 1);
            }
        }
        self.code_at(index)
    }
}

/// The line (centre own) of a relative state index; the inverse of `rel_index`.
fn decode(mut idx: usize) -> [u8; LINE] {
    let mut line = [REL_EMPTY; LINE];
    line[CENTRE] = REL_OWN;
    if idx % 2 == 1 {
        line[LINE - 1] = REL_OWN;
    }
    idx /= 2;
    if idx % 2 == 1 {
        line[0] = REL_OWN;
    }
    idx /= 2;
    for &i in [1usize, 2, 3, 4, 6, 7, 8, 9].iter().rev() {
        line[i] = (idx % 3) as u8;
        idx /= 3;
    }
    line
}

/// The table for a rule with `k` in 1..=5, built on first use and shared afterwards (it is a pure
/// function of the rule, not game state).
pub fn table_for(k: usize, overline_wins: bool) -> Option<&'static PatternTable> {
    static TABLES: [OnceLock<PatternTable>; 10] = [const { OnceLock::new() }; 10];
    if !(1..=5).contains(&k) {
        return None;
    }
    let slot = (k - 1) * 2 + usize::from(overline_wins);
    Some(TABLES[slot].get_or_init(|| PatternTable::build(k, overline_wins)))
}

/// Combination classes of a cell for one colour, from its four directional patterns.
pub const C_NONE: u8 = 0;
pub const C_LOW: u8 = 1;
/// Makes an open three somewhere.
pub const C_THREE: u8 = 2;
/// Makes two open threes.
pub const C_DOUBLE_THREE: u8 = 3;
/// Makes a (blockable) four.
pub const C_FOUR: u8 = 4;
/// Makes a four and an open three in other lines.
pub const C_FOUR_THREE: u8 = 5;
/// Makes an open four or two fours: wins next move unless the opponent wins first.
pub const C_WIN_NEXT: u8 = 6;
/// Makes five.
pub const C_WIN: u8 = 7;
pub const NUM_CLASSES: usize = 8;

/// Combination class and evaluation value of every 16-bit pattern word (four 4-bit codes),
/// packed in one entry (class in the top three bits) so that an update reads one table.
pub struct Combos {
    entries: Box<[u16; U16_RANGE]>,
}

const CLASS_SHIFT: u32 = 13;
const VALUE_MASK: u16 = (1 << CLASS_SHIFT) - 1;

impl Combos {
    #[inline]
    pub fn class(&self, word: u16) -> u8 {
        (self.entries[word as usize] >> CLASS_SHIFT) as u8
    }

    #[inline]
    pub fn value(&self, word: u16) -> i32 {
        (self.entries[word as usize] & VALUE_MASK) as i32
    }

    /// Class and value of a word from one load.
    #[inline]
    pub fn class_and_value(&self, word: u16) -> (usize, i32) {
        let entry = self.entries[word as usize];
        ((entry >> CLASS_SHIFT) as usize, (entry & VALUE_MASK) as i32)
    }
}

/// Value of one directional pattern for the cell's potential (what the colour could make there),
/// indexed by code (`DEAD` to `F5`). The open two (`F2`) is worth less than the broken three
/// (`B3`): head to head at 100 ms, 10 gained about 70 Elo over 14 and 20 lost over 100
/// (docs/engine.md).
const DIR_VALUE: [i16; 10] = [0, 1, 3, 5, 10, 14, 40, 45, 140, 800];

fn combine(word: u16) -> (u8, i16) {
    let codes: [u8; 4] = std::array::from_fn(|d| ((word >> (4 * d)) & 0xF) as u8);
    let count = |c: u8| codes.iter().filter(|&&x| x == c).count();
    let fives = count(F5);
    let open_fours = count(F4);
    let fours = count(B4);
    let open_threes = count(F3);
    let mut value: i16 = codes.iter().map(|&c| DIR_VALUE[c.min(9) as usize]).sum();
    let class = if fives > 0 {
        C_WIN
    } else if open_fours > 0 || fours >= 2 {
        value += 300;
        C_WIN_NEXT
    } else if fours == 1 && open_threes > 0 {
        value += 150;
        C_FOUR_THREE
    } else if fours == 1 {
        C_FOUR
    } else if open_threes >= 2 {
        value += 80;
        C_DOUBLE_THREE
    } else if open_threes == 1 {
        C_THREE
    } else if codes.iter().any(|&c| c >= B1) {
        C_LOW
    } else {
        C_NONE
    };
    (class, value)
}

pub fn combos() -> &'static Combos {
    static COMBOS: OnceLock<Combos> = OnceLock::new();
    COMBOS.get_or_init(|| {
        let mut entries = Box::new([0u16; U16_RANGE]);
        for (word, entry) in (0..=u16::MAX).zip(entries.iter_mut()) {
            let (class, value) = combine(word);
            debug_assert!((0..=VALUE_MASK as i16).contains(&value));
            *entry = (class as u16) << CLASS_SHIFT | value as u16;
        }
        Combos { entries }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Key of a line written as 11 chars, centre at index 5 ('.' empty, 'x' black, 'o' white,
    /// '#' wall); the centre char is ignored.
    fn key(line: &str) -> u32 {
        let cells: Vec<u32> = line
            .chars()
            .map(|c| match c {
                'x' => 1,
                'o' => 2,
                '#' => 3,
                _ => 0,
            })
            .collect();
        let mut key = 0;
        let mut f = 0;
        for (i, &v) in cells.iter().enumerate() {
            if i == CENTRE {
                continue;
            }
            key |= v << (2 * f);
            f += 1;
        }
        key
    }

    #[test]
    fn exact_five_patterns() {
        let t = table_for(5, false).unwrap();
        assert_eq!(t.code(key(".xxxx_....."), 0), F5);
        assert_eq!(t.code(key("xxxxx_....."), 0), DEAD, "six is no five");
        assert_eq!(t.code(key("..xxx_xx..."), 0), DEAD, "gap fill making six");
        assert_eq!(t.code(key("...xx_xx..."), 0), F5);
        // A four whose other completion would make six is a single four.
        assert_eq!(t.code(key("...xx_x.x.."), 0), B4);
        assert_eq!(t.code(key("....x_xx..."), 0), F4);
        assert_eq!(t.code(key("...ox_xx..."), 0), B4);
        assert_eq!(t.code(key("..x.x_xx..."), 0), B4);
        assert_eq!(t.code(key("....._xx..."), 0), F3);
        assert_eq!(t.code(key("....o_xx..."), 0), B3);
        assert_eq!(t.code(key("....._x...."), 0), F2);
        // White reads the same table with colours swapped.
        assert_eq!(t.code(key("....o_oo..."), 1), F4);
        let free = table_for(5, true).unwrap();
        assert_eq!(free.code(key("..xxx_xx..."), 0), F5);
    }

    #[test]
    fn combinations() {
        let c = combos();
        let word = |codes: [u8; 4]| -> u16 {
            codes
                .iter()
                .enumerate()
                .map(|(d, &x)| (x as u16) << (4 * d))
                .sum()
        };
        assert_eq!(c.class(word([B4, B4, 0, 0])), C_WIN_NEXT);
        assert_eq!(c.class(word([B4, F3, 0, 0])), C_FOUR_THREE);
        assert_eq!(c.class(word([F3, F3, 0, 0])), C_DOUBLE_THREE);
        assert_eq!(c.class(word([F5, 0, 0, 0])), C_WIN);
        // The largest value (four fives and the bonus) fits the packed entry.
        assert_eq!(c.value(word([F5, F5, F5, F5])), 4 * 800);
    }
}
