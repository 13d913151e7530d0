//! The replay table: what the writer replays, checked once when it is made.
//!
//! Python resolves a workload into `entries` entries of `slots` pieces each and a row
//! template (`python/elastic_channels/workload/replay.py`); the compiled resort table
//! ([`resort`]) is one instance of the same data. Row `seq` of worker `w` replays entry
//! `(w * stride + seq) % entries`. Nothing here renders a value: every piece arrives
//! rendered.

mod merge;
pub mod resort;
pub mod template;

use std::borrow::Cow;

use crate::error::GenError;
use crate::writer::pieces::{Long, PieceRef, Pieces, Short, Tiny, TINY_PIECES};
pub use template::{Const, Group, Shape, Token};

/// The most entries a table may have.
pub const MAX_ENTRIES: usize = 1 << 24;

#[derive(Debug)]
pub struct ReplayTable {
    entries: usize,
    stride: u64,
    pub(crate) pieces: Pieces,
    /// Each entry's pieces in cycle order (see [`template`]), entry after entry, as
    /// references that carry their length: [`Tiny`] ones when every piece fits one word
    /// and there are few, else [`Short`] ones when every piece fits one word, else
    /// [`Long`] ones (the other vectors are empty).
    tiny: Vec<Tiny>,
    short: Vec<Short>,
    long: Vec<Long>,
    /// `starts[i]`: the total length of the pieces of entries `0..i`.
    starts: Vec<u64>,
    /// `value_starts[i]`: the billable bytes of the values in the pieces of entries
    /// `0..i` (`crate::billable`); empty when the table was made without them.
    value_starts: Vec<u64>,
    /// Billable bytes of the values in a row's text tokens (constants, a unique id's
    /// separators): the same for every row.
    pub(crate) const_values: u64,
    pub(crate) shape: Shape,
    /// Bytes the slots of one row may write, each piece copied in whole words.
    pub(crate) word_slots: usize,
}

/// What a table's values bill (see `crate::billable`): each piece's value bytes, and
/// those of a row's text tokens.
#[derive(Debug, Clone, Copy)]
pub struct Values<'a> {
    pub pieces: &'a [u64],
    pub consts: u64,
}

impl ReplayTable {
    /// A table of `entries` entries whose piece numbers `ids` (entry after entry, in
    /// the template's slot order) index `pieces`, laid out by `template`; it does not
    /// know its billable bytes (see [`ReplayTable::with_values`]).
    pub fn new<T: AsRef<[u8]>>(
        entries: usize,
        stride: u64,
        pieces: &[T],
        ids: &[u32],
        template: &[Token],
    ) -> Result<Self, GenError> {
        Self::with_values(entries, stride, pieces, ids, template, None)
    }

    /// [`ReplayTable::new`], with what its values bill when `values` is given:
    /// `values.pieces[k]` the billable bytes of piece `k`, `values.consts` those of a
    /// row's text tokens.
    pub fn with_values<T: AsRef<[u8]>>(
        entries: usize,
        stride: u64,
        pieces: &[T],
        ids: &[u32],
        template: &[Token],
        values: Option<Values<'_>>,
    ) -> Result<Self, GenError> {
        if !(1..=MAX_ENTRIES).contains(&entries) {
            return Err(GenError::BadTable(format!(
                "entries must be between 1 and {MAX_ENTRIES}, got {entries}"
            )));
        }
        let mut shape = Shape::new(template);
        let slots = shape.slots;
        if ids.len() as u128 != entries as u128 * slots as u128 {
            return Err(GenError::BadTable(format!(
                "ids: {} piece numbers, but {entries} entries of {slots} slots need {}",
                ids.len(),
                entries as u128 * slots as u128
            )));
        }
        for (i, text) in pieces.iter().enumerate() {
            let text = text.as_ref();
            if std::str::from_utf8(text).is_err() || text.contains(&b'\n') {
                return Err(GenError::BadTable(format!(
                    "pieces[{i}]: a piece is UTF-8 text without a newline"
                )));
            }
        }
        if let Some(at) = ids.iter().position(|&id| id as usize >= pieces.len()) {
            return Err(GenError::BadTable(format!(
                "ids[{at}]: piece {} of {} pieces",
                ids[at],
                pieces.len()
            )));
        }
        if let Some(v) = values {
            if v.pieces.len() != pieces.len() {
                return Err(GenError::BadTable(format!(
                    "value_bytes: {} numbers for {} pieces",
                    v.pieces.len(),
                    pieces.len()
                )));
            }
            if let Some(at) =
                (0..pieces.len()).find(|&k| v.pieces[k] > pieces[k].as_ref().len() as u64)
            {
                return Err(GenError::BadTable(format!(
                    "value_bytes[{at}]: {} billable bytes in a piece of {}",
                    v.pieces[at],
                    pieces[at].as_ref().len()
                )));
            }
        }
        let len_of = |id: u32| pieces[id as usize].as_ref().len();
        let value_of = |id: u32| values.map_or(0, |v| v.pieces[id as usize]);
        let mut starts = Vec::with_capacity(entries + 1);
        let mut value_starts = Vec::with_capacity(if values.is_some() { entries + 1 } else { 0 });
        let (mut total, mut value_total) = (0u64, 0u64);
        let mut longest = vec![0usize; slots];
        for entry in ids.chunks_exact(slots.max(1)).take(entries) {
            starts.push(total);
            if values.is_some() {
                value_starts.push(value_total);
            }
            for (k, &id) in entry.iter().enumerate() {
                total += len_of(id) as u64;
                value_total += value_of(id);
                longest[k] = longest[k].max(len_of(id));
            }
        }
        starts.resize(entries + 1, total);
        if values.is_some() {
            value_starts.resize(entries + 1, value_total);
        }
        let word_slots = longest.iter().map(|&len| Pieces::words_len(len)).sum();

        // Cycle order: the slots after the seq of entry i, then those before it of entry
        // i + 1.
        let next = shape.next_slots;
        let mut cycled = Vec::with_capacity(ids.len());
        for i in 0..entries {
            let here = &ids[i * slots..(i + 1) * slots];
            let after = (i + 1) % entries;
            cycled.extend_from_slice(&here[next..]);
            cycled.extend_from_slice(&ids[after * slots..after * slots + next]);
        }
        let mut texts: Vec<Cow<[u8]>> = pieces.iter().map(|p| Cow::Borrowed(p.as_ref())).collect();
        merge::merge_groups(&mut shape, &mut cycled, &mut texts);
        // Only the pieces rows use are stored (merged groups leave theirs unused).
        let mut number = vec![u32::MAX; texts.len()];
        for &id in &cycled {
            number[id as usize] = 0;
        }
        let mut kept = Vec::new();
        for (text, n) in texts.into_iter().zip(number.iter_mut()) {
            if *n == 0 {
                *n = kept.len() as u32;
                kept.push(text);
            }
        }
        for id in cycled.iter_mut() {
            *id = number[*id as usize];
        }
        let pieces = Pieces::new(&kept)?;
        let (mut tiny, mut short, mut long) = (Vec::new(), Vec::new(), Vec::new());
        if pieces.short() && pieces.count() <= TINY_PIECES {
            tiny = cycled
                .iter()
                .map(|&id| pieces.short_ref(id).into())
                .collect();
        } else if pieces.short() {
            short = cycled.iter().map(|&id| pieces.short_ref(id)).collect();
        } else {
            long = cycled.iter().map(|&id| pieces.long_ref(id)).collect();
        }
        Ok(ReplayTable {
            entries,
            stride,
            pieces,
            tiny,
            short,
            long,
            starts,
            value_starts,
            const_values: values.map_or(0, |v| v.consts),
            shape,
            word_slots,
        })
    }

    /// The kind of reference the table holds.
    pub fn ref_kind(&self) -> RefKind {
        if !self.tiny.is_empty() || (self.pieces.short() && self.pieces.count() <= TINY_PIECES) {
            RefKind::Tiny
        } else if self.pieces.short() {
            RefKind::Short
        } else {
            RefKind::Long
        }
    }

    /// Number of entries.
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// Slots (pieces) per row.
    pub fn slots(&self) -> usize {
        self.shape.slots
    }

    /// The entry the first row of worker `worker_id` replays.
    pub fn offset(&self, worker_id: u64) -> usize {
        (u128::from(worker_id) * u128::from(self.stride) % self.entries as u128) as usize
    }

    /// The entry after `i`.
    #[inline(always)]
    pub fn next(&self, i: usize) -> usize {
        if i + 1 == self.entries {
            0
        } else {
            i + 1
        }
    }

    /// Every entry's pieces in cycle order, entry after entry, as `R` references
    /// (empty unless `R` is the kind this table holds: see [`ReplayTable::ref_kind`]).
    #[inline(always)]
    pub fn all_refs<R: TableRef>(&self) -> &[R] {
        R::all(self)
    }

    /// Total length of the pieces of the `n` entries from `start`, wrapping round.
    pub fn span_len(&self, start: usize, n: u64) -> u128 {
        span(&self.starts, self.entries, start, n)
    }

    /// Whether the table knows what its values bill.
    pub fn has_values(&self) -> bool {
        !self.value_starts.is_empty()
    }

    /// Billable bytes of the values in the pieces of the `n` entries from `start`,
    /// wrapping round (None: the table does not know them).
    pub fn span_values(&self, start: usize, n: u64) -> Option<u128> {
        self.has_values()
            .then(|| span(&self.value_starts, self.entries, start, n))
    }
}

/// The sum over the `n` entries from `start` (wrapping round `entries`) of what
/// `prefix` (prefix sums, `entries + 1` of them) sums.
fn span(prefix: &[u64], entries: usize, start: usize, n: u64) -> u128 {
    let len = entries as u64;
    let total = prefix[entries];
    let end = start + (n % len) as usize;
    let partial = if end <= entries {
        prefix[end] - prefix[start]
    } else {
        total - prefix[start] + prefix[end - entries]
    };
    u128::from(n / len) * u128::from(total) + u128::from(partial)
}

/// Which of [`Tiny`], [`Short`] and [`Long`] a table holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefKind {
    Tiny,
    Short,
    Long,
}

/// The kinds of reference a table may hold.
pub trait TableRef: PieceRef {
    fn all(table: &ReplayTable) -> &[Self];
}

impl TableRef for Tiny {
    #[inline(always)]
    fn all(table: &ReplayTable) -> &[Tiny] {
        &table.tiny
    }
}

impl TableRef for Short {
    #[inline(always)]
    fn all(table: &ReplayTable) -> &[Short] {
        &table.short
    }
}

impl TableRef for Long {
    #[inline(always)]
    fn all(table: &ReplayTable) -> &[Long] {
        &table.long
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Token {
        Token::Text(s.as_bytes().to_vec())
    }

    #[test]
    fn bad_tables_name_what_is_wrong() {
        let row = [t("{\"A\":"), Token::Slot, t("}\n")];
        let pieces: &[&[u8]] = &[b"1", b"22"];
        // (entries, pieces, ids, the error's start)
        type Case<'a> = (usize, &'a [&'a [u8]], Vec<u32>, &'a str);
        let cases: Vec<Case> = vec![
            (0, pieces, vec![], "entries must be between 1 and"),
            (
                2,
                pieces,
                vec![0],
                "ids: 1 piece numbers, but 2 entries of 1 slots need 2",
            ),
            (2, pieces, vec![0, 2], "ids[1]: piece 2 of 2 pieces"),
            (
                1,
                &[b"a\nb"],
                vec![0],
                "pieces[0]: a piece is UTF-8 text without a newline",
            ),
            (1, &[b"\xff"], vec![0], "pieces[0]: a piece is UTF-8"),
        ];
        for (entries, pieces, ids, want) in cases {
            let err = ReplayTable::new(entries, 1, pieces, &ids, &row).unwrap_err();
            assert!(err.to_string().starts_with(want), "{err}");
        }
    }

    #[test]
    fn ids_are_stored_in_cycle_order_and_spans_wrap() {
        // Row: {"A":<slot0>,"ID":"<seq>",<slot1>}\n ; entry i = pieces (2i, 2i+1).
        let row = [
            t("{\"A\":"),
            Token::Slot,
            t(",\"ID\":\""),
            Token::Seq,
            t("\","),
            Token::Slot,
            t("}\n"),
        ];
        let pieces: Vec<Vec<u8>> = (0..6).map(|i| vec![b'a'; i + 1]).collect();
        let table = ReplayTable::new(3, 2, &pieces, &[0, 1, 2, 3, 4, 5], &row).unwrap();
        let refs = table.all_refs::<Tiny>();
        let texts = |i: usize| {
            refs[2 * i..2 * i + 2]
                .iter()
                .map(|r| r.text(table.pieces.store()).len())
        };
        assert_eq!(texts(0).collect::<Vec<_>>(), [2, 3]);
        assert_eq!(texts(2).collect::<Vec<_>>(), [6, 1]);
        assert_eq!(table.offset(5), 1);
        // Entry lengths 3, 7, 11.
        assert_eq!(table.span_len(0, 3), 21);
        assert_eq!(table.span_len(2, 2), 14);
        assert_eq!(table.span_len(1, 7), 2 * 21 + 7);
    }
}
