"""Per-window and whole-run figures for a worker: throughput, ack latency, CPU, RSS."""

from __future__ import annotations

import math
import resource
import time
from dataclasses import dataclass, field
from typing import Any

MB = 1_000_000


def percentile(sorted_values: list[float], q: float) -> float | None:
    """Nearest-rank percentile of an ascending list, or None when empty."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def rss_mib() -> float:
    """Current resident set size (Linux /proc), else the peak."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * resource.getpagesize() / 2**20
    except (OSError, IndexError, ValueError):
        return peak_rss_mib()


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value * 1e3, 1)


@dataclass
class Window:
    """What happened in one metrics window."""

    start_wall: float = field(default_factory=time.time)
    start_mono: float = field(default_factory=time.monotonic)
    start_cpu: float = field(default_factory=time.process_time)
    rows: int = 0
    bytes: int = 0
    acked_rows: int = 0
    latencies: list[float] = field(default_factory=list)
    resent_batches: int = 0
    #: Requests the SDK sent again before they were answered (its retry_count).
    sdk_retries: int = 0
    errors: int = 0

    def close(self, in_flight_batches: int, in_flight_bytes: int, **extra: Any) -> dict[str, Any]:
        seconds = max(time.monotonic() - self.start_mono, 1e-9)
        cpu = time.process_time() - self.start_cpu
        lat = sorted(self.latencies)
        return {
            "type": "window",
            **extra,
            "start": round(self.start_wall, 3),
            "end": round(self.start_wall + seconds, 3),
            "rows": self.rows,
            "bytes": self.bytes,
            "mb_per_s": round(self.bytes / seconds / MB, 3),
            "rows_per_s": round(self.rows / seconds, 1),
            "acked_rows": self.acked_rows,
            "acks": len(lat),
            "ack_p50_ms": _ms(percentile(lat, 50)),
            "ack_p95_ms": _ms(percentile(lat, 95)),
            "ack_p99_ms": _ms(percentile(lat, 99)),
            "ack_max_ms": _ms(lat[-1] if lat else None),
            "in_flight_batches": in_flight_batches,
            "in_flight_bytes": in_flight_bytes,
            "resent_batches": self.resent_batches,
            "sdk_retries": self.sdk_retries,
            "errors": self.errors,
            "cpu_pct": round(100 * cpu / seconds, 1),
            "rss_mib": round(rss_mib(), 1),
        }


@dataclass
class RunTotals:
    """Whole-run counters."""

    start_mono: float = field(default_factory=time.monotonic)
    start_cpu: float = field(default_factory=time.process_time)
    rows_sent: int = 0
    bytes_sent: int = 0
    rows_acked: int = 0
    bytes_acked: int = 0
    resent_batches: int = 0
    resent_rows: int = 0
    channel_reopens: int = 0
    sdk_retries: int = 0
    errors: int = 0
    latencies: list[float] = field(default_factory=list)
    #: When sending stopped (before draining the last acks); rates are over sending.
    end_mono: float | None = None

    def summary(self, unacked_rows: int, **extra: Any) -> dict[str, Any]:
        now = time.monotonic()
        end = self.end_mono if self.end_mono is not None else now
        seconds = max(end - self.start_mono, 1e-9)
        cpu = time.process_time() - self.start_cpu
        lat = sorted(self.latencies)
        return {
            "type": "summary",
            **extra,
            "rows_sent": self.rows_sent,
            "rows_acked": self.rows_acked,
            "bytes_sent": self.bytes_sent,
            "bytes_acked": self.bytes_acked,
            "seconds": round(seconds, 3),
            "drain_seconds": round(now - end, 3),
            "mb_per_s": round(self.bytes_sent / seconds / MB, 3),
            "rows_per_s": round(self.rows_sent / seconds, 1),
            "ack_p50_ms": _ms(percentile(lat, 50)),
            "ack_p95_ms": _ms(percentile(lat, 95)),
            "ack_p99_ms": _ms(percentile(lat, 99)),
            "ack_max_ms": _ms(lat[-1] if lat else None),
            "resent_batches": self.resent_batches,
            "resent_rows": self.resent_rows,
            "channel_reopens": self.channel_reopens,
            "sdk_retries": self.sdk_retries,
            "errors": self.errors,
            "unacked_rows": unacked_rows,
            "cpu_s": round(cpu, 3),
            "cpu_s_per_gb": round(cpu / (self.bytes_sent / 1e9), 3) if self.bytes_sent else None,
            "peak_rss_mib": round(peak_rss_mib(), 1),
        }
