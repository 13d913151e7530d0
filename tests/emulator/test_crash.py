"""Exactly once across the emulator's own crashes: kill it at each named step of spooling
and landing (the ELASTIC_EMULATOR_CRASH_AT hook), restart it on the same data dir, and
count (issue #12 item 4)."""

from __future__ import annotations

import http.client
import ssl

import pytest
import zstandard
from emulator_support import ROWS_PATH, EmulatorProcess

from elastic_channels.emulator.landing.crashpoints import CRASH_ENV, CRASH_EXIT_CODE, POINTS
from elastic_channels.rows import ResortGenerator

ROWS = 500

# point -> (is the request acked?, how many times its rows land after the restart)
EXPECTED = {
    "spool:after-data": (False, 0),  # never acked, never landed
    "spool:after-meta": (False, 1),  # whole and durable, the ack was lost: lands once
    "land:before-commit": (True, 1),
    "land:after-commit": (True, 1),  # committed, clean-up lost: not landed again
}


def test_every_point_is_covered():
    assert set(EXPECTED) == set(POINTS)


def _append(emu, run_id: str) -> int | None:
    """The status of one append, or None if the emulator died before answering."""
    body = zstandard.ZstdCompressor().compress(ResortGenerator(run_id, 0).next_batch(ROWS, 10**15))
    headers = {"Authorization": f"Bearer {emu.scoped_token()}",
               "Content-Type": "application/x-ndjson", "Content-Encoding": "zstd"}  # fmt: skip
    try:
        return emu.request("POST", ROWS_PATH.format(rid=run_id), body, headers)[0]
    except (http.client.HTTPException, ConnectionError, ssl.SSLError, OSError):
        return None


@pytest.mark.parametrize("point", POINTS)
def test_killed_at_a_step_then_restarted_lands_exactly_once(tmp_path, point):
    data = tmp_path / "emu"
    run_id = "crash-" + point.replace(":", "-")
    acked, times = EXPECTED[point]
    doomed = EmulatorProcess(data, env={CRASH_ENV: point}).start()
    try:
        status = _append(doomed, run_id)
        assert doomed.wait_exit(30) == CRASH_EXIT_CODE, doomed.stderr()
    finally:
        doomed.stop()
    assert f"crashing at {point}" in doomed.stderr()
    assert (status == 200) is acked, status
    again = EmulatorProcess(data).start()
    try:
        assert again.wait_landed(60)
        got = again.query(f"SELECT count(*) AS n FROM RESORT_SALES WHERE RUN_ID = '{run_id}'")
        assert got == [{"n": ROWS * times}]
        records = again.query(
            f"SELECT count(*) AS n FROM _EMULATOR_LANDED WHERE REQUEST_ID = '{run_id}'"
        )
        assert records == [{"n": times}]
        assert not list((data / "spool").glob("*.meta.json")), "the spool is empty"
    finally:
        assert again.stop() == 0, again.stderr()
