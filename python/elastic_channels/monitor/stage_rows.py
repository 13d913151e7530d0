"""The run's figures per stage of its load shape, as rows of the per-stage table
(:mod:`.stage_table`): what a Kubernetes run, which writes no result file, keeps of each
stage.

One row per stage, from the run's fleet windows as the monitor wrote them (their
``RAW``: the fleet window as :func:`..fleet.report.aggregate_window` made it), warmup's
left out, by :func:`..results.derive.stage_figures`: the figures a local run's result
file holds per stage, by the same definitions. Ingest-to-visible is not among the
columns: no histogram of it is kept, and the highest of the windows' values (RAW's
``visible_p99_ms``) is only an upper bound.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..results.derive import stage_figures, stage_windows
from . import histogram

__all__ = ["StageBook", "stage_rows"]


def stage_rows(run_id: str, fleet: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per stage of the run (the per-stage table's columns), from its fleet
    windows (dicts with the line's keys: the RAW of the fleet rows); none when no window
    is outside warmup."""
    kept = [w for w in fleet if not w.get("warmup") and w.get("window_start") is not None]
    by_stage = stage_windows(kept, whole_only=False)  # counts: every window of a stage
    return [_row(run_id, f, by_stage[f["stage"]]) for f in stage_figures({"windows": kept})]


def _row(run_id: str, f: dict[str, Any], windows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    acks = histogram.merge(str(w["ack_hist_us"]) for w in windows if w.get("ack_hist_us"))
    behind = histogram.merge(str(w["behind_hist_us"]) for w in windows if w.get("behind_hist_us"))
    first = min(windows, key=lambda w: float(w["window_start"]))
    return {
        "RUN_ID": run_id,
        "STAGE": f["stage"],
        "STAGE_START": _stamp(float(first["window_start"])),
        "STAGE_END": _stamp(max(float(w["end"]) for w in windows)),
        "SECONDS": f["seconds"],
        "WINDOWS": f["windows"],
        "WORKERS_REPORTING": max(int(w.get("workers") or 0) for w in windows),
        "TARGET_MB_PER_SEC": f["target_mb_per_s"],
        "MB_PER_SEC": f["mb_per_s"],
        "ACKED_MB_PER_SEC": f["acked_mb_per_s"],
        "ROWS_PER_SEC": f["rows_per_s"],
        "ROWS_APPENDED": sum(int(w.get("rows") or 0) for w in windows),
        "BYTES_APPENDED": sum(int(w.get("bytes") or 0) for w in windows),
        "ROWS_ACKED": sum(int(w.get("acked_rows") or 0) for w in windows),
        "ACK_LATENCY_P50_MS": f["ack_p50_ms"],
        "ACK_LATENCY_P99_MS": f["ack_p99_ms"],
        "ACK_LATENCY_MAX_MS": histogram.percentile_ms(acks, 100),
        "ACK_LATENCY_HIST": histogram.encode(acks) if acks.get_total_count() else None,
        "BEHIND_SCHEDULE_P99_MS": f["behind_p99_ms"],
        "BEHIND_SCHEDULE_HIST": histogram.encode(behind) if behind.get_total_count() else None,
        "ERRORS": f["errors"],
        "RESENT_BATCHES": f["resent_batches"],
        "SDK_RETRIES": f["sdk_retries"],
        "CPU_SECONDS": f["cpu_s"],
        "SCENARIO_NAME": first.get("scenario"),
        "SCENARIO_HASH": first.get("scenario_hash"),
        "RAW": json.dumps(f, separators=(",", ":")),
    }


def _stamp(epoch_s: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(epoch_s, dt.timezone.utc)


class StageBook:
    """When the per-stage rows are due: after a window's fleet row or a worker's summary
    is written, once every worker has ended and nothing else waits (their windows are
    all in the table), and at the final flush whatever the workers did. They are
    computed from the table, so a restarted monitor or a late line rewrites them the
    same way."""

    def __init__(self) -> None:
        self.due = False
        #: The last write failed (SqlError): the rows are still to be written.
        self.failed = False
        #: Rows written so far (a stage written again counts again).
        self.rows_written = 0

    def write(self, sink: Any, run_id: str, *, ready: bool) -> int:
        """Write the rows into ``sink.stages`` (a :class:`~.stage_table.StageTable`; a
        sink without one keeps no stages) if due and ``ready``: how many; SqlError (the
        target failing) leaves them due."""
        table = getattr(sink, "stages", None)
        if not (self.due and ready) or table is None:
            return 0
        try:
            held = sink.read_rows(run_id, fleet=True)
            fleet = [r["RAW"] for r in held if isinstance(r.get("RAW"), dict)]
            rows = stage_rows(run_id, fleet)
            table.upsert(rows)
        except Exception:
            self.failed = True
            raise
        self.due = self.failed = False
        self.rows_written += len(rows)
        return len(rows)
