//! SALE_TIME: Unix epoch microseconds as msgspec writes a UTC datetime.

use std::io::Write;

use time::OffsetDateTime;

use crate::error::{check_range, GenError};
use crate::tables::{MAX_SALE_TIME_US, MIN_SALE_TIME_US};

/// Appends `"YYYY-MM-DDTHH:MM:SS[.ffffff]Z"`, quotes included: RFC 3339 in UTC,
/// with six fractional digits only when the microseconds are not zero, exactly as
/// msgspec encodes a timezone-aware UTC `datetime`.
pub fn write_sale_time(sale_time_us: i64, out: &mut Vec<u8>) -> Result<(), GenError> {
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
        "\"{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    );
    if micros != 0 {
        let _ = write!(out, ".{micros:06}");
    }
    out.extend_from_slice(b"Z\"");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(us: i64) -> String {
        let mut out = Vec::new();
        write_sale_time(us, &mut out).unwrap();
        String::from_utf8(out).unwrap()
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

    #[test]
    fn range_edges() {
        assert_eq!(render(MIN_SALE_TIME_US), "\"0001-01-01T00:00:00Z\"");
        assert_eq!(render(MAX_SALE_TIME_US), "\"9999-12-31T23:59:59.999999Z\"");
        let mut out = Vec::new();
        let err = write_sale_time(MAX_SALE_TIME_US + 1, &mut out).unwrap_err();
        assert!(err.to_string().starts_with("sale_time_us must be between"));
        assert!(write_sale_time(MIN_SALE_TIME_US - 1, &mut out).is_err());
        assert!(out.is_empty());
    }
}
