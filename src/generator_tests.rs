//! `ResortGenerator`'s behaviour: exact sizes, NDJSON rows, argument checks.

use super::*;
use crate::tables::TABLE_LENGTH;

const T: i64 = 1_764_470_646_123_456;

#[test]
fn digits_in_range_matches_counting() {
    for &(from, n) in &[(0u64, 0u64), (0, 1), (7, 5), (95, 20), (999_990, 30)] {
        let direct: u64 = (from..from + n).map(digits).sum();
        assert_eq!(digits_in_range(from, n), direct, "from={from} n={n}");
    }
    assert_eq!(digits_in_range(MAX_SEQ, 1), 19);
}

#[test]
fn plan_sizes_the_batch_exactly_and_rows_are_ndjson() {
    let mut g = ResortGenerator::new("run-\"x\"\n", 17, 9_990).unwrap();
    let plan = g.plan(20_000, T).unwrap();
    let out = g.next_batch(20_000, T).unwrap();
    assert_eq!(out.len(), plan.len());
    assert_eq!(g.seq(), 29_990);
    let text = std::str::from_utf8(&out).unwrap();
    let lines: Vec<&str> = text.split_terminator('\n').collect();
    assert_eq!(lines.len(), 20_000);
    assert!(lines[0].starts_with("{\"TXID\":\"run-\\\"x\\\"\\n-17-9990\",\"RESORT\":"));
    assert!(lines[19_999].contains("-17-29989\""));
    assert!(lines
        .iter()
        .all(|l| l.ends_with(",\"RUN_ID\":\"run-\\\"x\\\"\\n\",\"WORKER_ID\":17}")));
}

#[test]
fn batch_len_is_the_batch_length_and_consumes_nothing() {
    // Digit-count boundaries (9 -> 10, 999_999 -> 1_000_000, MAX_SEQ), table
    // wrap-around (n past TABLE_LENGTH), escaped and multi-byte run ids.
    let table = TABLE_LENGTH as u64;
    let cases: &[(&str, u64, u64, u64)] = &[
        ("r", 0, 0, 0),
        ("r", 0, 0, 1),
        ("run-20261130-024406", 17, 5, 10),
        (
            "q\"\\\u{0}\u{1f}\u{7f} é 😀 \u{2028}",
            MAX_WORKER_ID,
            999_990,
            20,
        ),
        ("", 1, 8, table - 1),
        ("r", 999, 123, 2 * table + 7),
        ("r", 2, MAX_SEQ - 20_000, 20_001),
    ];
    for &(run_id, worker_id, start_seq, n) in cases {
        for &t in &[0, -1, T, crate::tables::MAX_SALE_TIME_US] {
            let mut g = ResortGenerator::new(run_id, worker_id, start_seq).unwrap();
            let predicted = g.batch_len(n, t).unwrap();
            assert_eq!(g.seq(), start_seq);
            let out = g.next_batch(n, t).unwrap();
            assert_eq!(
                predicted,
                out.len(),
                "{run_id:?} {worker_id} {start_seq} {n} {t}"
            );
        }
    }
}

#[test]
fn batch_len_refuses_what_next_batch_refuses() {
    let g = ResortGenerator::new("r", 0, MAX_SEQ - 1).unwrap();
    for (n, t) in [
        (MAX_BATCH_ROWS + 1, T),
        (1, crate::tables::MAX_SALE_TIME_US + 1),
        (1, crate::tables::MIN_SALE_TIME_US - 1),
        (3, T),
    ] {
        let mut fresh = g.clone();
        let want = fresh.next_batch(n, t).unwrap_err();
        assert_eq!(g.batch_len(n, t).unwrap_err(), want, "n={n} t={t}");
    }
    assert_eq!(g.seq(), MAX_SEQ - 1);
}

#[test]
fn batches_continue_where_the_last_one_ended() {
    let mut one = ResortGenerator::new("r", 3, 0).unwrap();
    let mut two = ResortGenerator::new("r", 3, 0).unwrap();
    let whole = one.next_batch(TABLE_LENGTH as u64 + 5, T).unwrap();
    let mut parts = two.next_batch(100, T).unwrap();
    parts.extend(two.next_batch(TABLE_LENGTH as u64 - 95, T).unwrap());
    assert_eq!(whole, parts);
}

#[test]
fn empty_batch_is_empty() {
    let mut g = ResortGenerator::new("r", 0, 5).unwrap();
    assert!(g.next_batch(0, T).unwrap().is_empty());
    assert_eq!(g.seq(), 5);
}

#[test]
fn bad_input_names_the_argument_and_changes_nothing() {
    let too_long = "x".repeat(MAX_RUN_ID_CHARS + 1);
    assert!(matches!(
        ResortGenerator::new(&too_long, 0, 0),
        Err(GenError::RunIdTooLong { .. })
    ));
    let err = ResortGenerator::new("r", MAX_WORKER_ID + 1, 0).unwrap_err();
    assert!(err.to_string().starts_with("worker_id must be between"));
    let err = ResortGenerator::new("r", 0, MAX_SEQ + 1).unwrap_err();
    assert!(err.to_string().starts_with("start_seq must be between"));

    let mut g = ResortGenerator::new("r", 0, MAX_SEQ - 1).unwrap();
    let err = g.plan(MAX_BATCH_ROWS + 1, T).unwrap_err();
    assert!(err.to_string().starts_with("n must be between"));
    assert!(matches!(
        g.plan(3, T),
        Err(GenError::SeqExhausted { n: 3, .. })
    ));
    assert_eq!(
        g.next_batch(2, T)
            .unwrap()
            .iter()
            .filter(|&&b| b == b'\n')
            .count(),
        2
    );
    assert_eq!(g.seq(), MAX_SEQ + 1);
    assert!(g.next_batch(0, T).unwrap().is_empty());
    assert!(g.plan(1, T).is_err());
}

#[test]
fn write_refuses_a_buffer_of_the_wrong_size() {
    let mut g = ResortGenerator::new("r", 0, 0).unwrap();
    let plan = g.plan(10, T).unwrap();
    let mut small = vec![MaybeUninit::new(0u8); plan.len() - 1];
    assert!(matches!(
        g.write(&plan, &mut small),
        Err(GenError::BufferSize { .. })
    ));
    assert_eq!(g.seq(), 0);
}

#[test]
fn billable_bytes_are_the_values_of_the_rows_written() {
    // The plan's count (no pass over the rows) against a scan of the rows written,
    // across escaped and multi-byte run ids, digit boundaries and the table's wrap.
    let table = TABLE_LENGTH as u64;
    let cases: &[(&str, u64, u64, u64)] = &[
        ("r", 0, 0, 1),
        ("q\"\\\u{0}\u{1f} é 😀 \u{2028}", MAX_WORKER_ID, 999_990, 20),
        ("run-1", 999, 123, 2 * table + 7),
    ];
    for &(run_id, worker, seq, n) in cases {
        let mut g = ResortGenerator::new(run_id, worker, seq).unwrap();
        assert_eq!(g.last_billable(), None);
        let want = g.billable_len(n, T).unwrap().unwrap();
        let out = g.next_batch(n, T).unwrap();
        assert_eq!(
            crate::billable::body_billable_bytes(&out),
            want,
            "{run_id:?} {n}"
        );
        assert_eq!(g.last_billable(), Some(want));
        assert!(want < out.len() as u64);
    }
}
