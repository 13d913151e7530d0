//! The row writer: a planned batch of rows, written as NDJSON bytes.
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
//!
//! [`crate::generator`] checks the arguments and sizes the batch; this module only
//! writes it.

mod counter;
pub(crate) mod pieces;
mod prefetch;

use std::mem::MaybeUninit;

use crate::tables::TABLE_LENGTH;
use counter::DecimalCounter;
use pieces::{Pieces, COLUMNS, WIDTH};

/// One batch as the writer sees it: every byte of it is settled, none written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rows<'a> {
    /// `{"TXID":"<run_id>-<worker_id>-`, written before the first row's digits.
    pub head: &'a [u8],
    /// The tail of every row, followed by the head of the next row.
    pub tail_head: &'a [u8],
    /// Length of the tail alone: the last row ends with it.
    pub tail_len: usize,
    /// The table entry of the first row.
    pub entry: usize,
    /// The sequence number of the first row.
    pub seq: u64,
    /// Number of rows, at least one.
    pub n: u64,
}

/// Copies `src` to `out[pos..]`; returns the position after it.
#[inline(always)]
fn copy_exact(out: &mut [MaybeUninit<u8>], pos: usize, src: &[u8]) -> usize {
    out[pos..pos + src.len()].write_copy_of_slice(src);
    pos + src.len()
}

/// Writes `rows` from the start of `out`, which must be exactly their size (the
/// generator's plan gives it); returns the number of bytes written.
///
/// On x86-64 with AVX2 (detected once, then cached by std) each 32-byte copy is one
/// load and one store instead of two of each.
pub(crate) fn write(rows: &Rows, out: &mut [MaybeUninit<u8>]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { write_avx2(rows, out) };
    }
    write_baseline(rows, out)
}

/// `write_baseline` compiled for AVX2. The caller checks that the CPU has it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn write_avx2(rows: &Rows, out: &mut [MaybeUninit<u8>]) -> usize {
    write_baseline(rows, out)
}

/// `write` for any CPU of the target.
#[inline(always)]
fn write_baseline(rows: &Rows, out: &mut [MaybeUninit<u8>]) -> usize {
    let pieces = Pieces::get();
    let mut idx = rows.entry;
    let mut digits = DecimalCounter::new(rows.seq);
    let last = rows.seq + (rows.n - 1);
    let mut seq = rows.seq;

    // Whole-word rows: while the longest row and its spill fit in what is left.
    let word_row = counter::WORD + COLUMNS * WIDTH + rows.tail_head.len();
    let mut pos = copy_exact(out, 0, rows.head);
    while seq < last && out.len() - pos >= word_row {
        prefetch::for_write(out, pos + prefetch::DISTANCE);
        pos = digits.write(out, pos);
        digits.increment();
        for &piece in pieces.row(idx) {
            let (slot, len) = pieces.slot(piece);
            out[pos..pos + WIDTH].write_copy_of_slice(slot);
            pos += len;
        }
        pos = copy_exact(out, pos, rows.tail_head);
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
            pos = copy_exact(out, pos, &rows.tail_head[..rows.tail_len]);
            break;
        }
        pos = copy_exact(out, pos, rows.tail_head);
        digits.increment();
        idx = if idx + 1 == TABLE_LENGTH { 0 } else { idx + 1 };
        seq += 1;
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::ResortGenerator;

    const T: i64 = 1_764_470_646_123_456;

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
        let mut all = vec![run(&|g, out| {
            g.write_with(&plan, out, write_baseline).unwrap()
        })];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2.
            all.push(run(&|g, out| {
                g.write_with(&plan, out, |rows, out| unsafe { write_avx2(rows, out) })
                    .unwrap()
            }));
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
}
