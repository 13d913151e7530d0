//! A replay table's pieces, each stored once, copied as whole 32-byte words.
//!
//! A piece is one column's value for some entry, rendered, with the keys and punctuation
//! around it that do not depend on the row's inputs: `","RESORT":"Vail"`,
//! `,"QUANTITY":2`, .... An entry is a reference to each of its pieces, so the bytes a
//! batch reads are 4 or 8 per column per row plus the pieces it uses, rather than whole
//! rendered rows. The writer copies a piece as whole words from its start; a copy may
//! run past the piece (into the next one, or the zero word after the last), and the
//! next copy writes over the spill.
//!
//! A reference carries the piece's length, so the position of the next copy never
//! waits on a load from the (possibly large, randomly read) piece storage:
//! - when every piece fits one word ([`Short`]), each sits in a 32-byte slot of its own
//!   and a reference is `number << 6 | length` (32 bits);
//! - otherwise ([`Long`]) pieces lie back to back and a reference is
//!   `offset << 32 | length` (64 bits).

use std::mem::MaybeUninit;

use super::prefetch;
use crate::error::GenError;

/// Pieces are copied in words of this many bytes (one AVX load and store).
pub const WORD: usize = 32;

#[derive(Debug)]
pub struct Pieces {
    /// When every piece fits one word: piece `i` in `slots[i]`, zero padded.
    slots: Vec<[u8; WORD]>,
    /// Otherwise: piece `i` from `arena[offs[i]]`, back to back, then a zero word.
    arena: Vec<u8>,
    offs: Vec<u32>,
    lens: Vec<u32>,
    short: bool,
}

impl Pieces {
    /// The pieces `texts`, in order (piece `i` is `texts[i]`).
    pub fn new<T: AsRef<[u8]>>(texts: &[T]) -> Result<Self, GenError> {
        let short = texts.iter().all(|t| t.as_ref().len() <= WORD);
        let total: usize = texts.iter().map(|t| t.as_ref().len()).sum();
        if total + WORD > u32::MAX as usize || (short && texts.len() >= 1 << 26) {
            return Err(GenError::BadTable(format!(
                "pieces: {} pieces of {total} bytes in all; at most 2**26 pieces and {} bytes fit",
                texts.len(),
                u32::MAX as usize - WORD
            )));
        }
        // Every length fits: each is at most `total`, checked above.
        let lens = texts.iter().map(|t| t.as_ref().len() as u32).collect();
        let (mut slots, mut arena, mut offs) = (Vec::new(), Vec::new(), Vec::new());
        if short {
            slots = vec![[0u8; WORD]; texts.len()];
            for (text, slot) in texts.iter().zip(slots.iter_mut()) {
                slot[..text.as_ref().len()].copy_from_slice(text.as_ref());
            }
        } else {
            arena.reserve_exact(total + WORD);
            for text in texts {
                offs.push(arena.len() as u32);
                arena.extend_from_slice(text.as_ref());
            }
            arena.resize(total + WORD, 0);
        }
        Ok(Pieces {
            slots,
            arena,
            offs,
            lens,
            short,
        })
    }

    /// Whether every piece fits one word (then references are [`Short`]).
    pub fn short(&self) -> bool {
        self.short
    }

    /// Bytes a whole-word copy of a piece `len` long writes.
    pub fn words_len(len: usize) -> usize {
        len.div_ceil(WORD).max(1) * WORD
    }

    /// Number of pieces.
    pub fn count(&self) -> usize {
        self.lens.len()
    }

    /// The [`Short`] reference to piece `id` (only when [`Pieces::short`]).
    pub fn short_ref(&self, id: u32) -> Short {
        Short(id << 6 | self.lens[id as usize])
    }

    /// The [`Long`] reference to piece `id` (only when not [`Pieces::short`]).
    pub fn long_ref(&self, id: u32) -> Long {
        Long(u64::from(self.offs[id as usize]) << 32 | u64::from(self.lens[id as usize]))
    }

    /// The storage as plain slices, which stay in registers across the writer's stores
    /// (fields read through `&self` would be loaded again after each store).
    #[inline(always)]
    pub fn store(&self) -> Store<'_> {
        Store {
            slots: &self.slots,
            arena: &self.arena,
        }
    }
}

/// Where the pieces are (see [`Pieces::store`]).
#[derive(Debug, Clone, Copy)]
pub struct Store<'a> {
    slots: &'a [[u8; WORD]],
    arena: &'a [u8],
}

/// A reference to a piece, as a table holds it in each entry.
pub trait PieceRef: Copy {
    /// Copies the piece to `out[pos..]` as whole words; returns the position after the
    /// piece. `out` must hold `pos + Pieces::words_len(len)`.
    fn copy_words(self, store: Store, out: &mut [MaybeUninit<u8>], pos: usize) -> usize;
    /// The piece's bytes.
    fn text(self, store: Store<'_>) -> &[u8];
    /// Copies exactly the piece to `out[pos..]`; returns the position after it.
    #[inline(always)]
    fn copy_exact(self, store: Store, out: &mut [MaybeUninit<u8>], pos: usize) -> usize {
        let text = self.text(store);
        out[pos..pos + text.len()].write_copy_of_slice(text);
        pos + text.len()
    }
}

/// A piece in a slot of its own: `number << 6 | length`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Short(u32);

/// A [`Short`] in 16 bits, when a table has at most [`TINY_PIECES`] pieces (halving
/// what a batch reads of the entries, the resort sales' case).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tiny(u16);

/// The most pieces [`Tiny`] references can number.
pub const TINY_PIECES: usize = 1 << 10;

impl From<Short> for Tiny {
    /// Only for a piece number below [`TINY_PIECES`].
    fn from(s: Short) -> Tiny {
        Tiny(s.0 as u16)
    }
}

/// A piece in the arena: `offset << 32 | length`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Long(u64);

impl PieceRef for Short {
    #[inline(always)]
    fn copy_words(self, store: Store, out: &mut [MaybeUninit<u8>], pos: usize) -> usize {
        let i = (self.0 >> 6) as usize;
        debug_assert!(i < store.slots.len());
        // SAFETY: a `Short` is made only by `Pieces::short_ref` from a piece number the
        // table checked against the number of pieces, and `slots` holds one per piece.
        let slot = unsafe { store.slots.get_unchecked(i) };
        out[pos..pos + WORD].write_copy_of_slice(slot);
        pos + (self.0 & 63) as usize
    }

    #[inline(always)]
    fn text(self, store: Store<'_>) -> &[u8] {
        &store.slots[(self.0 >> 6) as usize][..(self.0 & 63) as usize]
    }
}

impl PieceRef for Tiny {
    #[inline(always)]
    fn copy_words(self, store: Store, out: &mut [MaybeUninit<u8>], pos: usize) -> usize {
        Short(u32::from(self.0)).copy_words(store, out, pos)
    }

    #[inline(always)]
    fn text(self, store: Store<'_>) -> &[u8] {
        Short(u32::from(self.0)).text(store)
    }
}

impl PieceRef for Long {
    #[inline(always)]
    fn copy_words(self, store: Store, out: &mut [MaybeUninit<u8>], pos: usize) -> usize {
        let (off, len) = ((self.0 >> 32) as usize, (self.0 & 0xffff_ffff) as usize);
        let mut i = 0;
        loop {
            if i % 64 == 0 {
                // Long pieces are mostly read once per pass over the table, from memory:
                // ask for the lines a little ahead, the next row's included.
                prefetch::for_read(store.arena, off + i + prefetch::READ_DISTANCE);
            }
            out[pos + i..pos + i + WORD].write_copy_of_slice(&store.arena[off + i..off + i + WORD]);
            i += WORD;
            if i >= len {
                break;
            }
        }
        pos + len
    }

    #[inline(always)]
    fn text(self, store: Store<'_>) -> &[u8] {
        let (off, len) = ((self.0 >> 32) as usize, (self.0 & 0xffff_ffff) as usize);
        &store.arena[off..off + len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copied(store: Store, r: impl PieceRef, exact: bool) -> Vec<u8> {
        let mut out = vec![MaybeUninit::new(b'x'); 200];
        let end = if exact {
            r.copy_exact(store, &mut out, 3)
        } else {
            r.copy_words(store, &mut out, 3)
        };
        // SAFETY: initialised when made.
        out[3..end]
            .iter()
            .map(|b| unsafe { b.assume_init() })
            .collect()
    }

    #[test]
    fn every_copy_gives_the_piece() {
        let long = "x".repeat(70);
        let texts: Vec<&[u8]> = vec![b"", b"a", b",\"K\":1", long.as_bytes(), b"last"];
        let p = Pieces::new(&texts).unwrap();
        assert!(!p.short());
        for (id, text) in texts.iter().enumerate() {
            let r = p.long_ref(id as u32);
            assert_eq!(copied(p.store(), r, false), *text);
            assert_eq!(copied(p.store(), r, true), *text);
            assert_eq!(r.text(p.store()), *text);
        }
        let short = Pieces::new(&[b"ab".as_slice(), &[b'z'; 32]]).unwrap();
        assert!(short.short());
        assert_eq!(copied(short.store(), short.short_ref(0), false), b"ab");
        assert_eq!(copied(short.store(), short.short_ref(1), false), [b'z'; 32]);
        assert_eq!(copied(short.store(), short.short_ref(1), true), [b'z'; 32]);
    }

    #[test]
    fn words_len_rounds_up_to_whole_words() {
        assert_eq!(Pieces::words_len(0), WORD);
        assert_eq!(Pieces::words_len(32), WORD);
        assert_eq!(Pieces::words_len(33), 2 * WORD);
    }
}
