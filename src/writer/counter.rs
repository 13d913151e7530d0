//! The sequence number as a decimal counter kept in ASCII.
//!
//! Consecutive rows carry consecutive numbers, so rather than format each one, the
//! writer keeps the digits and adds one. The last digit is kept apart, in a register:
//! it changes on every row, and storing it into the word that is then read whole
//! would stall every row (a wide load cannot take its data from a narrower store
//! still in flight). The other digits change one row in ten; they sit zero padded in
//! a 32-byte word, which is copied whole, and the last digit is then stored over it.

use std::mem::MaybeUninit;

/// Bytes the counter writes at most; `u64::MAX` has 20 digits.
pub const WORD: usize = 32;

#[derive(Debug, Clone)]
pub struct DecimalCounter {
    /// Every digit but the last, zero padded.
    head: [u8; WORD],
    /// The last digit, in ASCII.
    last: u8,
    /// Number of digits, the last included.
    len: usize,
}

impl DecimalCounter {
    pub fn new(value: u64) -> Self {
        let mut buf = itoa::Buffer::new();
        let digits = buf.format(value).as_bytes();
        let (last, head_digits) = digits.split_last().expect("itoa writes a digit");
        let mut head = [0u8; WORD];
        head[..head_digits.len()].copy_from_slice(head_digits);
        DecimalCounter {
            head,
            last: *last,
            len: digits.len(),
        }
    }

    /// Writes the digits at `out[pos..]`, and may write anything up to `pos + WORD`;
    /// returns the position after the digits.
    #[inline(always)]
    pub fn write(&self, out: &mut [MaybeUninit<u8>], pos: usize) -> usize {
        out[pos..pos + WORD].write_copy_of_slice(&self.head);
        out[pos + self.len - 1].write(self.last);
        pos + self.len
    }

    /// Writes exactly the digits at `out[pos..]`; returns the position after them.
    #[inline(always)]
    pub fn write_exact(&self, out: &mut [MaybeUninit<u8>], pos: usize) -> usize {
        let end = pos + self.len;
        out[pos..end - 1].write_copy_of_slice(&self.head[..self.len - 1]);
        out[end - 1].write(self.last);
        end
    }

    /// Adds one. The caller keeps the value below `u64::MAX`.
    #[inline(always)]
    pub fn increment(&mut self) {
        if self.last != b'9' {
            self.last += 1;
            return;
        }
        self.last = b'0';
        self.carry();
    }

    /// Adds one to every digit but the last (one row in ten).
    #[cold]
    fn carry(&mut self) {
        let head_len = self.len - 1;
        for digit in self.head[..head_len].iter_mut().rev() {
            if *digit != b'9' {
                *digit += 1;
                return;
            }
            *digit = b'0';
        }
        // Every digit was a 9: 99..9 + 1 = 100..0, one digit longer (the zero first,
        // as with one digit both land on byte 0).
        self.head[head_len] = b'0';
        self.head[0] = b'1';
        self.len += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_like_formatting_each_number() {
        // Every width change from 1 to 20 digits, and the last seq a row may carry.
        let powers = (1..=19).map(|k| 10u64.pow(k) - 3);
        let starts = [0u64, 999_990, 9_223_372_036_854_775_700].into_iter();
        for start in starts.chain(powers) {
            let mut c = DecimalCounter::new(start);
            for v in start..start + 120 {
                let want = v.to_string();
                let mut word = [MaybeUninit::new(b'x'); WORD + 1];
                let mut exact = [MaybeUninit::new(b'x'); WORD + 1];
                let end = c.write(&mut word, 1);
                assert_eq!(c.write_exact(&mut exact, 1), end, "at {v}");
                // SAFETY: every byte of both was initialised above.
                let init = |out: &[MaybeUninit<u8>]| -> Vec<u8> {
                    out.iter().map(|b| unsafe { b.assume_init() }).collect()
                };
                let (word, exact) = (init(&word), init(&exact));
                assert_eq!(end, 1 + want.len(), "at {v}");
                assert_eq!(&word[..end], format!("x{want}").as_bytes(), "at {v}");
                assert_eq!(&exact[..end], format!("x{want}").as_bytes(), "at {v}");
                assert!(
                    exact[end..].iter().all(|&b| b == b'x'),
                    "at {v}: wrote past"
                );
                c.increment();
            }
        }
    }
}
