//! TIMESTAMP_* and DATE values: strict ISO-8601 text, or integer epochs by magnitude.
//!
//! Only the plain forms are read here: `YYYY-MM-DD`, then optionally `T` or a space,
//! `HH:MM`, optionally `:SS` and 1-9 fractional digits (kept to the microsecond, the
//! rest dropped), then for TIMESTAMP_TZ optionally `Z`, `+HH`, `+HHMM` or `+HH:MM`.
//! Anything else is left to the SQL path, which decides it (see `row.rs`).

const US_PER_S: i64 = 1_000_000;
const US_PER_DAY: i64 = 86_400 * US_PER_S;

/// Days from 1970-01-01 to `y-m-d` (proleptic Gregorian), as `time`'s algorithm.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

/// `s` (1 to 9 ASCII digits) as a number.
#[inline]
fn digits(s: &[u8]) -> Option<u32> {
    if s.is_empty() {
        return None;
    }
    let mut v = 0u32;
    for &b in s {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        v = v * 10 + u32::from(digit);
    }
    Some(v)
}

/// `YYYY-MM-DD` at the start of `s`: (days since the epoch, the rest of `s`).
fn date_prefix(s: &[u8]) -> Option<(i64, &[u8])> {
    if s.len() < 10 || s[4] != b'-' || s[7] != b'-' {
        return None;
    }
    let y = i64::from(digits(&s[..4])?);
    let m = digits(&s[5..7])?;
    let d = digits(&s[8..10])?;
    if y < 1 || !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    Some((days_from_civil(y, m, d), &s[10..]))
}

/// A DATE: exactly `YYYY-MM-DD`, as days since the epoch.
pub fn parse_date(s: &[u8]) -> Option<i32> {
    match date_prefix(s)? {
        (days, []) => i32::try_from(days).ok(),
        _ => None,
    }
}

/// `HH:MM[:SS[.f{1,9}]]` at the start of `s`: (µs into the day, the rest).
fn time_prefix(s: &[u8]) -> Option<(i64, &[u8])> {
    if s.len() < 5 || s[2] != b':' {
        return None;
    }
    let h = digits(&s[..2])?;
    let m = digits(&s[3..5])?;
    let mut rest = &s[5..];
    let mut sec = 0;
    let mut frac_us = 0;
    if rest.first() == Some(&b':') {
        sec = digits(rest.get(1..3)?)?;
        rest = &rest[3..];
        if rest.first() == Some(&b'.') {
            let n = rest[1..].iter().take_while(|b| b.is_ascii_digit()).count();
            if !(1..=9).contains(&n) {
                return None;
            }
            let kept = &rest[1..1 + n.min(6)];
            frac_us = digits(kept)? * 10u32.pow(6 - kept.len() as u32);
            rest = &rest[1 + n..];
        }
    }
    if h > 23 || m > 59 || sec > 59 {
        return None;
    }
    let us = (i64::from(h) * 3600 + i64::from(m) * 60 + i64::from(sec)) * US_PER_S;
    Some((us + i64::from(frac_us), rest))
}

/// `Z`, `+HH`, `+HHMM` or `+HH:MM` (or `-`), the whole of `s`: the offset in µs.
fn offset(s: &[u8]) -> Option<i64> {
    let sign = match s.first()? {
        b'Z' if s.len() == 1 => return Some(0),
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let (h, m) = match s.len() {
        3 => (digits(&s[1..3])?, 0),
        5 => (digits(&s[1..3])?, digits(&s[3..5])?),
        6 if s[3] == b':' => (digits(&s[1..3])?, digits(&s[4..6])?),
        _ => return None,
    };
    if h > 15 || m > 59 {
        return None;
    }
    Some(sign * (i64::from(h) * 3600 + i64::from(m) * 60) * US_PER_S)
}

/// An ISO-8601 timestamp as µs since the epoch (UTC); an offset only when `with_offset`.
pub fn parse_iso(s: &[u8], with_offset: bool) -> Option<i64> {
    let (days, rest) = date_prefix(s)?;
    let mut us = days * US_PER_DAY;
    if rest.is_empty() {
        return Some(us);
    }
    if rest[0] != b'T' && rest[0] != b' ' {
        return None;
    }
    let (time_us, rest) = time_prefix(&rest[1..])?;
    us += time_us;
    if rest.is_empty() {
        return Some(us);
    }
    if !with_offset {
        return None;
    }
    Some(us - offset(rest)?)
}

/// The limits between epoch units: below 31536000000 (the ms in a year) seconds,
/// then milliseconds, microseconds, nanoseconds (Snowflake's rule for integers).
const EPOCH_EDGE: i64 = 31_536_000_000;

/// An integer epoch in µs, its unit by magnitude; None for `i64::MIN` (no magnitude).
pub fn epoch_us(n: i64) -> Option<i64> {
    let a = n.checked_abs()?;
    Some(if a < EPOCH_EDGE {
        n * US_PER_S
    } else if a < EPOCH_EDGE * 1000 {
        n * 1000
    } else if a < EPOCH_EDGE * 1_000_000 {
        n
    } else {
        n / 1000
    })
}

/// `-?[0-9]+` as an i64 (None if it is not, or does not fit).
pub fn integer(s: &[u8]) -> Option<i64> {
    let body = s.strip_prefix(b"-").unwrap_or(s);
    if body.is_empty() || !body.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(s).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_700_000_000 * US_PER_S; // 2023-11-14T22:13:20Z

    #[test]
    fn reads_iso_forms() {
        let iso = |s: &str| parse_iso(s.as_bytes(), true);
        assert_eq!(iso("2023-11-14T22:13:20Z"), Some(T0));
        assert_eq!(iso("2023-11-14 23:13:20+01:00"), Some(T0));
        assert_eq!(iso("2023-11-14T23:13:20+0100"), Some(T0));
        assert_eq!(iso("2023-11-14T17:13:20-05"), Some(T0));
        assert_eq!(iso("2023-11-14T22:13:20.123456789Z"), Some(T0 + 123_456));
        assert_eq!(iso("2023-11-14T22:13:20.9999999"), Some(T0 + 999_999));
        assert_eq!(iso("2023-11-14T22:13:20.1"), Some(T0 + 100_000));
        assert_eq!(iso("2023-11-14T22:13"), Some(T0 - 20 * US_PER_S));
        assert_eq!(
            iso("2023-11-14"),
            Some(T0 - (22 * 3600 + 13 * 60 + 20) * US_PER_S)
        );
        assert_eq!(iso("1970-01-01"), Some(0));
        assert_eq!(iso("0001-01-01"), Some(-62_135_596_800 * US_PER_S));
    }

    #[test]
    fn leaves_other_forms_alone() {
        for s in [
            "2023-11-14T22:13:20.1234567891Z",
            "2023-11-14T22:13:20.Z",
            "2023-13-14",
            "2023-02-29",
            "2023-11-14T24:00:00",
            "2023-11-14t22:13:20",
            "2023-11-14T22:13:20 UTC",
            "2023-11-14T22:13:20+25:00",
            " 2023-11-14",
            "2023-11-14 ",
            "20231114",
            "0000-01-01",
            "2023-11-14Z",
            "infinity",
        ] {
            assert_eq!(parse_iso(s.as_bytes(), true), None, "{s}");
        }
        assert_eq!(parse_iso(b"2023-11-14T22:13:20Z", false), None);
        assert_eq!(parse_iso(b"2023-11-14T22:13:20", false), Some(T0));
    }

    #[test]
    fn reads_dates() {
        assert_eq!(parse_date(b"1970-01-02"), Some(1));
        assert_eq!(parse_date(b"2024-02-29"), Some(19782));
        assert_eq!(parse_date(b"2023-02-29"), None);
        assert_eq!(parse_date(b"2023-01-02T00:00:00"), None);
    }

    #[test]
    fn epoch_units_by_magnitude_on_both_sides_of_each_edge() {
        assert_eq!(epoch_us(1_700_000_000), Some(T0));
        assert_eq!(epoch_us(31_535_999_999), Some(31_535_999_999 * US_PER_S));
        assert_eq!(epoch_us(31_536_000_000), Some(31_536_000_000_000));
        assert_eq!(epoch_us(-31_536_000_000), Some(-31_536_000_000_000));
        assert_eq!(epoch_us(31_536_000_000_000), Some(31_536_000_000_000));
        assert_eq!(epoch_us(31_536_000_000_000_000), Some(31_536_000_000_000));
        assert_eq!(epoch_us(1_700_000_000_123_456_789), Some(T0 + 123_456));
        assert_eq!(epoch_us(i64::MAX), Some(i64::MAX / 1000));
        assert_eq!(epoch_us(i64::MIN), None);
        assert_eq!(integer(b"-0"), Some(0));
        assert_eq!(integer(b"9223372036854775808"), None);
        assert_eq!(integer(b"+1"), None);
        assert_eq!(integer(b"1.0"), None);
    }
}
