"""The metrics table's columns as the Run page knows them: each figure under the names
the monitor may give it (:data:`CONCEPTS`), resolved against the table's actual columns
(:class:`MetricsColumns`), so a column the monitor adds later shows up and one it does
not write is left out of the page, never a failed query."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .dialect import Dialect

__all__ = [
    "CONCEPTS",
    "FLEET_AGG",
    "LAST_WINDOW_FIGURES",
    "REQUIRED",
    "RUN_COUNTS",
    "SERIES",
    "TARGET_LABEL",
    "TOTALS",
    "UNACKED_AT_END",
    "WARMUP_LABEL",
    "MetricsColumns",
]

#: figure -> the column names it may have, preferred first.
CONCEPTS: dict[str, tuple[str, ...]] = {
    "run": ("RUN_ID",),
    "worker": ("WORKER_ID",),
    "start": ("WINDOW_START",),
    "end": ("WINDOW_END",),
    "rows": ("ROWS_APPENDED", "ROWS_SENT", "ROWS"),
    "bytes": ("BYTES_APPENDED", "BYTES_SENT", "BYTES"),
    "billable": ("BILLABLE_BYTES",),
    "acked_rows": ("ROWS_ACKED",),
    "window_seconds": ("WINDOW_SECONDS",),
    "partial": ("PARTIAL",),
    "mb_s": ("MB_PER_SEC", "MB_PER_S", "MBPS"),
    "rows_s": ("ROWS_PER_SEC", "ROWS_PER_S"),
    "target_bps": ("TARGET_BPS", "TARGET_BYTES_PER_SEC"),
    "warmup": ("WARMUP",),
    "stage": ("STAGE",),
    "workers": ("WORKERS_REPORTING", "WORKERS"),
    "ack_p50": ("ACK_P50_MS", "ACK_LATENCY_P50_MS"),
    "ack_p99": ("ACK_P99_MS", "ACK_LATENCY_P99_MS"),
    "visible_p50": ("INGEST_TO_VISIBLE_P50_MS", "VISIBLE_P50_MS", "INGEST_VISIBLE_P50_MS"),
    "visible_p99": ("INGEST_TO_VISIBLE_P99_MS", "VISIBLE_P99_MS", "INGEST_VISIBLE_P99_MS"),
    "behind_p99": ("BEHIND_SCHEDULE_P99_MS",),
    "behind_max": ("BEHIND_SCHEDULE_MAX_MS", "BEHIND_SCHEDULE_MS"),
    "resends": ("RESENT_BATCHES", "RESENDS", "RESENT_ROWS"),
    "retries": ("SDK_RETRIES", "RETRIES"),
    "errors": ("ERRORS", "ERROR_COUNT"),
    "cpu_mcores": ("CPU_MILLICORES", "CPU_MCORES"),
    "cpu_pct": ("CPU_PCT", "CPU_PERCENT"),
    "rss": ("RSS_MIB", "PEAK_RSS_MIB"),
    "unacked": ("UNACKED_ROWS", "IN_FLIGHT_ROWS"),
    "in_flight": ("IN_FLIGHT_BYTES",),
    "is_summary": ("IS_SUMMARY",),
    "is_fleet": ("IS_FLEET",),
    "state": ("STATE", "WORKER_STATE", "STATUS"),
    "error": ("ERROR", "ERROR_MESSAGE", "LAST_ERROR"),
    "raw": ("RAW",),
    "sdk": ("SDK",),
    "sdk_throttled": ("SDK_THROTTLED",),
    "ack_hist": ("ACK_LATENCY_HIST",),
}

#: (concept, label on the page) of the per-window series, in drawing order.
SERIES = (
    ("mb_s", "MB/s"), ("rows_s", "rows/s"),
    ("workers", "workers reporting"), ("ack_p50", "ack p50 ms"), ("ack_p99", "ack p99 ms"),
    ("visible_p50", "ingest-to-visible p50 ms"), ("visible_p99", "ingest-to-visible p99 ms"),
    ("behind_p99", "behind schedule p99 ms"), ("behind_max", "behind schedule max ms"),
    ("resends", "resends"), ("retries", "SDK retries"), ("errors", "errors"),
)  # fmt: skip
#: How a per-worker figure combines into a fleet one when there are no fleet rows.
FLEET_AGG = {
    "mb_s": "sum", "rows_s": "sum", "ack_p50": "max", "ack_p99": "max",
    "visible_p50": "max", "visible_p99": "max", "behind_p99": "max", "behind_max": "max",
    "resends": "sum", "retries": "sum", "errors": "sum",
}  # fmt: skip
#: (concept, label) of the per-worker table's figures read off its latest window.
LAST_WINDOW_FIGURES = (
    ("ack_p50", "ack p50 ms"), ("ack_p99", "ack p99 ms"), ("cpu_mcores", "CPU mcores"),
    ("rss", "RSS MiB"), ("unacked", "unacked rows"), ("in_flight", "in flight bytes"),
)  # fmt: skip
#: (concept, column of the totals query) summed over the run.
TOTALS = (
    ("rows", "ROWS"), ("bytes", "BYTES"), ("resends", "RESENDS"), ("retries", "SDK_RETRIES"),
    ("errors", "ERRORS"), ("billable", "BILLABLE"),
)  # fmt: skip
#: (column of the totals query, label in the per-worker table) of the run's counts.
RUN_COUNTS = (("RESENDS", "resends"), ("SDK_RETRIES", "SDK retries"), ("ERRORS", "errors"))
REQUIRED = ("run", "worker", "end")
#: The fleet series' columns beside :data:`SERIES`: the window's target MB/s (the
#: schedule's, the fleet's: its workers' added up), whether it is warmup (1/0), and
#: when it started (``T0``; ``T`` is its end).
TARGET_LABEL = "target MB/s"
WARMUP_LABEL = "warmup"
#: The per-worker table's column of rows unacknowledged when the worker ended.
UNACKED_AT_END = "unacked rows at end"


@dataclass(frozen=True)
class MetricsColumns:
    """Which figures the metrics table holds, and under what column name."""

    names: dict[str, str]

    @classmethod
    def resolve(cls, columns: Iterable[str]) -> MetricsColumns:
        have = {c.upper() for c in columns}
        found = {}
        for concept, candidates in CONCEPTS.items():
            for c in candidates:
                if c in have:
                    found[concept] = c
                    break
        return cls(found)

    def missing_required(self) -> list[str]:
        return [CONCEPTS[c][0] for c in REQUIRED if c not in self.names]

    def has(self, concept: str) -> bool:
        return concept in self.names

    def col(self, concept: str) -> str:
        return self.names[concept]

    def flag(self, concept: str) -> str:
        """``coalesce(<boolean column>, FALSE)``, or FALSE when the table has none."""
        return f"coalesce({self.names[concept]}, FALSE)" if concept in self.names else "FALSE"

    def error_expr(self, d: Dialect) -> str:
        if self.has("error"):
            return f"CAST({self.col('error')} AS VARCHAR)"
        if self.has("raw"):
            return d.json_text(self.col("raw"), "error")
        return "CAST(NULL AS VARCHAR)"

    def raw_number(self, d: Dialect, key: str) -> str | None:
        """``key`` of the worker's line kept in RAW as a DOUBLE, or None without RAW."""
        if not self.has("raw"):
            return None
        return f"CAST({d.json_text(self.col('raw'), key)} AS DOUBLE)"
