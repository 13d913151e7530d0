//! NUMBER(p,s) from decimal text: rounded half away from zero to `s` decimals by its
//! digits (never through a float), refused when it then needs more than `p` digits.

/// The digits of a plain decimal literal: `[+-]?digits[.digits]`, no exponent.
pub struct Decimal<'a> {
    pub negative: bool,
    pub int: &'a [u8],
    pub frac: &'a [u8],
}

/// `text` as a plain decimal literal (`sign` allows a leading `+`), else None.
/// At least one digit before the point, and at least one after it if there is a point.
pub fn plain_decimal(text: &[u8], allow_plus: bool) -> Option<Decimal<'_>> {
    let (negative, rest) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') if allow_plus => (false, &text[1..]),
        _ => (false, text),
    };
    let (int, frac) = match rest.iter().position(|&b| b == b'.') {
        Some(dot) => (&rest[..dot], &rest[dot + 1..]),
        None => (rest, &rest[rest.len()..]),
    };
    let has_dot = int.len() != rest.len();
    if int.is_empty() || (has_dot && frac.is_empty()) {
        return None;
    }
    if !int.iter().chain(frac).all(u8::is_ascii_digit) {
        return None;
    }
    Some(Decimal {
        negative,
        int,
        frac,
    })
}

/// 10^0 ..= 10^38.
const POW10: [i128; 39] = {
    let mut p = [1i128; 39];
    let mut i = 1;
    while i < 39 {
        p[i] = p[i - 1] * 10;
        i += 1;
    }
    p
};

/// 10^0 ..= 10^18.
const POW10_U64: [u64; 19] = {
    let mut p = [1u64; 19];
    let mut i = 1;
    while i < 19 {
        p[i] = p[i - 1] * 10;
        i += 1;
    }
    p
};

/// `digits` appended to `v` in decimal; `v`'s digits and `digits` at most 19 in all.
#[inline]
fn append_u64(mut v: u64, digits: &[u8]) -> u64 {
    for &b in digits {
        v = v * 10 + u64::from(b - b'0');
    }
    v
}

/// `d` scaled by 10^scale and rounded half away from zero, if it fits `precision`
/// digits (`precision <= 38`, `scale <= precision`); None if it does not.
#[inline]
pub fn scaled(d: &Decimal<'_>, precision: u32, scale: u32) -> Option<i128> {
    let (precision, scale) = (precision as usize, scale as usize);
    if precision <= 18 && d.frac.len() <= scale && d.int.len() + scale <= 18 {
        // The usual case: no rounding, at most 18 digits, in one machine word (a
        // value below 10^precision also has at most precision - scale whole digits).
        let v = append_u64(append_u64(0, d.int), d.frac) * POW10_U64[scale - d.frac.len()];
        if v >= POW10_U64[precision] {
            return None;
        }
        let v = i128::from(v);
        return Some(if d.negative { -v } else { v });
    }
    scaled_rounded(d, precision, scale)
}

/// [`scaled`] of the other cases: rounded, or more than 18 digits.
#[inline(never)]
fn scaled_rounded(d: &Decimal<'_>, precision: usize, scale: usize) -> Option<i128> {
    let int = trim_leading_zeros(d.int);
    if int.len() > precision - scale {
        return None;
    }
    let kept = &d.frac[..scale.min(d.frac.len())];
    let padding = scale - kept.len();
    let round_up = d.frac.get(scale).is_some_and(|&b| b >= b'5');
    let v = if precision <= 18 {
        // At most `precision` digits before rounding, so at most 10^18 after: one
        // machine word throughout.
        let v = append_u64(append_u64(0, int), kept) * POW10_U64[padding];
        i128::from(v + u64::from(round_up))
    } else {
        let mut v: i128 = 0;
        for &b in int.iter().chain(kept) {
            v = v * 10 + i128::from(b - b'0');
        }
        v * POW10[padding] + i128::from(round_up)
    };
    if v >= POW10[precision] {
        return None;
    }
    Some(if d.negative { -v } else { v })
}

fn trim_leading_zeros(digits: &[u8]) -> &[u8] {
    let zeros = digits.iter().take_while(|&&b| b == b'0').count();
    &digits[zeros..]
}

/// How many significant digits `d` has (leading and trailing zeros not counted).
pub fn significant_digits(d: &Decimal<'_>) -> usize {
    let int = trim_leading_zeros(d.int);
    let all = int.len() + d.frac.len();
    if int.is_empty() {
        let lead = d.frac.iter().take_while(|&&b| b == b'0').count();
        let trail = d.frac[lead..]
            .iter()
            .rev()
            .take_while(|&&b| b == b'0')
            .count();
        return d.frac.len() - lead - trail;
    }
    let trail = d.frac.iter().rev().take_while(|&&b| b == b'0').count();
    all - trail
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(text: &str, p: u32, s: u32) -> Option<i128> {
        scaled(&plain_decimal(text.as_bytes(), true)?, p, s)
    }

    #[test]
    fn rounds_half_away_from_zero_by_digits() {
        assert_eq!(num("1.5", 9, 0), Some(2));
        assert_eq!(num("-1.5", 9, 0), Some(-2));
        assert_eq!(num("1.49", 9, 0), Some(1));
        assert_eq!(num("1.005", 12, 2), Some(101));
        assert_eq!(num("0.12499999999999999999", 12, 2), Some(12));
        assert_eq!(num("-0.125", 12, 2), Some(-13));
        assert_eq!(num("-0.001", 12, 2), Some(0));
        assert_eq!(num("+7", 9, 0), Some(7));
    }

    #[test]
    fn refuses_what_does_not_fit_or_is_not_plain() {
        assert_eq!(num("999999999", 9, 0), Some(999_999_999));
        assert_eq!(num("1000000000", 9, 0), None);
        assert_eq!(num("999999999.5", 9, 0), None);
        assert_eq!(num("9999999999.995", 12, 2), None);
        assert_eq!(
            num("00000000000000000000000000000000000000000001", 38, 0),
            Some(1)
        );
        assert_eq!(num(&"9".repeat(38), 38, 0), Some(10i128.pow(38) - 1));
        assert_eq!(num(&"9".repeat(39), 38, 0), None);
        for bad in [
            "", "-", "+", ".5", "5.", "1e3", "1 0", "0x10", "1_000", "--1",
        ] {
            assert!(plain_decimal(bad.as_bytes(), true).is_none(), "{bad}");
        }
        assert!(plain_decimal(b"+1", false).is_none());
    }

    /// The rule as first written: digit by digit in i128.
    fn reference(d: &Decimal<'_>, precision: u32, scale: u32) -> Option<i128> {
        let int = trim_leading_zeros(d.int);
        if int.len() > (precision - scale) as usize {
            return None;
        }
        let mut v: i128 = 0;
        for &b in int {
            v = v * 10 + i128::from(b - b'0');
        }
        for i in 0..scale as usize {
            v = v * 10 + i128::from(d.frac.get(i).map_or(0, |&b| b - b'0'));
        }
        if d.frac.get(scale as usize).is_some_and(|&b| b >= b'5') {
            v += 1;
        }
        if v >= 10i128.pow(precision) {
            return None;
        }
        Some(if d.negative { -v } else { v })
    }

    #[test]
    fn scales_as_the_digit_by_digit_rule() {
        let ints = [
            "0",
            "00",
            "1",
            "007",
            "9",
            "99",
            "12345",
            "999999999",
            "1000000000",
        ];
        let ints = ints.map(String::from).into_iter().chain([
            "9".repeat(17),
            "9".repeat(18),
            "9".repeat(19),
            "1".repeat(30),
            "9".repeat(38),
        ]);
        let fracs = [
            "",
            "0",
            "5",
            "49",
            "50",
            "995",
            "1249999",
            "000000000000000000001",
        ];
        for int in ints {
            for frac in fracs {
                for negative in [false, true] {
                    let d = Decimal {
                        negative,
                        int: int.as_bytes(),
                        frac: frac.as_bytes(),
                    };
                    for precision in [1, 2, 9, 10, 12, 14, 17, 18, 19, 20, 38] {
                        for scale in [0, 1, 2, 3, 9, precision / 2, precision] {
                            if scale <= precision {
                                assert_eq!(
                                    scaled(&d, precision, scale),
                                    reference(&d, precision, scale),
                                    "{negative} {int}.{frac} ({precision},{scale})"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn counts_significant_digits() {
        let sig = |t: &str| significant_digits(&plain_decimal(t.as_bytes(), false).unwrap());
        assert_eq!(sig("0.00120"), 2);
        assert_eq!(sig("100.0"), 3);
        assert_eq!(sig("12.340"), 4);
        assert_eq!(sig("0.0"), 0);
    }
}
