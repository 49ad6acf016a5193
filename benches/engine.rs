//! Hot paths of engine v2 on the `connect5 bench` positions: move generation, make/unmake of
//! every candidate, static evaluation, and a whole fixed-depth search.

use connect5::board::{Board, Rule};
use connect5::engine::bench_positions::POSITIONS;
use connect5::engine::Workbench;
use connect5::engine::{think, Deadline, EngineConfig, EngineKind};
use criterion::{black_box, criterion_group, criterion_main, Criterion};

fn boards() -> Vec<(&'static str, Board)> {
    POSITIONS
        .iter()
        .filter_map(|(name, rows)| Board::from_rows(rows).ok().map(|b| (*name, b)))
        .collect()
}

fn workbenches() -> Vec<Workbench> {
    boards()
        .iter()
        .filter_map(|(_, b)| Workbench::new(b, Rule::for_board(b.rows(), b.cols())))
        .collect()
}

fn move_generation(c: &mut Criterion) {
    let mut benches = workbenches();
    c.bench_function("v2 generate (all bench positions)", |b| {
        b.iter(|| benches.iter_mut().map(|w| w.generate()).sum::<usize>())
    });
}

fn make_unmake(c: &mut Criterion) {
    let mut benches = workbenches();
    c.bench_function(
        "v2 make+unmake every candidate (all bench positions)",
        |b| {
            b.iter(|| {
                benches
                    .iter_mut()
                    .map(|w| w.make_unmake_all())
                    .sum::<usize>()
            })
        },
    );
}

fn evaluation(c: &mut Criterion) {
    let benches = workbenches();
    c.bench_function("v2 evaluate (all bench positions)", |b| {
        b.iter(|| benches.iter().map(|w| black_box(w).evaluate()).sum::<i32>())
    });
}

fn fixed_depth_search(c: &mut Criterion) {
    let boards = boards();
    let config = EngineConfig {
        kind: EngineKind::V2,
        hash_bytes: 4 << 20,
        max_depth: Some(3),
        ..EngineConfig::default()
    };
    let mut group = c.benchmark_group("v2 search");
    group.sample_size(10);
    group.bench_function("depth 3 (all bench positions)", |b| {
        b.iter(|| {
            boards
                .iter()
                .map(|(_, board)| {
                    let rule = Rule::for_board(board.rows(), board.cols());
                    think(board, rule, &Deadline::unlimited(), &config).map_or(0, |d| d.nodes)
                })
                .sum::<u64>()
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    move_generation,
    make_unmake,
    evaluation,
    fixed_depth_search
);
criterion_main!(benches);
