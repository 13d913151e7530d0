//! The row writer: a planned batch of rows, written as NDJSON bytes. The one engine
//! behind every generator: the compiled resort table and a workload's runtime table
//! are both a [`ReplayTable`].
//!
//! The writer loops over the row's *cycle* (`crate::table::template`): the sequence
//! number, then groups of slots (the entry's pieces) each followed by the batch's
//! consts. A resort row is one group:
//!
//! ```text
//! {"TXID":"<run_id>-<worker_id>-  <seq>  ","RESORT":...,"SALE_TIME":  "<time>","RUN_ID":"<run_id>","WORKER_ID":<w>}\n{"TXID":"<run_id>-<worker_id>-
//! '--- head (written first) -----' '----' '-- pieces (per entry) ---' '---- consts: this row's tail, the next row's head ------------------------'
//! ```
//!
//! so writing a row is one increment of an ASCII counter and a few copies. Away from
//! the end of the buffer pieces are copied as whole 32-byte words from zero-padded
//! sources: each may spill past its piece, and the next copy overwrites the spill. The
//! last rows, where a spill would run off the buffer, are copied exactly.
//!
//! [`crate::generator`] checks the arguments and sizes the batch; this module only
//! writes it.

mod counter;
pub(crate) mod pieces;
mod prefetch;

#[cfg(test)]
mod tests;

use std::mem::MaybeUninit;

use crate::table::{RefKind, ReplayTable, TableRef};
use counter::DecimalCounter;
use pieces::{Long, Short, Tiny};

/// One batch as the writer sees it: every byte of it is settled, none written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rows<'a> {
    pub table: &'a ReplayTable,
    /// Each group's consts, rendered, group after group; `seg_ends[g]` ends group g's.
    pub segs: &'a [u8],
    pub seg_ends: &'a [usize],
    /// Bytes of the consts of the group where a row ends that end it.
    pub tail_len: usize,
    /// The table entry of the first row.
    pub entry: usize,
    /// The sequence number of the first row.
    pub seq: u64,
    /// Number of rows, at least one.
    pub n: u64,
}

impl<'a> Rows<'a> {
    /// Each group's slot count and consts.
    fn groups(&self) -> impl Iterator<Item = (usize, &'a [u8])> + Clone + 'a {
        let (segs, ends) = (self.segs, self.seg_ends);
        let groups = self.table.shape.groups.iter().enumerate();
        groups.map(move |(g, group)| {
            let start = if g == 0 { 0 } else { ends[g - 1] };
            (group.slots, &segs[start..ends[g]])
        })
    }
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

/// `write` for any CPU of the target: the loop for this table's kind of row.
#[inline(always)]
fn write_baseline(rows: &Rows, out: &mut [MaybeUninit<u8>]) -> usize {
    let t = rows.table;
    let one = t.shape.groups.len() == 1;
    match (t.shape.has_seq, one, t.ref_kind()) {
        (true, true, RefKind::Tiny) => write_rows::<true, true, Tiny>(rows, out),
        (true, false, RefKind::Tiny) => write_rows::<true, false, Tiny>(rows, out),
        (false, true, RefKind::Tiny) => write_rows::<false, true, Tiny>(rows, out),
        (false, false, RefKind::Tiny) => write_rows::<false, false, Tiny>(rows, out),
        (true, true, RefKind::Short) => write_rows::<true, true, Short>(rows, out),
        (true, false, RefKind::Short) => write_rows::<true, false, Short>(rows, out),
        (false, true, RefKind::Short) => write_rows::<false, true, Short>(rows, out),
        (false, false, RefKind::Short) => write_rows::<false, false, Short>(rows, out),
        (true, true, RefKind::Long) => write_rows::<true, true, Long>(rows, out),
        (true, false, RefKind::Long) => write_rows::<true, false, Long>(rows, out),
        (false, true, RefKind::Long) => write_rows::<false, true, Long>(rows, out),
        (false, false, RefKind::Long) => write_rows::<false, false, Long>(rows, out),
    }
}

/// The rows of a table whose row has a sequence number (`SEQ`), whose cycle is one
/// group (`ONE`), and whose entries hold references of kind `R`.
#[inline(always)]
fn write_rows<const SEQ: bool, const ONE: bool, R: TableRef>(
    rows: &Rows,
    out: &mut [MaybeUninit<u8>],
) -> usize {
    let t = rows.table;
    // Locals rather than fields, so that they stay in registers across the stores.
    let store = t.pieces.store();
    let (refs, slots, entries) = (t.all_refs::<R>(), t.slots(), t.entries());
    debug_assert_eq!(refs.len(), entries * slots);
    // SAFETY: the table holds `slots` references for each of its `entries` entries,
    // and every `i` passed here is an entry index (below `entries`).
    let entry = |i: usize| unsafe { refs.get_unchecked(i * slots..i * slots + slots) };
    let groups = rows.groups();
    let end_group = t.shape.end_group;
    let mut idx = rows.entry;
    let mut digits = DecimalCounter::new(rows.seq);
    let last = rows.seq + (rows.n - 1);
    let mut seq = rows.seq;

    // What precedes the first row's sequence number: the rest of the cycle after a
    // row's end, read from the entry before the first row's (its slots are the next
    // entry's, in cycle order).
    let before = entry(if idx == 0 { entries - 1 } else { idx - 1 });
    let mut k: usize = groups.clone().take(end_group + 1).map(|g| g.0).sum();
    let end_seg = groups.clone().nth(end_group).expect("the end group").1;
    let mut pos = copy_exact(out, 0, &end_seg[rows.tail_len..]);
    for (n, seg) in groups.clone().skip(end_group + 1) {
        for r in &before[k..k + n] {
            pos = r.copy_exact(store, out, pos);
        }
        k += n;
        pos = copy_exact(out, pos, seg);
    }

    // Whole-word rows: while the longest row and its spill fit in what is left.
    let word_row = counter::WORD + t.word_slots + rows.segs.len();
    let tail_head = rows.segs;
    while seq < last && out.len() - pos >= word_row {
        prefetch::for_write(out, pos + prefetch::DISTANCE);
        if SEQ {
            pos = digits.write(out, pos);
            digits.increment();
        }
        let refs = entry(idx);
        if ONE {
            for r in refs {
                pos = r.copy_words(store, out, pos);
            }
            pos = copy_exact(out, pos, tail_head);
        } else {
            let mut k = 0;
            for (n, seg) in groups.clone() {
                for r in &refs[k..k + n] {
                    pos = r.copy_words(store, out, pos);
                }
                k += n;
                pos = copy_exact(out, pos, seg);
            }
        }
        idx = if idx + 1 == entries { 0 } else { idx + 1 };
        seq += 1;
    }
    // The rest, exactly.
    loop {
        if SEQ {
            pos = digits.write_exact(out, pos);
        }
        let refs = entry(idx);
        let mut k = 0;
        for (g, (n, seg)) in groups.clone().enumerate() {
            for r in &refs[k..k + n] {
                pos = r.copy_exact(store, out, pos);
            }
            k += n;
            if seq == last && g == end_group {
                return copy_exact(out, pos, &seg[..rows.tail_len]);
            }
            pos = copy_exact(out, pos, seg);
        }
        if SEQ {
            digits.increment();
        }
        idx = if idx + 1 == entries { 0 } else { idx + 1 };
        seq += 1;
    }
}
