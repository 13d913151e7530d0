//! The PyO3 binding: argument extraction with the Python path's exception classes,
//! one GIL release per batch, and the module's contents.

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyUnicodeEncodeError, PyValueError};
use std::mem::MaybeUninit;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::error::check_range;
use crate::generator::{self, Generator};
use crate::tables;

/// Extracts an int argument in `min..=max`: `TypeError` for a non-int, `ValueError`
/// naming `name` for any int outside the range (however large).
pub(crate) fn int_arg(
    obj: &Bound<'_, PyAny>,
    name: &'static str,
    min: i128,
    max: i128,
) -> PyResult<i128> {
    match obj.extract::<i64>() {
        Ok(v) => {
            check_range(name, v.into(), min, max)?;
            Ok(v.into())
        }
        Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => Err(PyValueError::new_err(
            format!("{name} must be between {min} and {max}, got {}", obj.str()?),
        )),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{name} must be an int, got {}",
            obj.get_type().name()?
        ))),
    }
}

/// `start_seq` as given, checked in the constructor's body after `run_id` and
/// `worker_id`, the Python path's order. Given explicitly, `None` is a `TypeError`
/// there too; left out, it is 0.
pub(crate) struct StartSeq<'py>(pub(crate) Option<Bound<'py, PyAny>>);

impl<'a, 'py> FromPyObject<'a, 'py> for StartSeq<'py> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(StartSeq(Some(obj.to_owned())))
    }
}

/// The run id as UTF-8. A lone surrogate raises `UnicodeEncodeError` (as msgspec
/// does), its reason prefixed with the argument's name.
pub(crate) fn run_id_arg<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<std::borrow::Cow<'a, str>> {
    let py = obj.py();
    let s = obj.cast::<PyString>().map_err(|_| {
        let type_name = obj
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default();
        PyTypeError::new_err(format!("run_id must be a str, got {type_name}"))
    })?;
    match s.to_cow() {
        Ok(v) => Ok(v),
        Err(err) if err.is_instance_of::<PyUnicodeEncodeError>(py) => {
            let e = err.value(py);
            let reason = format!("run_id: {}", e.getattr("reason")?);
            let renamed = py.get_type::<PyUnicodeEncodeError>().call1((
                e.getattr("encoding")?,
                e.getattr("object")?,
                e.getattr("start")?,
                e.getattr("end")?,
                reason,
            ))?;
            Err(PyErr::from_value(renamed))
        }
        Err(err) => Err(err),
    }
}

/// `next_batch`'s and `batch_len`'s arguments, checked in the Python path's order:
/// `n`, then `sale_time_us`.
pub(crate) fn batch_args(
    n: &Bound<'_, PyAny>,
    sale_time_us: &Bound<'_, PyAny>,
) -> PyResult<(u64, i64)> {
    let n = int_arg(n, "n", 0, tables::MAX_BATCH_ROWS.into())?;
    let sale_time_us = int_arg(
        sale_time_us,
        "sale_time_us",
        tables::MIN_SALE_TIME_US.into(),
        tables::MAX_SALE_TIME_US.into(),
    )?;
    // Both fit: `int_arg` checked them against ranges inside u64 and i64.
    Ok((n as u64, sale_time_us as i64))
}

/// A new `bytes` of `len` bytes, filled by `init`.
///
/// Like `PyBytes::new_with`, minus the zero-fill: `init` writes every byte (it returns
/// an error otherwise, and the object is then dropped unseen), so zeroing first would
/// only add a pass over memory. The object is reachable from no other code until this
/// returns, so `init` may release the GIL while it writes.
fn new_bytes_with<'py>(
    py: Python<'py>,
    len: usize,
    init: impl FnOnce(&mut [MaybeUninit<u8>]) -> PyResult<()>,
) -> PyResult<Bound<'py, PyBytes>> {
    let size = ffi::Py_ssize_t::try_from(len)
        .map_err(|_| PyValueError::new_err(format!("batch of {len} bytes is too large")))?;
    // SAFETY: PyBytes_FromStringAndSize(NULL, size) returns a new reference to a bytes
    // object with `size` uninitialised bytes, or NULL with an exception set.
    // PyBytes_AsString on it points at those bytes, which stay valid while `bytes`
    // lives; MaybeUninit<u8> makes no claim about their contents.
    unsafe {
        let ptr = ffi::PyBytes_FromStringAndSize(std::ptr::null(), size);
        let bytes = Bound::from_owned_ptr_or_err(py, ptr)?.cast_into_unchecked::<PyBytes>();
        let data = ffi::PyBytes_AsString(ptr).cast::<MaybeUninit<u8>>();
        init(std::slice::from_raw_parts_mut(data, len))?;
        Ok(bytes)
    }
}

/// The arguments every generator takes after its table: `run_id`, `worker_id`, then
/// `start_seq`, checked in the Python path's order.
pub(crate) fn generator_args(
    run_id: &Bound<'_, PyAny>,
    worker_id: &Bound<'_, PyAny>,
    start_seq: &StartSeq<'_>,
) -> PyResult<(String, u64, u64)> {
    let run_id = run_id_arg(run_id)?.into_owned();
    let worker_id = int_arg(worker_id, "worker_id", 0, tables::MAX_WORKER_ID.into())?;
    let start_seq = match &start_seq.0 {
        Some(obj) => int_arg(obj, "start_seq", 0, tables::MAX_SEQ.into())?,
        None => 0,
    };
    // Both fit: `int_arg` checked them against ranges inside u64.
    Ok((run_id, worker_id as u64, start_seq as u64))
}

/// `gen`'s next batch as a new `bytes`, written with the GIL released.
pub(crate) fn next_batch<'py>(
    py: Python<'py>,
    gen: &mut Generator,
    n: &Bound<'py, PyAny>,
    sale_time_us: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let (n, sale_time_us) = batch_args(n, sale_time_us)?;
    let plan = gen.plan(n, sale_time_us)?;
    new_bytes_with(py, plan.len(), |buf| {
        py.detach(|| gen.write(&plan, buf)).map_err(PyErr::from)
    })
}

/// Deterministic resort sales for one worker, generated and written as NDJSON.
///
/// `next_batch` returns exactly what `elastic_channels.rows.ResortGenerator` returns
/// for the same arguments and the same prior calls; `batch_len` returns its length.
#[pyclass(module = "elastic_native._elastic_native", name = "ResortGenerator")]
pub struct ResortGenerator {
    inner: generator::ResortGenerator,
}

#[pymethods]
impl ResortGenerator {
    #[new]
    #[pyo3(
        signature = (run_id, worker_id, *, start_seq = StartSeq(None)),
        text_signature = "(run_id, worker_id, *, start_seq=0)"
    )]
    fn new(
        run_id: &Bound<'_, PyAny>,
        worker_id: &Bound<'_, PyAny>,
        start_seq: StartSeq<'_>,
    ) -> PyResult<Self> {
        let (run_id, worker_id, start_seq) = generator_args(run_id, worker_id, &start_seq)?;
        let inner = generator::ResortGenerator::new(&run_id, worker_id, start_seq)?;
        Ok(ResortGenerator { inner })
    }

    /// The sequence number of the next row.
    #[getter]
    fn seq(&self) -> u64 {
        self.inner.seq()
    }

    /// The next `n` rows, all stamped `sale_time_us` (Unix epoch microseconds), as
    /// NDJSON bytes. The GIL is released while the rows are written.
    fn next_batch<'py>(
        &mut self,
        py: Python<'py>,
        n: &Bound<'py, PyAny>,
        sale_time_us: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        next_batch(py, self.inner.generator(), n, sale_time_us)
    }

    /// `len(self.next_batch(n, sale_time_us))`, with the same checks, computed without
    /// writing the rows or advancing `seq`.
    ///
    /// The GIL stays held: the sizing takes constant time (a few table lookups), less
    /// than releasing and retaking the GIL would.
    fn batch_len(&self, n: &Bound<'_, PyAny>, sale_time_us: &Bound<'_, PyAny>) -> PyResult<usize> {
        let (n, sale_time_us) = batch_args(n, sale_time_us)?;
        Ok(self.inner.batch_len(n, sale_time_us)?)
    }

    /// The billable bytes (the values' bytes, by Snowflake's rule) of
    /// `self.next_batch(n, sale_time_us)`, with the same checks, computed without
    /// writing the rows or advancing `seq`.
    fn billable_len(
        &self,
        n: &Bound<'_, PyAny>,
        sale_time_us: &Bound<'_, PyAny>,
    ) -> PyResult<Option<u64>> {
        let (n, sale_time_us) = batch_args(n, sale_time_us)?;
        Ok(self.inner.billable_len(n, sale_time_us)?)
    }

    /// The billable bytes of the last batch `next_batch` wrote (None before the first),
    /// counted as it was sized.
    #[getter]
    fn last_billable_bytes(&self) -> Option<u64> {
        self.inner.last_billable()
    }

    fn __repr__(&self) -> String {
        format!("<elastic_native.ResortGenerator seq={}>", self.inner.seq())
    }
}

/// The billable bytes of an NDJSON body (Snowflake's rule, `crate::billable`): the
/// values of every line that is a JSON object, keys and structure left out. The GIL is
/// released while it reads.
#[pyfunction]
fn billable_bytes(py: Python<'_>, body: &Bound<'_, PyAny>) -> PyResult<u64> {
    let body = body.cast::<PyBytes>().map_err(|_| {
        let type_name = body
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default();
        PyTypeError::new_err(format!("body must be bytes, got {type_name}"))
    })?;
    let body = body.as_bytes();
    Ok(py.detach(|| crate::billable::body_billable_bytes(body)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ResortGenerator>()?;
    m.add_function(pyo3::wrap_pyfunction!(billable_bytes, m)?)?;
    crate::python_workload::register(m)?;
    crate::python_landing::register(m)?;
    m.add("TABLES_FINGERPRINT", tables::FINGERPRINT)?;
    m.add("TABLE_LENGTH", tables::TABLE_LENGTH)?;
    m.add("MAX_BATCH_ROWS", tables::MAX_BATCH_ROWS)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
