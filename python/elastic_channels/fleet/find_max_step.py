"""One step of the search: the break that stopped it, and its judged windows added up.

A step's achieved rate is judged against what its schedule asked one ack latency
earlier: right after a step up, the acks that come in are of the bytes sent before it,
at the lower rate. The latency taken is the median ack latency of the step before (one
that held: its pipeline's own lag), never the step's own, which a throttled step
inflates: a step whose acks fall behind does not excuse itself. The step's boundary is
read off its first window (its mean target lies between the two steps' rates in the
proportion of the seconds it holds of each).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..measures import MB
from ..monitor import histogram
from .find_max_plan import HOLD_FRACTION

__all__ = ["Break", "StepTally"]


@dataclass(frozen=True)
class Break:
    """What stopped a step: a figure over its bound (the achieved rate, ``mb_per_s``,
    under its floor; ``workers`` under the run's count)."""

    step: int
    target_mbps: float
    bound: str
    figure: float
    limit: float
    window_start: float | None = None

    def describe(self) -> str:
        where = "" if self.window_start is None else f" in the window at {self.window_start:.0f}"
        if self.bound == "mb_per_s":
            return (f"step {self.step} ({self.target_mbps:g} MB/s a worker): acked "
                    f"{self.figure:.3g} MB/s a worker, under {self.limit:.3g} "
                    f"({HOLD_FRACTION:.0%} of the step)")  # fmt: skip
        if self.bound == "windows":
            return (f"step {self.step} ({self.target_mbps:g} MB/s a worker): no full window "
                    "after its first (a step must last at least two windows)")  # fmt: skip
        if self.bound == "workers":
            return (f"step {self.step} ({self.target_mbps:g} MB/s a worker): "
                    f"{self.figure:g} of {self.limit:g} workers reported{where}")  # fmt: skip
        return (f"step {self.step} ({self.target_mbps:g} MB/s a worker): {self.bound} "
                f"{self.figure:g} over its bound {self.limit:g}{where}")  # fmt: skip


def _overlap(a: float, b: float, lo: float, hi: float) -> float:
    return max(0.0, min(b, hi) - max(a, lo))


@dataclass
class StepTally:
    """One step's judged windows, added up."""

    step: int
    target_mbps: float
    #: The rate before this step (the step before, warmup's, or 0 when nothing was sent).
    prev_mbps: float = 0.0
    windows_seen: int = 0
    windows: int = 0
    seconds: float = 0.0
    asked_bytes: float = 0.0
    sent_bytes: int = 0
    acked_bytes: int = 0
    cpu_s: float = 0.0
    errors: int = 0
    sdk_retries: int = 0
    rss_mib: float | None = None  # the highest per-worker mean over its windows
    worst: dict[str, float] = field(default_factory=dict)  # bound -> highest window figure
    ack_hists: list[str] = field(default_factory=list)
    behind_hists: list[str] = field(default_factory=list)
    ack_p50s_ms: list[float] = field(default_factory=list)
    #: Each judged window's (start, end, workers), epoch seconds.
    spans: list[tuple[float, float, int]] = field(default_factory=list)
    #: When the step began (epoch seconds), read off its first window; None: unknown.
    boundary: float | None = None
    #: The ack latency its achieved rate is judged with (set when the step is over).
    lag_s: float = 0.0
    broke: Break | None = None
    complete: bool = False

    def first_window(self, w: Mapping[str, Any], workers: int | None = None) -> None:
        """Place the step's boundary from its first window and the mean target in it
        (``workers``: the run's, whose target the window's is; else those reporting)."""
        a, b, target = float(w["start"]), float(w["end"]), w.get("target_bps")
        if target is None or b <= a:
            return
        per = float(target) / (workers or max(int(w.get("workers") or 1), 1)) / MB
        rise = self.target_mbps - self.prev_mbps
        share = 1.0 if rise <= 0 else min(max((per - self.prev_mbps) / rise, 0.0), 1.0)
        self.boundary = b - share * (b - a)

    def add(self, w: Mapping[str, Any], bounds: Mapping[str, float]) -> None:
        a, b = float(w["start"]), float(w["end"])
        secs = max(b - a, 0.0)
        workers = max(int(w.get("workers") or 1), 1)
        self.windows += 1
        self.seconds += secs
        self.spans.append((a, b, workers))
        self.asked_bytes += self.target_mbps * MB * workers * secs
        self.sent_bytes += int(w.get("bytes") or 0)
        self.acked_bytes += int(w.get("acked_bytes") or 0)
        self.cpu_s += float(w.get("cpu_pct") or 0.0) / 100 * secs
        self.errors += int(w.get("errors") or 0)
        self.sdk_retries += int(w.get("sdk_retries") or 0)
        if w.get("rss_mib") is not None:
            rss = float(w["rss_mib"]) / workers
            self.rss_mib = rss if self.rss_mib is None else max(self.rss_mib, rss)
        if w.get("ack_p50_ms") is not None:
            self.ack_p50s_ms.append(float(w["ack_p50_ms"]))
        for key in bounds:
            value = w.get(key)
            if value is not None:
                self.worst[key] = max(self.worst.get(key, -math.inf), float(value))
        for key, into in (("ack_hist_us", self.ack_hists), ("behind_hist_us", self.behind_hists)):
            if w.get(key):
                into.append(str(w[key]))

    def median_ack_s(self) -> float | None:
        return statistics.median(self.ack_p50s_ms) / 1000 if self.ack_p50s_ms else None

    def expected_bytes(self, lag_s: float) -> float:
        """What the judged windows would have acked, had every byte been acked
        ``lag_s`` after the schedule asked for it."""
        s = self.boundary
        total = 0.0
        for a, b, workers in self.spans:
            if s is None:
                per = self.target_mbps * (b - a)
            else:
                lo, hi = a - lag_s, b - lag_s
                per = (self.target_mbps * _overlap(lo, hi, s, math.inf)
                       + self.prev_mbps * _overlap(lo, hi, -math.inf, s))  # fmt: skip
            total += per * MB * workers
        return total

    @property
    def achieved_mbps(self) -> float | None:
        """Acked MB/s a worker, as a share of the step's rate: acked bytes over those
        the schedule asked for one ack latency (``lag_s``) earlier, times the rate."""
        expected = self.expected_bytes(self.lag_s)
        if expected <= 0:
            return None
        return self.target_mbps * self.acked_bytes / expected

    @property
    def acked_mbps(self) -> float | None:
        """Acked MB/s a worker over the judged windows, as counted."""
        worker_s = sum((b - a) * n for a, b, n in self.spans)
        return self.acked_bytes / worker_s / MB if worker_s > 0 else None

    @property
    def held(self) -> bool:
        return self.complete and self.windows > 0 and self.broke is None

    def percentile_ms(self, which: str, q: float) -> float | None:
        hists = self.ack_hists if which == "ack" else self.behind_hists
        if hists:
            return histogram.percentile_ms(histogram.merge(hists), q)
        return self.worst.get(f"{which}_p99_ms") if q == 99 else None

    def figures(self) -> dict[str, Any]:
        gb = self.sent_bytes / 1e9
        return {
            "step": self.step,
            "target_mbps": self.target_mbps,
            "achieved_mbps": _round(self.achieved_mbps),
            "acked_mbps": _round(self.acked_mbps),
            "sent_mbps": _round(self.target_mbps * self.sent_bytes / self.asked_bytes)
            if self.asked_bytes > 0 else None,
            "ack_lag_ms": round(self.lag_s * 1000, 1),
            "windows": self.windows,
            "seconds": round(self.seconds, 3),
            "ack_p99_ms": self.percentile_ms("ack", 99),
            "behind_p99_ms": self.percentile_ms("behind", 99),
            "errors": self.errors,
            "sdk_retries": self.sdk_retries,
            "cpu_s_per_gb": round(self.cpu_s / gb, 3) if gb > 0 and self.cpu_s > 0 else None,
            "rss_mib": _round(self.rss_mib),
            "complete": self.complete,
            "held": self.held,
            "broke": None if self.broke is None else {
                "bound": self.broke.bound, "figure": self.broke.figure,
                "limit": self.broke.limit, "window_start": self.broke.window_start,
                "why": self.broke.describe(),
            },
        }  # fmt: skip


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 3)
