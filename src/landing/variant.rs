//! A VARIANT column's value: any JSON value but `null`, kept as the JSON text DuckDB's
//! JSON reader writes back (the SQL path's value, `rowparse.py`): no blanks outside
//! strings, strings escaped its way, numbers as it renders them.
//!
//! This path takes a value only when its text as sent already is that text, which is
//! what a compact writer such as msgspec sends; any other value (blanks, `\/` or a
//! `\u` escape DuckDB writes otherwise, an exponent, a fraction DuckDB would render
//! differently) is not taken, and its line is left to the SQL path, which normalises
//! it. So both paths land the same text for every line.

use super::columns::ColumnData;

/// The escapes DuckDB writes by name, after the backslash.
const NAMED: &[u8] = b"\"\\bfnrt";

/// Whether DuckDB writes the number `t` (valid JSON) exactly as `t`: an integer of any
/// length but `-0`, or a plain decimal whose shortest round-trip rendering is `t`,
/// between 1e-6 and 1e21 (where it writes no exponent), or `0.0`/`-0.0`.
pub fn canonical_number(t: &str) -> bool {
    let body = t.strip_prefix('-').unwrap_or(t);
    if body.bytes().all(|b| b.is_ascii_digit()) {
        return t != "-0";
    }
    if t.contains(['e', 'E']) {
        return false;
    }
    let Ok(x) = t.parse::<f64>() else {
        return false;
    };
    if x == 0.0 {
        return body == "0.0";
    }
    if !(1e-6..1e21).contains(&x.abs()) {
        return false;
    }
    let shown = format!("{x}");
    if shown.contains('.') {
        shown == t
    } else {
        t.len() == shown.len() + 2 && t.starts_with(&shown) && t.ends_with(".0")
    }
}

/// Whether the escape at the start of `s` (just after a backslash) is one DuckDB writes
/// as it is; how many bytes it takes after the backslash.
fn canonical_escape(s: &[u8]) -> Option<usize> {
    let first = *s.first()?;
    if NAMED.contains(&first) {
        return Some(1);
    }
    // `\u00XX`, upper-case hex, for a control character it has no name for.
    let hex = s.get(1..5)?;
    let upper = |b: &u8| b.is_ascii_digit() || (b'A'..=b'F').contains(b);
    if first != b'u' || &hex[..2] != b"00" || !hex.iter().all(upper) {
        return None;
    }
    let code = u8::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()?;
    let named = matches!(code, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d);
    (code < 0x20 && !named).then_some(5)
}

/// Whether `raw` (one valid JSON value, not `null`) is the text DuckDB would keep.
pub fn canonical(raw: &str) -> bool {
    let s = raw.as_bytes();
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'"' => {
                i += 1;
                loop {
                    match s.get(i) {
                        Some(b'"') => break,
                        Some(b'\\') => match canonical_escape(&s[i + 1..]) {
                            Some(n) => i += 1 + n,
                            None => return false,
                        },
                        Some(_) => i += 1,
                        None => return false,
                    }
                }
                i += 1;
            }
            b' ' | b'\t' | b'\n' | b'\r' => return false,
            b'-' | b'0'..=b'9' => {
                let end = s[i..]
                    .iter()
                    .position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                    .map_or(s.len(), |n| i + n);
                if !canonical_number(&raw[i..end]) {
                    return false;
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    true
}

/// Pushes the concatenation of `parts` as one string value.
pub fn push_text(out: &mut ColumnData, parts: &[&str]) {
    if let ColumnData::Utf8 { offsets, data } = out {
        for p in parts {
            data.extend_from_slice(p.as_bytes());
        }
        offsets.push(data.len() as i64);
    }
}

/// Takes `raw` (one valid JSON value's text) into a VARIANT column if it is not `null`
/// and DuckDB keeps it as it is; false (nothing pushed) otherwise.
pub fn take(raw: &str, out: &mut ColumnData) -> bool {
    if raw == "null" || !canonical(raw) {
        return false;
    }
    push_text(out, &[raw]);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_duckdb_writes_them() {
        for t in [
            "0",
            "-7",
            "18446744073709551616",
            "1.5",
            "129.95",
            "0.000001",
            "-0.0",
        ] {
            assert!(canonical_number(t), "{t}");
        }
        for t in [
            "100.0",
            "1.0",
            "0.30000000000000004",
            "100000000000000000000.0",
        ] {
            assert!(canonical_number(t), "{t}");
        }
        for t in [
            "-0",
            "1e3",
            "1.50",
            "0.00",
            "0.0000001",
            "1e21",
            "12345678901234567.0",
        ] {
            assert!(!canonical_number(t), "{t}");
        }
    }

    #[test]
    fn escapes_as_duckdb_writes_them() {
        assert!(canonical(r#"{"a":"x\"y\\z\n\t\u0001\u001F"}"#));
        for raw in [
            r#""a\/b""#,
            r#""\u00e9""#,
            r#""\u000b""#,
            r#""\u0008""#,
            "{\"a\": 1}",
        ] {
            assert!(!canonical(raw), "{raw}");
        }
        assert!(canonical(r#"[1,{"x":[]},"é",true,null]"#));
    }

    #[test]
    fn rows_with_variants_land_on_both_readers_or_are_deferred() {
        use crate::landing::{Column, ColumnKind, RowParser};
        let columns = vec![
            Column {
                name: "ID".into(),
                kind: ColumnKind::Varchar { max_chars: None },
            },
            Column {
                name: "V".into(),
                kind: ColumnKind::Variant,
            },
        ];
        let parser = RowParser::new(columns, true);
        let body = concat!(
            "{\"ID\":\"a\",\"V\":\"plain\"}\n",
            "{\"ID\":\"b\",\"V\":12.5}\n",
            "{\"ID\":\"c\",\"V\":{\"k\":[1,\"x\\\"y\",{}]}}\n",
            "{\"ID\":\"d\",\"V\":null}\n",
            "{\"ID\":\"e\",\"V\":{\"k\": 1}}\n",
            "{\"ID\":\"f\",\"V\":1e3}\n",
            "{\"ID\":\"g\",\"V\":false}\n",
        );
        let got = parser.parse(body.as_bytes());
        assert_eq!(got.rows, 4);
        assert_eq!(got.deferred_lines, vec![4, 5, 6]);
        let ColumnData::Utf8 { offsets, data } = &got.columns[1] else {
            panic!("a VARIANT column is text");
        };
        let texts: Vec<&str> = offsets
            .windows(2)
            .map(|w| std::str::from_utf8(&data[w[0] as usize..w[1] as usize]).unwrap())
            .collect();
        assert_eq!(
            texts,
            vec!["\"plain\"", "12.5", "{\"k\":[1,\"x\\\"y\",{}]}", "false"]
        );
    }

    #[test]
    fn null_is_not_taken() {
        let mut out = ColumnData::Utf8 {
            offsets: vec![0],
            data: Vec::new(),
        };
        assert!(!take("null", &mut out));
        assert!(take(r#"{"a":null}"#, &mut out));
    }
}
