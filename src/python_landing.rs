//! The PyO3 binding of the landing parse: `RowParser(columns, *, check_keys=True)` and
//! `parse(body)`, which releases the GIL once for the whole body.
//!
//! The typed columns of one parse are kept for the next one (their memory already
//! mapped: a fresh set costs a page fault per 4 KiB, as much CPU as the parse), and
//! each column is written once, little-endian, straight into its `bytes`.

use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::error::GenError;
use crate::landing::{self, Column, ColumnKind, ParsedLines};

/// Columns bigger than this (in bytes, all together) are not kept between parses.
const MAX_KEPT_BYTES: usize = 64 << 20;

/// NDJSON bodies into a table's typed columns, by the emulator's casting rules.
///
/// `columns` is `[(name, kind, precision, scale, length), ...]` in the table's order;
/// `parse(body)` returns `(rows, buffers, deferred, deferred_lines)`: the rows landed,
/// each column's Arrow buffers (`[offsets, data]` for strings, `[values]` otherwise),
/// and the lines left to the SQL path (each followed by a newline) with their 1-based
/// line numbers.
#[pyclass(module = "elastic_native._elastic_native", name = "RowParser", frozen)]
pub struct RowParser {
    inner: landing::RowParser,
    /// The last parse's buffers, for the next parse to fill again.
    kept: Mutex<Option<ParsedLines>>,
}

type ColumnSpec = (String, String, u32, u32, usize);
type Parsed<'py> = (
    usize,
    Vec<Vec<Bound<'py, PyBytes>>>,
    Bound<'py, PyBytes>,
    Vec<u64>,
);

#[pymethods]
impl RowParser {
    #[new]
    #[pyo3(signature = (columns, *, check_keys = true))]
    fn new(columns: Vec<ColumnSpec>, check_keys: bool) -> PyResult<Self> {
        let mut cols = Vec::with_capacity(columns.len());
        for (index, (name, kind, precision, scale, length)) in columns.into_iter().enumerate() {
            let kind = ColumnKind::from_spec(&kind, precision, scale, length)
                .map_err(|reason| GenError::BadColumn { index, reason })?;
            if cols.iter().any(|c: &Column| c.name == name) {
                let reason = format!("column {name:?} is given twice");
                return Err(GenError::BadColumn { index, reason }.into());
            }
            cols.push(Column { name, kind });
        }
        Ok(RowParser {
            inner: landing::RowParser::new(cols, check_keys),
            kept: Mutex::new(None),
        })
    }

    /// The column names, in order.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.inner
            .columns()
            .iter()
            .map(|c| c.name.clone())
            .collect()
    }

    fn parse<'py>(&self, py: Python<'py>, body: &Bound<'py, PyBytes>) -> PyResult<Parsed<'py>> {
        let data = body.as_bytes();
        let kept = self.kept.lock().ok().and_then(|mut k| k.take());
        let mut got = kept.unwrap_or_else(|| self.inner.empty());
        let inner = &self.inner;
        py.detach(|| inner.parse_into(data, &mut got));
        let mut buffers = Vec::with_capacity(got.columns.len());
        let mut bytes = 0;
        for c in &got.columns {
            let mut bufs = Vec::with_capacity(c.buffer_count());
            for i in 0..c.buffer_count() {
                bytes += c.buffer_len(i);
                bufs.push(match c.as_bytes(i) {
                    Some(b) => PyBytes::new(py, b),
                    None => PyBytes::new_with(py, c.buffer_len(i), |out| {
                        c.write_buffer(i, out);
                        Ok(())
                    })?,
                });
            }
            buffers.push(bufs);
        }
        let parsed = (
            got.rows,
            buffers,
            PyBytes::new(py, &got.deferred),
            got.deferred_lines.clone(),
        );
        if bytes <= MAX_KEPT_BYTES {
            if let Ok(mut k) = self.kept.lock() {
                *k = Some(got);
            }
        }
        Ok(parsed)
    }

    fn __repr__(&self) -> String {
        format!(
            "<elastic_native.RowParser columns={}>",
            self.inner.columns().len()
        )
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RowParser>()
}
