//! Seed 003's game graph and attractors, and the strategy built on them.
//!
//! The graph holds every position reachable from the empty board (X first). The attractor of a
//! player is grown from its won terminal positions: a position where that player moves enters as
//! soon as one successor is in; a position where the opponent moves enters once all its successors
//! are. The round at which a position enters is its rank (moves left to force the win). What
//! neither attractor holds is the draw region. The strategy plays, in this order of preference,
//! into its own attractor lowering the rank, into the draw region, and only as a last resort into
//! the opponent's attractor, at random among equals.

use std::collections::HashMap;
use std::sync::OnceLock;

use rand::rngs::StdRng;
use rand::Rng;

use crate::board::Stone;

use super::grid::{Grid, Status};

pub struct GameGraph {
    /// Every reachable position, in breadth-first order from the empty board.
    pub positions: Vec<Grid>,
    pub index: HashMap<Grid, usize>,
    /// Successors of each position, by index.
    pub successors: Vec<Vec<usize>>,
}

impl GameGraph {
    pub fn build() -> GameGraph {
        let mut positions = vec![Grid::EMPTY];
        let mut index = HashMap::from([(Grid::EMPTY, 0)]);
        let mut successors = Vec::new();
        let mut next = 0;
        while next < positions.len() {
            let grid = positions[next];
            let mut children = Vec::new();
            for (_, child) in grid.successors() {
                let id = *index.entry(child).or_insert_with(|| {
                    positions.push(child);
                    positions.len() - 1
                });
                children.push(id);
            }
            successors.push(children);
            next += 1;
        }
        GameGraph {
            positions,
            index,
            successors,
        }
    }

    /// The graph, built once per process.
    pub fn shared() -> &'static GameGraph {
        static GRAPH: OnceLock<GameGraph> = OnceLock::new();
        GRAPH.get_or_init(GameGraph::build)
    }

    pub fn len(&self) -> usize {
        self.positions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// The attractor of `player`: `Some(rank)` for each position in it.
    pub fn attractor(&self, player: Stone) -> Vec<Option<u32>> {
        let mut rank: Vec<Option<u32>> = self
            .positions
            .iter()
            .map(|g| (g.status() == Status::Won(player)).then_some(0))
            .collect();
        let mut round = 0;
        loop {
            round += 1;
            let mut entering = Vec::new();
            for (id, grid) in self.positions.iter().enumerate() {
                if rank[id].is_some() {
                    continue;
                }
                let Some(mover) = grid.to_move() else {
                    continue;
                };
                let children = &self.successors[id];
                let joins = if mover == player {
                    children.iter().any(|&c| rank[c].is_some())
                } else {
                    children.iter().all(|&c| rank[c].is_some())
                };
                if joins {
                    entering.push(id);
                }
            }
            if entering.is_empty() {
                return rank;
            }
            for id in entering {
                rank[id] = Some(round);
            }
        }
    }
}

/// Both attractors, computed once per process.
pub struct Attractors {
    /// Rank in X's attractor, in O's attractor (indexed like the graph).
    pub x: Vec<Option<u32>>,
    pub o: Vec<Option<u32>>,
}

impl Attractors {
    pub fn shared() -> &'static Attractors {
        static ATTRACTORS: OnceLock<Attractors> = OnceLock::new();
        ATTRACTORS.get_or_init(|| {
            let graph = GameGraph::shared();
            Attractors {
                x: graph.attractor(Stone::Black),
                o: graph.attractor(Stone::White),
            }
        })
    }

    pub fn of(&self, player: Stone) -> &[Option<u32>] {
        match player {
            Stone::Black => &self.x,
            Stone::White => &self.o,
        }
    }
}

/// The kind of position a strategy move leads to (the seed's `type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    Winning,
    Draw,
    Losing,
}

/// The attractor strategy's choice in `grid` (a reachable position with a move to play): the cell
/// and the region it leads into. `None` when the game is over or the position is unreachable.
pub fn choose(grid: Grid, rng: &mut StdRng) -> Option<(usize, Region)> {
    let side = grid.to_move()?;
    let graph = GameGraph::shared();
    let attractors = Attractors::shared();
    let own = attractors.of(side);
    let theirs = attractors.of(side.opponent());
    let here = *graph.index.get(&grid)?;
    let mut winning = Vec::new();
    // Still in the attractor but without lowering the rank: winning, yet not progressing.
    let mut stalling = Vec::new();
    let mut drawing = Vec::new();
    let mut losing = Vec::new();
    for (cell, child) in grid.successors() {
        let id = *graph.index.get(&child)?;
        match (own[id], theirs[id]) {
            (Some(rank), _) if own[here].is_none_or(|r| rank < r) => winning.push(cell),
            (Some(_), _) => stalling.push(cell),
            (None, None) => drawing.push(cell),
            (None, Some(_)) => losing.push(cell),
        }
    }
    let (cells, region) = if !winning.is_empty() {
        (winning, Region::Winning)
    } else if !stalling.is_empty() {
        (stalling, Region::Winning)
    } else if !drawing.is_empty() {
        (drawing, Region::Draw)
    } else {
        (losing, Region::Losing)
    };
    Some((cells[rng.gen_range(0..cells.len())], region))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn the_attractor_strategy_wins_from_its_attractor() {
        let graph = GameGraph::shared();
        let attractors = Attractors::shared();
        let mut rng = StdRng::seed_from_u64(3);
        // From every non-terminal position of X's attractor, X playing the strategy wins whatever
        // O plays (O here plays at random; the attractor guarantees it for every reply).
        for (id, &grid) in graph.positions.iter().enumerate() {
            if attractors.x[id].is_none() || grid.is_terminal() {
                continue;
            }
            let mut position = grid;
            while let Some(side) = position.to_move() {
                let cell = if side == Stone::Black {
                    choose(position, &mut rng).unwrap().0
                } else {
                    let empties: Vec<usize> = position.empty_cells().collect();
                    empties[rng.gen_range(0..empties.len())]
                };
                position = position.with(cell, side);
            }
            assert_eq!(position.status(), Status::Won(Stone::Black), "from {grid}");
        }
    }
}
