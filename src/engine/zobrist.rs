//! The Zobrist keys of every search (Zobrist, "A new hashing method with application for game
//! playing", 1970): a position's key is the exclusive or of one fixed pseudo-random code per
//! stone, so a move updates it with one operation and the key depends only on the stones, not on
//! the order they came in.

use crate::board::Stone;

/// The code of a `colour` stone on `cell` (any indexing of cells a search likes): [`mix`] of the
/// (cell, colour) pair, a fixed code without a table, the same in every run (so searches are
/// reproducible).
#[inline]
pub fn zobrist(cell: usize, colour: Stone) -> u64 {
    mix(((cell as u64) << 1 | colour.index() as u64).wrapping_add(0x9E37_79B9_7F4A_7C15))
}

/// The finaliser of splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
/// generators", 2014): a bijection of u64 whose every output bit depends on every input bit. It
/// turns an exact but structured key (the solver's bit masks) into one whose low bits, which pick
/// a table's bucket, are well spread, without ever giving two positions the same key.
#[inline]
pub const fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Mixed into a key when white is to move, so the same stones with the other side to move are
/// another position.
pub const WHITE_TO_MOVE: u64 = 0x6A09_E667_F3BC_C909;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_differ_by_cell_and_colour() {
        let mut seen = std::collections::HashSet::new();
        for cell in 0..20_000 {
            for colour in Stone::BOTH {
                assert!(seen.insert(zobrist(cell, colour)), "{cell} {colour:?}");
            }
        }
    }
}
