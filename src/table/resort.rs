//! The compiled resort table (`crate::tables`, baked by codegen) as a [`ReplayTable`].
//!
//! Between its TXID digits and its SALE_TIME value a resort row holds one piece per
//! entry column: `","RESORT":"Vail"`, `,"CATEGORY":"MERCH"`, ...,
//! `,"AMOUNT":5.94,"SALE_TIME":` (the first piece also closes the TXID string, the last
//! opens SALE_TIME), exactly as the Python side folds a workload's keys into its pieces.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use super::{ReplayTable, Token, Values};
use crate::billable::rendered_value_bytes;
use crate::sale_time::TimeForm;
use crate::tables::{
    ENTRIES, ENTRY_KEYS, ROW_END, RUN_ID_KEY, SALE_TIME_KEY, TABLE_LENGTH, TXID_KEY,
    TXID_SEPARATOR, VALUES, WORKER_ID_KEY, WORKER_STRIDE,
};
#[cfg(test)]
use crate::writer::pieces::PieceRef;

/// Entry columns per resort row.
pub const COLUMNS: usize = ENTRY_KEYS.len();

/// The text of entry column `column` holding value `value`, with its key.
pub fn piece_text(column: usize, value: u16) -> Vec<u8> {
    let mut text = Vec::new();
    if column == 0 {
        text.push(b'"'); // closes the TXID string
    }
    text.extend_from_slice(ENTRY_KEYS[column].as_bytes());
    text.extend_from_slice(VALUES[usize::from(value)].as_bytes());
    if column == COLUMNS - 1 {
        text.extend_from_slice(SALE_TIME_KEY.as_bytes());
    }
    text
}

/// The resort row's template: `{"TXID":"<run>-<worker>-<seq>` + 8 slots + SALE_TIME +
/// `,"RUN_ID":"<run>","WORKER_ID":<worker>}\n`.
pub fn template() -> Vec<Token> {
    let text = |parts: &[&str]| Token::Text(parts.concat().into_bytes());
    let mut t = vec![
        text(&[TXID_KEY, "\""]),
        Token::RunId,
        text(&[TXID_SEPARATOR]),
        Token::WorkerId,
        text(&[TXID_SEPARATOR]),
        Token::Seq,
    ];
    t.extend(std::iter::repeat_n(Token::Slot, COLUMNS));
    t.extend([
        Token::SendTime(TimeForm::Tz),
        text(&[RUN_ID_KEY, "\""]),
        Token::RunId,
        text(&["\"", WORKER_ID_KEY]),
        Token::WorkerId,
        text(&[ROW_END]),
    ]);
    t
}

/// Billable bytes of a row's text tokens: the TXID's two separators (its quotes and
/// every key are not values).
pub const CONST_VALUES: u64 = 2 * TXID_SEPARATOR.len() as u64;

fn build() -> ReplayTable {
    let mut texts: Vec<Vec<u8>> = Vec::new();
    let mut values: Vec<u64> = Vec::new();
    let mut numbers: HashMap<(usize, u16), u32> = HashMap::new();
    let mut ids = Vec::with_capacity(TABLE_LENGTH * COLUMNS);
    for entry in ENTRIES.iter() {
        for (column, &value) in entry.iter().enumerate() {
            ids.push(*numbers.entry((column, value)).or_insert_with(|| {
                texts.push(piece_text(column, value));
                values.push(rendered_value_bytes(VALUES[usize::from(value)].as_bytes()));
                (texts.len() - 1) as u32
            }));
        }
    }
    let values = Values {
        pieces: &values,
        consts: CONST_VALUES,
    };
    // The generated tables are valid data (CI checks tables.rs is what codegen makes,
    // and `the_compiled_table_builds` below builds it).
    ReplayTable::with_values(
        TABLE_LENGTH,
        WORKER_STRIDE,
        &texts,
        &ids,
        &template(),
        Some(values),
    )
    .expect("the compiled resort table is a valid replay table")
}

/// The shared compiled resort table, built on first use.
pub fn table() -> Arc<ReplayTable> {
    static TABLE: OnceLock<Arc<ReplayTable>> = OnceLock::new();
    TABLE.get_or_init(|| Arc::new(build())).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compiled_table_builds_with_one_word_pieces_and_one_group() {
        let t = table();
        assert_eq!(t.entries(), TABLE_LENGTH);
        assert_eq!(t.slots(), COLUMNS);
        assert!(t.pieces.short());
        assert_eq!(t.shape.groups.len(), 1);
        let first: Vec<u8> = t.all_refs::<crate::writer::pieces::Tiny>()[..COLUMNS]
            .iter()
            .flat_map(|r| r.text(t.pieces.store()).to_vec())
            .collect();
        let expected: Vec<u8> = (0..COLUMNS)
            .flat_map(|c| piece_text(c, ENTRIES[0][c]))
            .collect();
        assert_eq!(first, expected);
        assert!(first.starts_with(b"\",\"RESORT\":\""));
        assert!(first.ends_with(b",\"SALE_TIME\":"));
    }
}
