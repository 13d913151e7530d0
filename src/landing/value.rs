//! One JSON value into one typed column, by the column type's rule (the rules of
//! `python/elastic_channels/emulator/rowparse.py`, docs/EMULATOR.md).
//!
//! A value is taken here only when the rule's outcome is certain and the SQL path
//! lands the same value for it; anything else (refusals included) returns false, and
//! the whole line is left to the SQL path, which decides it and words its refusal.

use std::borrow::Cow;

use super::columns::{ColumnData, ColumnKind};
use super::number::{plain_decimal, scaled, significant_digits, Decimal};
use super::timestamp::{epoch_us, integer, parse_date, parse_iso};

/// The most significant digits a JSON number with a fraction may have: up to 15 the
/// SQL path's double (its JSON reader's) gives back the same decimal value.
const MAX_FLOAT_DIGITS: usize = 15;
/// The most digits a numeric string may have.
const MAX_STRING_DIGITS: usize = 38;

/// A JSON value as its raw text says: what each rule needs to know.
pub enum Json<'a> {
    Str(Cow<'a, str>),
    /// A number's text as sent.
    Num(&'a str),
    Bool(bool),
    /// null, an object or an array: no rule takes them.
    Other,
}

impl<'a> Json<'a> {
    /// `raw` is one valid JSON value's text (serde_json checked it).
    pub fn of(raw: &'a str) -> Option<Json<'a>> {
        Some(match raw.as_bytes().first()? {
            b'"' if !raw.contains('\\') => Json::Str(Cow::Borrowed(raw.get(1..raw.len() - 1)?)),
            b'"' => Json::Str(Cow::Owned(serde_json::from_str(raw).ok()?)),
            b't' => Json::Bool(true),
            b'f' => Json::Bool(false),
            b'n' | b'{' | b'[' => Json::Other,
            _ => Json::Num(raw),
        })
    }
}

/// `-?[0-9]+`: a JSON number without fraction or exponent.
fn is_integer(t: &str) -> bool {
    let body = t.strip_prefix('-').unwrap_or(t);
    !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit())
}

/// `-?digits[.digits][(e|E)[+-]digits]`: a decimal float literal.
fn is_float_literal(t: &str) -> bool {
    let t = t.strip_prefix('-').unwrap_or(t);
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let exp_ok = exp.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit())
    });
    exp_ok && plain_decimal(mantissa.as_bytes(), false).is_some()
}

pub fn push_str(out: &mut ColumnData, s: &str) {
    if let ColumnData::Utf8 { offsets, data } = out {
        data.extend_from_slice(s.as_bytes());
        offsets.push(data.len() as i64);
    }
}

/// NUMBER(precision, scale) from a JSON number without exponent (`d` its digits):
/// up to [`MAX_FLOAT_DIGITS`] significant digits if it has a fraction.
#[inline]
pub fn json_number(d: &Decimal<'_>, precision: u32, scale: u32) -> Option<i128> {
    // No more significant digits than digits: the count is needed for long ones only.
    let digits = d.int.len() + d.frac.len();
    if digits <= MAX_FLOAT_DIGITS || d.frac.is_empty() || significant_digits(d) <= MAX_FLOAT_DIGITS
    {
        scaled(d, precision, scale)
    } else {
        None
    }
}

/// TIMESTAMP from a JSON string: ISO-8601, else an integer epoch (blanks around it).
pub fn timestamp_text(s: &str, tz: bool) -> Option<i64> {
    parse_iso(s.as_bytes(), tz).or_else(|| epoch_us(integer(s.trim_matches(' ').as_bytes())?))
}

/// Casts `v` into `out` by `kind`'s rule; false (nothing pushed) if it is not taken.
pub fn cast(kind: ColumnKind, v: &Json<'_>, out: &mut ColumnData) -> bool {
    match (kind, v, out) {
        (ColumnKind::Varchar { max_chars }, v, out) => {
            let text = match v {
                Json::Str(s) => s.as_ref(),
                // The SQL path writes -0 as 0, and other numbers as its double's text.
                Json::Num(t) if is_integer(t) && *t != "-0" => t,
                Json::Bool(true) => "true",
                Json::Bool(false) => "false",
                _ => return false,
            };
            if max_chars.is_some_and(|n| text.len() > n && text.chars().count() > n) {
                return false;
            }
            push_str(out, text);
            true
        }
        (ColumnKind::Number { precision, scale }, v, ColumnData::Decimal(col)) => {
            let x = match v {
                Json::Str(s) => match plain_decimal(s.trim_matches(' ').as_bytes(), true) {
                    Some(d) if d.int.len() + d.frac.len() <= MAX_STRING_DIGITS => {
                        scaled(&d, precision, scale)
                    }
                    _ => None,
                },
                Json::Num(t) => plain_decimal(t.as_bytes(), false)
                    .and_then(|d| json_number(&d, precision, scale)),
                _ => None,
            };
            match x {
                Some(x) => {
                    col.push(x);
                    true
                }
                None => false,
            }
        }
        (ColumnKind::Timestamp { tz }, v, ColumnData::Micros(col)) => {
            let us = match v {
                Json::Str(s) => timestamp_text(s, tz),
                Json::Num(t) => integer(t.as_bytes()).and_then(epoch_us),
                _ => None,
            };
            match us {
                Some(us) => {
                    col.push(us);
                    true
                }
                None => false,
            }
        }
        (ColumnKind::Boolean, v, ColumnData::Bool(col)) => {
            let b = match v {
                Json::Bool(b) => *b,
                Json::Num(t) if is_integer(t) => t.bytes().any(|c| (b'1'..=b'9').contains(&c)),
                Json::Str(s) => match boolean_word(s.trim_matches(' ')) {
                    Some(b) => b,
                    None => return false,
                },
                _ => return false,
            };
            col.push(u8::from(b));
            true
        }
        (ColumnKind::Double, v, ColumnData::Float(col)) => {
            let x = match v {
                Json::Num("-0") => Some(0.0),
                Json::Num(t) => t.parse::<f64>().ok(),
                Json::Str(s) => {
                    let t = s.trim_matches(' ');
                    if is_float_literal(t) {
                        t.parse::<f64>().ok()
                    } else {
                        None
                    }
                }
                _ => None,
            }
            .filter(|x| x.is_finite());
            match x {
                Some(x) => {
                    col.push(x);
                    true
                }
                None => false,
            }
        }
        (ColumnKind::Date, Json::Str(s), ColumnData::Days(col)) => match parse_date(s.as_bytes()) {
            Some(d) => {
                col.push(d);
                true
            }
            None => false,
        },
        _ => false,
    }
}

/// Snowflake's boolean strings, in any case.
fn boolean_word(s: &str) -> Option<bool> {
    if s.len() > 5 {
        return None;
    }
    match s.to_ascii_lowercase().as_str() {
        "true" | "t" | "yes" | "y" | "on" | "1" => Some(true),
        "false" | "f" | "no" | "n" | "off" | "0" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(kind: ColumnKind, raw: &str) -> Option<Vec<Vec<u8>>> {
        let mut out = ColumnData::new(kind);
        cast(kind, &Json::of(raw)?, &mut out).then(|| out.into_buffers())
    }

    const N9: ColumnKind = ColumnKind::Number {
        precision: 9,
        scale: 0,
    };
    const V3: ColumnKind = ColumnKind::Varchar { max_chars: Some(3) };

    #[test]
    fn numbers_from_numbers_and_numeric_strings() {
        let le = |v: i128| Some(vec![v.to_le_bytes().to_vec()]);
        assert_eq!(one(N9, "3"), le(3));
        assert_eq!(one(N9, "\" 42 \""), le(42));
        assert_eq!(one(N9, "-1.5"), le(-2));
        assert_eq!(one(N9, "\"+1\""), le(1));
        assert_eq!(one(N9, "1e3"), None, "left to the SQL path");
        assert_eq!(
            one(N9, "0.1234567890123456"),
            None,
            "more digits than a double keeps"
        );
        assert_eq!(one(N9, "true"), None);
        assert_eq!(one(N9, "null"), None);
        assert_eq!(one(N9, "1000000000"), None);
    }

    #[test]
    fn varchar_in_characters() {
        assert!(one(V3, "\"äöü\"").is_some());
        assert!(one(V3, "\"abcd\"").is_none());
        assert!(one(V3, "123").is_some());
        assert!(one(V3, "1234").is_none());
        assert!(
            one(V3, "1.5").is_none(),
            "a fraction is the SQL path's double text"
        );
        assert_eq!(
            one(V3, "\"a\\/b\""),
            Some(vec![
                vec![0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0],
                b"a/b".to_vec()
            ])
        );
        assert!(one(V3, "{\"a\":1}").is_none());
    }

    #[test]
    fn booleans_and_doubles() {
        let b = ColumnKind::Boolean;
        assert_eq!(one(b, "\" YeS \""), Some(vec![vec![1]]));
        assert_eq!(one(b, "\"off\""), Some(vec![vec![0]]));
        assert_eq!(one(b, "0"), Some(vec![vec![0]]));
        assert_eq!(one(b, "-20"), Some(vec![vec![1]]));
        assert_eq!(one(b, "\"2\""), None);
        assert_eq!(one(b, "0.5"), None);
        let d = ColumnKind::Double;
        assert_eq!(
            one(d, "\" 1e3 \""),
            Some(vec![1000f64.to_le_bytes().to_vec()])
        );
        assert_eq!(one(d, "-0"), Some(vec![0f64.to_le_bytes().to_vec()]));
        assert_eq!(one(d, "\"NaN\""), None);
        assert_eq!(one(d, "1e400"), None);
    }
}
