"""The worker's figures: one ``record_*`` call per event updates the current window
and the run's totals together; windows and the summary are JSON-ready dicts.

Windows follow the wall clock: window *k* covers ``[k * window_s, (k + 1) * window_s)``
seconds since the epoch, so every worker's window with the same ``window_start`` covers
the same seconds and a fleet window is an exact sum. The first window (from the start
of the run) and the last (up to the end) are usually shorter: they say
``"partial": true``. An event falls in the window its time falls in (an ack at its
arrival time); an ack taken in after its window was closed counts in the open one.

Each window carries its ack latencies and how far behind its pacing schedule the
worker sent (the coordinated-omission measure: a batch sent late by a stall counts
its delay even though its own ack was fast) as mergeable HdrHistograms of
microseconds (see :mod:`elastic_channels.monitor.histogram`), beside the exact
percentiles of this worker alone.

Given the schedule it follows (:mod:`.schedule`, from ``origin`` in epoch seconds),
each window also carries its ``target_bps`` (the schedule's mean over the part of the
window it covers), its ``stage`` (the one its end falls in; -1 in warmup) and
``warmup``. Warmup is kept apart: the summary's run figures (its sending window from
the end of warmup, rows, bytes, acks, latencies, CPU) leave it out, and its totals go
to ``warmup_*`` keys. A batch counts in the phase and stage it was sent in, wherever
its ack comes. Resends, SDK retries and errors are the whole run's.

Every window and summary line carries the worker's ``host`` (:func:`host_name`: its
pod's name on Kubernetes), so a monitor reading one stream of many workers' lines (a
file, stdin) tells apart two workers that claim one worker id.
"""

from __future__ import annotations

import math
import os
import socket
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from hdrh.histogram import HdrHistogram

from ..measures import MB, cpu_s_per_gb, peak_rss_mib, rss_mib
from ..monitor import histogram
from .counts import Counts, StageTally
from .schedule import WARMUP, Schedule

__all__ = ["Counts", "Meter", "ack_fields", "host_name"]

#: A window covered but for this part of its length at either end is still whole.
PARTIAL_SLACK = 0.01


def host_name() -> str | None:
    """Where the worker runs: ``POD_NAME`` (a Job's pods get it), else ``HOSTNAME``, else
    the host's name (None if none is usable)."""
    names = [os.environ.get("POD_NAME"), os.environ.get("HOSTNAME")]
    try:
        names.append(socket.gethostname())
    except OSError:
        pass
    return next((n for n in names if n and len(n) <= 253 and n.isprintable()), None)


def ack_fields(acks: HdrHistogram) -> dict[str, Any]:
    """Ack latency percentiles of a merged histogram, and the histogram itself, under
    the names a window or summary line uses."""
    out: dict[str, Any] = {
        name: histogram.percentile_ms(acks, q)
        for q, name in ((50, "ack_p50_ms"), (95, "ack_p95_ms"), (99, "ack_p99_ms"))
    }
    out["ack_max_ms"] = histogram.percentile_ms(acks, 100)
    out["ack_hist_us"] = histogram.encode(acks)
    return out


class Meter:
    """A worker's windows and run totals, fed one event at a time.

    ``schedule`` is what the worker follows from ``origin`` (epoch seconds; default:
    now); without one, windows carry no target and nothing is warmup. ``clock``
    (monotonic), ``wall`` (epoch seconds) and ``cpu`` (process CPU seconds) are
    injectable for tests."""

    def __init__(
        self,
        window_s: float,
        *,
        schedule: Schedule | None = None,
        origin: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        cpu: Callable[[], float] = time.process_time,
    ) -> None:
        if not window_s > 0:
            raise ValueError(f"window_s must be > 0 seconds, got {window_s!r}")
        self.window_s = float(window_s)
        #: Stamped on every line (computed once).
        self.host = host_name()
        self._clock = clock
        self._cpu = cpu
        now = clock()
        #: Added to a monotonic time it gives the wall-clock time (fixed at the start,
        #: so a clock step during the run cannot reorder windows).
        self._to_wall = wall() - now
        self.schedule = schedule
        #: When the schedule starts, in epoch seconds.
        self.origin = now + self._to_wall if origin is None else float(origin)
        warmup_s = schedule.warmup_s if schedule is not None else 0.0
        #: When the run's figures start (the end of warmup), on the monotonic clock.
        run_start = max(now, self.origin - self._to_wall + warmup_s)
        self.totals = Counts(run_start, cpu())
        self._run_cpu_taken = run_start <= now
        self.warmup = Counts(now, cpu(), due=run_start)
        self.stage_tally = StageTally(len(schedule.stages) if schedule is not None else 0)
        self.window = self._new_window(now)
        self._closed: deque[Counts] = deque()
        self.channel_reopens = 0
        #: When sending stopped (before draining the last acks); rates are over sending.
        self.end_mono: float | None = None

    @property
    def origin_mono(self) -> float:
        """The schedule's start on the monotonic clock."""
        return self.origin - self._to_wall

    def stage_now(self) -> int:
        """The stage of the schedule now (``WARMUP`` in warmup; 0 without a schedule)."""
        if self.schedule is None:
            return 0
        return self.schedule.stage_at(self._clock() - self.origin_mono)

    # --- windows on the wall clock ---------------------------------------------------

    def _new_window(self, start: float) -> Counts:
        ws = self.window_s
        k = math.floor((start + self._to_wall) / ws + 1e-9)
        window_start = k * ws
        return Counts(start, self._cpu(), window_start, window_start + ws - self._to_wall)

    def _roll(self, now: float) -> None:
        """Close every window whose end has passed by ``now``; empty ones too, so a
        stalled worker still reports each window."""
        if not self._run_cpu_taken and now >= self.totals.start:
            self.totals.start_cpu = self._cpu()  # the run's CPU starts with its figures
            self._run_cpu_taken = True
        while now >= self.window.due:
            w = self.window
            w.end, w.end_cpu = w.due, self._cpu()
            self._closed.append(w)
            self.window = self._new_window(w.due)

    def _both(self, at: float | None = None, stage: int = 0) -> tuple[Counts, Counts]:
        """The open window and the phase (warmup or run) an event of ``stage`` counts in."""
        self._roll(self._clock() if at is None else max(at, self.window.start))
        return self.window, (self.warmup if stage == WARMUP else self.totals)

    # --- events ------------------------------------------------------------------------

    def record_sent(self, n_rows: int, nbytes: int, behind_s: float = 0.0, stage: int = 0) -> None:
        """A new batch went out, ``behind_s`` after its slot in the pacing schedule, in
        ``stage`` (see :meth:`stage_now`)."""
        for c in self._both(stage=stage):
            c.rows += n_rows
            c.bytes += nbytes
            c.behind.append(behind_s)
            histogram.record_seconds(c.behind_hist, behind_s)
        self.stage_tally.sent(stage, n_rows, nbytes)

    def record_resent(self, n_rows: int) -> None:
        for c in self._both():
            c.resent_batches += 1
            c.resent_rows += n_rows

    def record_acked(
        self,
        n_rows: int,
        nbytes: int,
        latency_s: float,
        at: float | None = None,
        stage: int = 0,
        billable: int = 0,
    ) -> None:
        """An ack arrived (at ``at`` on the monotonic clock, default now) for a batch
        sent in ``stage``, whose values bill ``billable`` bytes."""
        for c in self._both(at, stage):
            c.acked_rows += n_rows
            c.acked_bytes += nbytes
            c.billable_bytes += billable
            c.latencies.append(latency_s)
            histogram.record_seconds(c.ack_hist, latency_s)
        self.stage_tally.acked(stage, n_rows, nbytes)

    def record_sdk_retries(self, n: int) -> None:
        for c in self._both():
            c.sdk_retries += n

    def record_error(self) -> None:
        for c in self._both():
            c.errors += 1

    def record_reopen(self) -> None:
        self.channel_reopens += 1

    # --- window lines --------------------------------------------------------------------

    def window_due(self) -> bool:
        """Whether a window has ended and waits for :meth:`close_window`."""
        self._roll(self._clock())
        return bool(self._closed)

    def nothing_left(self) -> bool:
        """Whether no ended window waits and nothing happened in the open one: the run's
        end fell on a window's boundary, and a window cut short here would be an empty
        sliver (0 rows, 0 MB/s: a chart would dive to 0 at the end)."""
        self._roll(self._clock())
        return not self._closed and self.window.is_empty()

    def close_window(self, in_flight_batches: int, in_flight_bytes: int, **ids: Any) -> dict:
        """The oldest ended window as a JSON-ready dict. With none ended, the current
        window is cut short here (the run's last, partial window) and a new one starts."""
        now = self._clock()
        self._roll(now)
        if self._closed:
            w = self._closed.popleft()
        else:
            w, self.window = self.window, self._new_window(now)
            w.end, w.end_cpu = now, self._cpu()
        return self._line(w, in_flight_batches, in_flight_bytes, ids)

    def _target(self, start: float, end: float) -> dict[str, Any]:
        """A window's target rate, stage and warmup, from the schedule (wall times)."""
        if self.schedule is None:
            return {"target_bps": None, "stage": None, "warmup": False}
        a, b = start - self.origin, end - self.origin
        return {
            "target_bps": round(self.schedule.mean_bps(a, b), 1),
            "stage": self.schedule.stage_ending_at(b),
            "warmup": self.schedule.in_warmup(b),
        }

    def _line(self, w: Counts, in_flight_batches: int, in_flight_bytes: int, ids: dict) -> dict:
        assert w.end is not None and w.end_cpu is not None and w.window_start is not None
        seconds = max(w.end - w.start, 1e-9)
        start, end = w.start + self._to_wall, w.end + self._to_wall
        # Partial: the window was not covered whole. A start a few ms late (the first
        # send after a start gate on the boundary) is not: its rate is the window's.
        slack = max(1e-3, PARTIAL_SLACK * self.window_s)
        partial = start > w.window_start + slack or end < w.window_start + self.window_s - slack
        return {
            "type": "window",
            "host": self.host,
            **ids,
            "window_start": round(w.window_start, 6),
            "window_seconds": self.window_s,
            "partial": partial,
            "start": round(start, 3),
            "end": round(end, 3),
            **self._target(start, end),
            "rows": w.rows,
            "bytes": w.bytes,
            "mb_per_s": round(w.bytes / seconds / MB, 3),
            "rows_per_s": round(w.rows / seconds, 1),
            "acked_rows": w.acked_rows,
            "acked_bytes": w.acked_bytes,
            "billable_bytes": w.billable_bytes,
            "acks": len(w.latencies),
            **w.latency_ms(),
            "ack_hist_us": histogram.encode(w.ack_hist),
            **w.behind_ms(),
            "behind_hist_us": histogram.encode(w.behind_hist),
            "in_flight_batches": in_flight_batches,
            "in_flight_bytes": in_flight_bytes,
            "resent_batches": w.resent_batches,
            "sdk_retries": w.sdk_retries,
            "errors": w.errors,
            "cpu_pct": round(100 * (w.end_cpu - w.start_cpu) / seconds, 1),
            "rss_mib": round(rss_mib(), 1),
        }

    # --- the summary ----------------------------------------------------------------------

    def summary(self, unacked_rows: int, **extra: Any) -> dict[str, Any]:
        """The summary line. Its run figures leave warmup out: the sending window runs
        from the end of warmup (or the first send) to the end of sending; with no
        sending after warmup it is empty (``send_start``/``send_end`` null)."""
        t = self.totals
        now = self._clock()
        end = self.end_mono if self.end_mono is not None else now
        ran = end > t.start
        seconds = max(end - t.start, 0.0)
        secs = max(seconds, 1e-9)
        cpu = self._cpu() - t.start_cpu if self._run_cpu_taken else 0.0
        out: dict[str, Any] = {
            "type": "summary",
            "host": self.host,
            **extra,
            "rows_sent": t.rows,
            "rows_acked": t.acked_rows,
            "bytes_sent": t.bytes,
            "bytes_acked": t.acked_bytes,
            "billable_bytes": t.billable_bytes,
            "seconds": round(seconds, 3),
            "drain_seconds": round(now - end, 3),
            # The sending window (the end of warmup to the end of sending), epoch
            # seconds: a run's throughput is acked bytes over the union of its workers'.
            "send_start": round(t.start + self._to_wall, 3) if ran else None,
            "send_end": round(end + self._to_wall, 3) if ran else None,
            "mb_per_s": round(t.acked_bytes / secs / MB, 3),
            "rows_per_s": round(t.acked_rows / secs, 1),
            **t.latency_ms(),
            "ack_hist_us": histogram.encode(t.ack_hist),
            **t.behind_ms(),
            "resent_batches": t.resent_batches,
            "resent_rows": t.resent_rows,
            "channel_reopens": self.channel_reopens,
            "sdk_retries": t.sdk_retries,
            "errors": t.errors,
            "unacked_rows": unacked_rows,
            "cpu_s": round(cpu, 3),
            "cpu_s_per_gb": cpu_s_per_gb(cpu, t.bytes),
            "peak_rss_mib": round(peak_rss_mib(), 1),
        }
        if self.schedule is not None:
            out.update(self._schedule_fields(t.start, end))
        return out

    def _schedule_fields(self, start: float, end: float) -> dict[str, Any]:
        """The summary's warmup totals, mean target over the sending window (the part
        of it the schedule covers: a constant rate's is that rate, however late sending
        ended), and stages."""
        assert self.schedule is not None
        a = start - self.origin_mono
        b = min(end - self.origin_mono, self.schedule.end)
        w = self.warmup
        return {
            # with no sending after warmup, the rate the run was to start at
            "target_bps": round(self.schedule.mean_bps(a, b), 1),
            "warmup_seconds": round(self.schedule.warmup_s, 3),
            "warmup_rows_sent": w.rows,
            "warmup_rows_acked": w.acked_rows,
            "warmup_bytes_sent": w.bytes,
            "warmup_bytes_acked": w.acked_bytes,
            "warmup_billable_bytes": w.billable_bytes,
            "stages": self.stage_tally.lines(self.schedule),
        }
