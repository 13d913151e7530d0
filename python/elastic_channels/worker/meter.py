"""The worker's figures: one ``record_*`` call per event updates the current window
and the run's totals together; windows and the summary are JSON-ready dicts."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..measures import MB, ms, peak_rss_mib, percentile, rss_mib


@dataclass
class Counts:
    """What happened over one stretch of time (a window, or the whole run)."""

    start_wall: float = field(default_factory=time.time)
    start_mono: float = field(default_factory=time.monotonic)
    start_cpu: float = field(default_factory=time.process_time)
    rows: int = 0
    bytes: int = 0
    acked_rows: int = 0
    acked_bytes: int = 0
    latencies: list[float] = field(default_factory=list)
    resent_batches: int = 0
    resent_rows: int = 0
    #: Requests the SDK sent again before they were answered (its retry_count).
    sdk_retries: int = 0
    errors: int = 0

    def is_empty(self) -> bool:
        return not (
            self.rows or self.latencies or self.errors or self.resent_batches or self.sdk_retries
        )

    def latency_ms(self) -> dict[str, float | None]:
        lat = sorted(self.latencies)
        return {
            "ack_p50_ms": ms(percentile(lat, 50)),
            "ack_p95_ms": ms(percentile(lat, 95)),
            "ack_p99_ms": ms(percentile(lat, 99)),
            "ack_max_ms": ms(lat[-1] if lat else None),
        }


class Meter:
    """A worker's window and run totals, fed one event at a time."""

    def __init__(self, window_s: float) -> None:
        self.window_s = window_s
        self.window = Counts()
        self.totals = Counts()
        self.channel_reopens = 0
        #: When sending stopped (before draining the last acks); rates are over sending.
        self.end_mono: float | None = None

    def _both(self) -> tuple[Counts, Counts]:
        return self.window, self.totals

    def record_sent(self, n_rows: int, nbytes: int) -> None:
        for c in self._both():
            c.rows += n_rows
            c.bytes += nbytes

    def record_resent(self, n_rows: int) -> None:
        for c in self._both():
            c.resent_batches += 1
            c.resent_rows += n_rows

    def record_acked(self, n_rows: int, nbytes: int, latency_s: float) -> None:
        for c in self._both():
            c.acked_rows += n_rows
            c.acked_bytes += nbytes
            c.latencies.append(latency_s)

    def record_sdk_retries(self, n: int) -> None:
        for c in self._both():
            c.sdk_retries += n

    def record_error(self) -> None:
        for c in self._both():
            c.errors += 1

    def record_reopen(self) -> None:
        self.channel_reopens += 1

    def window_due(self) -> bool:
        return time.monotonic() - self.window.start_mono >= self.window_s

    def close_window(self, in_flight_batches: int, in_flight_bytes: int, **ids: Any) -> dict:
        """The current window as a JSON-ready dict; a new window starts."""
        w, self.window = self.window, Counts()
        seconds = max(time.monotonic() - w.start_mono, 1e-9)
        cpu = time.process_time() - w.start_cpu
        return {
            "type": "window",
            **ids,
            "start": round(w.start_wall, 3),
            "end": round(w.start_wall + seconds, 3),
            "rows": w.rows,
            "bytes": w.bytes,
            "mb_per_s": round(w.bytes / seconds / MB, 3),
            "rows_per_s": round(w.rows / seconds, 1),
            "acked_rows": w.acked_rows,
            "acks": len(w.latencies),
            **w.latency_ms(),
            "in_flight_batches": in_flight_batches,
            "in_flight_bytes": in_flight_bytes,
            "resent_batches": w.resent_batches,
            "sdk_retries": w.sdk_retries,
            "errors": w.errors,
            "cpu_pct": round(100 * cpu / seconds, 1),
            "rss_mib": round(rss_mib(), 1),
        }

    def summary(self, unacked_rows: int, **extra: Any) -> dict[str, Any]:
        t = self.totals
        now = time.monotonic()
        end = self.end_mono if self.end_mono is not None else now
        seconds = max(end - t.start_mono, 1e-9)
        cpu = time.process_time() - t.start_cpu
        return {
            "type": "summary",
            **extra,
            "rows_sent": t.rows,
            "rows_acked": t.acked_rows,
            "bytes_sent": t.bytes,
            "bytes_acked": t.acked_bytes,
            "seconds": round(seconds, 3),
            "drain_seconds": round(now - end, 3),
            "mb_per_s": round(t.bytes / seconds / MB, 3),
            "rows_per_s": round(t.rows / seconds, 1),
            **t.latency_ms(),
            "resent_batches": t.resent_batches,
            "resent_rows": t.resent_rows,
            "channel_reopens": self.channel_reopens,
            "sdk_retries": t.sdk_retries,
            "errors": t.errors,
            "unacked_rows": unacked_rows,
            "cpu_s": round(cpu, 3),
            "cpu_s_per_gb": round(cpu / (t.bytes / 1e9), 3) if t.bytes else None,
            "peak_rss_mib": round(peak_rss_mib(), 1),
        }
