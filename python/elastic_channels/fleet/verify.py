"""What landed: every generated TXID of a run looked up in the target table.

A worker's rows carry TXIDs ``{run_id}-{worker_id}-{seq}``, ``seq`` counting up from its
channel's first (channel ``c`` of a ``--channels`` worker from ``c * 2**48``), so what
each worker generated is known exactly from its summary (``rows_generated``). A worker
killed before its summary (SIGKILL, OOM) may have had rows in flight that were never
acked and never land: its loss is unknown, and bounded (:func:`killed_bounds`):

- at least: the rows it generated for certain (its window lines' rows, and every
  sequence number up to the highest of its TXIDs that landed) that did not land;
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

from ..model import COLUMNS, METRICS_TABLE_NAME

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
#: RFC 3339 with seconds and a zone: the shortest SALE_TIME the generator writes.
_SHORTEST_TIME = len("2026-01-01T00:00:00Z")


def _quote(text: str) -> str:
    return text.replace("'", "''")


def min_row_bytes(run_id: str, worker_id: int) -> int:
    """A floor on the NDJSON length of any row of this worker: every column a key, every
    string at least its quotes, every number a digit; TXID, RUN_ID, WORKER_ID and
    SALE_TIME at least as long as they must be; commas, braces and the newline."""
    wid = len(str(worker_id))
    values = {
        "TXID": 2 + len(run_id) + 1 + wid + 1 + 1,
        "RUN_ID": 2 + len(run_id),
        "WORKER_ID": wid,
        "SALE_TIME": 2 + _SHORTEST_TIME,
    }
    total = 2 + (len(COLUMNS) - 1) + 1
    for name, sf_type in COLUMNS:
        default = 2 if sf_type.startswith(("VARCHAR", "TIMESTAMP")) else 1
        total += len(name) + 3 + values.get(name, default)
    return total


def rows_of_run(emu: Any, run_id: str) -> dict[str, int]:
    """The rows the emulator's tables already hold for ``run_id``: {table: rows}, for the
    landing table and the metrics table (when there is one), leaving out those with none.
    A run must have a fresh id: rows of another run with its id would be counted as its
    own (duplicates, visible latency, windows)."""
    rid = _quote(run_id)
    tables = [emu.config.table]
    metrics = emu.query(
        f"SELECT count(*) FROM duckdb_tables() WHERE upper(table_name) = '{METRICS_TABLE_NAME}'"
    )
    if metrics[0][0]:
        tables.append(METRICS_TABLE_NAME)
    held = {t: emu.query(f"SELECT count(*) FROM {t} WHERE RUN_ID = '{rid}'")[0][0] for t in tables}
    return {t: int(n) for t, n in held.items() if n}


def verify_landed(
    emu: Any,
    run_id: str,
    summaries: list[dict[str, Any]],
    killed: list[dict[str, Any]] | None = None,
    pacing: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """rows_landed, duplicates and lost for this run, and ingest-to-visible latency.

    ``killed`` lists the workers that ended without a summary, as ``{"worker_id",
    "exit_code", "windows" (every window line seen), "started_at", "exited_at"}`` (epoch
    s: when it was started, when it was first seen dead). ``pacing`` is what every
    worker was told (``target_bps``, ``batch_bytes``, ``channels``), or None if unknown.
    With any killed worker ``lost`` and ``rows_expected`` are None (unknown), and
    ``lost_at_least``/``lost_at_most`` and ``rows_expected_at_least``/``_at_most``
    bound them (``_at_most`` None when no true bound is known); ``killed_workers`` says
    what is known of each.
    """
    emu.wait_landed(timeout_s=120)
    rid = _quote(run_id)
    rows = emu.query(
        "SELECT WORKER_ID, seq // {s} AS CH, count(*), count(DISTINCT TXID), max(seq) FROM ("
        "SELECT WORKER_ID, TXID, CAST(regexp_extract(TXID, '([0-9]+)$', 1) AS BIGINT) AS seq "
        f"FROM RESORT_SALES WHERE RUN_ID = '{rid}') GROUP BY 1, 2".replace(
            "{s}", str(CHANNEL_SEQ_STRIDE)
        )
    )
    channels: dict[int, dict[int, tuple[int, int]]] = {}  # worker -> channel -> (distinct, max)
    total_rows = distinct = 0
    for w, ch, n, d, m in rows:
        channels.setdefault(int(w), {})[int(ch)] = (int(d), int(m))
        total_rows, distinct = total_rows + int(n), distinct + int(d)
    landed = {w: sum(d for d, _ in chs.values()) for w, chs in channels.items()}
    expected = {
        s["worker_id"]: s.get("rows_generated", s.get("next_seq", 0) - s.get("first_seq", 0))
        for s in summaries
    }
    lost = sum(max(0, exp - landed.get(w, 0)) for w, exp in expected.items())
    gone = [
        _killed_report(run_id, k, channels.get(k["worker_id"], {}), pacing) for k in killed or []
    ]
    lat = emu.query(
        "SELECT quantile_cont(ms, 0.5), quantile_cont(ms, 0.99), count(*) FROM ("
        "SELECT epoch_ms(_COMMIT_TIME) - epoch_ms(SALE_TIME) AS ms FROM RESORT_SALES "
        f"WHERE RUN_ID = '{rid}')"
    )[0]
    iceberg = _iceberg_report(emu, run_id)
    at_most = [k["rows_generated_at_most"] for k in gone]
    known = sum(expected.values())
    return {
        **({"iceberg": iceberg} if iceberg is not None else {}),
        "rows_expected": known if not gone else None,
        "rows_expected_at_least": known + sum(k["rows_generated_at_least"] for k in gone),
        "rows_expected_at_most": None if None in at_most else known + sum(at_most),  # type: ignore[arg-type]
        "rows_landed": total_rows,
        "duplicates": total_rows - distinct,
        "lost": lost if not gone else None,
        "lost_at_least": lost + sum(k["lost_at_least"] for k in gone),
        "lost_at_most": None
        if any(k["lost_at_most"] is None for k in gone)
        else lost + sum(k["lost_at_most"] for k in gone),
        "killed_workers": gone,
        "visible_p50_ms": None if lat[0] is None else round(float(lat[0]), 1),
        "visible_p99_ms": None if lat[1] is None else round(float(lat[1]), 1),
    }


def _iceberg_report(emu: Any, run_id: str) -> dict[str, Any] | None:
    """For an Iceberg table: its current snapshot, the files written, and this run's rows
    as pyiceberg itself reads them from the catalog (not through the emulator's SQL)."""
    store = getattr(emu, "store", None)
    if store is None or not hasattr(store, "iceberg_summary"):
        return None
    import pyarrow.compute as pc
    from pyiceberg.expressions import EqualTo

    out = store.iceberg_summary()
    table = store.iceberg.catalog.load_table(store.iceberg.identifier)  # a fresh read
    # EqualTo's __init__ is (term, literal); mypy sees its pydantic fields instead.
    run_rows = EqualTo("RUN_ID", run_id)  # type: ignore[call-arg, arg-type]
    rows = table.scan(row_filter=run_rows, selected_fields=("TXID",)).to_arrow()
    out["run_rows_read_by_pyiceberg"] = rows.num_rows
    out["run_distinct_txids_read_by_pyiceberg"] = int(pc.count_distinct(rows["TXID"]).as_py())
    return out


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


def _killed_report(
    run_id: str,
    k: dict[str, Any],
    channels: dict[int, tuple[int, int]],
    pacing: dict[str, Any] | None,
) -> dict[str, Any]:
    """What is known of a worker that left no summary, from its window lines and the
    TXIDs of it that landed (``channels``: channel -> (distinct landed, highest seq))."""
    windows = k.get("windows") or []
    distinct = sum(d for d, _ in channels.values())
    below = sum(m - ch * CHANNEL_SEQ_STRIDE + 1 for ch, (_, m) in channels.items())
    row_bytes = min_row_bytes(run_id, int(k["worker_id"]))
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


def describe(landed: dict[str, Any]) -> str:
    """The landed line ``elastic-channels run`` prints (and one for an Iceberg table)."""
    ice = landed.get("iceberg")
    if ice is None:
        return _describe(landed)
    return _describe(landed) + (
        f"\nIceberg table {ice['warehouse']}: snapshot {ice['snapshot_id']}, "
        f"{ice['data_files']} data file(s) ({ice['files_written']} written, "
        f"{ice['bytes_written'] / 1e6:.1f} MB, {ice['compactions']} compaction(s)); pyiceberg "
        f"reads {ice['run_rows_read_by_pyiceberg']:,} rows of this run "
        f"({ice['run_distinct_txids_read_by_pyiceberg']:,} distinct TXIDs)"
    )


def _describe(landed: dict[str, Any]) -> str:
    tail = f"ingest-to-visible p50 {landed['visible_p50_ms']} ms, p99 {landed['visible_p99_ms']} ms"
    if landed["lost"] is not None:
        return (
            f"landed {landed['rows_landed']:,} rows of {landed['rows_expected']:,} generated: "
            f"{landed['duplicates']:,} duplicates, {landed['lost']:,} lost; {tail}"
        )
    parts = []
    for k in landed["killed_workers"]:
        most = k["lost_at_most"]
        bound = (
            f"at most {most:,}: it appended {k['rows_appended_by_last_line']:,} rows by its "
            f"last window line, and its pacing allowed {k['rows_appendable_after_last_line']:,} "
            "more until it was seen dead"
            if most is not None
            else "no true upper bound: its pacing is not known"
        )
        parts.append(
            f"worker {k['worker_id']} ended without a summary (exit {k['exit_code']}): "
            f"{k['rows_landed']:,} of its rows landed, {k['missing_below_last_landed']:,} "
            f"missing below its last landed row; lost unknown, at least "
            f"{k['lost_at_least']:,}, {bound}"
        )
    most = landed["lost_at_most"]
    return (
        f"landed {landed['rows_landed']:,} rows: {landed['duplicates']:,} duplicates, lost "
        f"unknown (at least {landed['lost_at_least']:,}, "
        f"{'at most ' + format(most, ',') if most is not None else 'no upper bound known'}); "
        f"{tail}\n  " + "\n  ".join(parts)
    )
