//! Criterion bench of the emulator's landing parse (`RowParser::parse`), without
//! Python, on the rows the generator makes (the rows the emulator sees in practice).
//!
//!     cargo bench --bench landing_parse
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use elastic_native::landing::{Column, ColumnKind, RowParser};
use elastic_native::ResortGenerator;

const SALE_TIME_US: i64 = 1_764_470_646_123_456;

/// The emulator's table (`elastic_channels.model.COLUMNS`, as `column_specs` gives it).
fn resort_columns() -> Vec<Column> {
    let varchar = ColumnKind::Varchar { max_chars: None };
    let number = |precision, scale| ColumnKind::Number { precision, scale };
    [
        ("TXID", varchar),
        ("RESORT", varchar),
        ("CATEGORY", varchar),
        ("ITEM", varchar),
        ("CUSTOMER_TYPE", varchar),
        ("PAYMENT_METHOD", varchar),
        ("QUANTITY", number(9, 0)),
        ("UNIT_PRICE", number(12, 2)),
        ("AMOUNT", number(14, 2)),
        ("SALE_TIME", ColumnKind::Timestamp { tz: true }),
        ("RUN_ID", varchar),
        ("WORKER_ID", number(10, 0)),
    ]
    .into_iter()
    .map(|(name, kind)| Column {
        name: name.into(),
        kind,
    })
    .collect()
}

fn landing_parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("landing_parse");
    let parser = RowParser::new(resort_columns(), true);
    for &n in &[1_000u64, 16_000] {
        let mut gen = ResortGenerator::new("run-20261130-024406", 17, 1_000_000).unwrap();
        let body = gen.next_batch(n, SALE_TIME_US).unwrap();
        let got = parser.parse(&body);
        assert_eq!((got.rows, got.deferred_lines.len()), (n as usize, 0));
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(format!("generated_rows/{n}"), |b| {
            b.iter(|| parser.parse(&body))
        });
        // As the Python binding does: into the buffers of the previous parse.
        group.bench_function(format!("generated_rows_into_kept/{n}"), |b| {
            let mut got = parser.empty();
            b.iter(|| parser.parse_into(&body, &mut got))
        });
    }
    group.finish();
}

criterion_group!(benches, landing_parse);
criterion_main!(benches);
