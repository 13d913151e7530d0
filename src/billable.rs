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

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

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

/// The billable bytes of one line's object: its top-level values, by the rule.
struct LineValues(u64);

impl<'de> Deserialize<'de> for LineValues {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Each;
        impl<'de> Visitor<'de> for Each {
            type Value = LineValues;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<LineValues, A::Error> {
                let mut total = 0;
                while let Some((_, v)) = map.next_entry::<IgnoredAny, &'de RawValue>()? {
                    total += rendered_value_bytes(v.get().as_bytes());
                }
                Ok(LineValues(total))
            }
        }
        d.deserialize_map(Each)
    }
}

/// The billable bytes of an NDJSON body: every line that is a JSON object, by the rule;
/// a line that is not (malformed, blank) counts 0.
pub fn body_billable_bytes(body: &[u8]) -> u64 {
    body.split(|&b| b == b'\n')
        .filter_map(|line| serde_json::from_slice::<LineValues>(line).ok())
        .map(|v| v.0)
        .sum()
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

    #[test]
    fn a_body_counts_the_values_of_its_object_lines() {
        let body = b"{\"A\":\"xy\",\"N\":12,\"Z\":null}\n\n{\"\\u0041\":\"\\\"\"}\nnot json\n[1]";
        // "xy", 12, null (0), then the escaped quote
        assert_eq!(body_billable_bytes(body), 5);
        assert_eq!(body_billable_bytes(b""), 0);
    }
}
