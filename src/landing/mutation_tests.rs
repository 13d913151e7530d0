//! A seeded mutation loop over generated rows: each body is a few generated lines,
//! each bent by a few random edits (bytes and tokens inserted, deleted or replaced,
//! entries swapped, duplicated or dropped, values replaced, lines cut), then read by
//! every parser with and without the fast path, which must agree
//! (`parity_tests::assert_same`). `LANDING_PARITY_SEED=<n>` replays a run and
//! `LANDING_PARITY_BODIES=<n>` sets its length; the seed is printed.

use super::parity_tests::{assert_same, generated_rows, parsers};

/// splitmix64: small, seeded, the same on every platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Bytes worth putting anywhere in a line.
const TOKENS: &[&[u8]] = &[
    b"\\",
    b"\\\"",
    b"\\u0041",
    b"\\ud800",
    b"\\n",
    b"\"",
    b"\r",
    b" ",
    b"\t",
    b"\n",
    "é".as_bytes(),
    "😀".as_bytes(),
    b"\xff",
    b"\xc3",
    b"\xed\xa0\x80",
    b"\x00",
    b"\x1f",
    b"\x7f",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"e5",
    b"E-3",
    b"e+",
    b".",
    b".0",
    b"-",
    b"+",
    b"0",
    b"00",
    b"9",
    b"99999999999",
    b"null",
    b"true",
    b"false",
    b"\"X\":1,",
    b"\"QUANTITY\":2,",
    b"\"TXID\":\"a\",",
    b",\"Z\":{\"a\":[1,2]}",
    b"\"\":0,",
];

/// Values worth putting in place of a value.
const VALUES: &[&str] = &[
    "0",
    "-0",
    "7",
    "-7",
    "01",
    "1.5",
    "-1.005",
    "0.125",
    "1e3",
    "-1.5E-2",
    "12345678901234567890",
    "1.23456789012345678",
    "31536000000",
    "1700000000123456789",
    "9223372036854775808",
    "true",
    "false",
    "null",
    "\"\"",
    "\" 42 \"",
    "\"+1.5\"",
    "\"yes\"",
    "\"OFF\"",
    "\"äöü\"",
    "\"a\\\"b\"",
    "\"\\u00e9\"",
    "\"1e3\"",
    "\"2024-02-29\"",
    "\"2023-02-29\"",
    "\"2026-12-02 05:28:12+01:00\"",
    "\"2026-12-02T05:28:12.1234567Z\"",
    "\"2026-12-02T05:28\"",
    "\"2026-12-02T05:28:12-0530\"",
    "\"1764470646\"",
    "{}",
    "[]",
    "[{\"a\":null}]",
];

/// Where `line`'s entries start (the byte after `{` or `,`), by its `,"` marks.
fn entry_starts(line: &[u8]) -> Vec<usize> {
    let mut starts = vec![1];
    starts.extend(
        line.windows(2)
            .enumerate()
            .filter_map(|(i, w)| (w == b",\"").then_some(i + 1)),
    );
    starts
}

/// One random edit of `line`.
fn mutate(rng: &mut Rng, line: &mut Vec<u8>) {
    let at = rng.below(line.len() + 1);
    match rng.below(8) {
        0 | 1 => {
            let token = rng.pick(TOKENS);
            line.splice(at..at, token.iter().copied());
        }
        2 => {
            let end = (at + 1 + rng.below(4)).min(line.len());
            line.drain(at..end);
        }
        3 => {
            if let Some(b) = line.get_mut(at) {
                *b = rng.next() as u8;
            }
        }
        4 => line.truncate(at),
        5 | 6 => {
            // A value replaced: from a `":` to the next `,"` or the end.
            let marks: Vec<usize> = line
                .windows(2)
                .enumerate()
                .filter_map(|(i, w)| (w == b"\":").then_some(i + 2))
                .collect();
            if marks.is_empty() {
                return;
            }
            let start = *rng.pick(&marks);
            let end = line[start..]
                .windows(2)
                .position(|w| w == b",\"")
                .map_or(line.len().saturating_sub(1).max(start), |i| start + i);
            line.splice(start..end, rng.pick(VALUES).bytes());
        }
        _ => {
            // Entries swapped, duplicated or dropped.
            let starts = entry_starts(line);
            let ends: Vec<usize> = starts[1..]
                .iter()
                .map(|&s| s - 1)
                .chain([line.len().saturating_sub(1)])
                .collect();
            let (i, j) = (rng.below(starts.len()), rng.below(starts.len()));
            if starts[i] > ends[i] || starts[j] > ends[j] {
                return;
            }
            let a = line[starts[i]..ends[i]].to_vec();
            let b = line[starts[j]..ends[j]].to_vec();
            match rng.below(3) {
                0 if i < j => {
                    line.splice(starts[j]..ends[j], a);
                    line.splice(starts[i]..ends[i], b);
                }
                1 => {
                    let dup = [&b","[..], &a].concat();
                    line.splice(ends[j]..ends[j], dup);
                }
                _ if starts.len() > 1 && i + 1 < starts.len() => {
                    line.drain(starts[i]..starts[i + 1]);
                }
                _ => {}
            }
        }
    }
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok()?.parse().ok()
}

#[test]
fn mutated_generated_rows() {
    let seed = env_number("LANDING_PARITY_SEED").unwrap_or(0x5eed_2026_1202);
    let bodies = env_number("LANDING_PARITY_BODIES").unwrap_or(500);
    println!("mutation loop: LANDING_PARITY_SEED={seed} LANDING_PARITY_BODIES={bodies}");
    let mut rng = Rng(seed);
    let rows = generated_rows(200);
    let rows: Vec<&[u8]> = rows
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let parsers = parsers();
    for _ in 0..bodies {
        let mut body = Vec::new();
        for _ in 0..1 + rng.below(6) {
            let mut line = rng.pick(&rows).to_vec();
            // Some lines are left as they are, so rows land around the bent ones.
            for _ in 0..rng.below(4) {
                mutate(&mut rng, &mut line);
            }
            body.extend_from_slice(&line);
            body.push(b'\n');
        }
        for parser in &parsers {
            assert_same(parser, &body, &format!("seed {seed}"));
        }
    }
}
