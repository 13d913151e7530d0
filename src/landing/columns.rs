//! The typed column buffers one parse fills: Arrow's layouts, little-endian, no
//! validity (every column is NOT NULL), so Python wraps them without a copy.

/// A column's type, as the emulator's schema has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    /// VARCHAR, at most `max_chars` characters if given.
    Varchar {
        max_chars: Option<usize>,
    },
    /// NUMBER(precision, scale), 1 <= precision <= 38.
    Number {
        precision: u32,
        scale: u32,
    },
    /// TIMESTAMP_TZ/LTZ (`tz`) or TIMESTAMP_NTZ, as µs since the epoch.
    Timestamp {
        tz: bool,
    },
    Boolean,
    Double,
    Date,
    /// VARIANT: a JSON value's text (`variant.rs`).
    Variant,
}

impl ColumnKind {
    /// A kind from its name (`varchar`, `number`, `timestamp_tz`, `timestamp_ntz`,
    /// `boolean`, `double`, `date`, `variant`) and its parameters (0 where none).
    pub fn from_spec(
        kind: &str,
        precision: u32,
        scale: u32,
        length: usize,
    ) -> Result<Self, String> {
        Ok(match kind {
            "varchar" => ColumnKind::Varchar {
                max_chars: (length > 0).then_some(length),
            },
            "number" if (1..=38).contains(&precision) && scale <= precision => {
                ColumnKind::Number { precision, scale }
            }
            "number" => {
                return Err(format!(
                    "NUMBER({precision},{scale}) needs 1 <= precision <= 38 and scale <= precision"
                ))
            }
            "timestamp_tz" => ColumnKind::Timestamp { tz: true },
            "timestamp_ntz" => ColumnKind::Timestamp { tz: false },
            "boolean" => ColumnKind::Boolean,
            "double" => ColumnKind::Double,
            "date" => ColumnKind::Date,
            "variant" => ColumnKind::Variant,
            _ => return Err(format!("unknown column kind {kind:?}")),
        })
    }
}

/// One column's values so far (one per row that landed).
#[derive(Debug)]
pub enum ColumnData {
    /// UTF-8: `offsets` (rows + 1, i64) into `data`.
    Utf8 {
        offsets: Vec<i64>,
        data: Vec<u8>,
    },
    /// decimal128 values, scaled.
    Decimal(Vec<i128>),
    /// µs since the epoch.
    Micros(Vec<i64>),
    /// One byte per row while parsing; packed into bits at the end.
    Bool(Vec<u8>),
    Float(Vec<f64>),
    /// days since the epoch.
    Days(Vec<i32>),
}

impl ColumnData {
    pub fn new(kind: ColumnKind) -> Self {
        match kind {
            ColumnKind::Varchar { .. } | ColumnKind::Variant => ColumnData::Utf8 {
                offsets: vec![0],
                data: Vec::new(),
            },
            ColumnKind::Number { .. } => ColumnData::Decimal(Vec::new()),
            ColumnKind::Timestamp { .. } => ColumnData::Micros(Vec::new()),
            ColumnKind::Boolean => ColumnData::Bool(Vec::new()),
            ColumnKind::Double => ColumnData::Float(Vec::new()),
            ColumnKind::Date => ColumnData::Days(Vec::new()),
        }
    }

    /// Room for `rows` more values (and `bytes` more string bytes) without regrowing.
    pub fn reserve(&mut self, rows: usize, bytes: usize) {
        match self {
            ColumnData::Utf8 { offsets, data } => {
                offsets.reserve(rows);
                data.reserve(bytes);
            }
            ColumnData::Decimal(v) => v.reserve(rows),
            ColumnData::Micros(v) => v.reserve(rows),
            ColumnData::Bool(v) => v.reserve(rows),
            ColumnData::Float(v) => v.reserve(rows),
            ColumnData::Days(v) => v.reserve(rows),
        }
    }

    /// Drops every value past the first `rows` (a row that did not land after all).
    pub fn truncate(&mut self, rows: usize) {
        match self {
            ColumnData::Utf8 { offsets, data } => {
                offsets.truncate(rows + 1);
                data.truncate(usize::try_from(offsets[rows]).unwrap_or(0));
            }
            ColumnData::Decimal(v) => v.truncate(rows),
            ColumnData::Micros(v) => v.truncate(rows),
            ColumnData::Bool(v) => v.truncate(rows),
            ColumnData::Float(v) => v.truncate(rows),
            ColumnData::Days(v) => v.truncate(rows),
        }
    }

    /// No values (the room stays, for the next parse).
    pub fn clear(&mut self) {
        self.truncate(0);
    }

    /// How many Arrow buffers the column has: 2 for UTF-8 (offsets, data), else 1.
    pub fn buffer_count(&self) -> usize {
        match self {
            ColumnData::Utf8 { .. } => 2,
            _ => 1,
        }
    }

    /// The length in bytes of Arrow buffer `i`.
    pub fn buffer_len(&self, i: usize) -> usize {
        match (self, i) {
            (ColumnData::Utf8 { offsets, .. }, 0) => offsets.len() * 8,
            (ColumnData::Utf8 { data, .. }, _) => data.len(),
            (ColumnData::Decimal(v), _) => v.len() * 16,
            (ColumnData::Micros(v), _) => v.len() * 8,
            (ColumnData::Bool(v), _) => v.len().div_ceil(8),
            (ColumnData::Float(v), _) => v.len() * 8,
            (ColumnData::Days(v), _) => v.len() * 4,
        }
    }

    /// Arrow buffer `i` as it is held, when it is held as bytes (a string's data).
    pub fn as_bytes(&self, i: usize) -> Option<&[u8]> {
        match (self, i) {
            (ColumnData::Utf8 { data, .. }, 1) => Some(data),
            _ => None,
        }
    }

    /// Writes Arrow buffer `i` into `out` (`buffer_len(i)` bytes, zeroed): values
    /// little-endian, booleans packed LSB first.
    pub fn write_buffer(&self, i: usize, out: &mut [u8]) {
        fn le<T: Copy, const N: usize>(v: &[T], out: &mut [u8], to: fn(T) -> [u8; N]) {
            for (o, &x) in out.chunks_exact_mut(N).zip(v) {
                o.copy_from_slice(&to(x));
            }
        }
        match (self, i) {
            (ColumnData::Utf8 { offsets, .. }, 0) => le(offsets, out, i64::to_le_bytes),
            (ColumnData::Utf8 { data, .. }, _) => {
                let n = data.len().min(out.len());
                out[..n].copy_from_slice(&data[..n]);
            }
            (ColumnData::Decimal(v), _) => le(v, out, i128::to_le_bytes),
            (ColumnData::Micros(v), _) => le(v, out, i64::to_le_bytes),
            (ColumnData::Bool(v), _) => {
                for (o, bits) in out.iter_mut().zip(v.chunks(8)) {
                    *o = bits.iter().rev().fold(0, |acc, &b| (acc << 1) | (b & 1));
                }
            }
            (ColumnData::Float(v), _) => le(v, out, f64::to_le_bytes),
            (ColumnData::Days(v), _) => le(v, out, i32::to_le_bytes),
        }
    }

    /// The Arrow buffers: `[offsets, data]` for UTF-8, `[values]` otherwise.
    pub fn into_buffers(self) -> Vec<Vec<u8>> {
        (0..self.buffer_count())
            .map(|i| {
                let mut out = vec![0; self.buffer_len(i)];
                self.write_buffer(i, &mut out);
                out
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncates_to_the_rows_that_landed() {
        let mut c = ColumnData::new(ColumnKind::Varchar { max_chars: None });
        if let ColumnData::Utf8 { offsets, data } = &mut c {
            data.extend_from_slice(b"abcde");
            offsets.extend([2, 5]);
        }
        c.truncate(1);
        assert_eq!(
            c.into_buffers(),
            vec![
                [0i64, 2].iter().flat_map(|x| x.to_le_bytes()).collect(),
                b"ab".to_vec()
            ]
        );
    }

    #[test]
    fn packs_booleans_lsb_first() {
        let c = ColumnData::Bool(vec![1, 0, 1, 1, 0, 0, 0, 0, 1]);
        assert_eq!(c.into_buffers(), vec![vec![0b0000_1101, 0b1]]);
    }
}
