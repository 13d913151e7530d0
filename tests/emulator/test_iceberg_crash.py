"""Exactly once into the Iceberg table across the emulator's own crashes: kill a real
``serve --table-format iceberg`` at each named step (ELASTIC_EMULATOR_CRASH_AT), restart it
on the same data dir, and count the rows in the table and what Iceberg itself holds.

For Iceberg, ``land:before-commit`` is just before the Iceberg commit, and
``land:after-commit`` just after it, before DuckDB has its copy of the landed record (the
restart must take that record from the snapshot, not land the rows again)."""

from __future__ import annotations

import http.client
import ssl

import pytest
import zstandard
from emulator_support import ROWS_PATH, EmulatorProcess

pytest.importorskip("pyiceberg")

from elastic_channels.emulator.landing.crashpoints import CRASH_ENV, CRASH_EXIT_CODE, POINTS
from elastic_channels.emulator.storage.iceberg_table import IcebergTable
from elastic_channels.model import COLUMNS
from elastic_channels.rows import ResortGenerator

ROWS = 500
ICEBERG = ("--table-format", "iceberg")

# point -> (is the request acked?, how many times its rows land after the restart)
EXPECTED = {
    "spool:after-data": (False, 0),
    "spool:after-meta": (False, 1),
    "land:before-commit": (True, 1),
    "land:after-commit": (True, 1),
}


def test_every_point_is_covered():
    assert set(EXPECTED) == set(POINTS)


def _append(emu, run_id: str) -> int | None:
    body = zstandard.ZstdCompressor().compress(ResortGenerator(run_id, 0).next_batch(ROWS, 10**15))
    headers = {"Authorization": f"Bearer {emu.scoped_token()}",
               "Content-Type": "application/x-ndjson", "Content-Encoding": "zstd"}  # fmt: skip
    try:
        return emu.request("POST", ROWS_PATH.format(rid=run_id), body, headers)[0]
    except (http.client.HTTPException, ConnectionError, ssl.SSLError, OSError):
        return None


@pytest.mark.parametrize("point", POINTS)
def test_killed_at_a_step_then_restarted_lands_exactly_once_in_iceberg(tmp_path, point):
    data = tmp_path / "emu"
    run_id = "ice-crash-" + point.replace(":", "-")
    acked, times = EXPECTED[point]
    doomed = EmulatorProcess(data, *ICEBERG, env={CRASH_ENV: point}).start()
    try:
        status = _append(doomed, run_id)
        assert doomed.wait_exit(60) == CRASH_EXIT_CODE, doomed.stderr()
    finally:
        doomed.stop()
    assert f"crashing at {point}" in doomed.stderr()
    assert (status == 200) is acked, status
    again = EmulatorProcess(data, *ICEBERG).start()
    try:
        assert again.wait_landed(60)
        got = again.query(
            f"SELECT count(*) AS n, count(DISTINCT TXID) AS d FROM RESORT_SALES "
            f"WHERE RUN_ID = '{run_id}'"
        )
        assert got == [{"n": ROWS * times, "d": ROWS * times}]
        records = again.query(
            f"SELECT count(*) AS n FROM _EMULATOR_LANDED WHERE REQUEST_ID = '{run_id}'"
        )
        assert records == [{"n": times}]
        assert not list((data / "spool").glob("*.meta.json")), "the spool is empty"
    finally:
        assert again.stop() == 0, again.stderr()
    # What Iceberg itself holds, read without the emulator.
    table = IcebergTable(data / "iceberg", "RESORT_SALES", COLUMNS).table
    assert table.scan(row_filter=f"RUN_ID == '{run_id}'").to_arrow().num_rows == ROWS * times
