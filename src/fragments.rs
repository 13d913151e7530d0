//! The resolved table as row fragments, assembled once from the generated tables.
//!
//! Fragment `i` is everything a row holds between its TXID digits and its
//! SALE_TIME value: `","RESORT":"Vail",...,"AMOUNT":5.94,"SALE_TIME":`.

use std::sync::OnceLock;

use crate::tables::{ENTRIES, ENTRY_KEYS, SALE_TIME_KEY, TABLE_LENGTH, VALUES};

pub struct Fragments {
    bytes: Vec<u8>,
    /// `starts[i]..starts[i + 1]` is fragment `i` in `bytes`; `starts[TABLE_LENGTH]`
    /// is the total, so it doubles as a prefix sum of fragment lengths.
    starts: Vec<usize>,
}

impl Fragments {
    fn build() -> Self {
        let mut bytes = Vec::new();
        let mut starts = Vec::with_capacity(TABLE_LENGTH + 1);
        for entry in ENTRIES.iter() {
            starts.push(bytes.len());
            bytes.push(b'"'); // closes the TXID string
            for (key, &value) in ENTRY_KEYS.iter().zip(entry) {
                bytes.extend_from_slice(key.as_bytes());
                bytes.extend_from_slice(VALUES[usize::from(value)].as_bytes());
            }
            bytes.extend_from_slice(SALE_TIME_KEY.as_bytes());
        }
        starts.push(bytes.len());
        Fragments { bytes, starts }
    }

    /// The shared, lazily built fragments.
    pub fn get() -> &'static Fragments {
        static FRAGMENTS: OnceLock<Fragments> = OnceLock::new();
        FRAGMENTS.get_or_init(Fragments::build)
    }

    #[inline]
    pub fn fragment(&self, i: usize) -> &[u8] {
        &self.bytes[self.starts[i]..self.starts[i + 1]]
    }

    /// Total length of the `n` fragments from index `start`, wrapping round the table.
    pub fn span_len(&self, start: usize, n: u64) -> u64 {
        let len = TABLE_LENGTH as u64;
        let total = self.starts[TABLE_LENGTH] as u64;
        let prefix = |i: usize| self.starts[i] as u64;
        let rest = (n % len) as usize;
        let end = start + rest;
        let partial = if end <= TABLE_LENGTH {
            prefix(end) - prefix(start)
        } else {
            total - prefix(start) + prefix(end - TABLE_LENGTH)
        };
        (n / len) * total + partial
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn span_len_matches_summing_fragments() {
        let f = Fragments::get();
        for &(start, n) in &[
            (0, 0),
            (0, 1),
            (5, 100),
            (TABLE_LENGTH - 3, 10),
            (17, 3 * 8192 + 9),
        ] {
            let direct: u64 = (0..n)
                .map(|k| f.fragment((start + k as usize) % TABLE_LENGTH).len() as u64)
                .sum();
            assert_eq!(f.span_len(start, n), direct, "start={start} n={n}");
        }
    }

    #[test]
    fn fragments_are_json_between_txid_and_sale_time() {
        let f = Fragments::get();
        let first = std::str::from_utf8(f.fragment(0)).unwrap();
        assert!(first.starts_with("\",\"RESORT\":\""));
        assert!(first.ends_with(",\"SALE_TIME\":"));
    }
}
