//! The transposition table of every search (v1, v2, the exact solver): a fixed number of
//! two-entry buckets sized from the configured bytes, allocated once per search (zeroed pages, so
//! an unused table costs no resident memory). Slot 0 of a bucket keeps the deepest result, slot 1
//! always takes the latest one. Keys are stored whole, so a probe never returns another
//! position's entry unless two positions share all 64 bits of their key.

use crate::engine::types::{Bound, Score};

/// One bucket: for each of the two slots, the full key and a packed word
/// (score 32 bits | move 16 bits | depth 8 bits | bound 8 bits).
type Bucket = [u64; 4];
const BUCKET_BYTES: usize = std::mem::size_of::<Bucket>();
const MIN_BUCKETS: usize = 1 << 10;

#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub score: Score,
    pub mv: Option<usize>,
    pub depth: i32,
    pub bound: Bound,
}

pub struct Tt {
    buckets: Vec<Bucket>,
    mask: usize,
}

fn pack(score: Score, mv: Option<usize>, depth: i32, bound: Bound) -> u64 {
    let mv = mv.map_or(0xFFFF, |m| m as u64 & 0xFFFF);
    let depth = depth.clamp(-100, 120) as i8 as u8 as u64;
    (score as u32 as u64) << 32 | mv << 16 | depth << 8 | bound as u64
}

/// The entry a packed word holds; `None` for an empty slot.
fn unpack(word: u64) -> Option<Entry> {
    let mv = (word >> 16) & 0xFFFF;
    Some(Entry {
        score: (word >> 32) as u32 as i32,
        mv: (mv != 0xFFFF).then_some(mv as usize),
        depth: ((word >> 8) & 0xFF) as u8 as i8 as i32,
        bound: Bound::from_packed((word & 0xFF) as u8)?,
    })
}

impl Tt {
    /// A table using at most `bytes` (at least a small minimum).
    pub fn new(bytes: usize) -> Tt {
        let wanted = (bytes / BUCKET_BYTES).max(MIN_BUCKETS);
        // Largest power of two not above the budget, so indexing is a mask.
        let count = if wanted.is_power_of_two() {
            wanted
        } else {
            wanted.next_power_of_two() / 2
        };
        Tt {
            buckets: vec![[0u64; 4]; count],
            mask: count - 1,
        }
    }

    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        self.buckets.len() * BUCKET_BYTES
    }

    pub fn probe(&self, key: u64) -> Option<Entry> {
        let bucket = &self.buckets[key as usize & self.mask];
        for slot in 0..2 {
            if bucket[2 * slot] == key {
                if let Some(entry) = unpack(bucket[2 * slot + 1]) {
                    return Some(entry);
                }
            }
        }
        None
    }

    pub fn store(&mut self, key: u64, score: Score, mv: Option<usize>, depth: i32, bound: Bound) {
        let bucket = &mut self.buckets[key as usize & self.mask];
        let word = pack(score, mv, depth, bound);
        let deep = unpack(bucket[1]);
        if bucket[0] == key || deep.is_none_or(|deep| depth >= deep.depth) {
            // Keep a known best move when the new result has none.
            let word = if mv.is_none() && bucket[0] == key {
                (word & !(0xFFFF << 16)) | (bucket[1] & (0xFFFF << 16))
            } else {
                word
            };
            if bucket[0] != key && deep.is_some() {
                // The displaced deep entry moves to the always-replace slot.
                bucket[2] = bucket[0];
                bucket[3] = bucket[1];
            }
            bucket[0] = key;
            bucket[1] = word;
        } else {
            bucket[2] = key;
            bucket[3] = word;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_and_bounds_its_size() {
        let mut tt = Tt::new(1 << 20);
        assert!(tt.bytes() <= 1 << 20);
        tt.store(42, -999_990, Some(1234), 7, Bound::Lower);
        let e = tt.probe(42).unwrap();
        assert_eq!(
            (e.score, e.mv, e.depth, e.bound),
            (-999_990, Some(1234), 7, Bound::Lower)
        );
        assert!(tt.probe(43).is_none());
        let small = Tt::new(0);
        assert!(small.bytes() >= MIN_BUCKETS * BUCKET_BYTES);
    }
}
