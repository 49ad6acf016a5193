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

/// What playing a cell makes in one line for one colour, weakest first (Rapfi's names: B for
/// "blocked", one way to grow; F for "free", two). Diagrams for the exact-five rule, the cell
/// played marked `*`, own stones `x`, empty cells `.`, `o` an opponent's stone or the edge; a
/// pattern is defined by what one more stone can make of it, so the diagrams are examples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Pattern {
    /// No five can ever come of it: `o*xxo`, or `xx*xxx` (six, no five under the exact rule).
    Dead = 0,
    /// One more stone makes a `B2`: `o*....`.
    B1 = 1,
    /// One more stone makes an `F2`: `...*...`.
    F1 = 2,
    /// One more stone makes a `B3`: `o*x...`.
    B2 = 3,
    /// One more stone makes an `F3`: `..*x...`.
    F2 = 4,
    /// One more stone makes a (blocked) four: `o*xx..`, `.x*.x.o`.
    B3 = 5,
    /// An open three: one more stone makes an open four, `..*xx..`, `.x*.x.`.
    F3 = 6,
    /// A four: exactly one empty cell makes five, `o*xxx.`, `xx*.x`, `.xx*x.x.` (the other end
    /// would make six).
    B4 = 7,
    /// An open four: two cells make five, `.*xxx.`.
    F4 = 8,
    /// Five, exactly: `x*xxx`.
    F5 = 9,
}

impl Pattern {
    /// The pattern a 4-bit code of a position's word holds (codes past `F5` never occur).
    #[inline(always)]
    pub fn from_bits(bits: u16) -> Pattern {
        const BY_BITS: [Pattern; 16] = [
            Pattern::Dead,
            Pattern::B1,
            Pattern::F1,
            Pattern::B2,
            Pattern::F2,
            Pattern::B3,
            Pattern::F3,
            Pattern::B4,
            Pattern::F4,
            Pattern::F5,
            Pattern::F5,
            Pattern::F5,
            Pattern::F5,
            Pattern::F5,
            Pattern::F5,
            Pattern::F5,
        ];
        BY_BITS[(bits & 0xF) as usize]
    }
}

/// Cells seen on each side of the centre.
pub const HALF: usize = 5;

const REL_EMPTY: u8 = 0;
const REL_OWN: u8 = 1;
const REL_BLOCKED: u8 = 2;
const LINE: usize = 2 * HALF + 1;
const CENTRE: usize = HALF;
/// Relative states: eight inner cells with three states, the two outermost only own or not.
const REL_STATES: usize = 6561 * 4;

/// Classifies lines for one rule, memoised over relative line states.
struct Classifier {
    k: usize,
    overline_wins: bool,
    memo: Vec<Option<Pattern>>,
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

/// What a pattern was one stone earlier: the line that one stone turns into `code`.
fn demote(code: Pattern) -> Pattern {
    match code {
        Pattern::F4 => Pattern::F3,
        Pattern::B4 => Pattern::B3,
        Pattern::F3 => Pattern::F2,
        Pattern::B3 => Pattern::B2,
        Pattern::F2 => Pattern::F1,
        Pattern::B2 => Pattern::B1,
        _ => Pattern::Dead,
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
    fn classify(&mut self, line: &mut [u8; LINE]) -> Pattern {
        let idx = rel_index(line);
        if let Some(known) = self.memo[idx] {
            return known;
        }
        let run = run_through_centre(line);
        let result = if self.wins(run) {
            Pattern::F5
        } else if run > self.k {
            // Already an overline through the centre: no stone added later can shorten it.
            Pattern::Dead
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
                    let mut best = Pattern::Dead;
                    for e in inner {
                        if line[e] == REL_EMPTY {
                            line[e] = REL_OWN;
                            best = best.max(demote(self.classify(line)));
                            line[e] = REL_EMPTY;
                        }
                    }
                    best
                }
                1 => Pattern::B4,
                _ => Pattern::F4,
            }
        };
        self.memo[idx] = Some(result);
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
    /// Only the first `REL_STATES` entries are reachable; the rest stay `Dead`.
    codes: Box<[Pattern; U16_RANGE]>,
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

/// Key field of the cell `offset` steps from the centre along the line (negative: before it),
/// for `offset` in `-HALF..=HALF` other than 0: the inverse of [`field_to_line`].
#[inline(always)]
pub fn field_of_offset(offset: isize) -> usize {
    let line = (HALF as isize + offset) as usize;
    // The centre has no field: the fields after it are numbered one lower.
    line - usize::from(line > HALF)
}

impl PatternTable {
    fn build(k: usize, overline_wins: bool) -> PatternTable {
        let mut classifier = Classifier {
            k,
            overline_wins,
            memo: vec![None; REL_STATES],
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
        let mut codes = Box::new([Pattern::Dead; U16_RANGE]);
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
    pub fn code_at(&self, index: u16) -> Pattern {
        self.codes[index as usize]
    }

    /// Pattern made by `colour` (0 black, 1 white) playing the centre of a line whose ten
    /// neighbours are `key` (two bits per field: 0 empty, 1 black, 2 white, 3 wall).
    #[cfg(test)]
    pub fn code(&self, key: u32, colour: usize) -> Pattern {
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

/// What playing a cell makes for one colour, its four lines together, weakest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Class {
    /// Nothing in any line.
    Nothing = 0,
    /// Something below an open three (a two, a blocked three).
    Low = 1,
    /// An open three somewhere (`F3`).
    Three = 2,
    /// Two open threes.
    DoubleThree = 3,
    /// A (blockable) four.
    Four = 4,
    /// A four and an open three in another line.
    FourThree = 5,
    /// An open four or two fours: wins next move unless the opponent wins first.
    WinNext = 6,
    /// Five.
    Win = 7,
}

pub const NUM_CLASSES: usize = 8;

impl Class {
    /// The class of a combination entry's top bits.
    #[inline(always)]
    fn from_bits(bits: u16) -> Class {
        const BY_BITS: [Class; NUM_CLASSES] = [
            Class::Nothing,
            Class::Low,
            Class::Three,
            Class::DoubleThree,
            Class::Four,
            Class::FourThree,
            Class::WinNext,
            Class::Win,
        ];
        BY_BITS[(bits as usize) & (NUM_CLASSES - 1)]
    }
}

/// Number of combinations: the multisets of four directional patterns (the order of the
/// directions does not matter to what a cell is worth), C(10 + 3, 4).
pub const COMBINATIONS: usize = 715;

/// The combination of four directional patterns: its index among [`COMBINATIONS`], counting the
/// patterns sorted weakest first in lexicographic order (`Dead Dead Dead Dead` is 0, `F5 F5 F5
/// F5` the last). The learned evaluation keeps one value per combination.
pub fn combination_index(mut codes: [Pattern; 4]) -> usize {
    codes.sort_unstable();
    combination_ranks()[codes.iter().fold(0, |acc, &c| acc * 10 + c as usize)] as usize
}

/// The four patterns of combination `index`, weakest first: the inverse of
/// [`combination_index`].
pub fn combination_patterns(index: usize) -> Option<[Pattern; 4]> {
    let key = combination_ranks()
        .iter()
        .position(|&rank| rank as usize == index)?;
    let digit = |place: usize| Pattern::from_bits(((key / place) % 10) as u16);
    Some([digit(1000), digit(100), digit(10), digit(1)])
}

/// Rank of each sorted four-digit key (patterns weakest first as decimal digits); `u16::MAX`
/// for keys whose digits are not sorted.
fn combination_ranks() -> &'static [u16; 10_000] {
    static RANKS: OnceLock<Box<[u16; 10_000]>> = OnceLock::new();
    RANKS.get_or_init(|| {
        let mut ranks = Box::new([u16::MAX; 10_000]);
        let mut next = 0u16;
        for key in 0..10_000usize {
            let digits = [key / 1000, key / 100 % 10, key / 10 % 10, key % 10];
            if digits.windows(2).all(|pair| pair[0] <= pair[1]) {
                ranks[key] = next;
                next += 1;
            }
        }
        debug_assert_eq!(next as usize, COMBINATIONS);
        ranks
    })
}

/// Combination class, move-ordering value (the hand-set [`DIR_VALUE`] and bonuses) and
/// combination index of every 16-bit pattern word
/// (four 4-bit codes), packed in one entry so that an update reads one table.
pub struct Combos {
    entries: Box<[u32; U16_RANGE]>,
}

const CLASS_SHIFT: u32 = 13;
const VALUE_MASK: u32 = (1 << CLASS_SHIFT) - 1;
const COMBINATION_SHIFT: u32 = 16;

/// What a word is, read from one entry.
#[derive(Clone, Copy, Debug)]
pub struct Combo {
    pub class: usize,
    pub combination: usize,
}

impl Combos {
    #[inline]
    pub fn class(&self, word: u16) -> Class {
        Class::from_bits((self.entries[word as usize] >> CLASS_SHIFT) as u16)
    }

    #[inline]
    pub fn value(&self, word: u16) -> i32 {
        (self.entries[word as usize] & VALUE_MASK) as i32
    }

    #[inline]
    pub fn get(&self, word: u16) -> Combo {
        let entry = self.entries[word as usize];
        Combo {
            class: ((entry >> CLASS_SHIFT) & 7) as usize,
            combination: (entry >> COMBINATION_SHIFT) as usize,
        }
    }
}

/// Value of one directional pattern for the cell's potential (what the colour could make there),
/// indexed by pattern (`Dead` to `F5`). The open two (`F2`) is worth less than the broken three
/// (`B3`): head to head at 100 ms, 10 gained about 70 Elo over 14 and 20 lost over 100
/// (docs/engine.md).
const DIR_VALUE: [i16; 10] = [0, 1, 3, 5, 10, 14, 40, 45, 140, 800];

fn combine(word: u16) -> (Class, i16) {
    let codes: [Pattern; 4] = std::array::from_fn(|d| Pattern::from_bits(word >> (4 * d)));
    let count = |c: Pattern| codes.iter().filter(|&&x| x == c).count();
    let fives = count(Pattern::F5);
    let open_fours = count(Pattern::F4);
    let fours = count(Pattern::B4);
    let open_threes = count(Pattern::F3);
    let mut value: i16 = codes.iter().map(|&c| DIR_VALUE[c as usize]).sum();
    let class = if fives > 0 {
        Class::Win
    } else if open_fours > 0 || fours >= 2 {
        value += 300;
        Class::WinNext
    } else if fours == 1 && open_threes > 0 {
        value += 150;
        Class::FourThree
    } else if fours == 1 {
        Class::Four
    } else if open_threes >= 2 {
        value += 80;
        Class::DoubleThree
    } else if open_threes == 1 {
        Class::Three
    } else if codes.iter().any(|&c| c >= Pattern::B1) {
        Class::Low
    } else {
        Class::Nothing
    };
    (class, value)
}

/// The class of a combination of four directional patterns (in any order).
pub fn combination_class(codes: [Pattern; 4]) -> Class {
    let word = codes
        .iter()
        .enumerate()
        .fold(0u16, |word, (d, &code)| word | (code as u16) << (4 * d));
    combos().class(word)
}

pub fn combos() -> &'static Combos {
    static COMBOS: OnceLock<Combos> = OnceLock::new();
    COMBOS.get_or_init(|| {
        let mut entries = Box::new([0u32; U16_RANGE]);
        for (word, entry) in (0..=u16::MAX).zip(entries.iter_mut()) {
            let (class, value) = combine(word);
            debug_assert!((0..=VALUE_MASK as i16).contains(&value));
            let codes = std::array::from_fn(|d| Pattern::from_bits(word >> (4 * d)));
            *entry = (combination_index(codes) as u32) << COMBINATION_SHIFT
                | (class as u32) << CLASS_SHIFT
                | value as u32;
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
        assert_eq!(t.code(key(".xxxx_....."), 0), Pattern::F5);
        assert_eq!(
            t.code(key("xxxxx_....."), 0),
            Pattern::Dead,
            "six is no five"
        );
        assert_eq!(
            t.code(key("..xxx_xx..."), 0),
            Pattern::Dead,
            "gap fill making six"
        );
        assert_eq!(t.code(key("...xx_xx..."), 0), Pattern::F5);
        // A four whose other completion would make six is a single four.
        assert_eq!(t.code(key("...xx_x.x.."), 0), Pattern::B4);
        assert_eq!(t.code(key("....x_xx..."), 0), Pattern::F4);
        assert_eq!(t.code(key("...ox_xx..."), 0), Pattern::B4);
        assert_eq!(t.code(key("..x.x_xx..."), 0), Pattern::B4);
        assert_eq!(t.code(key("....._xx..."), 0), Pattern::F3);
        assert_eq!(t.code(key("....o_xx..."), 0), Pattern::B3);
        assert_eq!(t.code(key("....._x...."), 0), Pattern::F2);
        // White reads the same table with colours swapped.
        assert_eq!(t.code(key("....o_oo..."), 1), Pattern::F4);
        let free = table_for(5, true).unwrap();
        assert_eq!(free.code(key("..xxx_xx..."), 0), Pattern::F5);
    }

    #[test]
    fn combinations() {
        let c = combos();
        let word = |codes: [Pattern; 4]| -> u16 {
            codes
                .iter()
                .enumerate()
                .map(|(d, &x)| (x as u16) << (4 * d))
                .sum()
        };
        assert_eq!(
            c.class(word([
                Pattern::B4,
                Pattern::B4,
                Pattern::Dead,
                Pattern::Dead
            ])),
            Class::WinNext
        );
        assert_eq!(
            c.class(word([
                Pattern::B4,
                Pattern::F3,
                Pattern::Dead,
                Pattern::Dead
            ])),
            Class::FourThree
        );
        assert_eq!(
            c.class(word([
                Pattern::F3,
                Pattern::F3,
                Pattern::Dead,
                Pattern::Dead
            ])),
            Class::DoubleThree
        );
        assert_eq!(
            c.class(word([
                Pattern::F5,
                Pattern::Dead,
                Pattern::Dead,
                Pattern::Dead
            ])),
            Class::Win
        );
        // The largest value (four fives and the bonus) fits the packed entry.
        assert_eq!(
            c.value(word([Pattern::F5, Pattern::F5, Pattern::F5, Pattern::F5])),
            4 * 800
        );
    }
}
