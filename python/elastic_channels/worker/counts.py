"""What a worker counts over a stretch of time: a window, its warmup, the run, a stage.

A :class:`Counts` holds everything a window line or the summary reports (with its
latencies as exact lists and mergeable histograms); a :class:`StageTally` the few
totals the summary gives per stage of the schedule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from hdrh.histogram import HdrHistogram

from ..measures import ms, percentile
from ..monitor import histogram

__all__ = ["Counts", "StageTally"]


@dataclass
class Counts:
    """What happened over one stretch of time (a window, warmup, or the run).

    Times are on the monotonic clock; ``start`` is when this stretch began and
    ``due`` when its wall-clock window ends (infinite for the run's totals)."""

    start: float
    start_cpu: float
    window_start: float | None = None  #: the wall-clock window's start (epoch s)
    due: float = math.inf
    end: float | None = None
    end_cpu: float | None = None
    rows: int = 0
    bytes: int = 0
    acked_rows: int = 0
    acked_bytes: int = 0
    #: Billable bytes (the values' bytes: elastic_channels/billable.py) of the batches acked.
    billable_bytes: int = 0
    latencies: list[float] = field(default_factory=list)
    ack_hist: HdrHistogram = field(default_factory=histogram.new_histogram)
    behind: list[float] = field(default_factory=list)
    behind_hist: HdrHistogram = field(default_factory=histogram.new_histogram)
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

    def behind_ms(self) -> dict[str, float | None]:
        behind = sorted(self.behind)
        return {
            "behind_p99_ms": ms(percentile(behind, 99)),
            "behind_max_ms": ms(behind[-1] if behind else None),
        }


class StageTally:
    """Rows and bytes sent in each stage, and of those, acked: a batch counts in the
    stage it was sent in, wherever its ack comes, so a stage's acked bytes are its own
    batches'."""

    def __init__(self, stages: int) -> None:
        self._totals = [[0, 0, 0, 0] for _ in range(stages)]

    def sent(self, stage: int, n_rows: int, nbytes: int) -> None:
        if 0 <= stage < len(self._totals):
            t = self._totals[stage]
            t[0] += n_rows
            t[1] += nbytes

    def acked(self, stage: int, n_rows: int, nbytes: int) -> None:
        if 0 <= stage < len(self._totals):
            t = self._totals[stage]
            t[2] += n_rows
            t[3] += nbytes

    def lines(self, schedule: Any) -> list[dict[str, Any]]:
        """The summary's ``stages``: per stage of ``schedule`` (a :class:`.schedule.Schedule`),
        its seconds, mean target (bytes/s) and totals."""
        return [
            {
                "stage": i,
                "seconds": s.seconds,
                "target_bps": round(s.mean_bps, 3),
                "rows": t[0],
                "bytes": t[1],
                "acked_rows": t[2],
                "acked_bytes": t[3],
            }
            for i, (s, t) in enumerate(zip(schedule.stages, self._totals, strict=True))
        ]
