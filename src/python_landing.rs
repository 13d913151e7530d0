//! The PyO3 binding of the landing parse: `RowParser(columns, *, check_keys=True)` and
//! `parse(body)`, which releases the GIL once for the whole body.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::error::GenError;
use crate::landing::{self, Column, ColumnData, ColumnKind};

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

    fn parse<'py>(&self, py: Python<'py>, body: &Bound<'py, PyBytes>) -> Parsed<'py> {
        let data = body.as_bytes();
        let inner = &self.inner;
        let got = py.detach(|| {
            let mut got = inner.parse(data);
            let buffers: Vec<Vec<Vec<u8>>> = std::mem::take(&mut got.columns)
                .into_iter()
                .map(ColumnData::into_buffers)
                .collect();
            (got, buffers)
        });
        let (got, buffers) = got;
        let buffers = buffers
            .iter()
            .map(|bufs| bufs.iter().map(|b| PyBytes::new(py, b)).collect())
            .collect();
        (
            got.rows,
            buffers,
            PyBytes::new(py, &got.deferred),
            got.deferred_lines,
        )
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
