//! The PyO3 binding of runtime tables: `WorkloadTable(entries, stride, pieces, ids,
//! template)`, checked once, and `WorkloadGenerator(table, run_id, worker_id, *,
//! start_seq=0)`, with `ResortGenerator`'s batch API over it.
//!
//! Everything Python hands over is checked here or in [`ReplayTable::new`]: a malformed
//! table is a `TypeError` or `ValueError` naming the argument (and the item) at fault.

use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString, PyTuple};

use crate::generator::Generator;
use crate::python::{generator_args, int_arg, next_batch, StartSeq};
use crate::table::{template, ReplayTable, Values, MAX_ENTRIES};

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default()
}

/// The items of a list or tuple argument, `TypeError` naming it otherwise.
fn items<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err(format!(
            "{name} must be a list, got {}",
            type_name(obj)
        )));
    }
    let iter = obj.try_iter().map_err(|_| {
        PyTypeError::new_err(format!("{name} must be a list, got {}", type_name(obj)))
    })?;
    iter.collect()
}

fn bytes_of<'a>(obj: &'a Bound<'_, PyAny>, name: &str) -> PyResult<&'a [u8]> {
    match obj.cast::<PyBytes>() {
        Ok(b) => Ok(b.as_bytes()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{name} must be bytes, got {}",
            type_name(obj)
        ))),
    }
}

/// `value_bytes[i]`: an int, 0 or more.
fn value_arg(obj: &Bound<'_, PyAny>, i: usize) -> PyResult<u64> {
    if !obj.is_instance_of::<pyo3::types::PyInt>() {
        return Err(PyTypeError::new_err(format!(
            "value_bytes[{i}] must be an int, got {}",
            type_name(obj)
        )));
    }
    obj.extract::<u64>().map_err(|_| {
        PyValueError::new_err(format!(
            "value_bytes[{i}] must be an int of 0 or more, got {}",
            obj.str().map(|s| s.to_string()).unwrap_or_default()
        ))
    })
}

/// `template`'s `(kind, payload)` pairs.
fn template_arg(obj: &Bound<'_, PyAny>) -> PyResult<Vec<(String, Vec<u8>)>> {
    let mut out = Vec::new();
    for (i, item) in items(obj, "template")?.iter().enumerate() {
        let pair = item.cast::<PyTuple>().ok().filter(|t| t.len() == 2);
        let Some(pair) = pair else {
            return Err(PyTypeError::new_err(format!(
                "template[{i}] must be a (kind, payload) tuple, got {}",
                type_name(item)
            )));
        };
        let kind = pair.get_item(0)?;
        let kind = kind.cast::<PyString>().map_err(|_| {
            PyTypeError::new_err(format!(
                "template[{i}][0] must be a str, got {}",
                type_name(&kind)
            ))
        })?;
        let payload = pair.get_item(1)?;
        let payload = bytes_of(&payload, &format!("template[{i}][1]"))?.to_vec();
        out.push((kind.to_cow()?.into_owned(), payload));
    }
    Ok(out)
}

/// A workload's replay table, checked and laid out once; any number of
/// `WorkloadGenerator`s share it.
///
/// `pieces` is the rendered pieces (`bytes`), `ids` the piece numbers of each entry
/// (native-endian unsigned 32-bit, entry after entry, `slots` per entry in the
/// template's order), `template` the row's `(kind, payload)` tokens. See
/// `elastic_channels.workload.replay`.
#[pyclass(
    module = "elastic_native._elastic_native",
    name = "WorkloadTable",
    frozen
)]
pub struct WorkloadTable {
    inner: Arc<ReplayTable>,
}

#[pymethods]
impl WorkloadTable {
    #[new]
    #[pyo3(
        signature = (entries, stride, pieces, ids, template, *, value_bytes = None, const_value_bytes = None),
        text_signature = "(entries, stride, pieces, ids, template, *, value_bytes=None, const_value_bytes=0)"
    )]
    #[allow(clippy::too_many_arguments)] // reason: the Python signature, one argument each
    fn new(
        py: Python<'_>,
        entries: &Bound<'_, PyAny>,
        stride: &Bound<'_, PyAny>,
        pieces: &Bound<'_, PyAny>,
        ids: &Bound<'_, PyAny>,
        template: &Bound<'_, PyAny>,
        value_bytes: Option<&Bound<'_, PyAny>>,
        const_value_bytes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let entries = int_arg(entries, "entries", 1, MAX_ENTRIES as i128)? as usize;
        let stride = int_arg(stride, "stride", 0, i64::MAX.into())? as u64;
        let pieces = items(pieces, "pieces")?;
        let texts = pieces
            .iter()
            .enumerate()
            .map(|(i, p)| bytes_of(p, &format!("pieces[{i}]")))
            .collect::<PyResult<Vec<&[u8]>>>()?;
        let ids = bytes_of(ids, "ids")?;
        if ids.len() % 4 != 0 {
            return Err(PyValueError::new_err(format!(
                "ids: {} bytes is not a whole number of 32-bit piece numbers",
                ids.len()
            )));
        }
        let ids: Vec<u32> = ids
            .chunks_exact(4)
            .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let tokens = template::parse(&template_arg(template)?)?;
        let piece_values = match value_bytes {
            Some(obj) => Some(
                items(obj, "value_bytes")?
                    .iter()
                    .enumerate()
                    .map(|(i, v)| value_arg(v, i))
                    .collect::<PyResult<Vec<u64>>>()?,
            ),
            None => None,
        };
        let consts = match const_value_bytes {
            Some(obj) => int_arg(obj, "const_value_bytes", 0, i64::MAX.into())? as u64,
            None => 0,
        };
        let values = piece_values
            .as_deref()
            .map(|pieces| Values { pieces, consts });
        let table =
            py.detach(|| ReplayTable::with_values(entries, stride, &texts, &ids, &tokens, values))?;
        Ok(WorkloadTable {
            inner: Arc::new(table),
        })
    }

    /// Number of entries.
    #[getter]
    fn entries(&self) -> usize {
        self.inner.entries()
    }

    /// Pieces (slots) per row.
    #[getter]
    fn slots(&self) -> usize {
        self.inner.slots()
    }

    fn __repr__(&self) -> String {
        format!(
            "<elastic_native.WorkloadTable entries={} slots={}>",
            self.inner.entries(),
            self.inner.slots()
        )
    }
}

/// Deterministic rows of a workload for one worker, generated and written as NDJSON.
///
/// `next_batch` returns exactly what `elastic_channels.rows.WorkloadGenerator` returns
/// for the same workload, arguments and prior calls; `batch_len` returns its length.
#[pyclass(module = "elastic_native._elastic_native", name = "WorkloadGenerator")]
pub struct WorkloadGenerator {
    inner: Generator,
}

#[pymethods]
impl WorkloadGenerator {
    #[new]
    #[pyo3(
        signature = (table, run_id, worker_id, *, start_seq = StartSeq(None)),
        text_signature = "(table, run_id, worker_id, *, start_seq=0)"
    )]
    fn new(
        table: &Bound<'_, PyAny>,
        run_id: &Bound<'_, PyAny>,
        worker_id: &Bound<'_, PyAny>,
        start_seq: StartSeq<'_>,
    ) -> PyResult<Self> {
        let table = table.cast::<WorkloadTable>().map_err(|_| {
            PyTypeError::new_err(format!(
                "table must be a WorkloadTable, got {}",
                type_name(table)
            ))
        })?;
        let (run_id, worker_id, start_seq) = generator_args(run_id, worker_id, &start_seq)?;
        let table = table.get().inner.clone();
        let inner = Generator::new(table, &run_id, worker_id, start_seq)?;
        Ok(WorkloadGenerator { inner })
    }

    /// The sequence number of the next row.
    #[getter]
    fn seq(&self) -> u64 {
        self.inner.seq()
    }

    /// The next `n` rows, all sent at `sale_time_us` (Unix epoch microseconds), as
    /// NDJSON bytes. The GIL is released while the rows are written.
    fn next_batch<'py>(
        &mut self,
        py: Python<'py>,
        n: &Bound<'py, PyAny>,
        sale_time_us: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        next_batch(py, &mut self.inner, n, sale_time_us)
    }

    /// `len(self.next_batch(n, sale_time_us))`, with the same checks, computed without
    /// writing the rows or advancing `seq`.
    fn batch_len(&self, n: &Bound<'_, PyAny>, sale_time_us: &Bound<'_, PyAny>) -> PyResult<usize> {
        let (n, sale_time_us) = crate::python::batch_args(n, sale_time_us)?;
        Ok(self.inner.batch_len(n, sale_time_us)?)
    }

    /// The billable bytes (the values' bytes, by Snowflake's rule) of
    /// `self.next_batch(n, sale_time_us)`, with the same checks, computed without
    /// writing the rows or advancing `seq`; None when the table was made without
    /// `value_bytes`.
    fn billable_len(
        &self,
        n: &Bound<'_, PyAny>,
        sale_time_us: &Bound<'_, PyAny>,
    ) -> PyResult<Option<u64>> {
        let (n, sale_time_us) = crate::python::batch_args(n, sale_time_us)?;
        Ok(self.inner.billable_len(n, sale_time_us)?)
    }

    /// The billable bytes of the last batch `next_batch` wrote (None before the first,
    /// or when the table was made without `value_bytes`), counted as it was sized.
    #[getter]
    fn last_billable_bytes(&self) -> Option<u64> {
        self.inner.last_billable()
    }

    fn __repr__(&self) -> String {
        format!(
            "<elastic_native.WorkloadGenerator seq={}>",
            self.inner.seq()
        )
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<WorkloadTable>()?;
    m.add_class::<WorkloadGenerator>()?;
    Ok(())
}
