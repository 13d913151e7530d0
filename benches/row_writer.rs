//! Criterion bench of the native row writer, without Python.
//!
//!     cargo bench --bench row_writer
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use elastic_native::ResortGenerator;

const SALE_TIME_US: i64 = 1_764_470_646_123_456;

fn row_writer(c: &mut Criterion) {
    let mut group = c.benchmark_group("row_writer");
    for &n in &[1_000u64, 10_000, 100_000] {
        let gen = ResortGenerator::new("run-20261130-024406", 17, 1_000_000).unwrap();
        let bytes = gen.plan(n, SALE_TIME_US).unwrap().len();
        group.throughput(Throughput::Bytes(bytes as u64));
        group.bench_function(format!("next_batch/{n}"), |b| {
            b.iter_batched_ref(
                || gen.clone(),
                |g| g.next_batch(n, SALE_TIME_US).unwrap(),
                BatchSize::SmallInput,
            )
        });
        group.bench_function(format!("write_into_reused_buffer/{n}"), |b| {
            let mut out = vec![std::mem::MaybeUninit::new(0u8); bytes];
            b.iter_batched_ref(
                || gen.clone(),
                |g| {
                    let plan = g.plan(n, SALE_TIME_US).unwrap();
                    g.write(&plan, &mut out).unwrap();
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, row_writer);
criterion_main!(benches);
