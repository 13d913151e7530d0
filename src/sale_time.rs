//! The send time (SALE_TIME): Unix epoch microseconds as msgspec writes a UTC datetime,
//! a naive datetime or a date.

use std::io::Write;

use time::OffsetDateTime;

use crate::error::{check_range, GenError};
use crate::tables::{MAX_SALE_TIME_US, MIN_SALE_TIME_US};

/// How a send time is written: as msgspec writes a UTC `datetime` (`Tz`), the same
/// `datetime` without its time zone (`Ntz`), or its `date` (`Date`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeForm {
    Tz,
    Ntz,
    Date,
}

impl TimeForm {
    /// The form a template names: `tz`, `ntz` or `date`.
    pub fn from_name(name: &[u8]) -> Option<TimeForm> {
        match name {
            b"tz" => Some(TimeForm::Tz),
            b"ntz" => Some(TimeForm::Ntz),
            b"date" => Some(TimeForm::Date),
            _ => None,
        }
    }
}

/// Appends the send time in `form`, quotes included. `Tz`:
/// `"YYYY-MM-DDTHH:MM:SS[.ffffff]Z"`, RFC 3339 in UTC with six fractional digits only
/// when the microseconds are not zero, exactly as msgspec encodes a timezone-aware UTC
/// `datetime`; `Ntz` the same without the `Z` (a naive `datetime`); `Date` only
/// `"YYYY-MM-DD"` (the UTC date).
pub fn write_time(sale_time_us: i64, form: TimeForm, out: &mut Vec<u8>) -> Result<(), GenError> {
    check_range(
        "sale_time_us",
        sale_time_us.into(),
        MIN_SALE_TIME_US.into(),
        MAX_SALE_TIME_US.into(),
    )?;
    let seconds = sale_time_us.div_euclid(1_000_000);
    let micros = sale_time_us.rem_euclid(1_000_000);
    let t = OffsetDateTime::from_unix_timestamp(seconds).map_err(|_| GenError::OutOfRange {
        arg: "sale_time_us",
        value: sale_time_us.into(),
        min: MIN_SALE_TIME_US.into(),
        max: MAX_SALE_TIME_US.into(),
    })?;
    // Writing to a Vec cannot fail.
    let _ = write!(
        out,
        "\"{:04}-{:02}-{:02}",
        t.year(),
        u8::from(t.month()),
        t.day()
    );
    if form == TimeForm::Date {
        out.push(b'"');
        return Ok(());
    }
    let _ = write!(out, "T{:02}:{:02}:{:02}", t.hour(), t.minute(), t.second());
    if micros != 0 {
        let _ = write!(out, ".{micros:06}");
    }
    out.extend_from_slice(if form == TimeForm::Tz { b"Z\"" } else { b"\"" });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(us: i64) -> String {
        render_in(us, TimeForm::Tz)
    }

    #[test]
    fn epoch_and_whole_seconds_have_no_fraction() {
        assert_eq!(render(0), "\"1970-01-01T00:00:00Z\"");
        assert_eq!(render(1_764_470_646_000_000), "\"2025-11-30T02:44:06Z\"");
    }

    #[test]
    fn fraction_is_six_digits() {
        assert_eq!(render(120_000), "\"1970-01-01T00:00:00.120000Z\"");
        assert_eq!(render(1), "\"1970-01-01T00:00:00.000001Z\"");
    }

    #[test]
    fn before_the_epoch_and_leap_days() {
        assert_eq!(render(-1), "\"1969-12-31T23:59:59.999999Z\"");
        assert_eq!(render(951_782_400_000_000), "\"2000-02-29T00:00:00Z\"");
    }

    fn render_in(us: i64, form: TimeForm) -> String {
        let mut out = Vec::new();
        write_time(us, form, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn naive_and_date_forms() {
        assert_eq!(
            render_in(120_000, TimeForm::Ntz),
            "\"1970-01-01T00:00:00.120000\""
        );
        assert_eq!(render_in(0, TimeForm::Ntz), "\"1970-01-01T00:00:00\"");
        assert_eq!(render_in(-1, TimeForm::Date), "\"1969-12-31\"");
        assert_eq!(
            render_in(MAX_SALE_TIME_US, TimeForm::Date),
            "\"9999-12-31\""
        );
        assert_eq!(TimeForm::from_name(b"ntz"), Some(TimeForm::Ntz));
        assert_eq!(TimeForm::from_name(b"utc"), None);
    }

    #[test]
    fn range_edges() {
        assert_eq!(render(MIN_SALE_TIME_US), "\"0001-01-01T00:00:00Z\"");
        assert_eq!(render(MAX_SALE_TIME_US), "\"9999-12-31T23:59:59.999999Z\"");
        let mut out = Vec::new();
        let err = write_time(MAX_SALE_TIME_US + 1, TimeForm::Tz, &mut out).unwrap_err();
        assert!(err.to_string().starts_with("sale_time_us must be between"));
        assert!(write_time(MIN_SALE_TIME_US - 1, TimeForm::Tz, &mut out).is_err());
        assert!(out.is_empty());
    }
}
