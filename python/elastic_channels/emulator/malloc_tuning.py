"""glibc's allocator told to keep and reuse the emulator's big buffers.

Landing allocates a few big buffers per request (the inflated body, ~4 MB; the parsed
columns, one ``bytes`` each) and frees them right after. By default glibc serves a block
of more than its mmap threshold (128 KiB, raised dynamically up to 32 MiB) with a fresh
``mmap`` and returns it with ``munmap``, and trims the heap top back to the kernel past
128 KiB: every such buffer then costs a page fault per 4 KiB page on first touch, which
measured ~0.3-0.4 CPU-s per GB of NDJSON in the native parse alone. Raising both
thresholds (what ``MALLOC_MMAP_THRESHOLD_`` and ``MALLOC_TRIM_THRESHOLD_`` set from the
environment) lets freed buffers be reused from the heap; the process keeps up to
:data:`TRIM_THRESHOLD` of free memory instead of returning it at once.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys

__all__ = ["MMAP_THRESHOLD", "TRIM_THRESHOLD", "keep_big_buffers"]

log = logging.getLogger("elastic_channels.emulator")

#: Blocks up to this size come from the heap, not their own mmap (glibc's maximum).
MMAP_THRESHOLD = 32 << 20
#: Free memory at the heap top kept for reuse before it is returned to the kernel.
TRIM_THRESHOLD = 256 << 20

# mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def keep_big_buffers() -> bool:
    """Raise glibc's mmap and trim thresholds for this process; whether it took effect
    (False where the C library is not glibc, e.g. macOS or musl)."""
    if not sys.platform.startswith("linux"):
        return False
    name = ctypes.util.find_library("c") or "libc.so.6"
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    ok = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
    ok = mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1 and ok
    if not ok:
        log.debug("mallopt refused the thresholds; the allocator keeps its defaults")
    return ok
