//! Threat-space search (Allis, "Searching for solutions in games and artificial intelligence",
//! 1994): VCF, a win by continuous fours, where every attacker move is a four and the defender's
//! only reply is to fill its completion cell. The search is exact within its depth: a VCF claimed
//! here is a forced win under the rule of the pattern table (exact five by default), because each
//! four is read from that table and the defender's own fives are checked at every step.

use super::movegen::generate_moves;
use super::pattern::Class;
use super::position::Position;
use crate::board::Stone;
use crate::engine::time::SearchClock;

/// What the threat searches proved, by position (a direct-mapped table: a newer result takes the
/// slot). Failures are keyed with the cells that bounded the search (a failure of a restricted
/// search says nothing of an unrestricted one); wins are forced wins whatever bounded the search
/// that found them, so they are keyed by the position and the attacker alone.
pub struct ResultCache {
    slots: Vec<[u64; 2]>,
}

/// Marks a slot that holds a win, with the plies to the five in the bits above it.
const WIN_FLAG: u64 = 1 << 32;

impl ResultCache {
    /// 256 K slots (4 MiB): the leaf VCF probes of a search of a few seconds meet millions of
    /// positions, and a table of 16 K slots kept few of them.
    const SLOTS: usize = 1 << 18;

    pub fn new() -> ResultCache {
        ResultCache {
            slots: vec![[0; 2]; Self::SLOTS],
        }
    }

    fn index(key: u64) -> usize {
        key as usize & (Self::SLOTS - 1)
    }

    fn slot(&self, key: u64) -> [u64; 2] {
        self.slots[Self::index(key)]
    }

    /// Whether the search of `key` already failed at `depth` or deeper.
    fn failed(&self, key: u64, depth: u32) -> bool {
        let slot = self.slot(key);
        slot[0] == key && slot[1] & WIN_FLAG == 0 && slot[1] >= u64::from(depth)
    }

    /// The plies to the five of a win already found at `depth` or shallower.
    fn won(&self, key: u64, depth: u32) -> Option<i32> {
        let slot = self.slot(key);
        (slot[0] == key && slot[1] & WIN_FLAG != 0 && slot[1] as u32 <= depth)
            .then_some((slot[1] >> 33) as i32)
    }

    fn record_failure(&mut self, key: u64, depth: u32) {
        self.slots[Self::index(key)] = [key, u64::from(depth)];
    }

    fn record_win(&mut self, key: u64, depth: u32, plies: i32) {
        let value = u64::from(depth) | WIN_FLAG | (plies.max(0) as u64) << 33;
        self.slots[Self::index(key)] = [key, value];
    }

    /// What a search of `depth` need not do again: the plies of a win found (by `win_key`, the
    /// position and attacker), 0 for a failure of the same restricted search (by `key`).
    fn known(&self, win_key: u64, key: u64, depth: u32) -> Option<i32> {
        self.won(win_key, depth)
            .or_else(|| self.failed(key, depth).then_some(0))
    }

    /// Keeps a search's `result` (plies to the five, 0 for none): a win always, a failure only
    /// when the search was `complete` (one cut short by the clock proved nothing).
    fn record(&mut self, win_key: u64, key: u64, depth: u32, result: i32, complete: bool) {
        if result > 0 {
            self.record_win(win_key, depth, result);
        } else if complete {
            self.record_failure(key, depth);
        }
    }
}

/// The threat searches' memory between calls: scratch lists per ply, the results already proven,
/// and the anchors that restrict a threat to the reach of the last one. The position and the
/// limits come with each call.
pub struct ThreatSearch {
    cell_lists: Vec<Vec<usize>>,
    results: ResultCache,
    /// The attacker's previous four inside a VCF, whose reach bounds the next one.
    last_four: Option<usize>,
    /// Inside a VCT: the attacker's last threat, and the stone it blocked a four with since.
    last_threat: [Option<usize>; 2],
}

/// What a restricted threat search mixes into its failure key for the cell bounding it, so that
/// its failures are not taken for those of a search bounded elsewhere (or not at all).
fn anchor_key(anchor: Option<usize>, salt: u64) -> u64 {
    anchor.map_or(0, |c| (c as u64 + salt).wrapping_mul(0xD6E8_FEB8_6659_FD93))
}

impl ThreatSearch {
    /// Scratch lists for `plies` plies of threat search.
    pub fn new(plies: usize) -> ThreatSearch {
        ThreatSearch {
            cell_lists: (0..=plies).map(|_| Vec::new()).collect(),
            results: ResultCache::new(),
            last_four: None,
            last_threat: [None, None],
        }
    }

    /// Plies to the attacker's five (counting the attacker's moves and the forced replies) when
    /// `att`, to move, wins by continuous fours within `depth` fours; 0 when none is found.
    /// `ply` indexes the scratch buffers.
    pub fn vcf(
        &mut self,
        pos: &mut Position,
        clock: &mut SearchClock,
        att: Stone,
        depth: u32,
        ply: usize,
    ) -> i32 {
        if clock.tick() {
            return 0;
        }
        let def = att.opponent();
        if pos.count(att, Class::Win) > 0 {
            return 1;
        }
        let def_fives = pos.count(def, Class::Win);
        if def_fives >= 2 || depth == 0 || ply >= self.cell_lists.len() {
            return 0;
        }
        // After the first four, only fours within reach of the previous one are tried: any other
        // was already there before it and could have been played first (the dependency idea of
        // Allis' threat-space search). The failure key tells the restricted searches apart.
        let last_four = self.last_four;
        let win_key = pos.hash() ^ (att.index() as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let key = win_key ^ anchor_key(last_four, 7);
        if let Some(known) = self.results.known(win_key, key, depth) {
            return known;
        }
        let mut fours = std::mem::take(&mut self.cell_lists[ply]);
        if def_fives == 1 {
            fours.clear();
            if let Some(block) = pos.find_win(def) {
                if pos.class(block, att) >= Class::Four {
                    fours.push(block);
                }
            }
        } else {
            match last_four {
                Some(anchor) => pos.cells_of_class_near(att, Class::Four, &[anchor], &mut fours),
                None => pos.cells_of_class(att, Class::Four, &mut fours),
            }
            let pos = &*pos;
            fours.sort_unstable_by_key(|&c| (std::cmp::Reverse(pos.value(c, att)), c));
        }
        let mut result = 0;
        for &cell in &fours {
            if pos.class(cell, att) >= Class::WinNext {
                // An open four or two fours: the defender, without a five of its own (its only
                // one, if any, is this very cell), can fill only one completion.
                result = 3;
                break;
            }
            pos.make_tactical(cell, att);
            if pos.count(def, Class::Win) == 0 {
                if let Some(reply) = pos.find_win_near(att, cell) {
                    pos.make_tactical(reply, def);
                    self.last_four = Some(cell);
                    let plies = self.vcf(pos, clock, att, depth - 1, ply + 1);
                    self.last_four = last_four;
                    pos.unmake(reply);
                    if plies > 0 {
                        result = plies + 2;
                    }
                }
            }
            pos.unmake(cell);
            if result > 0 || clock.stopped() {
                break;
            }
        }
        self.cell_lists[ply] = fours;
        self.results
            .record(win_key, key, depth, result, !clock.stopped());
        result
    }

    /// The first four of a VCF for `att`, with the plies to the five.
    pub fn vcf_root(
        &mut self,
        pos: &mut Position,
        clock: &mut SearchClock,
        att: Stone,
        depth: u32,
    ) -> Option<(usize, i32)> {
        let def = att.opponent();
        if let Some(five) = pos.find_win(att) {
            return Some((five, 1));
        }
        if pos.count(def, Class::Win) >= 2 {
            return None;
        }
        let mut fours = Vec::new();
        if let Some(block) = pos.find_win(def) {
            if pos.class(block, att) >= Class::Four {
                fours.push(block);
            }
        } else {
            pos.cells_of_class(att, Class::Four, &mut fours);
        }
        for cell in fours {
            pos.make_tactical(cell, att);
            let plies = if pos.count(def, Class::Win) > 0 {
                0
            } else if pos.count(att, Class::Win) >= 2 {
                3
            } else if let Some(reply) = pos.find_win(att) {
                pos.make_tactical(reply, def);
                self.last_four = Some(cell);
                let plies = self.vcf(pos, clock, att, depth.saturating_sub(1), 0);
                self.last_four = None;
                pos.unmake(reply);
                if plies > 0 {
                    plies + 2
                } else {
                    0
                }
            } else {
                0
            };
            pos.unmake(cell);
            if clock.stopped() {
                return None;
            }
            if plies > 0 {
                return Some((cell, plies));
            }
        }
        None
    }

    /// Plies to the attacker's five when `att`, to move, wins by a sequence of fours and threes
    /// (VCT) of at most `depth` attacker threats; 0 when none is found. After a three, every
    /// defence (the cells that take away the coming open four, and the defender's own fours) is
    /// tried; a defender's four is blocked and the attack goes on if its threat still stands. So
    /// a VCT found here is a forced win under the rule of the pattern table.
    pub fn vct(
        &mut self,
        pos: &mut Position,
        clock: &mut SearchClock,
        att: Stone,
        depth: u32,
        ply: usize,
    ) -> i32 {
        if clock.tick() {
            return 0;
        }
        let def = att.opponent();
        if pos.count(att, Class::Win) > 0 {
            return 1;
        }
        let def_fives = pos.count(def, Class::Win);
        if def_fives >= 2 || ply + 2 >= self.cell_lists.len() {
            return 0;
        }
        if def_fives == 1 {
            return self.block_four(pos, clock, att, depth, ply);
        }
        if pos.count(att, Class::WinNext) > 0 {
            return 3;
        }
        if depth == 0 {
            return 0;
        }
        // Facing an open three, only fours keep the initiative.
        if pos.count(def, Class::WinNext) > 0 {
            return self.vcf(pos, clock, att, depth, ply);
        }
        // As in the VCF, a threat after the first must be within reach of the attacker's last
        // threat (or of the stone that blocked a defender's four since).
        let anchors = self.last_threat;
        let win_key = pos.hash() ^ (att.index() as u64 + 3).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        let key =
            win_key ^ anchor_key(anchors[0], 11) ^ anchor_key(anchors[1], 4093).rotate_left(17);
        if let Some(known) = self.results.known(win_key, key, depth) {
            return known;
        }
        let mut threats = std::mem::take(&mut self.cell_lists[ply]);
        match anchors {
            [Some(threat), None] => {
                pos.cells_of_class_near(att, Class::Three, &[threat], &mut threats)
            }
            [Some(threat), Some(block)] => {
                pos.cells_of_class_near(att, Class::Three, &[threat, block], &mut threats)
            }
            _ => pos.cells_of_class(att, Class::Three, &mut threats),
        }
        {
            let pos = &*pos;
            threats.sort_unstable_by_key(|&c| (std::cmp::Reverse(pos.value(c, att)), c));
        }
        let mut result = 0;
        for &cell in &threats {
            result = self.vct_move(pos, clock, att, cell, depth, ply);
            if result > 0 || clock.stopped() {
                break;
            }
        }
        self.cell_lists[ply] = threats;
        self.results
            .record(win_key, key, depth, result, !clock.stopped());
        result
    }

    /// Inside a VCT, the defender's four must be blocked; the attack survives only if the
    /// attacker still threatens something afterwards. Plies to the five, or 0.
    fn block_four(
        &mut self,
        pos: &mut Position,
        clock: &mut SearchClock,
        att: Stone,
        depth: u32,
        ply: usize,
    ) -> i32 {
        let Some(block) = pos.find_win(att.opponent()) else {
            return 0;
        };
        let anchors = [self.last_threat[0], Some(block)];
        self.attack_then_defend(pos, clock, att, (block, anchors), depth, ply)
    }

    /// Plies to the five when `att` plays the threat `cell` first and wins by VCT; 0 otherwise.
    fn vct_move(
        &mut self,
        pos: &mut Position,
        clock: &mut SearchClock,
        att: Stone,
        cell: usize,
        depth: u32,
        ply: usize,
    ) -> i32 {
        let anchors = [Some(cell), None];
        self.attack_then_defend(pos, clock, att, (cell, anchors), depth - 1, ply)
    }

    /// The attacker plays `cell` (a threat, or the block of a four) and the defender answers
    /// under the given anchors (the threat the next one must be near, and a block since): plies
    /// to the five counting the move, or 0 when the defender escapes or time runs out.
    fn attack_then_defend(
        &mut self,
        pos: &mut Position,
        clock: &mut SearchClock,
        att: Stone,
        (cell, anchors): (usize, [Option<usize>; 2]),
        depth: u32,
        ply: usize,
    ) -> i32 {
        pos.make_tactical(cell, att);
        let outer = std::mem::replace(&mut self.last_threat, anchors);
        let plies = self.defender_turn(pos, clock, att, depth, ply + 1);
        self.last_threat = outer;
        pos.unmake(cell);
        if plies > 0 && !clock.stopped() {
            plies + 1
        } else {
            0
        }
    }

    /// The defender to move against the attacker's threat: plies to the attacker's five over
    /// every reply, or 0 when a reply escapes (or the attacker threatens nothing).
    fn defender_turn(
        &mut self,
        pos: &mut Position,
        clock: &mut SearchClock,
        att: Stone,
        depth: u32,
        ply: usize,
    ) -> i32 {
        let def = att.opponent();
        let att_fives = pos.count(att, Class::Win);
        if pos.count(def, Class::Win) > 0 {
            return 0;
        }
        if att_fives >= 2 {
            return 2;
        }
        if att_fives == 0 && pos.count(att, Class::WinNext) == 0 {
            return 0;
        }
        let mut replies = Vec::new();
        generate_moves(pos, &[], def, &mut replies);
        if replies.is_empty() {
            // No defence and no four: open four next, then five.
            return 4;
        }
        let mut longest = 0;
        for (reply, _) in replies {
            pos.make_tactical(reply, def);
            let plies = self.vct(pos, clock, att, depth, ply + 1);
            pos.unmake(reply);
            if plies == 0 || clock.stopped() {
                return 0;
            }
            longest = longest.max(plies + 1);
        }
        longest
    }

    /// The first move of a VCT for `att` (to move, facing no four and no open three), searched
    /// with growing depth until a win, `max_depth`, or the searcher's limits.
    pub fn vct_root(
        &mut self,
        pos: &mut Position,
        clock: &mut SearchClock,
        att: Stone,
        max_depth: u32,
    ) -> Option<(usize, i32)> {
        let def = att.opponent();
        if pos.count(def, Class::Win) > 0 || pos.count(def, Class::WinNext) > 0 {
            return None;
        }
        let mut threats = Vec::new();
        pos.cells_of_class(att, Class::Three, &mut threats);
        {
            let pos = &*pos;
            threats.sort_unstable_by_key(|&c| (std::cmp::Reverse(pos.value(c, att)), c));
        }
        let mut depth = 2;
        while depth <= max_depth {
            for &cell in &threats {
                let plies = self.vct_move(pos, clock, att, cell, depth, 0);
                if clock.stopped() {
                    return None;
                }
                if plies > 0 {
                    return Some((cell, plies));
                }
            }
            depth += 2;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_answers_failures_at_their_depth_and_wins_from_theirs() {
        let mut cache = ResultCache::new();
        cache.record_failure(42, 6);
        assert!(
            cache.failed(42, 6) && cache.failed(42, 3),
            "failed at 6, so at 3"
        );
        assert!(!cache.failed(42, 7), "a deeper search may still succeed");
        assert_eq!(cache.won(42, 10), None, "a failure is no win");
        cache.record_win(42, 4, 7);
        assert_eq!(cache.won(42, 4), Some(7));
        assert_eq!(cache.won(42, 9), Some(7), "found within 4, so within 9");
        assert_eq!(cache.won(42, 3), None, "it needed more than 3");
        assert!(!cache.failed(42, 1), "a win is no failure");
        let other = 42 + ResultCache::SLOTS as u64;
        assert_eq!(cache.won(other, 10), None, "same slot, other position");
    }

    #[test]
    fn a_search_cut_short_records_its_wins_but_not_its_failures() {
        let mut cache = ResultCache::new();
        cache.record(1, 2, 5, 0, false);
        assert_eq!(cache.known(1, 2, 5), None, "a cut search proved no failure");
        cache.record(1, 2, 5, 0, true);
        assert_eq!(cache.known(1, 2, 5), Some(0));
        assert_eq!(
            cache.known(1, 3, 5),
            None,
            "another restriction is another search"
        );
        cache.record(7, 8, 5, 9, false);
        assert_eq!(
            cache.known(7, 99, 5),
            Some(9),
            "a win holds whatever the restriction"
        );
    }
}
