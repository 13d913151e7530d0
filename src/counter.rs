//! The sequence number as a decimal counter kept in ASCII.
//!
//! Consecutive rows carry consecutive numbers, so rather than format each one, the
//! writer keeps the digits and adds one in place (a carry past the last digit is
//! rare: one row in ten). The digits sit zero padded in one 32-byte word, which the
//! writer copies whole.

/// Bytes in the counter's word; `u64::MAX` has 20 digits.
pub const WORD: usize = 32;

#[derive(Debug, Clone)]
pub struct DecimalCounter {
    word: [u8; WORD],
    len: usize,
}

impl DecimalCounter {
    pub fn new(value: u64) -> Self {
        let mut word = [0u8; WORD];
        let mut buf = itoa::Buffer::new();
        let digits = buf.format(value).as_bytes();
        word[..digits.len()].copy_from_slice(digits);
        DecimalCounter {
            word,
            len: digits.len(),
        }
    }

    /// The digits, zero padded to a word.
    #[inline]
    pub fn word(&self) -> &[u8; WORD] {
        &self.word
    }

    /// The digits alone.
    #[inline]
    pub fn digits(&self) -> &[u8] {
        &self.word[..self.len]
    }

    /// Adds one. The caller keeps the value below `u64::MAX`.
    #[inline]
    pub fn increment(&mut self) {
        for digit in self.word[..self.len].iter_mut().rev() {
            if *digit != b'9' {
                *digit += 1;
                return;
            }
            *digit = b'0';
        }
        // Every digit was a 9: 99..9 + 1 = 100..0, one digit longer.
        self.word[0] = b'1';
        self.word[self.len] = b'0';
        self.len += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_like_formatting_each_number() {
        let starts = [0u64, 8, 95, 998, 999_990, 9_223_372_036_854_775_700];
        for start in starts {
            let mut c = DecimalCounter::new(start);
            for v in start..start + 120 {
                assert_eq!(c.digits(), v.to_string().as_bytes(), "at {v}");
                assert!(c.word()[c.digits().len()..].iter().all(|&b| b == 0));
                c.increment();
            }
        }
    }
}
