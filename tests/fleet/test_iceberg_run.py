"""elastic-channels run --table-format iceberg, then the table opened by readers that know
nothing of the emulator: pyiceberg's own catalog + scan to Arrow, and DuckDB's
read_parquet over the data files the snapshot lists. Same rows, types and counts as the
run reports (issue #16 item 4). Its monitor ran too: the metrics table holds the run's
windows, and their ingest-to-visible agrees with the landed rows read by pyiceberg."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from emulator_support import sdk_available

pytestmark = pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")
pytest.importorskip("pyiceberg")


def test_run_into_iceberg_is_read_back_by_pyiceberg_and_duckdb(tmp_path: Path) -> None:
    import duckdb
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyiceberg.catalog.sql import SqlCatalog

    proc = subprocess.run(
        [sys.executable, "-m", "elastic_channels.cli", "run", "--table-format", "iceberg",
         "--workers", "1", "--target-bps", "4e6", "--duration-seconds", "4",
         "--window-seconds", "1", "--run-id", "ice-e2e", "--json"],
        capture_output=True, text=True, timeout=240, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    (line,) = proc.stdout.strip().splitlines()  # --json: stdout is the JSON alone
    result = json.loads(line)
    landed = result["landed"]
    assert landed["lost"] == 0 and landed["duplicates"] == 0
    assert landed["rows_landed"] == result["totals"]["rows_sent"] > 0
    assert "Iceberg table" in proc.stderr  # --json: the tables go to stderr
    n = landed["rows_landed"]

    warehouse = tmp_path / ".elastic-channels" / "emulator-iceberg" / "iceberg"
    catalog = SqlCatalog(
        "emulator", uri=f"sqlite:///{warehouse / 'catalog.db'}", warehouse=f"file://{warehouse}"
    )
    table = catalog.load_table("PUBLIC.RESORT_SALES")
    assert table.metadata.format_version in (1, 2, 3)
    types = {f.name: str(f.field_type) for f in table.schema().fields}
    assert types["SALE_TIME"] == "timestamptz" and types["_COMMIT_TIME"] == "timestamptz"
    # NUMBER(p,s) is decimal(p,s), as Snowflake writes a Snowflake-managed Iceberg table.
    assert types["AMOUNT"] == "decimal(14, 2)" and types["QUANTITY"] == "decimal(9, 0)"
    assert types["WORKER_ID"] == "decimal(10, 0)" and types["TXID"] == "string"
    assert all(f.required for f in table.schema().fields)

    arrow = table.scan().to_arrow()
    assert arrow.num_rows == n
    assert pc.count_distinct(arrow["TXID"]).as_py() == n
    assert arrow.schema.field("SALE_TIME").type == pa.timestamp("us", tz="UTC")

    paths = [task.file.file_path.removeprefix("file://") for task in table.scan().plan_files()]
    assert paths and all(Path(p).is_file() for p in paths)
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    rel = f"read_parquet({paths!r})"
    count, distinct, amount, first, last = con.execute(
        f"SELECT count(*), count(DISTINCT TXID), sum(AMOUNT), min(SALE_TIME), max(SALE_TIME) "
        f"FROM {rel} WHERE RUN_ID = 'ice-e2e'"
    ).fetchone()
    assert (count, distinct) == (n, n)
    assert amount == pc.sum(arrow["AMOUNT"]).as_py()
    assert (
        first == pc.min(arrow["SALE_TIME"]).as_py() and last == pc.max(arrow["SALE_TIME"]).as_py()
    )
    described = {r[0]: r[1] for r in con.execute(f"DESCRIBE SELECT * FROM {rel}").fetchall()}
    assert described["SALE_TIME"] == "TIMESTAMP WITH TIME ZONE"
    assert described["AMOUNT"] == "DECIMAL(14,2)"
    # Row for row, the two readers agree (TXID, AMOUNT, SALE_TIME).
    by_duckdb = con.execute(f"SELECT TXID, AMOUNT, SALE_TIME FROM {rel} ORDER BY TXID").fetchall()
    by_iceberg = sorted(
        zip(
            arrow["TXID"].to_pylist(),
            arrow["AMOUNT"].to_pylist(),
            arrow["SALE_TIME"].to_pylist(),
            strict=True,
        )
    )
    assert by_duckdb == by_iceberg
    check_metrics(tmp_path, result, arrow)


def _query(cwd: Path, sql: str) -> list[dict]:
    done = subprocess.run(
        [sys.executable, "-m", "elastic_channels", "emulator", "query",
         "--data-dir", ".elastic-channels/emulator-iceberg", sql],
        capture_output=True, text=True, timeout=60, cwd=cwd, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [json.loads(x) for x in done.stdout.splitlines() if x.strip()]


def check_metrics(cwd: Path, result: dict, arrow) -> None:
    """The monitor's rows for the run: windows that sum to what was sent, a summary row
    of what landed, and per window the ingest-to-visible of the rows committed in it,
    as a direct query of the landed rows (pyiceberg's scan, in DuckDB) computes it."""
    import duckdb

    fleet = _query(
        cwd,
        "SELECT epoch_ms(WINDOW_START) AS WS, ROWS_APPENDED, INGEST_TO_VISIBLE_ROWS AS N, "
        "INGEST_TO_VISIBLE_P50_MS AS P50, INGEST_TO_VISIBLE_P99_MS AS P99, "
        "INGEST_TO_VISIBLE_AVG_MS AS AVG FROM ELASTIC_K8S_METRICS "
        "WHERE RUN_ID = 'ice-e2e' AND IS_FLEET ORDER BY WS",
    )
    assert len(fleet) == len(result["metrics_windows"]) >= 3
    assert sum(r["ROWS_APPENDED"] for r in fleet) == result["totals"]["rows_sent"]
    (summary,) = _query(
        cwd,
        "SELECT ROWS_APPENDED, WORKER_STATE FROM ELASTIC_K8S_METRICS "
        "WHERE RUN_ID = 'ice-e2e' AND IS_SUMMARY",
    )
    assert summary == {"ROWS_APPENDED": result["landed"]["rows_landed"], "WORKER_STATE": "done"}
    con = duckdb.connect()
    con.register("landed", arrow.select(["RUN_ID", "SALE_TIME", "_COMMIT_TIME"]))
    # no window after the workers' last: rows committed after it count in it (issue #22)
    last = max(int(r["WS"]) for r in fleet)
    direct = {
        ws: (n, p50, p99, avg)
        for ws, n, p50, p99, avg in con.execute(
            f"SELECT least(floor(epoch_ms(_COMMIT_TIME) / 1000) * 1000, {last}) AS ws, count(*), "
            "quantile_cont(d, 0.5) / 1e3, quantile_cont(d, 0.99) / 1e3, avg(d) / 1e3 FROM "
            "(SELECT _COMMIT_TIME, date_diff('microsecond', SALE_TIME, _COMMIT_TIME) AS d "
            "FROM landed WHERE RUN_ID = 'ice-e2e') GROUP BY 1"
        ).fetchall()
    }
    by_window = {int(r["WS"]): r for r in fleet}
    assert set(direct) <= set(by_window)  # every commit is in a window of the table
    assert sum(r["N"] for r in fleet) == arrow.num_rows
    for ws, r in by_window.items():
        n, p50, p99, avg = direct.get(ws, (0, None, None, None))
        assert r["N"] == n, ws
        for got, want in ((r["P50"], p50), (r["P99"], p99), (r["AVG"], avg)):
            assert (got is None and want is None) or got == pytest.approx(want, abs=1e-3)
