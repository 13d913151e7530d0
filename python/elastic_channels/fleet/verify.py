"""What landed: every generated unique id of a run looked up in the target table.

A worker's rows carry unique ids ``{run_id}-{worker_id}-{seq}`` (resort sales' TXID, or
the column a workload declares ``unique_id``), ``seq`` counting up from its channel's
first (channel ``c`` of a ``--channels`` worker from ``c * 2**48``), so what each worker
generated is known exactly from its summary (``rows_generated``). A worker killed
before its summary (SIGKILL, OOM) may have had rows in flight that were never acked and
never land: its loss is unknown, and bounded (``verify_killed.py``).

A workload without a unique id column is accepted, but its rows cannot be told apart:
the run's rows are counted (by its run id column, if it has one) and loss and
duplicates are unknown, ``"lost": None`` with ``lost_unknown_reason``.
"""

from __future__ import annotations

import re
from typing import Any

from ..landing_table import LandingTable, landing_table
from ..model import METRICS_TABLE_NAME
from .local import describe_exit
from .verify_killed import (
    BURST_S,
    CHANNEL_SEQ_STRIDE,
    MAX_QUANTUM_S,
    killed_bounds,
    killed_report,
    min_row_bytes,
)

__all__ = [
    "BURST_S", "CHANNEL_SEQ_STRIDE", "MAX_QUANTUM_S", "NO_UNIQUE_ID", "describe",
    "killed_bounds", "loss_accepted", "min_row_bytes", "rows_of_run", "verify_landed",
]  # fmt: skip

#: Why loss is unknown for a workload without a unique id column.
NO_UNIQUE_ID = (
    "the workload has no unique_id column, so its rows cannot be told apart: loss and "
    "duplicates cannot be counted"
)


def _quote(text: str) -> str:
    return text.replace("'", "''")


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def run_filter(land: LandingTable, run_id: str) -> str | None:
    """A WHERE condition for the run's rows of ``land``'s table: its run id column, else
    its unique ids of the form ``{run_id}-{worker}-{seq}``; None when it has neither."""
    rid = _quote(run_id)
    if land.run_id is not None:
        return f"{_ident(land.run_id)} = '{rid}'"
    if land.unique_id is not None:
        uid = _ident(land.unique_id)
        rest = f"substr({uid}, {len(run_id) + 2})"
        return f"starts_with({uid}, '{rid}-') AND regexp_full_match({rest}, '[0-9]+-[0-9]+')"
    return None


def rows_of_run(emu: Any, run_id: str, land: LandingTable | None = None) -> dict[str, int]:
    """The rows the emulator's tables already hold for ``run_id``: {table: rows}, for the
    landing table (when its rows say their run) and the metrics table (when there is
    one), leaving out those with none. A run must have a fresh id: rows of another run
    with its id would be counted as its own (duplicates, visible latency, windows)."""
    land = land or landing_table()
    where = run_filter(land, run_id)
    held: dict[str, int] = {}
    if where is not None:
        table = emu.config.table
        held[table] = emu.query(f"SELECT count(*) FROM {_ident(table)} WHERE {where}")[0][0]
    metrics = emu.query(
        f"SELECT count(*) FROM duckdb_tables() WHERE upper(table_name) = '{METRICS_TABLE_NAME}'"
    )
    if metrics[0][0]:
        rid = _quote(run_id)
        sql = f"SELECT count(*) FROM {METRICS_TABLE_NAME} WHERE RUN_ID = '{rid}'"
        held[METRICS_TABLE_NAME] = emu.query(sql)[0][0]
    return {t: int(n) for t, n in held.items() if n}


def loss_accepted(landed: dict[str, Any] | None) -> bool:
    """Whether what landed lets a run pass: nothing lost, nothing to check (an account),
    or loss unknown only because the workload has no unique id (the run says so; a
    killed worker's unknown loss fails it)."""
    if landed is None or landed["lost"] == 0:
        return True
    return landed["lost"] is None and landed.get("lost_unknown_reason") == NO_UNIQUE_ID


def _visible(
    emu: Any, land: LandingTable, where: str | None, sent_from: float | None = None
) -> dict[str, float | None]:
    """Ingest-to-visible p50/p99 of the run's rows: commit time less send time (None
    without a send-time column or a way to find the run's rows); with ``sent_from``
    (epoch seconds: the end of warmup) of the rows sent from then on only, the rows the
    run's figures are of. ``visible_sent_from`` says which."""
    lat: tuple[Any, ...] = (None, None)
    if land.send_time is not None and where is not None:
        sent = _ident(land.send_time)
        after = "" if sent_from is None else f" AND epoch_ms({sent}) >= {int(sent_from * 1000)}"
        lat = emu.query(
            "SELECT quantile_cont(ms, 0.5), quantile_cont(ms, 0.99), count(*) FROM ("
            f"SELECT epoch_ms(_COMMIT_TIME) - epoch_ms({sent}) AS ms "
            f"FROM {_ident(land.name)} WHERE {where}{after})"
        )[0]
    return {
        "visible_p50_ms": None if lat[0] is None else round(float(lat[0]), 1),
        "visible_p99_ms": None if lat[1] is None else round(float(lat[1]), 1),
        "visible_sent_from": sent_from,
    }


def _unknown_loss(
    emu: Any,
    land: LandingTable,
    where: str | None,
    summaries: list[dict[str, Any]],
    sent_from: float | None = None,
) -> dict[str, Any]:
    """What can be said of a run whose rows cannot be told apart (no unique id)."""
    landed = None
    if where is not None:
        landed = int(emu.query(f"SELECT count(*) FROM {_ident(land.name)} WHERE {where}")[0][0])
    return {
        "rows_expected": sum(_generated(s) for s in summaries),
        "rows_landed": landed,
        "duplicates": None,
        "lost": None,
        "lost_unknown_reason": NO_UNIQUE_ID,
        "lost_at_least": None,
        "lost_at_most": None,
        "killed_workers": [],
        **_visible(emu, land, where, sent_from),
    }


def _generated(summary: dict[str, Any]) -> int:
    return int(
        summary.get("rows_generated", summary.get("next_seq", 0) - summary.get("first_seq", 0))
    )


def verify_landed(
    emu: Any,
    run_id: str,
    summaries: list[dict[str, Any]],
    killed: list[dict[str, Any]] | None = None,
    pacing: dict[str, Any] | None = None,
    land: LandingTable | None = None,
    sent_from: float | None = None,
) -> dict[str, Any]:
    """rows_landed, duplicates and lost for this run, and ingest-to-visible latency, in
    ``land``'s table (resort sales by default): of the rows sent from ``sent_from``
    (epoch seconds; the end of warmup) on, when given.

    ``killed`` lists the workers that ended without a summary, as ``{"worker_id",
    "exit_code", "windows" (every window line seen), "started_at", "exited_at"}`` (epoch
    s: when it was started, when it was first seen dead). ``pacing`` is what every
    worker was told (``target_bps``, ``batch_bytes``, ``channels``), or None if unknown.
    With any killed worker ``lost`` and ``rows_expected`` are None (unknown), and
    ``lost_at_least``/``lost_at_most`` and ``rows_expected_at_least``/``_at_most``
    bound them (``_at_most`` None when no true bound is known); ``killed_workers`` says
    what is known of each. Without a unique id column ``lost`` is None and
    ``lost_unknown_reason`` says why.
    """
    land = land or landing_table()
    emu.wait_landed(timeout_s=120)
    where = run_filter(land, run_id)
    if land.unique_id is None or where is None:
        return _unknown_loss(emu, land, where, summaries, sent_from)
    uid = _ident(land.unique_id)
    worker = (
        f"CAST({_ident(land.worker_id)} AS BIGINT)"
        if land.worker_id is not None
        else f"CAST(regexp_extract({uid}, '-([0-9]+)-[0-9]+$', 1) AS BIGINT)"
    )
    rows = emu.query(
        f"SELECT W, seq // {CHANNEL_SEQ_STRIDE} AS CH, count(*), count(DISTINCT U), max(seq) "
        f"FROM (SELECT {worker} AS W, {uid} AS U, "
        f"CAST(regexp_extract({uid}, '([0-9]+)$', 1) AS BIGINT) AS seq "
        f"FROM {_ident(land.name)} WHERE {where}) GROUP BY 1, 2"
    )
    channels: dict[int, dict[int, tuple[int, int]]] = {}  # worker -> channel -> (distinct, max)
    total_rows = distinct = 0
    for w, ch, n, d, m in rows:
        channels.setdefault(int(w), {})[int(ch)] = (int(d), int(m))
        total_rows, distinct = total_rows + int(n), distinct + int(d)
    landed = {w: sum(d for d, _ in chs.values()) for w, chs in channels.items()}
    expected = {s["worker_id"]: _generated(s) for s in summaries}
    lost = sum(max(0, exp - landed.get(w, 0)) for w, exp in expected.items())
    gone = [
        killed_report(run_id, k, channels.get(k["worker_id"], {}), pacing, land)
        for k in killed or []
    ]
    iceberg = _iceberg_report(emu, run_id, land)
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
        **_visible(emu, land, where, sent_from),
    }


def _iceberg_report(emu: Any, run_id: str, land: LandingTable) -> dict[str, Any] | None:
    """For an Iceberg table: its current snapshot, the files written, and this run's rows
    as pyiceberg itself reads them from the catalog (not through the emulator's SQL)."""
    store = getattr(emu, "store", None)
    if store is None or not hasattr(store, "iceberg_summary") or land.unique_id is None:
        return None
    import pyarrow.compute as pc
    from pyiceberg.expressions import AlwaysTrue, EqualTo

    out = store.iceberg_summary()
    table = store.iceberg.catalog.load_table(store.iceberg.identifier)  # a fresh read
    # EqualTo's __init__ is (term, literal); mypy sees its pydantic fields instead.
    run_rows = (
        AlwaysTrue() if land.run_id is None else EqualTo(land.run_id, run_id)  # type: ignore[call-arg, arg-type]
    )
    ids = table.scan(row_filter=run_rows, selected_fields=(land.unique_id,)).to_arrow()
    ids = ids[land.unique_id]
    if land.run_id is None:  # the run's ids: {run_id}-{worker}-{seq}
        ids = ids.filter(pc.match_substring_regex(ids, f"^{re.escape(run_id)}-[0-9]+-[0-9]+$"))
    out["run_rows_read_by_pyiceberg"] = len(ids)
    out["run_distinct_txids_read_by_pyiceberg"] = int(pc.count_distinct(ids).as_py())
    return out


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
    if landed.get("lost_unknown_reason"):
        n = landed["rows_landed"]
        count = (
            "its rows cannot be found (no run id column either)"
            if n is None
            else f"landed {n:,} rows of this run"
        )
        return (
            f"{count}, {landed['rows_expected']:,} generated; lost unknown: "
            f"{landed['lost_unknown_reason']}; {tail}"
        )
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
            f"worker {k['worker_id']} ended without a summary "
            f"({describe_exit(k['exit_code'])}): "
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
