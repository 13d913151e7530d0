"""Snowflake's documented REST API, point by point, against a real emulator process
(issue #12 item 7). Where SDK 1.9.1 expects otherwise, docs/EMULATOR.md says so."""

from __future__ import annotations

import json

import pytest
import zstandard
from emulator_support import EmulatorProcess

from elastic_channels.rows import ResortGenerator

PIPE = "/v2/streaming/databases/emulator_db/schemas/public/pipes/resort_sales_pipe"
DATA = "/v2/streaming/data/databases/EMULATOR_DB/schemas/PUBLIC/pipes/RESORT_SALES_PIPE"


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    proc = EmulatorProcess(tmp_path_factory.mktemp("rest") / "emu").start()
    proc.token = proc.scoped_token()
    yield proc
    assert proc.stop() == 0, proc.stderr()


def _h(emu, ctype="application/json", **extra):
    return {"Authorization": f"Bearer {emu.token}", "Content-Type": ctype, **extra}


def _open(emu, name: str) -> dict:
    status, _, body = emu.request("PUT", f"{PIPE}/channels/{name}?requestId=o", b"{}", _h(emu))
    assert status == 200, body
    return json.loads(body)


def _rows(emu, channel: str, run_id: str, query: str):
    z = zstandard.ZstdCompressor().compress(ResortGenerator(run_id, 0).next_batch(10, 10**15))
    headers = _h(emu, "application/x-ndjson", **{"Content-Encoding": "zstd"})
    path = f"{DATA}/channels/{channel}/rows?requestId={run_id}&{query}"
    status, _, body = emu.request("POST", path, z, headers)
    return status, json.loads(body)


def _status(emu, *names: str) -> dict:
    body = json.dumps({"channel_names": list(names)}).encode()
    status, _, out = emu.request("POST", f"{PIPE}:bulk-channel-status", body, _h(emu))
    assert status == 200
    return json.loads(out)["channel_statuses"]


def test_continuation_tokens_fence_a_stale_writer(emu):
    first = _open(emu, "writer")["next_continuation_token"]
    status, reply = _rows(emu, "WRITER", "w1", f"continuationToken={first}&endOffsetToken=1")
    assert status == 200 and reply["next_continuation_token"] != first
    second = _open(emu, "Writer")["next_continuation_token"]  # reopened: a new sequencer
    status, reply = _rows(emu, "writer", "w2", f"continuationToken={first}&endOffsetToken=2")
    assert status == 400 and reply["code"] == "STALE_CONTINUATION_TOKEN_SEQUENCER"
    status, _ = _rows(emu, "writer", "w3", f"continuationToken={second}&endOffsetToken=3")
    assert status == 200
    status, reply = _rows(emu, "writer", "w4", "endOffsetToken=4")
    assert status == 400 and "continuationToken is required" in reply["message"]


def test_offset_tokens_are_stored_and_returned(emu):
    token = _open(emu, "offsets")["next_continuation_token"]
    status, _ = _rows(emu, "OFFSETS", "off", f"continuationToken={token}&endOffsetToken=99")
    assert status == 200
    assert emu.wait_landed(30)
    assert _status(emu, "offsets")["offsets"]["last_committed_offset_token"] == "99"
    assert _open(emu, "OFFSETS")["channel_status"]["last_committed_offset_token"] == "99"
    status, _, body = emu.request("DELETE", f"{PIPE}/channels/offsets?requestId=d", b"{}", _h(emu))
    assert status == 200 and json.loads(body) == {"last_committed_offset_token": "99"}


def test_channel_names_are_case_insensitive_and_unknown_ones_reported(emu):
    _open(emu, "MixedCase")
    got = _status(emu, "mixedcase", "NO_SUCH")
    assert got["mixedcase"]["channel_name"] == "MIXEDCASE"
    assert got["mixedcase"]["channel_status_code"] == "SUCCESS"
    assert got["NO_SUCH"]["channel_status_code"] == "ERR_CHANNEL_DOES_NOT_EXIST"


def test_errors_have_the_documented_shape(emu):
    status, reply = _rows(emu, "NEVER_OPENED", "x", "continuationToken=1_0")
    assert status == 404
    assert reply == {"code": "ERR_CHANNEL_DOES_NOT_EXIST", "message": reply["message"],
                     "request_id": "x"}  # fmt: skip


def test_key_pair_jwts_live_at_most_an_hour(emu):
    for lifetime, ok in ((3500, True), (3600 * 24 * 365 * 10, False), (7200, False)):
        headers = {"Authorization": f"Bearer {emu.keypair_jwt(lifetime)}",
                   "X-Snowflake-Authorization-Token-Type": "KEYPAIR_JWT"}  # fmt: skip
        status, _, body = emu.request("GET", "/v2/streaming/hostname", None, headers)
        assert (status == 200) is ok, (lifetime, status, body)
        if not ok:
            assert b"over the 3600 s limit" in body


def test_the_token_scope_must_be_the_hostname(emu):
    headers = {"Authorization": f"Bearer {emu.keypair_jwt()}",
               "Content-Type": "application/x-www-form-urlencoded"}  # fmt: skip
    grant = "grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer"
    status, _, body = emu.request("POST", "/oauth/token", f"{grant}&scope=evil.example".encode(),
                                  headers)  # fmt: skip
    assert status == 400 and b"scope" in body
    status, _, _ = emu.request("POST", "/oauth/token", f"{grant}&scope=localhost".encode(), headers)
    assert status == 200


def test_data_calls_need_the_scoped_token(emu):
    headers = {"Authorization": f"Bearer {emu.keypair_jwt()}", "Content-Type": "application/json",
               "X-Snowflake-Authorization-Token-Type": "KEYPAIR_JWT"}  # fmt: skip
    status, _, body = emu.request("POST", f"{PIPE}:pipe-info", b"{}", headers)
    assert status == 401 and b"scoped token" in body
