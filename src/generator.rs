//! `ResortGenerator`: one worker's rows as NDJSON. The API side: it checks the
//! arguments, builds each row's fixed head and tail, and sizes a batch exactly
//! before a byte is written; `crate::writer` writes it.
//!
//! Row `seq` replays table entry `(worker_id * WORKER_STRIDE + seq) % TABLE_LENGTH`.

use std::mem::MaybeUninit;

use crate::error::{check_range, GenError};
use crate::sale_time::write_sale_time;
use crate::tables::{
    MAX_BATCH_ROWS, MAX_RUN_ID_CHARS, MAX_SEQ, MAX_WORKER_ID, ROW_END, RUN_ID_KEY, TABLE_LENGTH,
    TXID_KEY, TXID_SEPARATOR, WORKER_ID_KEY, WORKER_STRIDE,
};
use crate::writer::{self, pieces::Pieces, Rows};

#[derive(Debug, Clone)]
pub struct ResortGenerator {
    /// `{"TXID":"<run_id>-<worker_id>-`
    head: Vec<u8>,
    /// `,"RUN_ID":"<run_id>","WORKER_ID":<worker_id>}\n`
    tail_after_time: Vec<u8>,
    offset: usize,
    seq: u64,
}

/// A validated batch, ready to write: its exact size is known before any byte is.
#[derive(Debug, Clone)]
pub struct BatchPlan {
    n: u64,
    start_seq: u64,
    /// The tail of every row in this batch, followed by the head of the next row.
    tail_head: Vec<u8>,
    /// Length of the tail alone.
    tail_len: usize,
    len: usize,
}

impl BatchPlan {
    /// Bytes the batch takes.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// `s` as a JSON string, quotes included, escaped as msgspec escapes it.
fn json_string(s: &str) -> Vec<u8> {
    // Serialising a &str to a Vec cannot fail.
    serde_json::to_vec(s).unwrap_or_default()
}

/// Decimal digits in `v`.
fn digits(v: u64) -> u64 {
    itoa::Buffer::new().format(v).len() as u64
}

/// Total decimal digits of every integer in `from..from + n`.
fn digits_in_range(from: u64, n: u64) -> u64 {
    let end = u128::from(from) + u128::from(n);
    let (mut lo, mut width) = (u128::from(from), digits(from));
    let mut total = 0u64;
    while lo < end {
        let next_width_at = 10u128.pow(width as u32);
        let hi = end.min(next_width_at);
        total += (hi - lo) as u64 * width;
        lo = hi;
        width += 1;
    }
    total
}

impl ResortGenerator {
    pub fn new(run_id: &str, worker_id: u64, start_seq: u64) -> Result<Self, GenError> {
        let chars = run_id.chars().count();
        if chars > MAX_RUN_ID_CHARS {
            return Err(GenError::RunIdTooLong {
                chars,
                max: MAX_RUN_ID_CHARS,
            });
        }
        check_range("worker_id", worker_id.into(), 0, MAX_WORKER_ID.into())?;
        check_range("start_seq", start_seq.into(), 0, MAX_SEQ.into())?;

        let run_id_json = json_string(run_id);
        let escaped = &run_id_json[1..run_id_json.len() - 1];
        let mut worker = itoa::Buffer::new();
        let worker = worker.format(worker_id).as_bytes();

        let mut head = Vec::new();
        head.extend_from_slice(TXID_KEY.as_bytes());
        head.push(b'"');
        head.extend_from_slice(escaped);
        head.extend_from_slice(TXID_SEPARATOR.as_bytes());
        head.extend_from_slice(worker);
        head.extend_from_slice(TXID_SEPARATOR.as_bytes());

        let mut tail_after_time = Vec::new();
        tail_after_time.extend_from_slice(RUN_ID_KEY.as_bytes());
        tail_after_time.extend_from_slice(&run_id_json);
        tail_after_time.extend_from_slice(WORKER_ID_KEY.as_bytes());
        tail_after_time.extend_from_slice(worker);
        tail_after_time.extend_from_slice(ROW_END.as_bytes());

        let offset = (worker_id * WORKER_STRIDE % TABLE_LENGTH as u64) as usize;
        Ok(ResortGenerator {
            head,
            tail_after_time,
            offset,
            seq: start_seq,
        })
    }

    /// The table entry row `seq` replays.
    fn entry(&self, seq: u64) -> usize {
        (self.offset as u64 + seq % TABLE_LENGTH as u64) as usize % TABLE_LENGTH
    }

    /// The sequence number of the next row.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Validates a batch of `n` rows stamped `sale_time_us` and sizes it exactly.
    pub fn plan(&self, n: u64, sale_time_us: i64) -> Result<BatchPlan, GenError> {
        check_range("n", n.into(), 0, MAX_BATCH_ROWS.into())?;
        let mut tail_head = Vec::new();
        write_sale_time(sale_time_us, &mut tail_head)?;
        if n > (MAX_SEQ + 1) - self.seq {
            return Err(GenError::SeqExhausted { n, seq: self.seq });
        }
        tail_head.extend_from_slice(&self.tail_after_time);
        let per_row = (self.head.len() + tail_head.len()) as u64;
        let len = n * per_row
            + digits_in_range(self.seq, n)
            + Pieces::get().span_len(self.entry(self.seq), n);
        let tail_len = tail_head.len();
        tail_head.extend_from_slice(&self.head);
        Ok(BatchPlan {
            n,
            start_seq: self.seq,
            tail_head,
            tail_len,
            len: len as usize,
        })
    }

    /// Writes the planned batch into `out`, which must be exactly `plan.len()` bytes,
    /// and advances `seq`. The plan must come from this generator's current state.
    /// On `Ok`, every byte of `out` has been written; `out` may start uninitialised.
    pub fn write(&mut self, plan: &BatchPlan, out: &mut [MaybeUninit<u8>]) -> Result<(), GenError> {
        self.write_with(plan, out, writer::write)
    }

    /// `write`, with the rows written by `write_rows` (which returns the bytes it
    /// wrote): [`writer::write`], or in tests each writer it dispatches to.
    #[inline(always)]
    pub(crate) fn write_with(
        &mut self,
        plan: &BatchPlan,
        out: &mut [MaybeUninit<u8>],
        write_rows: impl FnOnce(&Rows, &mut [MaybeUninit<u8>]) -> usize,
    ) -> Result<(), GenError> {
        if out.len() != plan.len || plan.start_seq != self.seq {
            return Err(GenError::BufferSize {
                expected: plan.len,
                got: out.len(),
            });
        }
        if plan.n == 0 {
            return Ok(());
        }
        let rows = Rows {
            head: &self.head,
            tail_head: &plan.tail_head,
            tail_len: plan.tail_len,
            entry: self.entry(plan.start_seq),
            seq: plan.start_seq,
            n: plan.n,
        };
        let pos = write_rows(&rows, out);
        if pos != plan.len {
            return Err(GenError::BufferSize {
                expected: plan.len,
                got: pos,
            });
        }
        self.seq = (plan.start_seq + (plan.n - 1)).wrapping_add(1);
        Ok(())
    }

    /// The length of `next_batch(n, sale_time_us)`, checked as it checks, without
    /// writing the rows or advancing `seq`.
    pub fn batch_len(&self, n: u64, sale_time_us: i64) -> Result<usize, GenError> {
        self.plan(n, sale_time_us).map(|plan| plan.len())
    }

    /// The next `n` rows stamped `sale_time_us`, as NDJSON.
    pub fn next_batch(&mut self, n: u64, sale_time_us: i64) -> Result<Vec<u8>, GenError> {
        let plan = self.plan(n, sale_time_us)?;
        let mut out = Vec::with_capacity(plan.len());
        self.write(&plan, &mut out.spare_capacity_mut()[..plan.len()])?;
        // SAFETY: `write` returned Ok, so it initialised all `plan.len()` bytes.
        unsafe { out.set_len(plan.len()) };
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
