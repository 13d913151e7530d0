"""Exactly once across the emulator's crashes in file mode: kill it at each named step a
staged file goes through (the upload stored, the registration checked, then the spool's and
landing's steps its fragment shares with inline rows), restart it on the same data dir, do
what the SDK's retry would, and count (issue #21 item 1)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from botocore.exceptions import BotoCoreError
from emulator_support import EmulatorProcess, make_emulator
from file_mode_support import FileModeClient, seal

from elastic_channels.emulator.landing.crashpoints import (
    CRASH_ENV,
    CRASH_EXIT_CODE,
    FILE_POINTS,
    POINTS,
)
from elastic_channels.emulator.landing.lander import Lander

ROWS = 300

#: Steps of a registration: is its first call acked? (None: either, landing races the
#: reply.) Whatever the answer, the SDK's retry after the restart must land it once.
REGISTRATION_POINTS = {
    "files:after-check": False,  # checked, nothing spooled
    "spool:after-data": False,  # the frame on disk, its meta file not
    "spool:after-meta": False,  # spooled, the ack not sent
    "land:before-commit": None,
    "land:after-commit": None,
}
#: The points after which the spool holds the fragment at the restart: its retry must be
#: known as taken (file mode reads the spool before the lander starts taking from it).
RACY = {"spool:after-meta", "land:before-commit"}


def test_every_point_is_covered():
    assert set(REGISTRATION_POINTS) | {"stage:after-store"} == set(POINTS) | set(FILE_POINTS)


def _counts(emu: EmulatorProcess, run_id: str, fragment_id: str) -> tuple[int, int]:
    """(rows of run_id, landed records of the fragment), once landing is done."""
    assert emu.wait_landed(60)
    (rows,) = emu.query(f"SELECT count(*) AS n FROM RESORT_SALES WHERE RUN_ID = '{run_id}'")
    (records,) = emu.query(
        f"SELECT count(*) AS n FROM _EMULATOR_LANDED WHERE REQUEST_ID = '{fragment_id}'"
    )
    return rows["n"], records["n"]


def _fragment_id(frag: dict) -> str:
    """The id the fragment is spooled and landed under: its object's key (the path less
    the bucket), its range, etag and rows."""
    key = frag["file_path"].partition("/")[2]
    start, length = frag["fragment_start_byte_offset"], frag["fragment_length_bytes"]
    return f"file:{key}@{start}+{length}:{frag['file_etag']}:{frag['fragment_row_count']}"


def _crash_while_registering(data: Path, point: str, run_id: str) -> dict:
    """Stage a file and register it with the emulator set to die at ``point``: the
    fragment, as the SDK will send it again."""
    doomed = EmulatorProcess(data, env={CRASH_ENV: point}).start()
    try:
        client = FileModeClient(doomed.info, doomed.scoped_token())
        frag = client.stage_file("0.ndjson", run_id, ROWS)
        status, _ = client.register([frag], request_id="first")
        assert doomed.wait_exit(30) == CRASH_EXIT_CODE, doomed.stderr()
    finally:
        doomed.stop()
    assert f"crashing at {point}" in doomed.stderr()
    acked = REGISTRATION_POINTS[point]
    assert status in ((200,) if acked else (0,) if acked is False else (0, 200)), status
    return frag


@pytest.mark.parametrize("point", list(REGISTRATION_POINTS))
def test_killed_while_registering_then_the_retry_lands_it_once(tmp_path, point):
    data = tmp_path / "emu"
    run_id = "file-crash-" + point.replace(":", "-")
    frag = _crash_while_registering(data, point, run_id)
    again = EmulatorProcess(data).start()
    try:
        retry = FileModeClient(again.info, again.scoped_token())
        status, reply = retry.register([frag], request_id="retry")  # the SDK's retry
        assert status == 200, reply
        assert _counts(again, run_id, _fragment_id(frag)) == (ROWS, 1)
        assert not list((data / "spool").glob("*.meta.json")), "the spool is empty"
    finally:
        assert again.stop() == 0, again.stderr()


@pytest.mark.parametrize("point", sorted(RACY))
def test_a_retry_while_the_restart_lands_the_spool_lands_once(tmp_path, monkeypatch, point):
    """The restart's window forced: the lander takes its recovered batch before file mode
    reads what is taken (public calls only; bounded, so an emulator that reads it before
    the lander starts, or from elsewhere, is not held up)."""
    data = tmp_path / "emu"
    run_id = "file-race-" + point.replace(":", "-")
    frag = _crash_while_registering(data, point, run_id)
    queued_request_ids = Lander.queued_request_ids

    def after_the_lander_took_its_batch(self: Lander) -> list[str]:
        deadline = time.monotonic() + 3  # the lander lingers 1 s before a batch
        while self.pending() == len(queued_request_ids(self)) > 0:
            if time.monotonic() > deadline:
                break
            time.sleep(0.005)
        return queued_request_ids(self)

    monkeypatch.setattr(Lander, "queued_request_ids", after_the_lander_took_its_batch)
    emu = make_emulator(tmp_path)  # in this process, on the crashed emulator's data dir
    try:
        client = FileModeClient(emu.info(), emu.tokens.issue("EMULATOR_USER", "localhost"))
        status, reply = client.register([frag], request_id="retry")
        assert status == 200, reply
        assert emu.wait_landed(60)
        ((rows,),) = emu.query(f"SELECT count(*) FROM RESORT_SALES WHERE RUN_ID = '{run_id}'")
        assert rows == ROWS
    finally:
        emu.stop()


def test_killed_after_storing_an_upload_then_the_reupload_lands_once(tmp_path):
    data = tmp_path / "emu"
    run_id = "file-crash-stage-after-store"
    doomed = EmulatorProcess(data, env={CRASH_ENV: "stage:after-store"}).start()
    try:
        client = FileModeClient(doomed.info, doomed.scoped_token())
        sealed = seal(run_id, ROWS, client.key)
        with pytest.raises(BotoCoreError):  # the connection closed with no reply
            client.upload("0.ndjson", sealed.data)
        assert doomed.wait_exit(30) == CRASH_EXIT_CODE, doomed.stderr()
    finally:
        doomed.stop()
    assert "crashing at stage:after-store" in doomed.stderr()
    again = EmulatorProcess(data).start()
    try:
        retry = FileModeClient(again.info, again.scoped_token())
        # the SDK retries the upload to the same path, with the same pipe-info credentials
        retry.stage, retry.prefix = client.stage, client.prefix
        stored = retry.s3.head_object(Bucket=retry.bucket, Key=client.prefix + "0.ndjson")
        assert stored["ContentLength"] == len(sealed.data), "the upload was durable"
        frag = retry.fragment(*retry.upload("0.ndjson", sealed.data), sealed)
        status, reply = retry.register([frag])
        assert status == 200, reply
        assert _counts(again, run_id, _fragment_id(frag)) == (ROWS, 1)
    finally:
        assert again.stop() == 0, again.stderr()
