"""Units and small measurements every part reports in: MB, GB, percentiles, memory."""

from __future__ import annotations

import math
import resource
import sys
from collections.abc import Iterable, Mapping
from typing import Any

#: Megabyte, as every rate here is reported (MB/s of uncompressed NDJSON).
MB = 1_000_000
#: Gigabyte, as CPU cost is reported (CPU-seconds per GB of NDJSON).
GB = 1_000_000_000
#: The range of a rate in MB/s, per worker or per channel (1 kB/s to 100 GB/s): what a
#: scenario's rates and a channel's limit may be. Below it a limit is 0 in all but name;
#: above it, a typo (1e300) overflows the pacing arithmetic.
MIN_MBPS, MAX_MBPS = 0.001, 100_000
#: The longest run (a stage, the stages together, a worker's --duration-seconds): 30 days.
MAX_RUN_SECONDS = 30 * 86_400


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


def run_throughput(summaries: Iterable[Mapping[str, Any]]) -> dict[str, float | None]:
    """A run's throughput, the one definition every report uses: bytes and rows ACKED,
    over the sending window (the first worker's first append to the last worker's end
    of sending: ``send_start``/``send_end`` of the workers' summaries; the drain of the
    last acks is not sending). ``seconds``, ``mb_per_s``, ``rows_per_s``; None when no
    summary says when it sent. Warmup is outside it: a worker's summary starts its
    sending window at the end of warmup and counts only the bytes and rows sent after
    it (``worker.meter``)."""
    timed = [s for s in summaries if s and s.get("send_start") and s.get("send_end")]
    if not timed:
        return {"seconds": None, "mb_per_s": None, "rows_per_s": None}
    seconds = max(float(s["send_end"]) for s in timed) - min(float(s["send_start"]) for s in timed)
    seconds = max(seconds, 1e-9)
    acked_bytes = sum(int(s.get("bytes_acked") or 0) for s in timed)
    acked_rows = sum(int(s.get("rows_acked") or 0) for s in timed)
    return {
        "seconds": round(seconds, 3),
        "mb_per_s": round(acked_bytes / seconds / MB, 3),
        "rows_per_s": round(acked_rows / seconds, 1),
    }
