"""What landed: every generated TXID of a run looked up in the target table."""

from __future__ import annotations

from typing import Any


def verify_landed(emu: Any, run_id: str, summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """rows_landed, duplicates and lost for this run, and ingest-to-visible latency."""
    emu.wait_landed(timeout_s=120)
    rid = run_id.replace("'", "''")
    rows = emu.query(
        "SELECT WORKER_ID, count(*), count(DISTINCT TXID) FROM RESORT_SALES "
        f"WHERE RUN_ID = '{rid}' GROUP BY WORKER_ID"
    )
    landed = {int(w): (int(n), int(d)) for w, n, d in rows}
    expected = {
        s["worker_id"]: s.get("next_seq", 0) - s.get("first_seq", 0) for s in summaries if s
    }
    total_rows = sum(n for n, _ in landed.values())
    distinct = sum(d for _, d in landed.values())
    lost = sum(max(0, exp - landed.get(w, (0, 0))[1]) for w, exp in expected.items())
    lat = emu.query(
        "SELECT quantile_cont(ms, 0.5), quantile_cont(ms, 0.99), count(*) FROM ("
        "SELECT epoch_ms(_COMMIT_TIME) - epoch_ms(SALE_TIME) AS ms FROM RESORT_SALES "
        f"WHERE RUN_ID = '{rid}')"
    )[0]
    return {
        "rows_expected": sum(expected.values()),
        "rows_landed": total_rows,
        "duplicates": total_rows - distinct,
        "lost": lost,
        "visible_p50_ms": None if lat[0] is None else round(float(lat[0]), 1),
        "visible_p99_ms": None if lat[1] is None else round(float(lat[1]), 1),
    }
