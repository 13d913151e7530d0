"""A worker killed before its summary: what is known of its rows, and the bounds on its
loss (``verify.py`` says how they are used).

- at least: the rows it generated for certain (its window lines' rows, and every
  sequence number up to the highest of its unique ids that landed) that did not land;
- at most: the rows it appended by the end of its last window line, plus what its
  pacing let it append from then until it was seen dead, less what landed. Pacing
  (``worker/pacing.py``) books bytes at the target rate, lets a late sender catch up by
  ``BURST_S`` and run ahead by a sleep quantum (at most ``MAX_QUANTUM_S``), plus the
  batch in hand: at most ``rate * (dt + quantum + burst)`` bytes + 2 batches a channel.
  Bytes become rows by :func:`min_row_bytes`, a floor on any row's NDJSON length.
  Without the worker's pacing (a ``--worker-arg`` changed it) there is no bound: None.
"""

from __future__ import annotations

import math
from typing import Any

from ..landing_table import LandingTable, landing_table

__all__ = [
    "BURST_S", "CHANNEL_SEQ_STRIDE", "CLOCK_SLACK_S", "MAX_QUANTUM_S", "killed_bounds",
    "killed_report", "min_row_bytes",
]  # fmt: skip

#: Channel c of a worker numbers its rows from c * CHANNEL_SEQ_STRIDE (worker/multi.py).
CHANNEL_SEQ_STRIDE = 2**48
#: The pacer's catch-up allowance (``Pacer(burst_seconds=...)``'s default, which the
#: worker keeps) and the largest sleep quantum a worker accepts (``--sleep-quantum-ms``
#: is at most 1000).
BURST_S = 0.25
MAX_QUANTUM_S = 1.0
#: Slack for the two clocks compared (the worker's window end, this process's time of
#: seeing it dead: both wall clocks of this machine).
CLOCK_SLACK_S = 1.0
#: The shortest value msgspec writes for a column of each type, quotes included: RFC
#: 3339 with seconds and a zone (``"2026-01-01T00:00:00Z"``), without the zone, a date.
_SHORTEST = {"TIMESTAMP_TZ": 22, "TIMESTAMP_NTZ": 21, "DATE": 12}


def min_row_bytes(run_id: str, worker_id: int, land: LandingTable | None = None) -> int:
    """A floor on the NDJSON length of any row of this worker (of ``land``'s workload,
    resort sales by default): every column a key, every string at least its quotes,
    every number a digit, every timestamp and date as short as msgspec writes one; the
    unique id, run id and worker id as long as they must be; commas, braces, newline."""
    land = land or landing_table()
    wid = len(str(worker_id))
    values = {
        land.unique_id: 2 + len(run_id) + 1 + wid + 1 + 1,
        land.run_id: 2 + len(run_id),
    }
    total = 2 + (len(land.columns) - 1) + 1
    for name, sf_type in land.columns:
        kind = sf_type.split("(")[0].strip().upper()
        default = _SHORTEST.get(kind, 2 if kind == "VARCHAR" else 1)
        if name == land.worker_id:
            default = wid + (2 if kind == "VARCHAR" else 0)
        total += len(name) + 3 + values.get(name, default)
    return total


def killed_bounds(
    windows: list[dict[str, Any]],
    since: float,
    exited_at: float,
    pacing: dict[str, Any] | None,
    row_bytes: int,
) -> tuple[int, int | None]:
    """(rows it appended by its last window line, rows it could have appended after
    that line until ``exited_at`` at most: None without its pacing). ``since``: when
    it was started, for a worker that printed no window line."""
    appended = sum(int(w.get("rows") or 0) for w in windows)
    if pacing is None:
        return appended, None
    last = max((_counted_until(w) for w in windows), default=since)
    n = max(int(w.get("channels") or 1) for w in windows) if windows else None
    n = n or pacing.get("channels")
    if not n:
        return appended, None
    seconds = max(0.0, exited_at - last) + MAX_QUANTUM_S + BURST_S + CLOCK_SLACK_S
    batch_rows = math.floor(int(pacing["batch_bytes"]) / row_bytes)  # rows_per_batch at most
    after = math.floor(float(pacing["target_bps"]) * seconds / row_bytes) + 2 * n * batch_rows
    return appended, after


def _counted_until(w: dict[str, Any]) -> float:
    """Every row sent before this instant is in this window line or an earlier one: its
    end, and no later than its nominal end (a --channels worker's line merges its
    channels' windows, each closed at or after the nominal end, and ends at the last)."""
    end = float(w["end"])
    if w.get("window_start") is None or not w.get("window_seconds"):
        return end
    return min(end, float(w["window_start"]) + float(w["window_seconds"]))


def killed_report(
    run_id: str,
    k: dict[str, Any],
    channels: dict[int, tuple[int, int]],
    pacing: dict[str, Any] | None,
    land: LandingTable | None = None,
) -> dict[str, Any]:
    """What is known of a worker that left no summary, from its window lines and the
    unique ids of it that landed (``channels``: channel -> (distinct landed, highest
    seq))."""
    windows = k.get("windows") or []
    distinct = sum(d for d, _ in channels.values())
    below = sum(m - ch * CHANNEL_SEQ_STRIDE + 1 for ch, (_, m) in channels.items())
    row_bytes = min_row_bytes(run_id, int(k["worker_id"]), land)
    appended, after = killed_bounds(
        windows, float(k.get("started_at") or 0), float(k.get("exited_at") or 0), pacing, row_bytes
    )
    if k.get("exited_at") is None or (k.get("started_at") is None and not windows):
        after = None  # no time to bound it by
    at_least = max(appended, below)
    at_most = None if after is None else appended + after
    last = windows[-1] if windows else {}
    return {
        "worker_id": k["worker_id"],
        "exit_code": k.get("exit_code"),
        "rows_landed": distinct,
        "missing_below_last_landed": below - distinct,
        "rows_appended_by_last_line": appended,
        "rows_acked_by_last_line": sum(int(w.get("acked_rows") or 0) for w in windows),
        "unacked_bytes_at_last_window": last.get("in_flight_bytes"),
        "rows_appendable_after_last_line": after,
        "rows_generated_at_least": at_least,
        "rows_generated_at_most": at_most,
        "lost_at_least": at_least - distinct,
        "lost_at_most": None if at_most is None else at_most - distinct,
        "lost": "unknown",
    }
