//! The common shape of a line, read by hand in one pass: an object of plain entries
//! (string keys and string values without escapes, numbers, `true`/`false`/`null`;
//! tokens in `plain_scan.rs`), separated by blanks and tabs at most.
//!
//! It is a fast path in front of `line.rs`, never a second set of rules: each value
//! is cast by `value.rs`'s rules (its [`cast`], or the same rule's function for the
//! two common forms), as the [`Json`] that `Json::of` makes of that value's text, and
//! keys are matched to columns as `line.rs` matches them. It takes a line only when
//! serde_json would read the same entries from it (RFC 8259's grammar, with
//! serde_json's whitespace less `\r`, which the caller defers); on any other line
//! (escapes, nesting, `\r`, anything it is not sure of) it says so, and the caller
//! drops what it pushed and asks `line.rs`.

use std::borrow::Cow;

use super::columns::{ColumnData, ColumnKind};
use super::plain_scan::{Cursor, NotPlain, Plain};
use super::value::{cast, json_number, push_str, timestamp_text, Json};
use super::variant::{canonical_number, push_text};
use super::{Column, RowParser};

/// The table's keys as a compact line spells them: `"NAME":` for each column whose
/// name has no `"`, `\` or control character (whose JSON string is then its bytes
/// as they are).
#[derive(Debug, Clone)]
pub struct PlainKeys {
    closed: Vec<Option<ClosedKey>>,
}

/// A key's bytes, eight at a time, the last word masked.
#[derive(Debug, Clone)]
struct ClosedKey {
    bytes: Vec<u8>,
    /// Every whole word but the last.
    words: Vec<u64>,
    last: u64,
    last_mask: u64,
}

/// The eight bytes of `s` from `at`, little-endian, if there are eight.
#[inline]
fn word_at(s: &[u8], at: usize) -> Option<u64> {
    let bytes = s.get(at..)?.first_chunk::<8>()?;
    Some(u64::from_le_bytes(*bytes))
}

impl ClosedKey {
    fn new(bytes: &[u8]) -> Self {
        let mut words: Vec<u64> = bytes
            .chunks(8)
            .map(|c| {
                let mut w = [0; 8];
                w[..c.len()].copy_from_slice(c);
                u64::from_le_bytes(w)
            })
            .collect();
        let last = words.pop().unwrap_or(0);
        let tail = bytes.len().saturating_sub(1) % 8 + 1;
        ClosedKey {
            bytes: bytes.to_vec(),
            words,
            last,
            last_mask: u64::MAX >> (64 - 8 * tail),
        }
    }

    /// Whether `s` holds this key's bytes from `at`.
    #[inline]
    fn is_at(&self, s: &[u8], at: usize) -> bool {
        let tail = at + 8 * self.words.len();
        let Some(x) = word_at(s, tail) else {
            // Near the end of the body.
            return s.get(at..).is_some_and(|r| r.starts_with(&self.bytes));
        };
        (x ^ self.last) & self.last_mask == 0
            && self
                .words
                .iter()
                .enumerate()
                .all(|(i, &w)| word_at(s, at + 8 * i) == Some(w))
    }
}

impl PlainKeys {
    pub fn new(columns: &[Column]) -> Self {
        let closed = columns
            .iter()
            .map(|c| {
                let name = c.name.as_bytes();
                let plain = !name.iter().any(|&b| b == b'"' || b == b'\\' || b < 0x20);
                plain.then(|| ClosedKey::new(&[b"\"", name, b"\":"].concat()))
            })
            .collect();
        PlainKeys { closed }
    }

    /// How many bytes from `at` are column `i`'s key and its colon, if they are.
    #[inline]
    fn at(&self, i: usize, line: &[u8], at: usize) -> Option<usize> {
        match self.closed.get(i) {
            Some(Some(key)) if key.is_at(line, at) => Some(key.bytes.len()),
            _ => None,
        }
    }
}

/// Reads the plain lines of one body, by one parser's table.
pub struct PlainReader<'a, 'p> {
    text: &'a str,
    parser: &'p RowParser,
    /// The last timestamp string taken and its value (a batch's rows often share
    /// one): (column, text, µs).
    last_time: Option<(usize, &'a str, i64)>,
}

impl<'a, 'p> PlainReader<'a, 'p> {
    /// A reader of the lines in `text` (a body, or one line of it).
    pub fn new(parser: &'p RowParser, text: &'a str) -> Self {
        PlainReader {
            text,
            parser,
            last_time: None,
        }
    }

    /// Casts one value into column `i` by its rule, as `cast` would cast `Json::of`
    /// of its text; false (nothing pushed) if it is not taken.
    #[inline]
    fn store(&mut self, i: usize, value: Plain<'a>, out: &mut ColumnData) -> bool {
        let kind = &self.parser.columns[i].kind;
        match (kind, value) {
            (ColumnKind::Varchar { max_chars: None }, Plain::Str(s)) => {
                push_str(out, s);
                true
            }
            (&ColumnKind::Number { precision, scale }, Plain::Num(_, Some(d))) => {
                match (json_number(&d, precision, scale), out) {
                    (Some(x), ColumnData::Decimal(col)) => {
                        col.push(x);
                        true
                    }
                    _ => false,
                }
            }
            (&ColumnKind::Timestamp { tz }, Plain::Str(s)) => {
                let us = match self.last_time {
                    Some((column, text, us)) if column == i && text == s => Some(us),
                    _ => timestamp_text(s, tz),
                };
                match (us, out) {
                    (Some(us), ColumnData::Micros(col)) => {
                        col.push(us);
                        self.last_time = Some((i, s, us));
                        true
                    }
                    _ => false,
                }
            }
            (ColumnKind::Variant, value) => match value {
                // A plain string has no escape: its text is what DuckDB writes back.
                Plain::Str(s) => {
                    push_text(out, &["\"", s, "\""]);
                    true
                }
                Plain::Num(t, _) if canonical_number(t) => {
                    push_text(out, &[t]);
                    true
                }
                Plain::Bool(b) => {
                    push_text(out, &[if b { "true" } else { "false" }]);
                    true
                }
                _ => false,
            },
            (kind, value) => {
                let json = match value {
                    Plain::Str(s) => Json::Str(Cow::Borrowed(s)),
                    Plain::Num(t, _) => Json::Num(t),
                    Plain::Bool(b) => Json::Bool(b),
                    Plain::Null => Json::Other,
                };
                cast(*kind, &json, out)
            }
        }
    }

    /// Casts the line that starts at `from` into one value per column of `out` as
    /// `line::parse_line` would, and gives where the line ends (its `\n`, or the end
    /// of the text); or says it is not sure (the caller then drops what was pushed
    /// for it). Tables of no column or more than 64 are left to `line.rs`.
    pub fn line(&mut self, from: usize, out: &mut [ColumnData]) -> Result<usize, NotPlain> {
        let (text, parser) = (self.text, self.parser);
        let columns = &parser.columns;
        // One bit per column seen.
        let mut seen = 0u64;
        if columns.is_empty() || columns.len() > 64 {
            return Err(NotPlain);
        }
        let all = u64::MAX >> (64 - columns.len());
        let mut c = Cursor { text, at: from };
        c.expect(b'{')?;
        c.skip_blanks();
        if c.peek() == Some(b'}') {
            c.at += 1;
        } else {
            let mut position = 0;
            loop {
                // The same choice of column as line.rs: the next one first, then any.
                let column = if let Some(n) = parser.keys.at(position, text.as_bytes(), c.at) {
                    c.at += n;
                    Some(position)
                } else {
                    c.expect(b'"')?;
                    let key = c.plain_string()?;
                    c.expect(b':')?;
                    match columns.iter().position(|col| col.name == key) {
                        Some(i) => Some(i),
                        None if parser.check_keys => return Err(NotPlain),
                        None => None,
                    }
                };
                let value = c.value()?;
                if let Some(i) = column {
                    position = i + 1;
                    let bit = 1u64 << i;
                    if seen & bit != 0 {
                        return Err(NotPlain);
                    }
                    seen |= bit;
                    if !self.store(i, value, &mut out[i]) {
                        return Err(NotPlain);
                    }
                }
                match c.next_token() {
                    Some(b',') => {}
                    Some(b'}') => break,
                    _ => return Err(NotPlain),
                }
            }
        }
        c.skip_blanks();
        if !matches!(c.peek(), None | Some(b'\n')) || seen != all {
            return Err(NotPlain);
        }
        Ok(c.at)
    }
}
