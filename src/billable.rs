//! Billable bytes: what Snowflake bills the high-performance architecture for.
//!
//! Its cost page ("Snowpipe Streaming High-Performance Architecture: Understanding your
//! costs", docs.snowflake.com/en/user-guide/snowpipe-streaming-high-performance-cost)
//! charges per uncompressed GB of the data *values* only, "not for the structural
//! elements like keys": billing "is based solely on the byte size of the values", as a
//! CSV file's cells would be measured. So a value counts as the text a CSV cell would
//! hold, read off the value as JSON renders it:
//!
//! - a string (VARCHAR, and TIMESTAMP/DATE sent as ISO text): the UTF-8 bytes of its
//!   text; not its quotes, not its escapes (`"a\"b"` is 3 bytes, `"\u00e9"` 2);
//! - `null`: 0 bytes (an empty cell);
//! - anything else (a number, `true`/`false`, a VARIANT/OBJECT/ARRAY value): its JSON
//!   text as written (`5.94` is 4 bytes; an object's own keys and punctuation are its
//!   value's text, as its cell would hold it).
//!
//! The row's keys, braces, colons, commas and newline are not values and count 0.

/// The billable bytes of one value, given as JSON renders it (see the module).
pub fn rendered_value_bytes(rendered: &[u8]) -> u64 {
    match rendered.first() {
        Some(b'"') if rendered.len() >= 2 => string_bytes(&rendered[1..rendered.len() - 1]),
        _ if rendered == b"null" => 0,
        _ => rendered.len() as u64,
    }
}

/// The UTF-8 length of the text a JSON string's inside (`body`, no quotes) stands for.
fn string_bytes(body: &[u8]) -> u64 {
    let mut total = 0u64;
    let mut i = 0;
    while i < body.len() {
        let Some(at) = memchr::memchr(b'\\', &body[i..]) else {
            return total + (body.len() - i) as u64;
        };
        total += at as u64;
        i += at + 1;
        match body.get(i) {
            Some(b'u') => {
                let unit = hex4(body.get(i + 1..i + 5));
                i += 5;
                total += match unit {
                    Some(0..=0x7f) => 1,
                    Some(0x80..=0x7ff) => 2,
                    Some(0xd800..=0xdbff)
                        if body.get(i) == Some(&b'\\') && body.get(i + 1) == Some(&b'u') =>
                    {
                        // a surrogate pair: one code point of 4 bytes
                        i += 6;
                        4
                    }
                    _ => 3,
                };
            }
            Some(_) => {
                total += 1;
                i += 1;
            }
            None => {}
        }
    }
    total
}

fn hex4(digits: Option<&[u8]>) -> Option<u32> {
    std::str::from_utf8(digits?)
        .ok()
        .and_then(|s| u32::from_str_radix(s, 16).ok())
}

/// The billable bytes of an NDJSON body: every line that is a JSON object, by the rule;
/// a line that is not (blank, malformed) counts 0.
///
/// One pass, by hand: the emulator counts every body it lands, so this must cost little
/// beside its landing parse (serde_json's visitor took about as long as the parse). A
/// line is trusted as far as the count goes: keys and strings are skipped to their
/// closing quote, a nested value to its matching bracket; it is not validated beyond
/// that (the landing parse decides what lands).
pub fn body_billable_bytes(body: &[u8]) -> u64 {
    let mut total = 0;
    let mut start = 0;
    while start <= body.len() {
        let end = memchr::memchr(b'\n', &body[start..]).map_or(body.len(), |i| start + i);
        total += line_values(&body[start..end]).unwrap_or(0);
        start = end + 1;
    }
    total
}

fn skip_ws(line: &[u8], mut i: usize) -> usize {
    while matches!(line.get(i), Some(b' ' | b'\t' | b'\r')) {
        i += 1;
    }
    i
}

/// The index just past the string whose opening quote is at `open`.
fn string_end(line: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 1;
    loop {
        i += memchr::memchr2(b'"', b'\\', &line[i..])?;
        if line[i] == b'"' {
            return Some(i + 1);
        }
        i += 2; // an escape: its next byte is never the closing quote
        if i > line.len() {
            return None;
        }
    }
}

/// The index just past the object or array whose bracket is at `open`.
fn nested_end(line: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < line.len() {
        match line[i] {
            b'"' => {
                i = string_end(line, i)?;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The billable bytes of one line's object (None: not an object this reads).
fn line_values(line: &[u8]) -> Option<u64> {
    let mut i = skip_ws(line, 0);
    if line.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(line, i + 1);
    if line.get(i) == Some(&b'}') {
        return Some(0);
    }
    let mut total = 0u64;
    loop {
        if line.get(i) != Some(&b'"') {
            return None;
        }
        i = skip_ws(line, string_end(line, i)?);
        if line.get(i) != Some(&b':') {
            return None;
        }
        let start = skip_ws(line, i + 1);
        let (end, value) = match line.get(start)? {
            b'"' => {
                // The common string has no escape: its value is its bytes.
                let at = start + 1 + memchr::memchr2(b'"', b'\\', &line[start + 1..])?;
                if line[at] == b'"' {
                    (at + 1, (at - start - 1) as u64)
                } else {
                    let end = string_end(line, start)?;
                    (end, rendered_value_bytes(&line[start..end]))
                }
            }
            b'{' | b'[' => {
                let end = nested_end(line, start)?;
                (end, (end - start) as u64)
            }
            _ => {
                let len = line[start..]
                    .iter()
                    .position(|b| matches!(b, b',' | b'}' | b' ' | b'\t' | b'\r'))?;
                (start + len, rendered_value_bytes(&line[start..start + len]))
            }
        };
        total += value;
        i = skip_ws(line, end);
        match line.get(i) {
            Some(b',') => i = skip_ws(line, i + 1),
            Some(b'}') => return (skip_ws(line, i + 1) == line.len()).then_some(total),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_counts_its_text_not_its_quotes_escapes_or_keys() {
        for (rendered, want) in [
            (&br#""Vail""#[..], 4),
            (br#""""#, 0),
            (br#""a\"b""#, 3),
            (br#""\u00e9""#, 2),
            ("\"é\"".as_bytes(), 2),
            (br#""\u20ac""#, 3),
            (br#""\ud83d\ude00""#, 4),
            (br#""a\\b\n""#, 4),
            (b"null", 0),
            (b"true", 4),
            (b"5.94", 4),
            (b"-12", 3),
            (br#""2026-01-13T00:00:00.000001Z""#, 27),
            (br#"{"k":[1,2]}"#, 11),
        ] {
            assert_eq!(
                rendered_value_bytes(rendered),
                want,
                "{}",
                String::from_utf8_lossy(rendered)
            );
        }
    }

    /// The oracle: each line parsed by serde_json, each top-level value measured.
    fn by_serde(body: &[u8]) -> u64 {
        body.split(|&b| b == b'\n')
            .filter_map(|line| {
                serde_json::from_slice::<
                    std::collections::BTreeMap<String, Box<serde_json::value::RawValue>>,
                >(line)
                .ok()
            })
            .map(|m| {
                m.values()
                    .map(|v| rendered_value_bytes(v.get().as_bytes()))
                    .sum::<u64>()
            })
            .sum()
    }

    #[test]
    fn the_scan_counts_what_serde_json_reads() {
        for line in [
            r#"{"A":"xy","N":12,"Z":null}"#,
            r#" { "A" : "a\"}b" , "B" : -1.5e3 ,"C":true}  "#,
            r#"{"V":{"k":[1,"]\"}"],"e":{}},"W":[[],[{}]],"X":"\u00e9\ud83d\ude00"}"#,
            r#"{}"#,
            r#"{"k\"ey":"v","K":false}"#,
        ] {
            assert_eq!(
                body_billable_bytes(line.as_bytes()),
                by_serde(line.as_bytes()),
                "{line}"
            );
        }
        for bad in [
            r#"{"A":"x""#,
            r#"{"A" "x"}"#,
            r#"{"A":1,}"#,
            r#"{"A":[1}"#,
            "[1]",
            "x",
        ] {
            assert_eq!(body_billable_bytes(bad.as_bytes()), 0, "{bad}");
        }
    }

    #[test]
    fn a_body_counts_the_values_of_its_object_lines() {
        let body = b"{\"A\":\"xy\",\"N\":12,\"Z\":null}\n\n{\"\\u0041\":\"\\\"\"}\nnot json\n[1]";
        // "xy", 12, null (0), then the escaped quote
        assert_eq!(body_billable_bytes(body), 5);
        assert_eq!(body_billable_bytes(b""), 0);
    }
}
