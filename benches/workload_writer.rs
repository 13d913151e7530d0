//! Criterion bench of the native writer on each shipped workload's runtime table, and
//! the resort sales' compiled table beside its runtime twin, without Python in the loop.
//!
//!     cargo bench --bench workload_writer
//!
//! The tables come from Python (`benches/dump_workload.py`, run once per workload when
//! the bench starts: `python3`, or `$PYTHON`, with the project installed), as every
//! runtime table does; the bench measures only the writing.
use std::process::Command;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use elastic_native::{table::template, Generator, ReplayTable, ResortGenerator};

const SALE_TIME_US: i64 = 1_764_470_646_123_456;
const WORKLOADS: [&str; 4] = [
    "resort-sales",
    "iot-telemetry",
    "clickstream",
    "wide-events",
];
/// Bytes per batch: the worker's default ~1 MB.
const BATCH_BYTES: usize = 1_000_000;

/// Reads `dump_workload.py`'s layout (see there).
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn u64(&mut self) -> u64 {
        let (head, rest) = self.0.split_at(8);
        self.0 = rest;
        u64::from_le_bytes(head.try_into().expect("8 bytes"))
    }

    fn bytes(&mut self) -> Vec<u8> {
        let n = self.u64() as usize;
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        head.to_vec()
    }
}

fn table(workload: &str) -> Arc<ReplayTable> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/dump_workload.py");
    let out = Command::new(&python)
        .args([script, workload])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python} {script}: {e}"));
    assert!(
        out.status.success(),
        "{script} {workload} failed (is the project installed for {python}?):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut r = Reader(&out.stdout);
    let (entries, stride) = (r.u64() as usize, r.u64());
    let pieces: Vec<Vec<u8>> = (0..r.u64()).map(|_| r.bytes()).collect();
    let ids: Vec<u32> = r
        .bytes()
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes(c.try_into().expect("4 bytes")))
        .collect();
    let raw: Vec<(String, Vec<u8>)> = (0..r.u64())
        .map(|_| (String::from_utf8(r.bytes()).expect("a kind"), r.bytes()))
        .collect();
    let tokens = template::parse(&raw).expect("a valid template");
    Arc::new(ReplayTable::new(entries, stride, &pieces, &ids, &tokens).expect("a valid table"))
}

fn workload_writer(c: &mut Criterion) {
    let mut group = c.benchmark_group("workload_writer");
    for name in WORKLOADS {
        let gen = Generator::new(table(name), "run-20261130-024406", 17, 1_000_000).unwrap();
        let per_row = gen.batch_len(1000, SALE_TIME_US).unwrap() / 1000;
        let n = (BATCH_BYTES / per_row) as u64;
        let bytes = gen.batch_len(n, SALE_TIME_US).unwrap();
        group.throughput(Throughput::Bytes(bytes as u64));
        let mut out = vec![std::mem::MaybeUninit::new(0u8); bytes];
        group.bench_function(format!("{name}/runtime/{n}"), |b| {
            b.iter_batched_ref(
                || gen.clone(),
                |g| {
                    let plan = g.plan(n, SALE_TIME_US).unwrap();
                    g.write(&plan, &mut out).unwrap();
                },
                BatchSize::SmallInput,
            )
        });
        if name == "resort-sales" {
            let compiled = ResortGenerator::new("run-20261130-024406", 17, 1_000_000).unwrap();
            group.bench_function(format!("{name}/compiled/{n}"), |b| {
                b.iter_batched_ref(
                    || compiled.clone(),
                    |g| {
                        let plan = g.plan(n, SALE_TIME_US).unwrap();
                        g.write(&plan, &mut out).unwrap();
                    },
                    BatchSize::SmallInput,
                )
            });
        }
    }
    group.finish();
}

criterion_group!(benches, workload_writer);
criterion_main!(benches);
