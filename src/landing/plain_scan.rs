//! The tokens of a plain line (`plain_line.rs`), read by hand: blanks, strings
//! without escapes, RFC 8259 numbers and the three literals. Each reader takes
//! exactly what serde_json would read as that token, or says it is not sure.

use super::number::Decimal;

/// Not sure: let `line.rs` decide the line.
#[derive(Debug)]
pub struct NotPlain;

/// A value as a plain line spells it.
pub enum Plain<'a> {
    /// A string's text, which has no escape (so it is the string's value).
    Str(&'a str),
    /// A number's text as sent, and its digits when it has no exponent.
    Num(&'a str, Option<Decimal<'a>>),
    Bool(bool),
    Null,
}

const ONES: u64 = u64::from_le_bytes([0x01; 8]);
const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);

/// A high bit in each byte of `word` below `n` (`n <= 0x80`); exact for the lowest
/// such byte (a borrow only marks bytes above a true one).
fn bytes_below(word: u64, n: u8) -> u64 {
    word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS
}

/// A high bit in each byte of `word` equal to `b`; exact for the lowest one.
fn bytes_equal(word: u64, b: u8) -> u64 {
    bytes_below(word ^ (ONES * u64::from(b)), 1)
}

/// Where in `s` the first `"`, `\` or control character is, eight bytes at a time.
#[inline]
fn first_stop(s: &[u8]) -> Option<usize> {
    let mut words = s.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut words {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        let stops = bytes_equal(word, b'"') | bytes_equal(word, b'\\') | bytes_below(word, 0x20);
        if stops != 0 {
            return Some(at + stops.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    let tail = words.remainder();
    let i = tail
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    Some(at + i)
}

/// A read position in a body.
pub struct Cursor<'a> {
    pub text: &'a str,
    pub at: usize,
}

impl<'a> Cursor<'a> {
    #[inline]
    pub fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// Blanks and tabs: serde_json's whitespace but `\n` (the line's end) and `\r`
    /// (which the SQL path does not read as the line's: such a line is deferred).
    #[inline]
    pub fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.at += 1;
        }
    }

    /// The next byte but blanks, read.
    #[inline]
    pub fn next_token(&mut self) -> Option<u8> {
        if matches!(self.peek(), Some(b' ' | b'\t')) {
            self.skip_blanks();
        }
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    /// `want`, after blanks.
    #[inline]
    pub fn expect(&mut self, want: u8) -> Result<(), NotPlain> {
        if self.peek() != Some(want) {
            self.skip_blanks();
            if self.peek() != Some(want) {
                return Err(NotPlain);
            }
        }
        self.at += 1;
        Ok(())
    }

    /// The text of a string whose opening quote was just read, up to its closing
    /// quote (then read): only when it has no escape and no control character
    /// (which RFC 8259 does not allow raw), so the text is the string's value.
    #[inline]
    pub fn plain_string(&mut self) -> Result<&'a str, NotPlain> {
        let start = self.at;
        let rest = self.text.as_bytes().get(start..).ok_or(NotPlain)?;
        self.at += first_stop(rest).ok_or(NotPlain)?;
        if self.peek() != Some(b'"') {
            return Err(NotPlain);
        }
        let s = self.text.get(start..self.at).ok_or(NotPlain)?;
        self.at += 1;
        Ok(s)
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, RFC 8259's number, as sent.
    /// What follows it is the caller's to check (a digit after a leading `0` is not
    /// a delimiter, so `01` is not taken).
    fn number(&mut self) -> Result<Plain<'a>, NotPlain> {
        let start = self.at;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        let int_start = self.at;
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(NotPlain),
        }
        let int_end = self.at;
        let mut frac = int_end..int_end;
        if self.peek() == Some(b'.') {
            self.at += 1;
            frac.start = self.at;
            self.some_digits()?;
            frac.end = self.at;
        }
        let mut exponent = false;
        if matches!(self.peek(), Some(b'e' | b'E')) {
            exponent = true;
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            self.some_digits()?;
        }
        let bytes = self.text.as_bytes();
        let decimal = (!exponent).then(|| Decimal {
            negative,
            int: &bytes[int_start..int_end],
            frac: &bytes[frac],
        });
        Ok(Plain::Num(
            self.text.get(start..self.at).ok_or(NotPlain)?,
            decimal,
        ))
    }

    #[inline]
    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
    }

    fn some_digits(&mut self) -> Result<(), NotPlain> {
        let start = self.at;
        self.digits();
        if self.at == start {
            return Err(NotPlain);
        }
        Ok(())
    }

    /// The literal `word`, at the cursor.
    fn literal(&mut self, word: &str) -> Result<(), NotPlain> {
        let end = self.at + word.len();
        if self.text.as_bytes().get(self.at..end) != Some(word.as_bytes()) {
            return Err(NotPlain);
        }
        self.at = end;
        Ok(())
    }

    /// One value after blanks; objects and arrays are not taken.
    #[inline]
    pub fn value(&mut self) -> Result<Plain<'a>, NotPlain> {
        self.skip_blanks();
        Ok(match self.peek().ok_or(NotPlain)? {
            b'"' => {
                self.at += 1;
                Plain::Str(self.plain_string()?)
            }
            b't' => {
                self.literal("true")?;
                Plain::Bool(true)
            }
            b'f' => {
                self.literal("false")?;
                Plain::Bool(false)
            }
            b'n' => {
                self.literal("null")?;
                Plain::Null
            }
            _ => self.number()?,
        })
    }
}
