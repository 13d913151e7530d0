//! The emulator's landing parse: NDJSON lines into typed columns, by the rules of
//! `python/elastic_channels/emulator/rowparse.py` (docs/EMULATOR.md).
//!
//! [`RowParser::parse`] reads each non-blank line once. A line whose every value its
//! rule takes lands as a row of the columns; any other line (malformed, refused, or a
//! form only the SQL path reads) is *deferred*: handed back with its line number for
//! the SQL path to decide, so a refusal has that path's wording and an odd-but-valid
//! value lands as it would there.
//!
//! Each line is read by `plain_line.rs` first, by hand, when it has the common shape
//! (plain keys and strings, no nesting); any line it is not sure of goes to
//! `line.rs` (serde_json) as it is. Both cast by `value.rs`'s rules, and the tests
//! (`parity_tests.rs`, `value_form_tests.rs`, `mutation_tests.rs`) hold them to the
//! same results.

mod columns;
mod line;
mod number;
mod plain_line;
mod plain_scan;
mod timestamp;
mod value;
mod variant;

pub use columns::{ColumnData, ColumnKind};

/// A table column: its name and type.
#[derive(Debug, Clone)]
pub struct Column {
    pub name: String,
    pub kind: ColumnKind,
}

/// The SQL path's reader takes lines of at most this many bytes.
const MAX_LINE_BYTES: usize = 64 << 20;

/// What one parse of a body came to.
#[derive(Debug)]
pub struct ParsedLines {
    /// Rows landed, one value each in every column.
    pub rows: usize,
    /// One per column, in the table's order.
    pub columns: Vec<ColumnData>,
    /// The deferred lines, each followed by `\n`.
    pub deferred: Vec<u8>,
    /// Their 1-based line numbers in the body, in order.
    pub deferred_lines: Vec<u64>,
}

/// Parses NDJSON bodies into a table's typed columns.
#[derive(Debug, Clone)]
pub struct RowParser {
    columns: Vec<Column>,
    keys: plain_line::PlainKeys,
    check_keys: bool,
}

/// Drops every value past the first `rows` of each column.
fn truncate(out: &mut [ColumnData], rows: usize) {
    for c in out {
        c.truncate(rows);
    }
}

/// A line the SQL path does not count as a row: only blanks, tabs and carriage returns.
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

impl RowParser {
    /// `check_keys` off: unknown keys are ignored (a duplicated one is deferred).
    pub fn new(columns: Vec<Column>, check_keys: bool) -> Self {
        RowParser {
            keys: plain_line::PlainKeys::new(&columns),
            columns,
            check_keys,
        }
    }

    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// Nothing parsed yet: one empty buffer per column.
    pub fn empty(&self) -> ParsedLines {
        ParsedLines {
            rows: 0,
            columns: self
                .columns
                .iter()
                .map(|c| ColumnData::new(c.kind))
                .collect(),
            deferred: Vec::new(),
            deferred_lines: Vec::new(),
        }
    }

    /// Every line of `body` (split on `\n`) as a row or deferred; blank lines skipped.
    pub fn parse(&self, body: &[u8]) -> ParsedLines {
        let mut got = self.empty();
        self.parse_into(body, &mut got);
        got
    }

    /// [`Self::parse`] into `got` (from [`Self::empty`] or an earlier parse): what
    /// was in it is dropped, its room kept, so memory already in use is written again
    /// rather than new memory mapped for each body.
    pub fn parse_into(&self, body: &[u8], got: &mut ParsedLines) {
        self.parse_lines(body, true, got);
    }

    /// [`Self::parse_into`], trying `plain_line.rs` on each line first if
    /// `plain_first` (off only to compare the two in tests: the results are the same).
    fn parse_lines(&self, body: &[u8], plain_first: bool, got: &mut ParsedLines) {
        if got.columns.len() != self.columns.len() {
            *got = self.empty();
        }
        let ParsedLines {
            columns: out,
            deferred,
            deferred_lines,
            ..
        } = got;
        out.iter_mut().for_each(ColumnData::clear);
        deferred.clear();
        deferred_lines.clear();
        let mut seen = vec![false; self.columns.len()];
        let mut rows = 0;
        // One UTF-8 check for the whole body when it passes (the usual case), so a
        // plain line is read in place and its end found as it is read.
        let whole = std::str::from_utf8(body).ok().filter(|_| plain_first);
        let mut reader = whole.map(|text| plain_line::PlainReader::new(self, text));
        let mut start = 0;
        let mut number = 0u64;
        loop {
            number += 1;
            if let Some(reader) = reader.as_mut().filter(|_| body.get(start) == Some(&b'{')) {
                let plain = reader.line(start, out);
                match plain {
                    Ok(end) if end - start <= MAX_LINE_BYTES => {
                        rows += 1;
                        if end == body.len() {
                            break;
                        }
                        start = end + 1;
                        continue;
                    }
                    _ => truncate(out, rows),
                }
            }
            let end = memchr::memchr(b'\n', &body[start..]).map_or(body.len(), |i| start + i);
            let line = &body[start..end];
            if !is_blank(line) {
                if self.parse_line(line, plain_first.then_some(rows), out, &mut seen) {
                    rows += 1;
                } else {
                    truncate(out, rows);
                    deferred.extend_from_slice(line);
                    deferred.push(b'\n');
                    deferred_lines.push(number);
                }
            }
            if end == body.len() {
                break;
            }
            start = end + 1;
        }
        got.rows = rows;
    }

    /// One line (not blank) into `out`: by `plain_line.rs` first if `plain_first`
    /// (the rows so far), else (or if it is not sure) by `line.rs`; false if it is
    /// deferred.
    fn parse_line(
        &self,
        line: &[u8],
        plain_first: Option<usize>,
        out: &mut [ColumnData],
        seen: &mut [bool],
    ) -> bool {
        let text = match std::str::from_utf8(line) {
            Ok(text) if line.len() <= MAX_LINE_BYTES => text,
            _ => return false,
        };
        if let Some(rows) = plain_first {
            let mut reader = plain_line::PlainReader::new(self, text);
            if reader.line(0, out).is_ok() {
                return true;
            }
            truncate(out, rows);
        }
        memchr::memchr(b'\r', line).is_none()
            && line::parse_line(text, &self.columns, self.check_keys, out, seen).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parser(check_keys: bool) -> RowParser {
        let col = |name: &str, kind| Column {
            name: name.into(),
            kind,
        };
        RowParser::new(
            vec![
                col("A", ColumnKind::Varchar { max_chars: None }),
                col(
                    "N",
                    ColumnKind::Number {
                        precision: 9,
                        scale: 0,
                    },
                ),
            ],
            check_keys,
        )
    }

    #[test]
    fn lands_rows_and_defers_the_rest_with_their_line_numbers() {
        let body = b"{\"A\":\"x\",\"N\":1}\n\n  \n{\"N\":2,\"A\":\"y\"}\n{\"A\":\"z\",\"N\":true}\n{\"A\":\n[1]\n{\"A\":\"w\",\"N\":3}";
        let got = parser(true).parse(body);
        assert_eq!(got.rows, 3);
        assert_eq!(got.deferred_lines, vec![5, 6, 7]);
        assert_eq!(
            got.deferred,
            b"{\"A\":\"z\",\"N\":true}\n{\"A\":\n[1]\n".to_vec()
        );
        let bufs: Vec<_> = got
            .columns
            .into_iter()
            .map(ColumnData::into_buffers)
            .collect();
        assert_eq!(bufs[0][1], b"xyw".to_vec());
        let n: Vec<i128> = bufs[1][0]
            .chunks(16)
            .map(|c| i128::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(n, vec![1, 2, 3]);
    }

    #[test]
    fn key_rules() {
        let p = parser(true);
        for line in [
            "{\"A\":\"x\",\"N\":1,\"B\":0}",
            "{\"A\":\"x\"}",
            "{\"A\":\"x\",\"N\":1,\"A\":\"y\"}",
            "{\"A\":\"x\",\"N\":null}",
            "{\"A\":\"x\",\"N\":1} x",
            "{\"A\":\"x\",\"N\":1}\r",
            "{\"A\":\"x\",\"N\":1,}",
        ] {
            assert_eq!(p.parse(line.as_bytes()).rows, 0, "{line}");
        }
        let lax = parser(false);
        assert_eq!(lax.parse(b"{\"A\":\"x\",\"N\":1,\"B\":{\"c\":[]}}").rows, 1);
        assert_eq!(lax.parse(b"{\"A\":\"x\",\"N\":1,\"A\":\"y\"}").rows, 0);
    }

    #[test]
    fn hostile_bytes_never_panic() {
        let p = parser(true);
        let deep = "[".repeat(100_000);
        for body in [
            &b"\xff\xfe{"[..],
            b"{\"A\":\"\\ud800\",\"N\":1}",
            deep.as_bytes(),
            b"{\"A\":\"x\",\"N\":1e999999}",
            b"\"",
            b"{\"\\u0041\":\"x\",\"N\":1}",
        ] {
            let got = p.parse(body);
            assert!(got.rows <= 1);
        }
        assert_eq!(
            p.parse(b"{\"\\u0041\":\"x\",\"N\":1}").rows,
            1,
            "an escaped key is its text"
        );
    }
}

#[cfg(test)]
mod parity_tests;

#[cfg(test)]
mod mutation_tests;

#[cfg(test)]
mod value_form_tests;
