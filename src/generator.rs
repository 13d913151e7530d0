//! One worker's rows as NDJSON, from any [`ReplayTable`]. The API side: it checks the
//! arguments, fills the run id and worker id into the row's consts once, renders the
//! send time once per batch, and sizes a batch exactly before a byte is written;
//! `crate::writer` writes it.
//!
//! Row `seq` replays table entry `(worker_id * stride + seq) % entries`.
//! [`ResortGenerator`] is this over the compiled resort table.

use std::mem::MaybeUninit;
use std::sync::Arc;

use crate::error::{check_range, GenError};
use crate::sale_time::{write_time, TimeForm};
use crate::table::{resort, Const, ReplayTable};
use crate::tables::{
    MAX_BATCH_ROWS, MAX_RUN_ID_CHARS, MAX_SALE_TIME_US, MAX_SEQ, MAX_WORKER_ID, MIN_SALE_TIME_US,
};
use crate::writer::{self, Rows};

/// The longest send time: `"YYYY-MM-DDTHH:MM:SS.ffffffZ"`, quotes included.
const TIME_BYTES: usize = 30;

/// A const with the run id and worker id filled in: bytes, or the batch's send time.
#[derive(Debug, Clone)]
enum Part {
    Bytes(Vec<u8>),
    Time(TimeForm),
}

#[derive(Debug, Clone)]
pub struct Generator {
    table: Arc<ReplayTable>,
    /// Each group's consts as parts; in the group where a row ends, the first `split`
    /// parts end the row and the rest begin the next one.
    groups: Vec<Vec<Part>>,
    split: usize,
    /// Bytes a batch's consts take at most (send times at their longest).
    seg_bytes: usize,
    /// Billable bytes of a row's consts but its send times (`crate::billable`).
    const_values: u64,
    /// The billable bytes of the last batch written (None: the table does not know them).
    last_billable: Option<u64>,
    offset: usize,
    seq: u64,
}

/// A validated batch, ready to write: its exact size is known before any byte is.
#[derive(Debug, Clone)]
pub struct BatchPlan {
    n: u64,
    start_seq: u64,
    /// Every group's consts, rendered, group after group; `seg_ends[g]` ends group g's.
    segs: Vec<u8>,
    seg_ends: Vec<usize>,
    /// Bytes of the end group's consts that end a row.
    tail_len: usize,
    len: usize,
    /// Billable bytes of the batch's values (None: the table does not know them).
    billable: Option<u64>,
}

impl BatchPlan {
    /// Bytes the batch takes.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Billable bytes of the batch's values (see `crate::billable`); None when its
    /// table was made without them.
    pub fn billable(&self) -> Option<u64> {
        self.billable
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

impl Generator {
    /// The rows of worker `worker_id` in run `run_id` over `table`, from `start_seq`.
    pub fn new(
        table: Arc<ReplayTable>,
        run_id: &str,
        worker_id: u64,
        start_seq: u64,
    ) -> Result<Self, GenError> {
        let chars = run_id.chars().count();
        if chars > MAX_RUN_ID_CHARS {
            return Err(GenError::RunIdTooLong {
                chars,
                max: MAX_RUN_ID_CHARS,
            });
        }
        check_range("worker_id", worker_id.into(), 0, MAX_WORKER_ID.into())?;
        check_range("start_seq", start_seq.into(), 0, MAX_SEQ.into())?;

        let run_id_raw = run_id;
        let run_id_json = json_string(run_id);
        let run_id = &run_id_json[1..run_id_json.len() - 1];
        let mut worker = itoa::Buffer::new();
        let worker = worker.format(worker_id).as_bytes();
        let shape = &table.shape;
        let mut split = 0;
        let mut const_values = table.const_values;
        let mut groups = Vec::with_capacity(shape.groups.len());
        for (g, group) in shape.groups.iter().enumerate() {
            let mut parts: Vec<Part> = Vec::new();
            for (i, c) in group.consts.iter().enumerate() {
                let at_split = g == shape.end_group && i == shape.end_consts;
                if at_split {
                    split = parts.len();
                }
                let bytes: &[u8] = match c {
                    Const::Text(t) => t,
                    Const::RunId => {
                        // the run id's own text, not its escapes
                        const_values += run_id_raw.len() as u64;
                        run_id
                    }
                    Const::WorkerId => {
                        const_values += worker.len() as u64;
                        worker
                    }
                    Const::SendTime(form) => {
                        parts.push(Part::Time(*form));
                        continue;
                    }
                };
                match parts.last_mut() {
                    Some(Part::Bytes(b)) if !at_split => b.extend_from_slice(bytes),
                    _ => parts.push(Part::Bytes(bytes.to_vec())),
                }
            }
            if g == shape.end_group && shape.end_consts == group.consts.len() {
                split = parts.len();
            }
            groups.push(parts);
        }
        let seg_bytes = groups
            .iter()
            .flatten()
            .map(|p| match p {
                Part::Bytes(b) => b.len(),
                Part::Time(_) => TIME_BYTES,
            })
            .sum();
        Ok(Generator {
            seg_bytes,
            const_values,
            last_billable: None,
            offset: table.offset(worker_id),
            table,
            groups,
            split,
            seq: start_seq,
        })
    }

    /// The table entry row `seq` replays.
    fn entry(&self, seq: u64) -> usize {
        let entries = self.table.entries() as u64;
        ((self.offset as u64 + seq % entries) % entries) as usize
    }

    /// The sequence number of the next row.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The table this generator replays.
    pub fn table(&self) -> &Arc<ReplayTable> {
        &self.table
    }

    /// Validates a batch of `n` rows sent at `sale_time_us` and sizes it exactly.
    pub fn plan(&self, n: u64, sale_time_us: i64) -> Result<BatchPlan, GenError> {
        check_range("n", n.into(), 0, MAX_BATCH_ROWS.into())?;
        let (lo, hi) = (MIN_SALE_TIME_US.into(), MAX_SALE_TIME_US.into());
        check_range("sale_time_us", sale_time_us.into(), lo, hi)?;
        if n > (MAX_SEQ + 1) - self.seq {
            return Err(GenError::SeqExhausted { n, seq: self.seq });
        }
        let mut segs = Vec::with_capacity(self.seg_bytes);
        let mut seg_ends = Vec::with_capacity(self.groups.len());
        let mut tail_len = 0;
        // Billable bytes of a row's consts: the send times' text, without their quotes.
        let mut row_values = self.const_values;
        for (g, parts) in self.groups.iter().enumerate() {
            let start = segs.len();
            for (i, part) in parts.iter().enumerate() {
                if g == self.table.shape.end_group && i == self.split {
                    tail_len = segs.len() - start;
                }
                match part {
                    Part::Bytes(b) => segs.extend_from_slice(b),
                    Part::Time(form) => {
                        let at = segs.len();
                        write_time(sale_time_us, *form, &mut segs)?;
                        row_values += (segs.len() - at).saturating_sub(2) as u64;
                    }
                }
            }
            if g == self.table.shape.end_group && self.split == parts.len() {
                tail_len = segs.len() - start;
            }
            seg_ends.push(segs.len());
        }
        let seq_digits = if self.table.shape.has_seq {
            digits_in_range(self.seq, n)
        } else {
            0
        };
        let entry = self.entry(self.seq);
        let len = u128::from(n) * segs.len() as u128
            + u128::from(seq_digits)
            + self.table.span_len(entry, n);
        // Every seq digit is a value's (a unique id's or a number's).
        let billable = self.table.span_values(entry, n).map(|span| {
            let total = u128::from(n) * u128::from(row_values) + u128::from(seq_digits) + span;
            u64::try_from(total).unwrap_or(u64::MAX)
        });
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| l <= isize::MAX as usize)
            .ok_or(GenError::TooLarge { bytes: len })?;
        Ok(BatchPlan {
            n,
            start_seq: self.seq,
            segs,
            seg_ends,
            tail_len,
            len,
            billable,
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
            self.last_billable = plan.billable;
            return Ok(());
        }
        let rows = Rows {
            table: &self.table,
            segs: &plan.segs,
            seg_ends: &plan.seg_ends,
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
        self.last_billable = plan.billable;
        Ok(())
    }

    /// The billable bytes of the values of the last batch written (`crate::billable`):
    /// counted from its plan as it was sized, not by reading its bytes again. None
    /// before the first batch, or when the table does not know its values.
    pub fn last_billable(&self) -> Option<u64> {
        self.last_billable
    }

    /// The billable bytes of `next_batch(n, sale_time_us)`, checked as it checks,
    /// without writing the rows or advancing `seq`.
    pub fn billable_len(&self, n: u64, sale_time_us: i64) -> Result<Option<u64>, GenError> {
        self.plan(n, sale_time_us).map(|plan| plan.billable())
    }

    /// The length of `next_batch(n, sale_time_us)`, checked as it checks, without
    /// writing the rows or advancing `seq`.
    pub fn batch_len(&self, n: u64, sale_time_us: i64) -> Result<usize, GenError> {
        self.plan(n, sale_time_us).map(|plan| plan.len())
    }

    /// The next `n` rows sent at `sale_time_us`, as NDJSON.
    pub fn next_batch(&mut self, n: u64, sale_time_us: i64) -> Result<Vec<u8>, GenError> {
        let plan = self.plan(n, sale_time_us)?;
        let mut out = Vec::new();
        out.try_reserve_exact(plan.len())
            .map_err(|_| GenError::TooLarge {
                bytes: plan.len() as u128,
            })?;
        self.write(&plan, &mut out.spare_capacity_mut()[..plan.len()])?;
        // SAFETY: `write` returned Ok, so it initialised all `plan.len()` bytes.
        unsafe { out.set_len(plan.len()) };
        Ok(out)
    }
}

/// Deterministic resort sales for one worker: a [`Generator`] over the compiled resort
/// table.
#[derive(Debug, Clone)]
pub struct ResortGenerator(Generator);

impl ResortGenerator {
    pub fn new(run_id: &str, worker_id: u64, start_seq: u64) -> Result<Self, GenError> {
        Generator::new(resort::table(), run_id, worker_id, start_seq).map(ResortGenerator)
    }

    /// The sequence number of the next row.
    pub fn seq(&self) -> u64 {
        self.0.seq()
    }

    /// See [`Generator::plan`].
    pub fn plan(&self, n: u64, sale_time_us: i64) -> Result<BatchPlan, GenError> {
        self.0.plan(n, sale_time_us)
    }

    /// See [`Generator::write`].
    pub fn write(&mut self, plan: &BatchPlan, out: &mut [MaybeUninit<u8>]) -> Result<(), GenError> {
        self.0.write(plan, out)
    }

    /// See [`Generator::batch_len`].
    pub fn batch_len(&self, n: u64, sale_time_us: i64) -> Result<usize, GenError> {
        self.0.batch_len(n, sale_time_us)
    }

    /// See [`Generator::billable_len`] (the resort table knows its values).
    pub fn billable_len(&self, n: u64, sale_time_us: i64) -> Result<Option<u64>, GenError> {
        self.0.billable_len(n, sale_time_us)
    }

    /// See [`Generator::last_billable`].
    pub fn last_billable(&self) -> Option<u64> {
        self.0.last_billable()
    }

    /// See [`Generator::next_batch`].
    pub fn next_batch(&mut self, n: u64, sale_time_us: i64) -> Result<Vec<u8>, GenError> {
        self.0.next_batch(n, sale_time_us)
    }

    /// The generator over the resort table.
    pub fn generator(&mut self) -> &mut Generator {
        &mut self.0
    }
}

#[cfg(test)]
#[path = "generator_tests.rs"]
mod tests;
