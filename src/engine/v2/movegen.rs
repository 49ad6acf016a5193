//! Move generation of the v2 search: the moves worth searching at a node, scored for ordering,
//! with the forced-defence filters (the block of a four; against an open three, only the moves
//! that take its threat away, tried by playing them after a cheap reach test). The threat
//! searches generate the defender's replies here too.

use super::pattern::{Class, Pattern};
use super::position::Position;
use crate::board::Stone;

/// How the moves of a node were chosen.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MoveSet {
    /// The opponent has a four: the only move is its completion cell.
    ForcedBlock,
    /// The opponent threatens a win next move: our fours and the moves that remove the threat.
    Defence,
    /// Everything near the stones.
    All,
}

/// Threat cells remembered for the reach test of a defence; more is a rare, wide-open position.
const MAX_THREAT_CELLS: usize = 16;

/// Fills `list` with the moves worth searching for `me`, scored for ordering (history scores
/// indexed by cell and colour break ties among quiet moves).
pub fn generate_moves(
    pos: &mut Position,
    history: &[[i32; 2]],
    me: Stone,
    list: &mut Vec<(usize, i32)>,
) -> MoveSet {
    let opp = me.opponent();
    list.clear();
    if let Some(block) = pos.find_win(opp) {
        list.push((block, 0));
        return MoveSet::ForcedBlock;
    }
    let defending = pos.count(opp, Class::WinNext) > 0;
    // The opponent's winning-next cells: a stone changes the patterns only of the cells within
    // reach along its four lines, so a defence must be within reach of every one of them.
    let mut threats = [0usize; MAX_THREAT_CELLS];
    let mut threat_count = 0;
    if defending {
        for &cell in pos.candidates() {
            let cell = cell as usize;
            if pos.is_empty(cell) && pos.class(cell, opp) == Class::WinNext {
                if threat_count == MAX_THREAT_CELLS {
                    // Too many to be worth the test; the trial below decides alone.
                    threat_count = 0;
                    break;
                }
                threats[threat_count] = cell;
                threat_count += 1;
            }
        }
        if threat_count as u32 != pos.count(opp, Class::WinNext) {
            // A threat cell outside the candidates (never seen): only the trial is sure.
            threat_count = 0;
        }
    }
    let n = pos.candidates().len();
    for i in 0..n {
        let cell = pos.candidates()[i] as usize;
        if !pos.is_empty(cell) {
            continue;
        }
        if defending && pos.class(cell, me) < Class::Four {
            // Only a cell where the opponent could make a four can take away the threat of an
            // open four (or of two fours); check that it really does.
            if !(0..4).any(|d| pos.code(cell, opp, d) >= Pattern::B4)
                || !threats[..threat_count]
                    .iter()
                    .all(|&threat| pos.within_reach(cell, threat))
            {
                continue;
            }
            let stops_threat = if threat_count > 0 {
                // Our stone can only take patterns away from the opponent, so the threat is
                // gone when none of its cells keeps its class; each cell's new class is read
                // from the one line the stone shares with it, without playing the stone.
                threats[..threat_count].iter().all(|&threat| {
                    threat == cell || pos.class_after_block(threat, opp, cell) < Class::WinNext
                })
            } else {
                pos.make_tactical(cell, me);
                let stops = pos.count(opp, Class::WinNext) == 0;
                pos.unmake(cell);
                stops
            };
            if !stops_threat {
                continue;
            }
        }
        list.push((cell, order_score(pos, history, cell, me)));
    }
    if defending {
        MoveSet::Defence
    } else {
        MoveSet::All
    }
}

/// The ordering score of a cell: the fitted tables' values of what it makes for us and what it
/// takes from the opponent (`ordering_weights.txt`), then the history of the search.
pub fn order_score(pos: &Position, history: &[[i32; 2]], cell: usize, me: Stone) -> i32 {
    let opp = me.opponent();
    let mut score = table_order_score(pos, cell, me);
    if pos.class(cell, me) >= Class::FourThree {
        score += 20_000;
    } else if pos.class(cell, opp) >= Class::FourThree {
        score += 10_000;
    }
    score
        + history
            .get(cell)
            .map_or(0, |h| (h[me.index()] >> 4).clamp(-2_000, 2_000))
}

/// The part of a cell's ordering score the tables give: what it makes for `me` and what it
/// takes from the opponent.
pub fn table_order_score(pos: &Position, cell: usize, me: Stone) -> i32 {
    let tables = pos.tables();
    tables.order_own[pos.combination(cell, me)]
        + tables.order_opp[pos.combination(cell, me.opponent())]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{Board, Move};
    use crate::engine::v2::pattern;
    use rand::{rngs::StdRng, Rng, SeedableRng};

    /// The defences of the unfiltered rule: every cell where the opponent could make a four,
    /// tried by playing it (what generation did before the reach test).
    fn defences_by_trial(pos: &mut Position, me: Stone) -> Vec<usize> {
        let opp = me.opponent();
        let mut cells: Vec<usize> = pos.candidates().iter().map(|&c| c as usize).collect();
        cells.retain(|&cell| {
            if !pos.is_empty(cell) {
                return false;
            }
            if pos.class(cell, me) >= Class::Four {
                return true;
            }
            if !(0..4).any(|d| pos.code(cell, opp, d) >= Pattern::B4) {
                return false;
            }
            pos.make(cell, me);
            let stops = pos.count(opp, Class::WinNext) == 0;
            pos.unmake(cell);
            stops
        });
        cells.sort_unstable();
        cells
    }

    #[test]
    fn the_reach_test_keeps_every_defence_against_an_open_three() {
        let table = pattern::table_for(5, false).unwrap();
        let mut rng = StdRng::seed_from_u64(7);
        let mut checked = 0;
        for _ in 0..3000 {
            let mut board = Board::new(12, 12).unwrap();
            let mut stone = Stone::Black;
            for _ in 0..rng.gen_range(6..30) {
                let mv = Move::new(rng.gen_range(3..9), rng.gen_range(3..9));
                if board.is_empty_cell(mv) {
                    board.play(mv, stone).unwrap();
                    stone = stone.opponent();
                }
            }
            let me = board.side_to_move().unwrap();
            let mut pos = Position::new(&board, table);
            if pos.count(me.opponent(), Class::Win) > 0
                || pos.count(me.opponent(), Class::WinNext) == 0
            {
                continue;
            }
            let mut list = Vec::new();
            assert_eq!(
                generate_moves(&mut pos, &[], me, &mut list),
                MoveSet::Defence
            );
            let mut generated: Vec<usize> = list.iter().map(|&(c, _)| c).collect();
            generated.sort_unstable();
            assert_eq!(
                generated,
                defences_by_trial(&mut pos, me),
                "{:?}",
                board.to_rows()
            );
            checked += 1;
        }
        assert!(checked > 100, "only {checked} positions with an open three");
    }
}
