"""Data for the dashboard tests: an emulator data dir holding a real run's landed rows,
and a metrics table standing in for the monitor's (written with the setup DDL's columns).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

REPO = Path(__file__).resolve().parents[2]
APP_DIR = REPO / "python" / "elastic_channels" / "dashboard"

#: Snowflake type (as ddl.METRICS_COLUMNS spells it) -> DuckDB type, for the stand-in.
_DUCK_TYPES = (
    ("NUMBER", "BIGINT"), ("FLOAT", "DOUBLE"), ("VARCHAR", "VARCHAR"),
    ("TIMESTAMP_TZ", "TIMESTAMPTZ"), ("BOOLEAN", "BOOLEAN"), ("VARIANT", "JSON"),
)  # fmt: skip


@dataclass(frozen=True)
class LandedRun:
    data_dir: Path
    run_id: str
    rows_landed: int


def run_into(
    data_dir: Path,
    seconds: int = 3,
    workers: int = 1,
    *,
    monitor: bool = False,
    table_format: str = "native",
) -> LandedRun:
    """A real ``elastic-channels run`` into the embedded emulator at ``data_dir``; with
    ``monitor`` its in-process monitor writes the metrics table, else the table is absent
    (the tests of the Run page write their own)."""
    cmd = [
        sys.executable, "-m", "elastic_channels", "run", "--workers", str(workers),
        "--target-bps", "5e6", "--duration-seconds", str(seconds),
        "--data-dir", str(data_dir), "--json", *([] if monitor else ["--no-monitor"]),
        "--table-format", table_format,
    ]  # fmt: skip
    proc = subprocess.run(
        cmd, cwd=data_dir.parent, capture_output=True, text=True, timeout=240, check=False
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise AssertionError(
            f"run failed ({proc.returncode}): {proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
        )
    out = json.loads(lines[-1])
    return LandedRun(data_dir, out["run_id"], int(out["landed"]["rows_landed"]))


def render(monkeypatch: Any, page: str, data_dir: Path) -> Any:
    """The page script ``page`` (``run.py``, ``sales.py``) run once by AppTest on
    ``data_dir``; no exception allowed (errors are messages on the page)."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("ELASTIC_DASHBOARD_DATA_DIR", str(data_dir))
    at = AppTest.from_file(str(APP_DIR / "pages" / page), default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metric(at: Any, label: str) -> str:
    return str(next(m.value for m in at.metric if m.label == label))


def copy_dir(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("server.json", "*.wal"))
    return dst


def _duck_type(sf_type: str) -> str:
    t = sf_type.split(" DEFAULT ")[0].upper()
    for prefix, duck in _DUCK_TYPES:
        if t.startswith(prefix):
            return duck
    raise ValueError(f"no DuckDB type for {sf_type!r}")


def sql(data_dir: Path, query: str) -> list[tuple[Any, ...]]:
    """``query`` straight on the stopped emulator's file (the tests' independent oracle)."""
    con = duckdb.connect(str(data_dir / "emulator.duckdb"), read_only=True)
    try:
        con.execute("SET TimeZone = 'UTC'")
        # RESORT_SALES is a view over files/*.parquet, named relative to the data dir
        con.execute(f"SET file_search_path = '{data_dir.resolve()}'")
        return con.execute(query).fetchall()
    finally:
        con.close()


def write_metrics(data_dir: Path, run_id: str, rows: list[dict[str, Any]]) -> None:
    """Create ELASTIC_K8S_METRICS with the setup DDL's columns and insert ``rows``."""
    from elastic_channels.snowflake.ddl import METRICS_COLUMNS, METRICS_TABLE

    cols = [(n, _duck_type(t)) for n, t in METRICS_COLUMNS]
    con = duckdb.connect(str(data_dir / "emulator.duckdb"))
    try:
        con.execute("SET TimeZone = 'UTC'")
        body = ", ".join(f'"{n}" {t}' for n, t in cols)
        con.execute(f"CREATE TABLE IF NOT EXISTS {METRICS_TABLE} ({body})")
        names = [n for n, _ in cols]
        for r in rows:
            values = [r.get(n) for n in names]
            marks = ", ".join("?" for _ in names)
            con.execute(f"INSERT INTO {METRICS_TABLE} VALUES ({marks})", values)
        con.execute("CHECKPOINT")
    finally:
        con.close()


def fleet_windows(run_id: str, t0: float, n_windows: int = 8) -> list[dict[str, Any]]:
    """Metrics rows as the monitor writes them (its own ``worker_row`` / ``fleet_row``)
    for three workers over 1 s windows from ``t0``: 0 (the slowest) and 1 report every
    window; 2 stops after 3 windows, its last one counting errors (it failed)."""
    from elastic_channels.monitor.rows import fleet_row, worker_row

    rates = {0: 3.0, 1: 5.0, 2: 5.5}
    rows: list[dict[str, Any]] = []
    for i in range(n_windows):
        lines = []
        for w, mb_s in rates.items():
            if w == 2 and i >= 3:
                continue
            lines.append({
                "type": "window", "run_id": run_id, "worker_id": w,
                "window_start": t0 + i, "window_seconds": 1.0, "start": t0 + i,
                "end": t0 + i + 1, "rows": int(mb_s * 3400), "bytes": int(mb_s * 1e6),
                "acked_rows": int(mb_s * 3400), "acked_bytes": int(mb_s * 1e6), "acks": 10,
                "mb_per_s": mb_s + 0.1 * i,  # a window's rate drifts; the run's is mb_s
                "rows_per_s": mb_s * 3400, "ack_p50_ms": 50.0 + w, "ack_p99_ms": 120.0 + 10 * w + i,
                "in_flight_bytes": 1000 * w, "resent_batches": w, "sdk_retries": 0,
                "errors": 2 if (w == 2 and i == 2) else 0, "cpu_pct": 30.0 + w,
                "rss_mib": 90.0 + w, "behind_p99_ms": 5.0 * w, "behind_max_ms": 8.0 * w,
                "target_bps": 5e6,
            })  # fmt: skip
        rows.extend(worker_row(line) for line in lines)
        fleet = {
            "window_start": t0 + i, "window_seconds": 1.0, "start": t0 + i, "end": t0 + i + 1,
            "workers": len(lines), "rows": sum(x["rows"] for x in lines),
            "bytes": sum(x["bytes"] for x in lines),
            "mb_per_s": round(sum(x["bytes"] for x in lines) / 1e6, 3),
            "rows_per_s": float(sum(x["rows"] for x in lines)),
            "ack_p50_ms": 51.0, "ack_p99_ms": 130.0 + i, "errors": sum(x["errors"] for x in lines),
            "resent_batches": sum(x["resent_batches"] for x in lines), "sdk_retries": 0,
            "behind_p99_ms": 9.0, "behind_max_ms": 12.0,
            "visible_p50_ms": 800.0 + i, "visible_p99_ms": 1200.0 + i,
        }  # fmt: skip
        rows.append(fleet_row(run_id, fleet))
    return rows


def summary_rows(
    run_id: str,
    t0: float,
    generated: dict[int, int],
    n_windows: int = 30,
    unacked: dict[int, int] | None = None,
) -> list[dict[str, Any]]:
    """The monitor's summary rows (its own ``summary_row``, in the state it would give)
    for workers that generated ``generated[w]`` rows over windows from ``t0``, of which
    ``unacked[w]`` were never acknowledged."""
    from elastic_channels.monitor.rows import summary_row
    from elastic_channels.monitor.summaries import ended

    out = []
    for w, rows in generated.items():
        line = {
            "type": "summary", "run_id": run_id, "worker_id": w, "rows_generated": rows,
            "rows_sent": rows, "rows_acked": rows, "bytes_sent": rows * 290,
            "bytes_acked": rows * 290, "seconds": float(n_windows),
            "send_start": t0, "send_end": t0 + n_windows, "cpu_s": 3.0, "peak_rss_mib": 95.0,
            "resent_batches": w, "sdk_retries": 0, "errors": 0,
            "unacked_rows": (unacked or {}).get(w, 0),
            "first_seq": 0, "next_seq": rows,
        }  # fmt: skip
        out.append(summary_row(line, (t0, t0 + n_windows), ended(line)))
    return out


def duplicate_rows(data_dir: Path, run_id: str, n: int) -> None:
    """Land ``n`` of the run's rows a second time (as a resend whose first append did land),
    as one more data file of the stopped emulator's table."""
    from elastic_channels.emulator.emulator import DB_FILE
    from elastic_channels.emulator.storage.parquet_store import ParquetStore
    from elastic_channels.model import COLUMNS

    store = ParquetStore(data_dir / DB_FILE, "RESORT_SALES", COLUMNS, threads=1, compact=False)
    try:
        cur = store.connection.cursor()
        rel = cur.sql("SELECT * FROM RESORT_SALES WHERE RUN_ID = ? LIMIT ?", params=[run_id, n])
        fetch = getattr(rel, "to_arrow_table", None) or rel.arrow  # duckdb 2 | 1
        store.append_rows(fetch())
        cur.close()
    finally:
        store.close()


def wait_port(port: int, timeout_s: float = 60.0) -> None:
    import socket

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port} after {timeout_s} s")


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def env_with(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}
