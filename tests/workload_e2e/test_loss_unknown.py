"""A workload without a unique id column: accepted, its rows counted by run, and loss and
duplicates reported unknown (null, with the reason), not 0; the run passes saying so."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from emulator_support import sdk_available

from elastic_channels.fleet.verify import NO_UNIQUE_ID, describe, loss_accepted, verify_landed
from elastic_channels.landing_table import landing_table

NO_ID = """\
name: no-id
description: readings with no unique id column
table: NO_ID_READINGS
columns:
  - {name: RUN_ID, type: VARCHAR, run_id: {}}
  - {name: TS, type: TIMESTAMP_TZ, send_time: {}}
  - {name: N, type: "NUMBER(6,1)", range: {min: 0, max: 99}}
  - {name: V, type: VARIANT, object: {k: {choice: {values: [a, b]}}, n: {range: {min: 1, max: 5}}}}
"""


@pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")
def test_a_run_of_a_workload_without_unique_ids_says_loss_is_unknown(tmp_path: Path) -> None:
    (tmp_path / "no-id.yaml").write_text(NO_ID)
    proc = subprocess.run(
        [sys.executable, "-m", "elastic_channels.cli", "run", "--workload", "no-id.yaml",
         "--workers", "1", "--target-bps", "1e6", "--duration-seconds", "2",
         "--window-seconds", "1", "--run-id", "no-id-run", "--json"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    landed = result["landed"]
    assert landed["lost"] is None and landed["duplicates"] is None
    assert landed["lost_unknown_reason"] == NO_UNIQUE_ID
    assert landed["rows_expected"] == result["totals"]["rows_sent"] > 0
    assert landed["rows_landed"] == landed["rows_expected"]  # counted by RUN_ID
    assert landed["visible_p50_ms"] is not None
    assert "lost unknown: the workload has no unique_id column" in proc.stderr
    assert (tmp_path / ".elastic-channels" / "emulator-no_id_readings").is_dir()


class TableEmu:
    """What verify_landed asks of an emulator, over a DuckDB table made here."""

    def __init__(self, ddl: str, rows: list[tuple]) -> None:
        self.con = duckdb.connect()
        self.con.execute(ddl)
        if rows:
            marks = ", ".join("?" for _ in rows[0])
            self.con.executemany(f"INSERT INTO T VALUES ({marks})", rows)

    def wait_landed(self, timeout_s: float) -> None:
        pass

    def query(self, sql: str) -> list[tuple]:
        return self.con.execute(sql).fetchall()


def _land(tmp_path: Path, columns: str) -> object:
    path = tmp_path / "w.yaml"
    path.write_text(f"name: w\ndescription: d\ntable: T\ncolumns:\n{columns}")
    return landing_table(str(path))


def test_without_a_run_id_column_either_the_rows_cannot_be_counted(tmp_path: Path) -> None:
    land = _land(tmp_path, "  - {name: A, type: VARCHAR, constant: x}\n")
    emu = TableEmu('CREATE TABLE T ("A" VARCHAR, _COMMIT_TIME TIMESTAMPTZ)', [("x", None)])
    got = verify_landed(emu, "r", [{"worker_id": 0, "rows_generated": 5}], [], None, land)  # type: ignore[arg-type]
    assert got["rows_landed"] is None and got["lost"] is None and got["rows_expected"] == 5
    assert got["visible_p50_ms"] is None  # no send time, no run to find
    assert "its rows cannot be found" in describe(got) and "lost unknown" in describe(got)
    assert loss_accepted(got)


def test_a_unique_id_without_run_or_worker_columns_still_counts_exactly(tmp_path: Path) -> None:
    """The run's rows are found by their ids' prefix, the worker read off the id."""
    land = _land(tmp_path, "  - {name: ID, type: VARCHAR, unique_id: {}}\n")
    ids = [f"run-1-{w}-{s}" for w in (0, 1) for s in range(10)]
    ids += ["run-1-0-3", "run-1-9-9-9", "run-10-0-0", "run-1-x-1"]  # a duplicate, others
    emu = TableEmu(
        'CREATE TABLE T ("ID" VARCHAR, _COMMIT_TIME TIMESTAMPTZ)', [(i, None) for i in ids]
    )
    summaries = [{"worker_id": 0, "rows_generated": 10}, {"worker_id": 1, "rows_generated": 11}]
    got = verify_landed(emu, "run-1", summaries, [], None, land)  # type: ignore[arg-type]
    assert (got["rows_landed"], got["duplicates"], got["lost"]) == (21, 1, 1)
    assert not loss_accepted(got)


def test_only_a_missing_unique_id_makes_unknown_loss_acceptable() -> None:
    assert loss_accepted({"lost": None, "lost_unknown_reason": NO_UNIQUE_ID})
    assert loss_accepted({"lost": 0}) and loss_accepted(None)
    assert not loss_accepted({"lost": None, "killed_workers": [{"worker_id": 0}]})
    assert not loss_accepted({"lost": 3})
