//! The resolved table as fixed-width pieces, assembled once from the generated tables.
//!
//! Between its TXID digits and its SALE_TIME value a row holds one piece per entry
//! column: `","RESORT":"Vail"`, `,"CATEGORY":"MERCH"`, ..., `,"AMOUNT":5.94,"SALE_TIME":`
//! (the first piece also closes the TXID string, the last opens SALE_TIME). Each
//! distinct piece is stored once in a slot [`Pieces::width`] bytes wide, zero padded,
//! and each table entry becomes the numbers of its pieces. So the bytes a batch reads
//! are 2 per column per row plus a few KB of slots that stay in L1, rather than the
//! whole rendered row, and the writer copies every piece as whole 32-byte words.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::tables::{ENTRIES, ENTRY_KEYS, MAX_VALUE_LEN, SALE_TIME_KEY, TABLE_LENGTH, VALUES};

/// Entry columns per row.
pub const COLUMNS: usize = ENTRY_KEYS.len();
/// Slots are a whole number of these 32-byte words (one AVX load and store).
const WORD: usize = 32;
/// Bytes per slot: the longest piece the tables can make, rounded up to words.
pub const WIDTH: usize = longest_piece().div_ceil(WORD) * WORD;

/// The longest piece: the layout of [`piece_text`] applied to [`MAX_VALUE_LEN`].
const fn longest_piece() -> usize {
    let mut longest = 0;
    let mut column = 0;
    while column < COLUMNS {
        let mut len = ENTRY_KEYS[column].len() + MAX_VALUE_LEN[column];
        if column == 0 {
            len += 1;
        }
        if column == COLUMNS - 1 {
            len += SALE_TIME_KEY.len();
        }
        if len > longest {
            longest = len;
        }
        column += 1;
    }
    longest
}

pub struct Pieces {
    slots: Vec<[u8; WIDTH]>,
    /// Real length of the piece in each slot.
    lens: Vec<u16>,
    /// The piece (slot) numbers of each table entry, column by column.
    rows: Vec<[u16; COLUMNS]>,
    /// `starts[i]` is the total length of the pieces of entries `0..i`.
    starts: Vec<u64>,
}

impl Pieces {
    fn build() -> Self {
        let mut texts: Vec<Vec<u8>> = Vec::new();
        let mut ids: HashMap<(usize, u16), u16> = HashMap::new();
        let mut rows = Vec::with_capacity(TABLE_LENGTH);
        let mut starts = Vec::with_capacity(TABLE_LENGTH + 1);
        let mut total = 0u64;
        for entry in ENTRIES.iter() {
            starts.push(total);
            let mut row = [0u16; COLUMNS];
            for (column, (&value, slot)) in entry.iter().zip(row.iter_mut()).enumerate() {
                *slot = *ids.entry((column, value)).or_insert_with(|| {
                    texts.push(piece_text(column, value));
                    // The generated table has at most a few thousand distinct values.
                    u16::try_from(texts.len() - 1).expect("more than 65536 pieces")
                });
                total += texts[usize::from(*slot)].len() as u64;
            }
            rows.push(row);
        }
        starts.push(total);

        let mut slots = vec![[0u8; WIDTH]; texts.len()];
        for (text, slot) in texts.iter().zip(slots.iter_mut()) {
            // Holds as long as tables.rs is what codegen made (CI checks that).
            assert!(
                text.len() <= WIDTH,
                "a piece is longer than MAX_VALUE_LEN allows"
            );
            slot[..text.len()].copy_from_slice(text);
        }
        let lens = texts.iter().map(|t| t.len() as u16).collect();
        Pieces {
            slots,
            lens,
            rows,
            starts,
        }
    }

    /// The shared, lazily built pieces.
    pub fn get() -> &'static Pieces {
        static PIECES: OnceLock<Pieces> = OnceLock::new();
        PIECES.get_or_init(Pieces::build)
    }

    /// The piece numbers of entry `i`.
    #[inline]
    pub fn row(&self, i: usize) -> &[u16; COLUMNS] {
        &self.rows[i]
    }

    /// Slot `piece`, padding included, and the piece's real length.
    #[inline]
    pub fn slot(&self, piece: u16) -> (&[u8; WIDTH], usize) {
        let i = usize::from(piece);
        (&self.slots[i], usize::from(self.lens[i]))
    }

    /// Total length of the pieces of the `n` entries from index `start`, wrapping
    /// round the table.
    pub fn span_len(&self, start: usize, n: u64) -> u64 {
        let len = TABLE_LENGTH as u64;
        let total = self.starts[TABLE_LENGTH];
        let rest = (n % len) as usize;
        let end = start + rest;
        let partial = if end <= TABLE_LENGTH {
            self.starts[end] - self.starts[start]
        } else {
            total - self.starts[start] + self.starts[end - TABLE_LENGTH]
        };
        (n / len) * total + partial
    }
}

/// The text of column `column` holding value `value`, with its key.
fn piece_text(column: usize, value: u16) -> Vec<u8> {
    let mut text = Vec::new();
    if column == 0 {
        text.push(b'"'); // closes the TXID string
    }
    text.extend_from_slice(ENTRY_KEYS[column].as_bytes());
    text.extend_from_slice(VALUES[usize::from(value)].as_bytes());
    if column == COLUMNS - 1 {
        text.extend_from_slice(SALE_TIME_KEY.as_bytes());
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entry `i` rendered straight from the generated tables.
    fn rendered(i: usize) -> Vec<u8> {
        (0..COLUMNS)
            .flat_map(|c| piece_text(c, ENTRIES[i][c]))
            .collect()
    }

    fn assembled(p: &Pieces, i: usize) -> Vec<u8> {
        p.row(i)
            .iter()
            .flat_map(|&id| {
                let (slot, len) = p.slot(id);
                slot[..len].to_vec()
            })
            .collect()
    }

    #[test]
    fn every_entry_assembles_to_its_rendered_text() {
        let p = Pieces::get();
        for i in 0..TABLE_LENGTH {
            assert_eq!(assembled(p, i), rendered(i), "entry {i}");
        }
        let first = String::from_utf8(assembled(p, 0)).unwrap();
        assert!(first.starts_with("\",\"RESORT\":\""));
        assert!(first.ends_with(",\"SALE_TIME\":"));
    }

    #[test]
    fn slots_are_the_fewest_words_that_hold_the_longest_piece() {
        let longest = (0..TABLE_LENGTH)
            .flat_map(|i| (0..COLUMNS).map(move |c| piece_text(c, ENTRIES[i][c]).len()))
            .max()
            .unwrap();
        assert_eq!(longest, longest_piece());
        assert_eq!(WIDTH % WORD, 0);
        assert!(WIDTH >= longest && WIDTH - longest < WORD);
        let p = Pieces::get();
        for &id in p.row(17) {
            let (slot, len) = p.slot(id);
            assert!(slot[len..].iter().all(|&b| b == 0));
        }
    }

    #[test]
    fn span_len_matches_summing_entries() {
        let p = Pieces::get();
        for &(start, n) in &[
            (0, 0),
            (0, 1),
            (5, 100),
            (TABLE_LENGTH - 3, 10),
            (17, 3 * 8192 + 9),
        ] {
            let direct: u64 = (0..n)
                .map(|k| rendered((start + k as usize) % TABLE_LENGTH).len() as u64)
                .sum();
            assert_eq!(p.span_len(start, n), direct, "start={start} n={n}");
        }
    }
}
