"""Exactly once into the Iceberg table across the emulator's own crashes: kill a real
``serve --table-format iceberg`` at each named step (ELASTIC_EMULATOR_CRASH_AT), restart it
on the same data dir, and count the rows in the table and what Iceberg itself holds.

For Iceberg, ``land:before-commit`` is just before the Iceberg commit, and
``land:after-commit`` just after it, before DuckDB has its copy of the landed record (the
restart must take that record from the snapshot, not land the rows again)."""

from __future__ import annotations

import pytest
from crash_support import EXPECTED, ROWS, restarted_after_crash

pytest.importorskip("pyiceberg")

from elastic_channels.emulator.landing.crashpoints import POINTS
from elastic_channels.emulator.storage.iceberg_table import IcebergTable
from elastic_channels.model import COLUMNS

ICEBERG = ("--table-format", "iceberg")


def test_every_point_is_covered():
    assert set(EXPECTED) == set(POINTS)


@pytest.mark.parametrize("point", POINTS)
def test_killed_at_a_step_then_restarted_lands_exactly_once_in_iceberg(tmp_path, point):
    data = tmp_path / "emu"
    run_id = "ice-crash-" + point.replace(":", "-")
    _acked, times = EXPECTED[point]
    with restarted_after_crash(data, point, run_id, *ICEBERG, exit_timeout=60) as again:
        got = again.query(
            f"SELECT count(*) AS n, count(DISTINCT TXID) AS d FROM RESORT_SALES "
            f"WHERE RUN_ID = '{run_id}'"
        )
        assert got == [{"n": ROWS * times, "d": ROWS * times}]
    # What Iceberg itself holds, read without the emulator.
    table = IcebergTable(data / "iceberg", "RESORT_SALES", COLUMNS).table
    assert table.scan(row_filter=f"RUN_ID == '{run_id}'").to_arrow().num_rows == ROWS * times
