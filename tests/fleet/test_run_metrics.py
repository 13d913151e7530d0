"""elastic-channels run writes ELASTIC_K8S_METRICS while it goes on (issue #13)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from emulator_support import query_emulator, sdk_available

from elastic_channels.dashboard import metrics_sql as m
from elastic_channels.dashboard.dialect import DUCKDB
from elastic_channels.dashboard.statement import duckdb_text

pytestmark = pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")


def test_metrics_rows_appear_during_the_run_and_match_what_it_printed(tmp_path: Path) -> None:
    run_id = "metrics-live"
    proc = subprocess.Popen(
        [sys.executable, "-m", "elastic_channels", "run", "--workers", "2",
         "--target-bps", "3e6", "--duration-seconds", "10", "--window-seconds", "1",
         "--run-id", run_id, "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip
    try:
        seen_live = []
        deadline = time.monotonic() + 60
        while not seen_live and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(1)
            if (tmp_path / ".elastic-channels" / "emulator" / "info.json").exists():
                try:
                    seen_live = query_emulator(
                        tmp_path,
                        "SELECT WINDOW_START FROM ELASTIC_K8S_METRICS "
                        f"WHERE RUN_ID = '{run_id}' AND IS_FLEET",
                    )
                except AssertionError:
                    seen_live = []  # the table may not exist yet
        still_running = proc.poll() is None
        out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-3000:]
    assert seen_live and still_running, "no fleet window was in the table while the run went on"
    result = json.loads(out.strip().splitlines()[-1])
    metrics = result["metrics_windows"]
    totals = result["totals"]
    assert sum(w["rows"] for w in metrics) == totals["rows_sent"]
    # What the table holds now is what was printed: fleet rows, each the exact sum of
    # its workers' rows.
    rows = query_emulator(
        tmp_path,
        "SELECT WINDOW_START, IS_FLEET, WORKER_ID, ROWS_APPENDED FROM ELASTIC_K8S_METRICS "
        f"WHERE RUN_ID = '{run_id}' AND NOT IS_SUMMARY ORDER BY WINDOW_START",
    )
    fleet = {r["WINDOW_START"]: r["ROWS_APPENDED"] for r in rows if r["IS_FLEET"]}
    per_worker: dict[str, int] = {}
    for r in rows:
        if not r["IS_FLEET"]:
            per_worker[r["WINDOW_START"]] = (
                per_worker.get(r["WINDOW_START"], 0) + r["ROWS_APPENDED"]
            )
    assert per_worker and all(fleet[k] == v for k, v in per_worker.items())
    assert sum(fleet.values()) == totals["rows_sent"]
    # --json: stdout is the JSON alone, the tables go to stderr
    assert out.strip().startswith("{") and len(out.strip().splitlines()) == 1
    assert "fleet windows, as ELASTIC_K8S_METRICS holds them" in err
    assert "ELASTIC_K8S_METRICS WHERE RUN_ID" in err  # the query to run it again
    # The dashboard's totals read the workers' summary rows, and its lost (their rows
    # minus the distinct TXIDs landed) is what the run reported.
    landed = result["landed"]
    cols = [r["column_name"] for r in query_emulator(tmp_path, "DESCRIBE ELASTIC_K8S_METRICS")]
    totals_sql = duckdb_text(m.totals(DUCKDB, run_id, m.MetricsColumns.resolve(cols)))
    (t,) = query_emulator(tmp_path, totals_sql)
    (got,) = query_emulator(tmp_path, duckdb_text(m.landed(run_id, "RESORT_SALES")))
    assert t["FROM_SUMMARIES"] is True and t["WORKERS"] == 2
    # One throughput (issue #22): the dashboard's run MB/s off the metrics table is the
    # one run printed in its tables and --json (acked bytes over the sending window).
    assert t["MB_PER_S"] == pytest.approx(totals["mb_per_s"], rel=0.01)
    # ... and it is the target's (2 workers x 3 MB/s), a rate any box holds, within 2%.
    assert totals["mb_per_s"] == pytest.approx(6.0, rel=0.02), totals
    # The fleet table's run line and the worker table's total line print that figure.
    said = f"{totals['mb_per_s']:.1f}"
    (run_line,) = [x for x in err.splitlines() if x.split()[:3] == ["run", "-", "2"]]
    (total_line,) = [x for x in err.splitlines() if x.split()[:1] == ["total"]]
    assert said in run_line.split() and said in total_line.split(), (run_line, total_line)
    assert t["ROWS"] == landed["rows_expected"] == totals["rows_sent"]
    assert t["ROWS"] - got["DISTINCT_TXIDS"] == landed["lost"] == 0
    assert got["DUPLICATES"] == landed["duplicates"]
