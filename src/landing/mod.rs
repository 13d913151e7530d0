//! The emulator's landing parse: NDJSON lines into typed columns, by the rules of
//! `python/elastic_channels/emulator/rowparse.py` (docs/EMULATOR.md).
//!
//! [`RowParser::parse`] reads each non-blank line once. A line whose every value its
//! rule takes lands as a row of the columns; any other line (malformed, refused, or a
//! form only the SQL path reads) is *deferred*: handed back with its line number for
//! the SQL path to decide, so a refusal has that path's wording and an odd-but-valid
//! value lands as it would there.

mod columns;
mod line;
mod number;
mod timestamp;
mod value;

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
    check_keys: bool,
}

/// A line the SQL path does not count as a row: only blanks, tabs and carriage returns.
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

impl RowParser {
    /// `check_keys` off: unknown keys are ignored (a duplicated one is deferred).
    pub fn new(columns: Vec<Column>, check_keys: bool) -> Self {
        RowParser {
            columns,
            check_keys,
        }
    }

    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// Every line of `body` (split on `\n`) as a row or deferred; blank lines skipped.
    pub fn parse(&self, body: &[u8]) -> ParsedLines {
        let mut out: Vec<ColumnData> = self
            .columns
            .iter()
            .map(|c| ColumnData::new(c.kind))
            .collect();
        let mut seen = vec![false; self.columns.len()];
        let mut rows = 0;
        let mut deferred = Vec::new();
        let mut deferred_lines = Vec::new();
        let mut start = 0;
        let ends = memchr::memchr_iter(b'\n', body).chain(std::iter::once(body.len()));
        for (i, end) in ends.enumerate() {
            let line = &body[start..end];
            start = end + 1;
            if is_blank(line) {
                continue;
            }
            let taken = line.len() <= MAX_LINE_BYTES
                && memchr::memchr(b'\r', line).is_none()
                && std::str::from_utf8(line).is_ok_and(|text| {
                    line::parse_line(text, &self.columns, self.check_keys, &mut out, &mut seen)
                        .is_ok()
                });
            if taken {
                rows += 1;
            } else {
                for c in &mut out {
                    c.truncate(rows);
                }
                deferred.extend_from_slice(line);
                deferred.push(b'\n');
                deferred_lines.push(i as u64 + 1);
            }
        }
        ParsedLines {
            rows,
            columns: out,
            deferred,
            deferred_lines,
        }
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
