//! The writer against an oracle that renders each row straight from its template, for
//! tables of every shape the loop specialises on, and every compiled writer alike.

use std::mem::MaybeUninit;
use std::sync::Arc;

use super::*;
use crate::generator::{Generator, ResortGenerator};
use crate::sale_time::{write_time, TimeForm};
use crate::table::Token;

const T: i64 = 1_764_470_646_123_456;

fn text(s: &str) -> Token {
    Token::Text(s.as_bytes().to_vec())
}

/// A table and what the oracle needs to render it: pieces, ids in template order.
struct Case {
    pieces: Vec<Vec<u8>>,
    ids: Vec<u32>,
    template: Vec<Token>,
    entries: usize,
    stride: u64,
}

impl Case {
    fn table(&self) -> Arc<ReplayTable> {
        Arc::new(
            ReplayTable::new(
                self.entries,
                self.stride,
                &self.pieces,
                &self.ids,
                &self.template,
            )
            .unwrap(),
        )
    }

    /// Row `seq` of worker `worker` rendered token by token.
    fn row(&self, run_id: &str, worker: u64, seq: u64, out: &mut Vec<u8>) {
        let slots = self.template.iter().filter(|t| **t == Token::Slot).count();
        let entry = ((u128::from(worker) * u128::from(self.stride) + u128::from(seq))
            % self.entries as u128) as usize;
        let json = serde_json::to_vec(run_id).unwrap();
        let mut k = 0;
        for token in &self.template {
            match token {
                Token::Text(t) => out.extend_from_slice(t),
                Token::Slot => {
                    out.extend_from_slice(&self.pieces[self.ids[entry * slots + k] as usize]);
                    k += 1;
                }
                Token::Seq => out.extend_from_slice(seq.to_string().as_bytes()),
                Token::RunId => out.extend_from_slice(&json[1..json.len() - 1]),
                Token::WorkerId => out.extend_from_slice(worker.to_string().as_bytes()),
                Token::SendTime(form) => write_time(T, *form, out).unwrap(),
            }
        }
    }
}

/// Pieces of lengths 1 to 90 (so some take several words), `entries` entries.
fn case(template: Vec<Token>, entries: usize) -> Case {
    let slots = template.iter().filter(|t| **t == Token::Slot).count();
    let pieces: Vec<Vec<u8>> = (0..40)
        .map(|i| format!(",\"k{i}\":\"{}\"", "é".repeat(i * 2)).into_bytes())
        .collect();
    let ids = (0..entries * slots)
        .map(|i| ((i * 7 + i / 3) % pieces.len()) as u32)
        .collect();
    Case {
        pieces,
        ids,
        template,
        entries,
        stride: 11,
    }
}

fn cases() -> Vec<(&'static str, Case)> {
    let id = || {
        vec![
            text("\""),
            Token::RunId,
            text("-"),
            Token::WorkerId,
            text("-"),
        ]
    };
    let mut before_seq = vec![text("{\"A\":1"), Token::Slot, Token::Slot, text(",\"ID\":")];
    before_seq.extend(id());
    before_seq.extend([
        Token::Seq,
        text("\""),
        Token::Slot,
        text(",\"T\":"),
        Token::SendTime(TimeForm::Ntz),
        Token::Slot,
        text(",\"D\":"),
        Token::SendTime(TimeForm::Date),
        text("}\n"),
    ]);
    let mut seq_first = vec![text("{\"ID\":")];
    seq_first.extend(id());
    seq_first.extend([
        Token::Seq,
        text("\""),
        Token::Slot,
        Token::Slot,
        text("}\n"),
    ]);
    vec![
        ("slots before the seq, several groups", case(before_seq, 13)),
        ("seq first, one group", case(seq_first, 9)),
        (
            "no seq",
            case(
                vec![
                    text("{"),
                    Token::Slot,
                    Token::SendTime(TimeForm::Tz),
                    text("}\n"),
                ],
                5,
            ),
        ),
        (
            "no slots",
            case(vec![text("{\"W\":"), Token::WorkerId, text("}\n")], 1),
        ),
        (
            "one entry",
            case(vec![text("{"), Token::Seq, Token::Slot, text("}\n")], 1),
        ),
    ]
}

#[test]
fn every_shape_writes_what_the_oracle_renders() {
    let mut merged = Vec::new();
    for (name, c) in cases() {
        let table = c.table();
        let slots = c.template.iter().filter(|t| **t == Token::Slot).count();
        merged.push(table.slots() < slots);
        for (worker, start) in [(0u64, 0u64), (3, 95), (7, 9_999_990)] {
            for n in [1u64, 2, 3, 14, 27, 400] {
                let mut g = Generator::new(table.clone(), "r\"ü\u{1}", worker, start).unwrap();
                let want: Vec<u8> = (start..start + n).fold(Vec::new(), |mut out, s| {
                    c.row("r\"ü\u{1}", worker, s, &mut out);
                    out
                });
                assert_eq!(g.batch_len(n, T).unwrap(), want.len(), "{name} n={n}");
                let got = g.next_batch(n, T).unwrap();
                assert!(
                    got == want,
                    "{name} worker={worker} start={start} n={n}:\n{}\n{}",
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&want)
                );
                assert_eq!(g.seq(), start + n);
            }
        }
    }
    // Some tables had slots merged into one piece per entry, some not.
    assert!(
        merged.contains(&true) && merged.contains(&false),
        "{merged:?}"
    );
    assert_eq!(crate::table::resort::table().slots(), 8);
}

/// The rows as each compiled writer this CPU can run writes them, then as `write`.
fn by_each_writer(gen: Generator, n: u64) -> Vec<Vec<u8>> {
    let plan = gen.plan(n, T).unwrap();
    let start = gen.seq();
    let run = |write: &dyn Fn(&mut Generator, &mut [MaybeUninit<u8>])| {
        let mut g = gen.clone();
        let mut out = vec![MaybeUninit::new(0u8); plan.len()];
        write(&mut g, &mut out);
        assert_eq!(g.seq(), start + n);
        // SAFETY: `out` was initialised when made.
        out.iter()
            .map(|b| unsafe { b.assume_init() })
            .collect::<Vec<u8>>()
    };
    let mut all = vec![run(&|g, out| {
        g.write_with(&plan, out, write_baseline).unwrap()
    })];
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        all.push(run(&|g, out| {
            g.write_with(&plan, out, |rows, out| unsafe { write_avx2(rows, out) })
                .unwrap()
        }));
    }
    all.push(run(&|g, out| g.write(&plan, out).unwrap()));
    all
}

#[test]
fn every_compiled_writer_writes_the_same_rows() {
    let long_run_id = "\u{1}\"".repeat(40);
    for run_id in ["r", long_run_id.as_str()] {
        for n in [1, 2, 40, 5_000] {
            let mut resort = ResortGenerator::new(run_id, 9, 99_990).unwrap();
            let mut gens = vec![resort.generator().clone()];
            for (_, c) in cases() {
                gens.push(Generator::new(c.table(), run_id, 9, 99_990).unwrap());
            }
            for g in gens {
                let all = by_each_writer(g, n);
                assert!(
                    all.windows(2).all(|w| w[0] == w[1]),
                    "run_id={run_id:?} n={n}"
                );
            }
        }
    }
}

#[test]
fn whole_word_rows_equal_rows_copied_exactly() {
    // A one-row batch is copied exactly; longer ones mostly in whole words.
    let long_run_id = "\u{1}\"".repeat(40);
    for run_id in ["r", long_run_id.as_str()] {
        for n in [2, 3, 40, 5_000] {
            let mut batch = ResortGenerator::new(run_id, 9, 99_990).unwrap();
            let mut rows = batch.clone();
            let whole = batch.next_batch(n, T).unwrap();
            let single: Vec<u8> = (0..n)
                .flat_map(|_| rows.next_batch(1, T).unwrap())
                .collect();
            assert!(whole == single, "run_id={run_id:?} n={n}");
        }
    }
}
