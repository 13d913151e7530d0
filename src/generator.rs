//! `ResortGenerator`: one worker's rows, written straight to NDJSON.
//!
//! Row `seq` replays table entry `(worker_id * WORKER_STRIDE + seq) % TABLE_LENGTH`
//! and is laid out as
//!
//! ```text
//! {"TXID":"<run_id>-<worker_id>-  <seq>  ","RESORT":...,"SALE_TIME":  "<time>","RUN_ID":"<run_id>","WORKER_ID":<w>}\n
//! '---------- head (per generator) '----' '-- pieces (per entry) ---' '------------- tail (per batch) ---------------'
//! ```
//!
//! so writing a row is one integer to decimal and a few copies. Away from the end
//! of the buffer the copies are whole 32-byte words from zero-padded sources: each
//! may spill past its piece, and the next copy overwrites the spill. The last rows,
//! where a spill would run off the buffer, are copied exactly.

use std::mem::MaybeUninit;

use crate::counter::{self, DecimalCounter};
use crate::error::{check_range, GenError};
use crate::pieces::{Pieces, COLUMNS, WIDTH};
use crate::prefetch;
use crate::sale_time::write_sale_time;
use crate::tables::{
    MAX_BATCH_ROWS, MAX_RUN_ID_CHARS, MAX_SEQ, MAX_WORKER_ID, ROW_END, RUN_ID_KEY, TABLE_LENGTH,
    TXID_KEY, TXID_SEPARATOR, WORKER_ID_KEY, WORKER_STRIDE,
};

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

/// Copies `src` to `out[pos..]`; returns the position after it.
#[inline(always)]
fn copy_exact(out: &mut [MaybeUninit<u8>], pos: usize, src: &[u8]) -> usize {
    out[pos..pos + src.len()].write_copy_of_slice(src);
    pos + src.len()
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
        let start = (self.offset as u64 + self.seq % TABLE_LENGTH as u64) as usize % TABLE_LENGTH;
        let len = n * per_row + digits_in_range(self.seq, n) + Pieces::get().span_len(start, n);
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
    ///
    /// On x86-64 with AVX2 (detected once, then cached by std) each 32-byte copy is one
    /// load and one store instead of two of each.
    pub fn write(&mut self, plan: &BatchPlan, out: &mut [MaybeUninit<u8>]) -> Result<(), GenError> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            return unsafe { self.write_avx2(plan, out) };
        }
        self.write_baseline(plan, out)
    }

    /// `write_baseline` compiled for AVX2. The caller checks that the CPU has it.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn write_avx2(
        &mut self,
        plan: &BatchPlan,
        out: &mut [MaybeUninit<u8>],
    ) -> Result<(), GenError> {
        self.write_baseline(plan, out)
    }

    /// `write` for any CPU of the target.
    #[inline(always)]
    fn write_baseline(
        &mut self,
        plan: &BatchPlan,
        out: &mut [MaybeUninit<u8>],
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
        let pieces = Pieces::get();
        let mut idx =
            (self.offset as u64 + plan.start_seq % TABLE_LENGTH as u64) as usize % TABLE_LENGTH;
        let mut digits = DecimalCounter::new(plan.start_seq);
        let last = plan.start_seq + (plan.n - 1);
        let mut seq = plan.start_seq;

        // Whole-word rows: while the longest row and its spill fit in what is left.
        let word_row = counter::WORD + COLUMNS * WIDTH + plan.tail_head.len();
        let mut pos = copy_exact(out, 0, &self.head);
        while seq < last && out.len() - pos >= word_row {
            prefetch::for_write(out, pos + prefetch::DISTANCE);
            pos = digits.write(out, pos);
            digits.increment();
            for &piece in pieces.row(idx) {
                let (slot, len) = pieces.slot(piece);
                out[pos..pos + WIDTH].write_copy_of_slice(slot);
                pos += len;
            }
            pos = copy_exact(out, pos, &plan.tail_head);
            idx = if idx + 1 == TABLE_LENGTH { 0 } else { idx + 1 };
            seq += 1;
        }
        // The rest, exactly.
        loop {
            pos = digits.write_exact(out, pos);
            for &piece in pieces.row(idx) {
                let (slot, len) = pieces.slot(piece);
                pos = copy_exact(out, pos, &slot[..len]);
            }
            if seq == last {
                pos = copy_exact(out, pos, &plan.tail_head[..plan.tail_len]);
                break;
            }
            pos = copy_exact(out, pos, &plan.tail_head);
            digits.increment();
            idx = if idx + 1 == TABLE_LENGTH { 0 } else { idx + 1 };
            seq += 1;
        }
        if pos != plan.len {
            return Err(GenError::BufferSize {
                expected: plan.len,
                got: pos,
            });
        }
        self.seq = last.wrapping_add(1);
        Ok(())
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
    fn batches_continue_where_the_last_one_ended() {
        let mut one = ResortGenerator::new("r", 3, 0).unwrap();
        let mut two = ResortGenerator::new("r", 3, 0).unwrap();
        let whole = one.next_batch(TABLE_LENGTH as u64 + 5, T).unwrap();
        let mut parts = two.next_batch(100, T).unwrap();
        parts.extend(two.next_batch(TABLE_LENGTH as u64 - 95, T).unwrap());
        assert_eq!(whole, parts);
    }

    #[test]
    fn whole_word_rows_equal_rows_copied_exactly() {
        // A one-row batch is copied exactly; longer ones mostly in whole words.
        let long_run_id = "\u{1}\"".repeat(40);
        for run_id in ["r", long_run_id.as_str()] {
            for n in [2, 3, 40, 5_000] {
                let mut batch = ResortGenerator::new(run_id, 9, 99_990).unwrap();
                let mut rows = batch.clone();
                let whole = batch.next_batch(n, T).unwrap();
                let single: Vec<u8> = (0..n)
                    .flat_map(|_| rows.next_batch(1, T).unwrap())
                    .collect();
                assert!(whole == single, "run_id={run_id:?} n={n}");
            }
        }
    }

    /// The rows as each compiled writer this CPU can run writes them, then as `write`.
    fn by_each_writer(run_id: &str, n: u64) -> Vec<Vec<u8>> {
        let gen = ResortGenerator::new(run_id, 9, 99_990).unwrap();
        let plan = gen.plan(n, T).unwrap();
        let run = |write: &dyn Fn(&mut ResortGenerator, &mut [MaybeUninit<u8>])| {
            let mut g = gen.clone();
            let mut out = vec![MaybeUninit::new(0u8); plan.len()];
            write(&mut g, &mut out);
            assert_eq!(g.seq(), 99_990 + n);
            // SAFETY: `out` was initialised when made.
            out.iter()
                .map(|b| unsafe { b.assume_init() })
                .collect::<Vec<u8>>()
        };
        let mut all = vec![run(&|g, out| g.write_baseline(&plan, out).unwrap())];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2.
            all.push(run(&|g, out| unsafe { g.write_avx2(&plan, out) }.unwrap()));
        }
        all.push(run(&|g, out| g.write(&plan, out).unwrap()));
        all
    }

    #[test]
    fn every_compiled_writer_writes_the_same_rows() {
        let long_run_id = "\u{1}\"".repeat(40);
        for run_id in ["r", long_run_id.as_str()] {
            for n in [1, 2, 40, 5_000] {
                let all = by_each_writer(run_id, n);
                assert!(
                    all.windows(2).all(|w| w[0] == w[1]),
                    "run_id={run_id:?} n={n}"
                );
            }
        }
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
