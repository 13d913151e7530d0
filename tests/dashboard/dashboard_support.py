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


def run_into(data_dir: Path, seconds: int = 3, workers: int = 1) -> LandedRun:
    """A real ``elastic-channels run`` into the embedded emulator at ``data_dir``."""
    cmd = [
        sys.executable, "-m", "elastic_channels", "run", "--workers", str(workers),
        "--target-bps", "5e6", "--duration-seconds", str(seconds),
        "--data-dir", str(data_dir), "--json",
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
            values = [
                json.dumps(r.get(n)) if n == "RAW" and r.get(n) is not None else r.get(n)
                for n in names
            ]
            marks = ", ".join("?" for _ in names)
            con.execute(f"INSERT INTO {METRICS_TABLE} VALUES ({marks})", values)
        con.execute("CHECKPOINT")
    finally:
        con.close()


def fleet_windows(run_id: str, t0: float, n_windows: int = 5) -> list[dict[str, Any]]:
    """Windows of three workers: 0 finishes, 1 fails (its summary carries an error),
    2 is still running; worker 0 is the slowest."""
    import datetime as dt

    def ts(t: float) -> dt.datetime:
        return dt.datetime.fromtimestamp(t, dt.timezone.utc)

    rows: list[dict[str, Any]] = []
    for w, mb_s in ((0, 3.0), (1, 5.0), (2, 5.5)):
        for i in range(n_windows):
            start = t0 + i
            rows.append({
                "RUN_ID": run_id, "WORKER_ID": w, "POD_NAME": f"pod-{w}", "NODE_NAME": "n1",
                "WINDOW_START": ts(start), "WINDOW_END": ts(start + 1),
                "ROWS_APPENDED": int(mb_s * 3400), "BYTES_APPENDED": int(mb_s * 1e6),
                "ROWS_ACKED": int(mb_s * 3400), "MB_PER_SEC": mb_s + 0.1 * i,
                "ROWS_PER_SEC": mb_s * 3400, "ACK_LATENCY_P50_MS": 50.0 + w,
                "ACK_LATENCY_P99_MS": 120.0 + 10 * w + i, "UNACKED_ROWS": 100 * w,
                "CPU_MILLICORES": 300.0 + w, "RSS_MIB": 90.0 + w, "IS_SUMMARY": False,
                "RAW": {"type": "window", "worker_id": w},
            })  # fmt: skip
        if w in (0, 1):
            summary = {"type": "summary", "worker_id": w}
            if w == 1:
                summary["error"] = "channel lost: HTTP 503"
            rows.append({
                "RUN_ID": run_id, "WORKER_ID": w, "WINDOW_START": ts(t0),
                "WINDOW_END": ts(t0 + n_windows),
                "ROWS_APPENDED": int(mb_s * 3400) * n_windows,
                "BYTES_APPENDED": int(mb_s * 1e6) * n_windows, "IS_SUMMARY": True,
                "RAW": summary,
            })  # fmt: skip
    return rows


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
