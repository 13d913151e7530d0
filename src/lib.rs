//! `elastic_native`: synthetic resort point-of-sale rows, generated and written as
//! NDJSON byte-identical to what msgspec's `encode_lines` makes of the Python model.
//!
//! Every value comes from [`tables`], which `codegen/generate_tables.py` bakes from
//! the `python/elastic_channels/model/` package; this crate only replays it.

pub mod error;
pub mod generator;
pub mod landing;
#[cfg(feature = "python")]
mod python;
#[cfg(feature = "python")]
mod python_landing;
mod sale_time;
pub mod tables;
mod writer;

pub use error::GenError;
pub use generator::{BatchPlan, ResortGenerator};
pub use tables::FINGERPRINT;

/// The native module, `elastic_native._elastic_native`.
#[cfg(feature = "python")]
#[pyo3::pymodule]
fn _elastic_native(m: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
    python::register(m)
}
