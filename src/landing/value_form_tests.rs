//! Each kind of column against each form a value can take (numbers, literals,
//! strings, timestamps, dates, nested values), one value changed in a generated row:
//! the fast path must give what the serde_json path gives (`parity_tests.rs`).

use super::parity_tests::{assert_same, generated_rows, parsers};

/// A generated row with `value` in place of `key`'s value.
fn with_value(key: &str, value: &str) -> String {
    let row = String::from_utf8(generated_rows(1)).unwrap();
    let row = row.trim_end();
    let start = row.find(&format!("\"{key}\":")).unwrap() + key.len() + 3;
    let len = row[start..].find([',', '}']).unwrap();
    // A string value may hold a comma: end it at the next `","` or `"}` instead.
    let len = if row[start..].starts_with('"') {
        row[start + 1..].find('"').unwrap() + 2
    } else {
        len
    };
    format!("{}{value}{}", &row[..start], &row[start + len..])
}

const VALUES: &[&str] = &[
    // numbers
    "0",
    "-0",
    "1",
    "-1",
    "00",
    "01",
    "-01",
    "0.0",
    "-0.0",
    "1.5",
    "-1.5",
    "1.005",
    "0.125",
    "1.",
    ".5",
    "-",
    "+1",
    "1e3",
    "1E3",
    "1e+3",
    "1e-3",
    "-1.5e2",
    "1.0e0",
    "1e",
    "1e+",
    "123456789",
    "1234567890",
    "9999999999",
    "99999999999999999999",
    "123456789012345678901234567890123456789",
    "0.1234567890123456",
    "12345678901234.5",
    "1.23456789012345",
    "0.000000000000000000001",
    "1e999999",
    "31535999999",
    "31536000000",
    "-31536000000",
    "1700000000123456789",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "0x10",
    "1_000",
    "NaN",
    "Infinity",
    // literals
    "true",
    "false",
    "null",
    "tru",
    "True",
    "nul",
    "truefalse",
    // strings
    "\"\"",
    "\" \"",
    "\"x\"",
    "\"äöü\"",
    "\"日本語テキスト\"",
    "\"😀\"",
    "\"a,b\"",
    "\"a\\\"b\"",
    "\"a\\\\b\"",
    "\"a\\/b\"",
    "\"\\u0041\"",
    "\"\\u00e9\"",
    "\"\\ud800\"",
    "\"\\ud83d\\ude00\"",
    "\"\\n\"",
    "\"\\x\"",
    "\"tab\there\"",
    "\"a\u{7f}b\"",
    "\" 42 \"",
    "\"+7\"",
    "\"-1.5\"",
    "\"1e3\"",
    "\" 1e3 \"",
    "\"NaN\"",
    "\"yes\"",
    "\" YeS \"",
    "\"off\"",
    "\"t\"",
    "\"2\"",
    "\"0\"",
    "\"1\"",
    // timestamps and dates
    "\"2026-12-02T05:28:12.708311Z\"",
    "\"2026-12-02T05:28:12Z\"",
    "\"2026-12-02T05:28Z\"",
    "\"2026-12-02T05:28:12.708311\"",
    "\"2026-12-02 05:28:12+01:00\"",
    "\"2026-12-02T05:28:12+0100\"",
    "\"2026-12-02T05:28:12-05\"",
    "\"2026-12-02T05:28:12.1234567891Z\"",
    "\"2026-12-02T05:28:12.Z\"",
    "\"2026-12-02T24:00:00Z\"",
    "\"2026-12-02t05:28:12Z\"",
    "\"2026-12-02T05:28:12 UTC\"",
    "\"2026-12-02T05:28:12+25:00\"",
    "\"2026-12-02\"",
    "\"2024-02-29\"",
    "\"2023-02-29\"",
    "\"0000-01-01\"",
    "\"0001-01-01\"",
    "\"20261202\"",
    "\" 2026-12-02\"",
    "\"1764470646\"",
    "\" 1764470646 \"",
    "\"-1\"",
    "\"9223372036854775808\"",
    // nested
    "{}",
    "[]",
    "{\"a\":1}",
    "[1,2]",
    "[[[[[[[[[[]]]]]]]]]]",
    "{\"a\":[{\"b\":null}]}",
];

#[test]
fn every_kind_meets_every_value_form() {
    let parsers = parsers();
    let keys = [
        "TXID",
        "RESORT",
        "CATEGORY",
        "ITEM",
        "CUSTOMER_TYPE",
        "QUANTITY",
        "UNIT_PRICE",
        "AMOUNT",
        "SALE_TIME",
        "RUN_ID",
        "WORKER_ID",
    ];
    for key in keys {
        let mut body = String::new();
        for value in VALUES {
            body.push_str(&with_value(key, value));
            body.push('\n');
        }
        for parser in &parsers {
            assert_same(parser, body.as_bytes(), key);
        }
    }
}
