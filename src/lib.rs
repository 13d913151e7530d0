//! `elastic_native`: synthetic rows, generated and written as NDJSON byte-identical to
//! what msgspec's `encode_lines` makes of the Python side's rows.
//!
//! Every value comes from a [`table::ReplayTable`]: the resort sales' is compiled in
//! ([`tables`], which `codegen/generate_tables.py` bakes from the
//! `python/elastic_channels/model/` package), a workload's arrives at runtime, resolved
//! and rendered by `python/elastic_channels/workload/`. This crate only replays them.

pub mod billable;
pub mod error;
pub mod generator;
pub mod landing;
#[cfg(feature = "python")]
mod python;
#[cfg(feature = "python")]
mod python_landing;
#[cfg(feature = "python")]
mod python_workload;
mod sale_time;
pub mod table;
pub mod tables;
mod writer;

pub use error::GenError;
pub use generator::{BatchPlan, Generator, ResortGenerator};
pub use sale_time::TimeForm;
pub use table::{ReplayTable, Token, Values};
pub use tables::FINGERPRINT;

/// The native module, `elastic_native._elastic_native`.
#[cfg(feature = "python")]
#[pyo3::pymodule]
fn _elastic_native(m: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
    python::register(m)
}
