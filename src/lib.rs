//! `elastic_native`: synthetic resort point-of-sale rows, generated and written as
//! NDJSON byte-identical to what msgspec's `encode_lines` makes of the Python model.
//!
//! Every value comes from [`tables`], which `codegen/generate_tables.py` bakes from
//! `python/elastic_channels/resort_sales.py`; this crate only replays it.

mod counter;
pub mod error;
pub mod generator;
mod pieces;
mod prefetch;
#[cfg(feature = "python")]
mod python;
mod sale_time;
pub mod tables;

pub use error::GenError;
pub use generator::{BatchPlan, ResortGenerator};
pub use tables::FINGERPRINT;

/// The native module, `elastic_native._elastic_native`.
#[cfg(feature = "python")]
#[pyo3::pymodule]
fn _elastic_native(m: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
    python::register(m)
}
