//! The transposition table of every search (v1, v2, the exact solver): a fixed number of
//! two-entry buckets sized from the configured bytes, allocated once per search (zeroed pages, so
//! an unused table costs no resident memory). Slot 0 of a bucket keeps the deepest result, slot 1
//! takes the latest one, except that a position's entry is not replaced by a much shallower
//! result of the same position. Keys are stored whole, so a probe never returns another
//! position's entry unless two positions share all 64 bits of their key.

use crate::engine::types::{Bound, Score};

/// One bucket: for each of the two slots, the full key and a packed word
/// (score 32 bits | move 16 bits | depth 8 bits | on-PV 1 bit | generation 5 bits | bound 2 bits).
type Bucket = [u64; 4];
const BUCKET_BYTES: usize = std::mem::size_of::<Bucket>();
const MIN_BUCKETS: usize = 1 << 10;

#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub score: Score,
    pub mv: Option<usize>,
    pub depth: i32,
    pub bound: Bound,
    /// The position has been a node of the principal variation (chess engines' "ttPv").
    pub on_pv: bool,
}

pub struct Tt {
    buckets: Vec<Bucket>,
    mask: usize,
    /// The search the table serves now, of the searches of one game that keep the table
    /// ([`Tt::next_search`]): entries of earlier searches give way to its own.
    generation: u8,
}

const GENERATIONS: u8 = 32;

/// A new result for a position the table holds does not replace one this many plies deeper,
/// unless it is exact (Stockfish's replacement rule, margin 4): the first iterations of a search
/// would otherwise overwrite what an earlier search of the game found deeper, and every
/// iteration would rebuild its tree, so a kept table saved no nodes (docs/engine.md, session 73).
const SHALLOWER_KEEPS: i32 = 4;

fn pack(entry: Entry, generation: u8) -> u64 {
    let mv = entry.mv.map_or(0xFFFF, |m| m as u64 & 0xFFFF);
    let depth = entry.depth.clamp(-100, 120) as i8 as u8 as u64;
    (entry.score as u32 as u64) << 32
        | mv << 16
        | depth << 8
        | u64::from(entry.on_pv) << 7
        | u64::from(generation) << 2
        | entry.bound as u64
}

fn generation_of(word: u64) -> u8 {
    ((word >> 2) & 0x1F) as u8
}

/// The entry a packed word holds; `None` for an empty slot.
fn unpack(word: u64) -> Option<Entry> {
    let mv = (word >> 16) & 0xFFFF;
    Some(Entry {
        score: (word >> 32) as u32 as i32,
        mv: (mv != 0xFFFF).then_some(mv as usize),
        depth: ((word >> 8) & 0xFF) as u8 as i8 as i32,
        bound: Bound::from_packed((word & 0x3) as u8)?,
        on_pv: (word >> 7) & 1 == 1,
    })
}

/// Whether a result of `depth` takes the deep slot of `bucket`: that slot is empty, left from an
/// earlier search than `generation`, or holds a result no deeper.
fn claims_deep_slot(bucket: &Bucket, depth: i32, generation: u8) -> bool {
    generation_of(bucket[1]) != generation
        || unpack(bucket[1]).is_none_or(|deep| depth >= deep.depth)
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
            generation: 0,
        }
    }

    /// Bytes the table holds.
    pub fn bytes(&self) -> usize {
        self.buckets.len() * BUCKET_BYTES
    }

    /// Starts the next search of the game that keeps this table: what earlier searches stored
    /// still answers probes, but the deep slot no longer protects it from the new entries.
    pub fn next_search(&mut self) {
        self.generation = (self.generation + 1) % GENERATIONS;
    }

    /// Asks the processor to bring `key`'s bucket into its cache, so that the probe of a node
    /// about to be searched does not wait on memory (that wait was two thirds of the search's
    /// own time outside make, unmake and move generation). A hint only: nothing changes.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let bucket = &self.buckets[key as usize & self.mask];
            // SAFETY: a prefetch never faults and reads nothing; the address is a live bucket.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(bucket.as_ptr().cast()) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
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

    pub fn store(&mut self, key: u64, entry: Entry) {
        let bucket = &mut self.buckets[key as usize & self.mask];
        let mut word = pack(entry, self.generation);
        if let Some(slot) = (0..2).find(|&slot| bucket[2 * slot] == key) {
            if let Some(held) = unpack(bucket[2 * slot + 1]) {
                if entry.depth + SHALLOWER_KEEPS <= held.depth && entry.bound != Bound::Exact {
                    // The deeper result stays, and counts as this search's own.
                    bucket[2 * slot + 1] = pack(held, self.generation);
                    return;
                }
                if entry.mv.is_none() {
                    // Keep a known best move when the new result has none.
                    word = (word & !(0xFFFF << 16)) | (bucket[2 * slot + 1] & (0xFFFF << 16));
                }
            }
            bucket[2 * slot + 1] = word;
            if slot == 1 && claims_deep_slot(bucket, entry.depth, self.generation) {
                bucket.swap(0, 2);
                bucket.swap(1, 3);
            }
            return;
        }
        if claims_deep_slot(bucket, entry.depth, self.generation) {
            let stale = generation_of(bucket[1]) != self.generation;
            if unpack(bucket[1]).is_some() && !stale {
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

    fn entry(score: Score, mv: Option<usize>, depth: i32, bound: Bound) -> Entry {
        Entry {
            score,
            mv,
            depth,
            bound,
            on_pv: false,
        }
    }

    #[test]
    fn stores_and_bounds_its_size() {
        let mut tt = Tt::new(1 << 20);
        assert!(tt.bytes() <= 1 << 20);
        tt.store(42, entry(-999_990, Some(1234), 7, Bound::Lower));
        let e = tt.probe(42).unwrap();
        assert_eq!(
            (e.score, e.mv, e.depth, e.bound, e.on_pv),
            (-999_990, Some(1234), 7, Bound::Lower, false)
        );
        tt.store(
            42,
            Entry {
                on_pv: true,
                ..entry(-5, None, 4, Bound::Upper)
            },
        );
        let e = tt.probe(42).unwrap();
        assert_eq!(
            (e.score, e.mv, e.depth, e.bound, e.on_pv),
            (-5, Some(1234), 4, Bound::Upper, true),
            "a result without a move keeps the one known"
        );
        assert!(tt.probe(43).is_none());
        let small = Tt::new(0);
        assert!(small.bytes() >= MIN_BUCKETS * BUCKET_BYTES);
    }

    #[test]
    fn a_later_search_keeps_what_earlier_ones_stored_but_not_their_claim_on_the_deep_slot() {
        let mut tt = Tt::new(0);
        let buckets = tt.mask as u64 + 1;
        // Three keys of one bucket.
        let (deep, shallow, newer) = (5, 5 + buckets, 5 + 2 * buckets);
        tt.store(deep, entry(10, Some(1), 9, Bound::Exact));
        tt.store(shallow, entry(20, Some(2), 1, Bound::Exact));
        assert_eq!(tt.probe(deep).map(|e| e.depth), Some(9));
        tt.next_search();
        assert_eq!(tt.probe(deep).map(|e| e.score), Some(10));
        // Within one search the depth-9 entry would keep slot 0 against a depth-1 one.
        tt.store(newer, entry(30, Some(3), 1, Bound::Lower));
        assert_eq!(tt.probe(newer).map(|e| e.score), Some(30));
        assert!(tt.probe(deep).is_none());
        assert_eq!(tt.probe(shallow).map(|e| e.score), Some(20));
    }

    #[test]
    fn a_much_shallower_result_replaces_a_deeper_one_only_when_exact() {
        let mut tt = Tt::new(0);
        tt.store(7, entry(50, Some(3), 9, Bound::Lower));
        tt.next_search();
        tt.store(7, entry(-20, Some(4), 5, Bound::Upper));
        let kept = tt.probe(7).unwrap();
        assert_eq!((kept.score, kept.mv, kept.depth), (50, Some(3), 9));
        tt.store(7, entry(30, Some(5), 6, Bound::Lower));
        assert_eq!(tt.probe(7).map(|e| (e.score, e.depth)), Some((30, 6)));
        tt.store(7, entry(10, Some(6), 1, Bound::Exact));
        assert_eq!(tt.probe(7).map(|e| (e.score, e.depth)), Some((10, 1)));
    }

    #[test]
    fn a_position_in_the_always_replace_slot_is_updated_there_or_promoted() {
        let mut tt = Tt::new(0);
        let buckets = tt.mask as u64 + 1;
        let (deep, other) = (9, 9 + buckets);
        tt.store(deep, entry(1, Some(1), 8, Bound::Exact));
        tt.store(other, entry(2, Some(2), 3, Bound::Exact));
        tt.store(other, entry(3, Some(2), 4, Bound::Exact));
        assert_eq!(tt.probe(deep).map(|e| e.depth), Some(8));
        assert_eq!(tt.probe(other).map(|e| e.depth), Some(4));
        tt.store(other, entry(4, Some(2), 10, Bound::Exact));
        assert_eq!(tt.probe(other).map(|e| e.depth), Some(10));
        assert_eq!(
            tt.probe(deep).map(|e| e.depth),
            Some(8),
            "the promoted entry and the one it displaced swap slots"
        );
    }
}
