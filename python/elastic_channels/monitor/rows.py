"""A worker's window line, a fleet window, or a worker's summary line, as a row of the
metrics table, and back.

Column names and types come from :data:`elastic_channels.snowflake.ddl.METRICS_COLUMNS`
(the setup SQL), so the monitor writes exactly the table ``setup`` creates.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from ..snowflake.ddl import METRICS_COLUMNS

__all__ = [
    "COLUMN_KEYS", "WRITTEN_COLUMNS", "fleet_row", "from_row", "summary_row", "worker_row",
]  # fmt: skip

#: Metrics column -> the key of a window line (worker or fleet) it holds.
COLUMN_KEYS: dict[str, str] = {
    "WINDOW_SECONDS": "window_seconds",
    "PARTIAL": "partial",
    "WORKERS_REPORTING": "workers",
    "ROWS_APPENDED": "rows",
    "BYTES_APPENDED": "bytes",
    "BILLABLE_BYTES": "billable_bytes",
    "ROWS_ACKED": "acked_rows",
    "ACKS": "acks",
    "MB_PER_SEC": "mb_per_s",
    "ROWS_PER_SEC": "rows_per_s",
    "ACK_LATENCY_P50_MS": "ack_p50_ms",
    "ACK_LATENCY_P95_MS": "ack_p95_ms",
    "ACK_LATENCY_P99_MS": "ack_p99_ms",
    "ACK_LATENCY_MAX_MS": "ack_max_ms",
    "ACK_LATENCY_HIST": "ack_hist_us",
    "BEHIND_SCHEDULE_P99_MS": "behind_p99_ms",
    "BEHIND_SCHEDULE_MAX_MS": "behind_max_ms",
    "BEHIND_SCHEDULE_HIST": "behind_hist_us",
    "IN_FLIGHT_BYTES": "in_flight_bytes",
    "RESENT_BATCHES": "resent_batches",
    "SDK_RETRIES": "sdk_retries",
    "ERRORS": "errors",
    "CPU_PCT": "cpu_pct",
    "RSS_MIB": "rss_mib",
    "INGEST_TO_VISIBLE_ROWS": "visible_rows",
    "INGEST_TO_VISIBLE_P50_MS": "visible_p50_ms",
    "INGEST_TO_VISIBLE_P99_MS": "visible_p99_ms",
    "INGEST_TO_VISIBLE_AVG_MS": "visible_avg_ms",
    "TARGET_BPS": "target_bps",
    "STAGE": "stage",
    "WARMUP": "warmup",
    "SCENARIO_NAME": "scenario",
    "SCENARIO_HASH": "scenario_hash",
}
#: What the monitor writes: every column but the ones the target fills in.
WRITTEN_COLUMNS: tuple[tuple[str, str], ...] = tuple(
    (n, t) for n, t in METRICS_COLUMNS if n not in ("INSERTED_AT", "UPDATED_AT")
)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def _stamp(epoch_s: float | None) -> dt.datetime | None:
    if epoch_s is None:
        return None
    return _EPOCH + dt.timedelta(microseconds=round(float(epoch_s) * 1e6))


def _row(
    w: dict[str, Any],
    *,
    fleet: bool,
    raw: dict[str, Any],
    state: str | None = None,
    summary: bool = False,
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "RUN_ID": w["run_id"],
        "WORKER_ID": None if fleet else int(w["worker_id"]),
        "IS_FLEET": fleet,
        "IS_SUMMARY": summary,
        "POD_NAME": w.get("pod_name"),
        "NODE_NAME": w.get("node_name"),
        "WINDOW_START": _stamp(w.get("window_start")),
        "WINDOW_END": _stamp(w.get("end")),
        "CPU_MILLICORES": None if w.get("cpu_pct") is None else round(10 * w["cpu_pct"], 1),
        "RAW": json.dumps(raw, separators=(",", ":")),
        "WORKER_STATE": state,
        **_sdk_columns(w, summary),
    }
    for column, key in COLUMN_KEYS.items():
        row[column] = w.get(key)
    if not fleet:
        row["WORKERS_REPORTING"] = 1
    return row


def _sdk_columns(w: dict[str, Any], summary: bool) -> dict[str, Any]:
    """SDK (the line's ``sdk`` object, as JSON for the VARIANT) and SDK_THROTTLED (the
    window's throttle counts added up; a summary's: its throttled windows); NULL when the
    line has no SDK figures."""
    sdk = w.get("sdk")
    if sdk is None:
        return {"SDK": None, "SDK_THROTTLED": None}
    if summary:
        throttled = w.get("sdk_throttled_windows")
    else:
        throttled = sum(int(v or 0) for v in (sdk.get("throttle") or {}).values())
    return {"SDK": json.dumps(sdk, separators=(",", ":")), "SDK_THROTTLED": throttled}


def worker_row(line: dict[str, Any], state: str = "running") -> dict[str, Any]:
    """The metrics row of one worker's window line (RAW: the line itself), in ``state``
    (``running``, ``done`` or ``failed``)."""
    return _row(line, fleet=False, raw=line, state=state)


def fleet_row(run_id: str, fleet: dict[str, Any]) -> dict[str, Any]:
    """The metrics row of a fleet window (from :func:`..fleet.report.aggregate_window`)."""
    return _row({**fleet, "run_id": run_id}, fleet=True, raw=fleet)


def summary_row(
    summary: dict[str, Any], span: tuple[float, float] | None, state: str
) -> dict[str, Any]:
    """The metrics row of a worker's summary line: its whole-run totals (ROWS_APPENDED:
    the rows it generated, each with its own TXID and appended once, as ``fleet.verify``
    expects; the sum of its windows' rows; BYTES_APPENDED and ROWS_ACKED warmup's
    included, as its windows add up: the line's own ``bytes_sent``/``rows_acked`` leave
    warmup out), over ``span`` (its first window's start and its last window's end; None:
    it had no window), in ``state`` (``done``/``failed``). TARGET_BPS: its mean target
    over its sending window."""
    seconds = float(summary.get("seconds") or 0)
    cpu = summary.get("cpu_s")
    line = {
        **summary,
        "window_start": None if span is None else span[0],
        "end": None if span is None else span[1],
        "window_seconds": seconds or None,
        "partial": None,
        "rows": summary.get("rows_generated", summary.get("rows_sent")),
        "bytes": _whole_run(summary, "bytes_sent"),
        "acked_rows": _whole_run(summary, "rows_acked"),
        "acks": None,
        "in_flight_bytes": None,
        "cpu_pct": None if cpu is None or seconds < 1e-3 else round(100 * float(cpu) / seconds, 1),
        "rss_mib": summary.get("peak_rss_mib"),
    }
    return _row(line, fleet=False, raw=summary, state=state, summary=True)


def _whole_run(summary: dict[str, Any], key: str) -> int | None:
    """A summary's ``key`` with its warmup's added (``warmup_<key>``)."""
    value = summary.get(key)
    if value is None:
        return None
    return int(value) + int(summary.get(f"warmup_{key}") or 0)


def from_row(row: dict[str, Any]) -> dict[str, Any]:
    """A metrics row read back, as a window dict with the line's keys."""
    out: dict[str, Any] = {
        "run_id": row.get("RUN_ID"),
        "worker_id": row.get("WORKER_ID"),
        "is_fleet": bool(row.get("IS_FLEET")),
        "is_summary": bool(row.get("IS_SUMMARY")),
        "window_start": _epoch(row.get("WINDOW_START")),
        "end": _epoch(row.get("WINDOW_END")),
        "state": row.get("WORKER_STATE"),
    }
    for column, key in COLUMN_KEYS.items():
        if column in row:
            value = row[column]
            out[key] = float(value) if hasattr(value, "as_tuple") else value  # Decimal
    if row.get("SDK") is not None:  # a VARIANT reads back as its JSON text, or parsed
        sdk = row["SDK"]
        out["sdk"] = json.loads(sdk) if isinstance(sdk, (str, bytes)) else sdk
        out["sdk_throttled_count"] = row.get("SDK_THROTTLED")
    return out


def _epoch(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        return (value - _EPOCH) / dt.timedelta(seconds=1)
    return float(value)
