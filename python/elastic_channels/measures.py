"""Units and small measurements every part reports in: MB, GB, percentiles, memory."""

from __future__ import annotations

import math
import resource
import sys

#: Megabyte, as every rate here is reported (MB/s of uncompressed NDJSON).
MB = 1_000_000
#: Gigabyte, as CPU cost is reported (CPU-seconds per GB of NDJSON).
GB = 1_000_000_000


def cpu_s_per_gb(cpu_s: float, nbytes: int) -> float | None:
    """CPU-seconds spent per GB of ``nbytes``, to 3 places (None when nothing was sent)."""
    return round(cpu_s / (nbytes / GB), 3) if nbytes else None


def percentile(sorted_values: list[float], q: float) -> float | None:
    """Nearest-rank percentile of an ascending list, or None when empty."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def ms(seconds: float | None) -> float | None:
    """Seconds as milliseconds, rounded to 0.1 ms (None stays None)."""
    return None if seconds is None else round(seconds * 1e3, 1)


def rss_mib() -> float:
    """Current resident set size (Linux /proc), else the peak."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * resource.getpagesize() / 2**20
    except (OSError, IndexError, ValueError):
        return peak_rss_mib()


def peak_rss_mib() -> float:
    """This process's own peak resident set size.

    Linux: ``VmHWM`` of /proc/self/status, which belongs to the process's address space
    and so starts afresh at exec. ``ru_maxrss`` does not: a worker started by a 200 MiB
    parent reported the parent's peak. Elsewhere ``ru_maxrss`` (KiB on Linux, bytes on
    macOS) is all there is."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except (OSError, IndexError, ValueError):
        pass
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return maxrss / 2**20 if sys.platform == "darwin" else maxrss / 1024
