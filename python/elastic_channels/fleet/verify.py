"""What landed: every generated TXID of a run looked up in the target table.

A worker's rows carry TXIDs ``{run_id}-{worker_id}-{seq}`` with ``seq`` counting up
from its first row, so what each worker sent is known exactly from its summary. A
worker killed before its summary (SIGKILL, OOM) could have had rows in flight that
were never acked and never landed: its loss is unknown. What is known is reported:
the rows missing below the last one of its that landed (sent, and lost), and the
unacked bytes at its last window, a bound on what it still held when it died.
"""

from __future__ import annotations

from typing import Any


def _quote(text: str) -> str:
    return text.replace("'", "''")


def verify_landed(
    emu: Any,
    run_id: str,
    summaries: list[dict[str, Any]],
    killed: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """rows_landed, duplicates and lost for this run, and ingest-to-visible latency.

    ``killed`` lists the workers that ended without a summary, as
    ``{"worker_id", "exit_code", "last_window"}`` (the last window line seen, or None).
    With any of them ``lost`` is None (unknown) and ``killed_workers`` says what is known.
    """
    emu.wait_landed(timeout_s=120)
    rid = _quote(run_id)
    rows = emu.query(
        "SELECT WORKER_ID, count(*), count(DISTINCT TXID), "
        "max(CAST(regexp_extract(TXID, '([0-9]+)$', 1) AS BIGINT)) FROM RESORT_SALES "
        f"WHERE RUN_ID = '{rid}' GROUP BY WORKER_ID"
    )
    landed = {int(w): (int(n), int(d), None if m is None else int(m)) for w, n, d, m in rows}
    expected = {
        s["worker_id"]: s.get("rows_generated", s.get("next_seq", 0) - s.get("first_seq", 0))
        for s in summaries
    }
    total_rows = sum(n for n, _, _ in landed.values())
    distinct = sum(d for _, d, _ in landed.values())
    lost = sum(max(0, exp - landed.get(w, (0, 0, None))[1]) for w, exp in expected.items())
    gone = [_killed_report(k, landed.get(k["worker_id"])) for k in killed or []]
    lat = emu.query(
        "SELECT quantile_cont(ms, 0.5), quantile_cont(ms, 0.99), count(*) FROM ("
        "SELECT epoch_ms(_COMMIT_TIME) - epoch_ms(SALE_TIME) AS ms FROM RESORT_SALES "
        f"WHERE RUN_ID = '{rid}')"
    )[0]
    iceberg = _iceberg_report(emu, run_id)
    return {
        **({"iceberg": iceberg} if iceberg is not None else {}),
        "rows_expected": sum(expected.values()) if not gone else None,
        "rows_landed": total_rows,
        "duplicates": total_rows - distinct,
        "lost": lost if not gone else None,
        "lost_known": lost + sum(k["missing_below_last_landed"] for k in gone),
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


def _killed_report(k: dict[str, Any], landed: tuple[int, int, int | None] | None) -> dict:
    """What is known of a worker that left no summary. Its rows start at seq 0."""
    _, distinct, last_seq = landed or (0, 0, None)
    window = k.get("last_window") or {}
    return {
        "worker_id": k["worker_id"],
        "exit_code": k.get("exit_code"),
        "rows_landed": distinct,
        "missing_below_last_landed": 0 if last_seq is None else last_seq + 1 - distinct,
        "unacked_bytes_at_last_window": window.get("in_flight_bytes"),
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
        held = k["unacked_bytes_at_last_window"]
        bound = "unknown" if held is None else f"{held / 1e6:.1f} MB unacked at its last window"
        parts.append(
            f"worker {k['worker_id']} ended without a summary (exit {k['exit_code']}): "
            f"{k['missing_below_last_landed']:,} rows missing below its last landed row; "
            f"rows it still held are lost (at most {bound})"
        )
    return (
        f"landed {landed['rows_landed']:,} rows: {landed['duplicates']:,} duplicates, lost "
        f"unknown (at least {landed['lost_known']:,}); {tail}\n  " + "\n  ".join(parts)
    )
