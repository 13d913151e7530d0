//! Software prefetch of the writer's output, a few pages ahead of where it writes (and of long
//! pieces, a little ahead of where it reads them: see [`READ_DISTANCE`]).
//!
//! A worker writes each batch into fresh memory right after its pacer slept while
//! the SDK compressed on other threads, so the caches and TLB are cold and every
//! line stored to must first be fetched for ownership. The hardware prefetchers
//! stop at page boundaries; asking for the lines a page ahead overlaps those misses
//! with the copying. In `benches/bench_cold_writer.py` (1 MB batches after a 10 ms
//! sleep, 2-core x86-64 VM) it took a fifth off the batch's CPU time; warm it is
//! neutral. A prefetch is only a hint: it never faults and writes nothing.

use std::mem::MaybeUninit;

/// How far ahead of the write position to prefetch.
pub const DISTANCE: usize = 4096;
/// How far ahead of a long piece's read position to prefetch: its storage is read in
/// order, row after row, and mostly not in cache (wide-events: 30 MB of merged pieces,
/// 19-24x -> 22-26x the msgspec path in `bench_encoders.py --workload`, interleaved runs).
pub const READ_DISTANCE: usize = 2048;

/// Hints that `buf[at..at + 128]` is about to be written. Out of range does nothing.
#[inline(always)]
pub fn for_write(buf: &[MaybeUninit<u8>], at: usize) {
    let Some(line) = buf.get(at..) else {
        return;
    };
    let p = line.as_ptr();
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_ET0};
        // SAFETY: a prefetch reads and writes nothing and cannot fault; `p` and the
        // line after it are addresses in or just past `buf`, never dereferenced.
        unsafe {
            _mm_prefetch::<_MM_HINT_ET0>(p.cast());
            _mm_prefetch::<_MM_HINT_ET0>(p.wrapping_add(64).cast());
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        // SAFETY: as above; PRFM PSTL1KEEP is a hint that cannot fault.
        unsafe {
            std::arch::asm!(
                "prfm pstl1keep, [{0}]",
                "prfm pstl1keep, [{0}, #64]",
                in(reg) p,
                options(nostack, preserves_flags, readonly)
            );
        }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = p;
}

/// Hints that `buf[at..at + 64]` is about to be read. Out of range does nothing.
#[inline(always)]
pub fn for_read(buf: &[u8], at: usize) {
    let Some(line) = buf.get(at..) else {
        return;
    };
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch reads nothing architecturally and cannot fault.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = line;
}
