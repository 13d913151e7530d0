"""Exactly once across the emulator's own crashes (``test_crash.py``, its Iceberg twin):
kill a real ``serve`` at a named step of spooling and landing (ELASTIC_EMULATOR_CRASH_AT),
restart it on the same data dir, and count."""

from __future__ import annotations

import http.client
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import zstandard
from emulator_support import ROWS_PATH, EmulatorProcess

from elastic_channels.emulator.landing.crashpoints import CRASH_ENV, CRASH_EXIT_CODE
from elastic_channels.rows import ResortGenerator

#: Rows in the one request sent to the doomed emulator.
ROWS = 500

#: point -> (is the request acked?, how many times its rows land after the restart)
EXPECTED = {
    "spool:after-data": (False, 0),  # never acked, never landed
    "spool:after-meta": (False, 1),  # whole and durable, the ack was lost: lands once
    "land:before-commit": (True, 1),
    "land:after-commit": (True, 1),  # committed, clean-up lost: not landed again
}


def append(emu: EmulatorProcess, run_id: str) -> int | None:
    """The status of one append, or None if the emulator died before answering."""
    body = zstandard.ZstdCompressor().compress(ResortGenerator(run_id, 0).next_batch(ROWS, 10**15))
    headers = {"Authorization": f"Bearer {emu.scoped_token()}",
               "Content-Type": "application/x-ndjson", "Content-Encoding": "zstd"}  # fmt: skip
    try:
        return emu.request("POST", ROWS_PATH.format(rid=run_id), body, headers)[0]
    except (http.client.HTTPException, ConnectionError, ssl.SSLError, OSError):
        return None


@contextmanager
def restarted_after_crash(
    data: Path, point: str, run_id: str, *args: str, exit_timeout: float
) -> Iterator[EmulatorProcess]:
    """Start ``serve *args`` on ``data`` set to die at ``point``, append ROWS rows of
    ``run_id``; check it died there having acked (or not) as EXPECTED says; then the
    emulator restarted on ``data``, once it has landed what it had. After the block: the
    request is recorded landed as many times as EXPECTED says, the spool is empty, and
    the emulator stops cleanly."""
    acked, times = EXPECTED[point]
    doomed = EmulatorProcess(data, *args, env={CRASH_ENV: point}).start()
    try:
        status = append(doomed, run_id)
        assert doomed.wait_exit(exit_timeout) == CRASH_EXIT_CODE, doomed.stderr()
    finally:
        doomed.stop()
    assert f"crashing at {point}" in doomed.stderr()
    assert (status == 200) is acked, status
    again = EmulatorProcess(data, *args).start()
    try:
        assert again.wait_landed(60)
        yield again
        records = again.query(
            f"SELECT count(*) AS n FROM _EMULATOR_LANDED WHERE REQUEST_ID = '{run_id}'"
        )
        assert records == [{"n": times}]
        assert not list((data / "spool").glob("*.meta.json")), "the spool is empty"
    finally:
        assert again.stop() == 0, again.stderr()
