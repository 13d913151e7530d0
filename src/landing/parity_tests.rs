//! The fast path (`plain_line.rs`) against the serde_json path (`line.rs`) alone: the
//! same rows, column buffers, deferred lines and line numbers for every body, on
//! generated rows, hand-made edge cases, and a seeded mutation loop over generated
//! rows (`LANDING_PARITY_SEED=<n>` replays a run; the seed is printed).

use super::{Column, ColumnData, ColumnKind, ParsedLines, RowParser};
use std::sync::OnceLock;

use crate::ResortGenerator;

const SALE_TIME_US: i64 = 1_764_470_646_123_456;

fn col(name: &str, kind: ColumnKind) -> Column {
    Column {
        name: name.into(),
        kind,
    }
}

const V: ColumnKind = ColumnKind::Varchar { max_chars: None };

fn n(precision: u32, scale: u32) -> ColumnKind {
    ColumnKind::Number { precision, scale }
}

/// The emulator's table, as `column_specs(COLUMNS)` gives it.
pub fn resort_columns() -> Vec<Column> {
    vec![
        col("TXID", V),
        col("RESORT", V),
        col("CATEGORY", V),
        col("ITEM", V),
        col("CUSTOMER_TYPE", V),
        col("PAYMENT_METHOD", V),
        col("QUANTITY", n(9, 0)),
        col("UNIT_PRICE", n(12, 2)),
        col("AMOUNT", n(14, 2)),
        col("SALE_TIME", ColumnKind::Timestamp { tz: true }),
        col("RUN_ID", V),
        col("WORKER_ID", n(10, 0)),
    ]
}

/// The emulator's table with `changes` (name, kind) made.
fn resort_with(changes: &[(&str, ColumnKind)]) -> Vec<Column> {
    let mut columns = resort_columns();
    for c in &mut columns {
        if let Some((_, kind)) = changes.iter().find(|(name, _)| *name == c.name) {
            c.kind = *kind;
        }
    }
    columns
}

/// Every parser the bodies are read with: both key rules, and tables that put each
/// kind on generated values (one or two columns changed, so that lines still land).
pub fn parsers() -> Vec<RowParser> {
    let limit = |n| ColumnKind::Varchar { max_chars: Some(n) };
    let tables = [
        resort_columns(),
        resort_with(&[
            ("TXID", limit(30)),
            ("RESORT", limit(16)),
            ("ITEM", limit(10)),
        ]),
        resort_with(&[
            ("QUANTITY", ColumnKind::Boolean),
            ("UNIT_PRICE", ColumnKind::Double),
            ("SALE_TIME", ColumnKind::Timestamp { tz: false }),
            ("WORKER_ID", V),
        ]),
        resort_with(&[
            ("QUANTITY", V),
            ("AMOUNT", n(38, 10)),
            ("WORKER_ID", ColumnKind::Timestamp { tz: true }),
        ]),
        resort_with(&[("UNIT_PRICE", n(4, 4)), ("AMOUNT", ColumnKind::Double)]),
        resort_with(&[("CATEGORY", ColumnKind::Date)]),
        resort_with(&[("ITEM", ColumnKind::Boolean)]),
        resort_with(&[("RUN_ID", ColumnKind::Timestamp { tz: true })]),
        resort_with(&[("CUSTOMER_TYPE", n(38, 2))]),
        {
            let mut subset = resort_columns();
            subset.retain(|c| !c.name.contains('_'));
            subset.push(col("a\"b", V));
            subset.push(col("é", n(9, 0)));
            subset
        },
    ];
    let mut out = Vec::new();
    for columns in tables {
        for check_keys in [true, false] {
            out.push(RowParser::new(columns.clone(), check_keys));
        }
    }
    out
}

pub fn generated_rows(rows: u64) -> Vec<u8> {
    let mut gen = ResortGenerator::new("run-20261130-024406", 17, 1_000_000).unwrap();
    gen.next_batch(rows, SALE_TIME_US).unwrap()
}

fn parse_lines(parser: &RowParser, body: &[u8], plain_first: bool) -> ParsedLines {
    let mut got = parser.empty();
    parser.parse_lines(body, plain_first, &mut got);
    got
}

/// What a parse gave, as plain data: rows, each column's buffers, deferred lines.
type Landed = (usize, Vec<Vec<Vec<u8>>>, Vec<u8>, Vec<u64>);

fn buffers(got: ParsedLines) -> Landed {
    let cols = got
        .columns
        .into_iter()
        .map(ColumnData::into_buffers)
        .collect();
    (got.rows, cols, got.deferred, got.deferred_lines)
}

/// Fails (naming the body) if the fast path changed anything for `body`: read in
/// place (a body that is all UTF-8) and line by line (one that is not).
pub fn assert_same(parser: &RowParser, body: &[u8], what: &str) {
    let not_utf8 = [body, b"\n\xff"].concat();
    for body in [body, &not_utf8] {
        let fast = buffers(parse_lines(parser, body, true));
        let slow = buffers(parse_lines(parser, body, false));
        // Into buffers that held another body: the same again.
        static OTHER: OnceLock<Vec<u8>> = OnceLock::new();
        let mut reused = parser.parse(OTHER.get_or_init(|| generated_rows(3)));
        parser.parse_into(body, &mut reused);
        assert!(
            buffers(reused) == fast,
            "{what}: parse_into differs from parse"
        );
        assert!(
            fast == slow,
            "{what}: the fast path differs on {:?} (check_keys {}, columns {:?})\nfast {fast:?}\nslow {slow:?}",
            String::from_utf8_lossy(body),
            parser.check_keys,
            parser.columns,
        );
    }
}

/// How many of `body`'s lines the fast path takes by itself.
fn plain_taken(parser: &RowParser, body: &[u8]) -> usize {
    let mut out: Vec<_> = parser
        .columns
        .iter()
        .map(|c| ColumnData::new(c.kind))
        .collect();
    body.split(|&b| b == b'\n')
        .filter(|line| {
            std::str::from_utf8(line).is_ok_and(|text| {
                super::plain_line::PlainReader::new(parser, text)
                    .line(0, &mut out)
                    .is_ok()
            })
        })
        .count()
}

#[test]
fn generated_rows_take_the_fast_path_with_the_same_results() {
    let body = generated_rows(300);
    let lines = body
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    let parser = RowParser::new(resort_columns(), true);
    assert_eq!(
        plain_taken(&parser, &body),
        lines,
        "every generated row is plain"
    );
    for parser in parsers() {
        assert_same(&parser, &body, "generated rows");
    }
}

#[test]
fn plain_forms_take_the_fast_path() {
    let parser = RowParser::new(vec![col("A", V), col("N", n(12, 2))], true);
    for line in [
        "{\"A\":\"x\",\"N\":1}",
        " {\t\"N\" : -0.005 , \"A\" : \"äöü\" } ",
        "{\"A\":\"\",\"N\":\"  12.5 \"}",
        "{\"A\":true,\"N\":0}",
        "{\"A\":-12,\"N\":99999999.99}",
    ] {
        assert_eq!(plain_taken(&parser, line.as_bytes()), 1, "{line}");
        assert_same(&parser, line.as_bytes(), line);
    }
}

#[test]
fn hostile_and_odd_lines() {
    let row = String::from_utf8(generated_rows(1)).unwrap();
    let row = row.trim_end();
    let inner = &row[1..row.len() - 1];
    let deep = format!("{{\"TXID\":{}", "[".repeat(100_000));
    let lines: Vec<String> = vec![
        String::new(),
        " \t ".into(),
        "\r".into(),
        format!("{row}\r"),
        format!("\r{row}"),
        format!(" {row} "),
        format!("\t{row}\t"),
        format!("{row}x"),
        format!("{row},"),
        format!("{row}{row}"),
        format!("[{row}]"),
        format!("{{ {} }}", inner.replace(',', " , ").replace(':', " : ")),
        format!("{{{}}}", inner.replace(',', "\t,\t")),
        format!("{{{}}}", inner.replace(',', ",\r")),
        format!("{{{inner},}}"),
        format!("{{,{inner}}}"),
        format!("{{{inner},\"TXID\":\"again\"}}"),
        format!("{{{inner},\"EXTRA\":1}}"),
        format!("{{{inner},\"EXTRA\":{{\"a\":[1,{{}}]}}}}"),
        format!("{{{inner},\"EXTRA\":\"\\u0041\"}}"),
        format!("{{{inner},\"EXTRA\":[}}"),
        format!("{{\"EXTRA\":null,{inner}}}"),
        format!("{{{inner},\"EXTRA\":1,\"EXTRA\":2}}"),
        format!("{{{}}}", inner.replacen("\"TXID\"", "\"T\\u0058ID\"", 1)),
        format!(
            "{{{}}}",
            inner.replacen("\"RUN_ID\"", "\"RUN\\u005fID\"", 1)
        ),
        format!("{{{}}}", inner.replacen("\"RESORT\"", "\"resort\"", 1)),
        format!("{{{}}}", inner.replacen("\"RESORT\":", "\"RESORT\"", 1)),
        format!("{{{}}}", inner.replacen("\"RESORT\"", "RESORT", 1)),
        format!("{{{}}}", inner.replacen("\"RESORT\"", "\"RESORT", 1)),
        format!("{{{}}}", inner.replacen(",", "", 1)),
        "{}".into(),
        "{ }".into(),
        "[]".into(),
        "null".into(),
        "\"".into(),
        "{\"".into(),
        "{\"TXID\"".into(),
        "{\"TXID\":".into(),
        "{\"TXID\":\"x".into(),
        deep,
    ];
    let mut body = Vec::new();
    for line in &lines {
        body.extend_from_slice(line.as_bytes());
        body.push(b'\n');
    }
    // Truncated at every byte, and with bytes that are not UTF-8.
    for cut in 0..row.len() {
        body.extend_from_slice(&row.as_bytes()[..cut]);
        body.push(b'\n');
    }
    let mut not_utf8 = Vec::new();
    for bad in [
        &b"\xff"[..],
        b"\xc3",
        b"\xe2\x82",
        b"\xed\xa0\x80",
        b"\xc0\xaf",
        b"\x00",
    ] {
        for at in [1, 9, 20, row.len() / 2, row.len() - 3] {
            not_utf8.extend_from_slice(&row.as_bytes()[..at]);
            not_utf8.extend_from_slice(bad);
            not_utf8.extend_from_slice(&row.as_bytes()[at..]);
            not_utf8.push(b'\n');
        }
    }
    for parser in parsers() {
        assert_same(&parser, &not_utf8, "bytes that are not UTF-8");
        assert_same(&parser, &body, "hostile lines");
        // With and without a final newline, and as \r\n lines.
        assert_same(&parser, &body[..body.len() - 1], "no final newline");
        let crlf: Vec<u8> = body
            .split(|&b| b == b'\n')
            .flat_map(|l| [l, b"\r\n"].concat())
            .collect();
        assert_same(&parser, &crlf, "CRLF lines");
    }
}

#[test]
fn tables_the_fast_path_leaves_alone() {
    // More columns than its key mask holds, and none at all.
    let wide: Vec<Column> = (0..70).map(|i| col(&format!("C{i}"), n(9, 0))).collect();
    let line: Vec<String> = (0..70).map(|i| format!("\"C{i}\":{i}")).collect();
    let body = format!("{{{}}}\n{{}}\n", line.join(","));
    for check_keys in [true, false] {
        for columns in [wide.clone(), Vec::new()] {
            let parser = RowParser::new(columns, check_keys);
            assert_same(&parser, body.as_bytes(), "wide and empty tables");
        }
    }
    assert_eq!(RowParser::new(wide, true).parse(body.as_bytes()).rows, 1);
    assert_eq!(RowParser::new(Vec::new(), true).parse(b"{}\n{ }").rows, 2);
}
