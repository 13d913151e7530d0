//! The one error type, and its one conversion to Python exceptions.

use std::fmt;

use crate::tables::MAX_SEQ;

/// Bad input to the generator. Every variant names the argument at fault, with the
/// same wording as the Python path's errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GenError {
    /// An integer argument outside its documented range.
    OutOfRange {
        arg: &'static str,
        value: i128,
        min: i128,
        max: i128,
    },
    /// `n` more rows would carry the sequence number past `MAX_SEQ`.
    SeqExhausted { n: u64, seq: u64 },
    /// The run id has more characters than `MAX_RUN_ID_CHARS`.
    RunIdTooLong { chars: usize, max: usize },
    /// A column given to the row parser that it cannot parse into.
    BadColumn { index: usize, reason: String },
    /// The output buffer is not the size the batch plan promised (a caller bug).
    BufferSize { expected: usize, got: usize },
    /// A replay table that cannot be replayed; the text names the argument and why.
    BadTable(String),
    /// A batch larger than memory can address.
    TooLarge { bytes: u128 },
}

impl fmt::Display for GenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GenError::OutOfRange {
                arg,
                value,
                min,
                max,
            } => write!(f, "{arg} must be between {min} and {max}, got {value}"),
            GenError::SeqExhausted { n, seq } => write!(
                f,
                "n={n} would carry seq past {MAX_SEQ} (next seq is {seq})"
            ),
            GenError::RunIdTooLong { chars, max } => {
                write!(f, "run_id must be at most {max} characters, got {chars}")
            }
            GenError::BadColumn { index, reason } => write!(f, "columns[{index}]: {reason}"),
            GenError::BufferSize { expected, got } => write!(
                f,
                "output buffer holds {got} bytes but the batch needs {expected}"
            ),
            GenError::BadTable(what) => f.write_str(what),
            GenError::TooLarge { bytes } => write!(f, "a batch of {bytes} bytes is too large"),
        }
    }
}

impl std::error::Error for GenError {}

/// Checks `value` lies in `min..=max`, naming `arg` when it does not.
pub fn check_range(arg: &'static str, value: i128, min: i128, max: i128) -> Result<(), GenError> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(GenError::OutOfRange {
            arg,
            value,
            min,
            max,
        })
    }
}

#[cfg(feature = "python")]
impl From<GenError> for pyo3::PyErr {
    fn from(err: GenError) -> Self {
        match err {
            GenError::BufferSize { .. } => {
                pyo3::exceptions::PyRuntimeError::new_err(err.to_string())
            }
            _ => pyo3::exceptions::PyValueError::new_err(err.to_string()),
        }
    }
}
