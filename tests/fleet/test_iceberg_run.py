"""elastic-channels run --table-format iceberg, then the table opened by readers that know
nothing of the emulator: pyiceberg's own catalog + scan to Arrow, and DuckDB's
read_parquet over the data files the snapshot lists. Same rows, types and counts as the
run reports (issue #16 item 4)."""

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
         "--window-seconds", "1", "--run-id", "ice-e2e", "--json", "--no-monitor"],
        capture_output=True, text=True, timeout=240, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    landed = result["landed"]
    assert landed["lost"] == 0 and landed["duplicates"] == 0
    assert landed["rows_landed"] == result["totals"]["rows_sent"] > 0
    assert "Iceberg table" in proc.stdout
    n = landed["rows_landed"]

    warehouse = tmp_path / ".elastic-channels" / "emulator-iceberg" / "iceberg"
    catalog = SqlCatalog(
        "emulator", uri=f"sqlite:///{warehouse / 'catalog.db'}", warehouse=f"file://{warehouse}"
    )
    table = catalog.load_table("PUBLIC.RESORT_SALES")
    assert table.metadata.format_version in (1, 2, 3)
    types = {f.name: str(f.field_type) for f in table.schema().fields}
    assert types["SALE_TIME"] == "timestamptz" and types["_COMMIT_TIME"] == "timestamptz"
    assert types["AMOUNT"] == "decimal(14, 2)" and types["QUANTITY"] == "int"
    assert types["WORKER_ID"] == "long" and types["TXID"] == "string"
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
