"""The HTTPS surface without the SDK: auth errors, bodies, faults, control endpoints."""

from __future__ import annotations

import http.client
import json
import ssl
import time

import pytest
import zstandard
from emulator_support import make_emulator

from elastic_channels.rows import ResortGenerator

ROWS_PATH = (
    "/v2/streaming/data/databases/EMULATOR_DB/schemas/PUBLIC/pipes/RESORT_SALES_PIPE"
    "/channels/ELASTIC/rows?requestId=r1&retryCount=0"
)


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    emulator = make_emulator(tmp_path_factory.mktemp("http"))
    yield emulator
    emulator.stop()


@pytest.fixture
def call(emu):
    emu.faults.clear()
    ctx = ssl.create_default_context(cafile=emu.info()["ssl_cert_file"])

    def do(method, path, body=None, headers=None, timeout=10):
        conn = http.client.HTTPSConnection("localhost", emu.port, context=ctx, timeout=timeout)
        headers = dict(headers or {})
        if path.startswith("/_emulator/"):  # the control calls need the emulator's secret
            headers.setdefault("Authorization", f"Bearer {emu.control_secret}")
            headers.setdefault("Content-Type", "application/json")
        elif path.startswith("/v2/streaming/data/"):
            headers.setdefault("Content-Type", "application/x-ndjson")
        elif body is not None:
            headers.setdefault("Content-Type", "application/json")
        try:
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()

    return do


def _scoped(emu):
    return {"Authorization": "Bearer " + emu.tokens.issue("EMULATOR_USER", "localhost")}


def _rows_body(n=10, run_id="http"):
    raw = ResortGenerator(run_id, 0).next_batch(n, 1_700_000_000_000_000)
    return raw, zstandard.ZstdCompressor().compress(raw)


def test_account_calls_need_a_valid_jwt_and_say_why(emu, call):
    status, body = call("GET", "/v2/streaming/hostname")
    assert status == 401 and b"missing Authorization" in body
    status, body = call("GET", "/v2/streaming/hostname", headers={"Authorization": "Bearer x"})
    assert status == 401 and b"malformed JWT" in body


def test_data_calls_need_the_scoped_token(emu, call):
    _, z = _rows_body()
    headers = {"Authorization": "Bearer forged", "Content-Encoding": "zstd"}
    status, body = call("POST", ROWS_PATH, z, headers)
    assert status == 401 and b"scoped token is invalid" in body


def test_unknown_pipe_is_404_naming_the_served_one(emu, call):
    path = "/v2/streaming/databases/EMULATOR_DB/schemas/PUBLIC/pipes/NOPE:pipe-info"
    status, body = call("POST", path, b"{}", _scoped(emu))
    assert status == 404 and b"EMULATOR_DB.PUBLIC.RESORT_SALES_PIPE" in body


def test_damaged_or_mislabelled_bodies_are_400(emu, call):
    raw, z = _rows_body()
    headers = {**_scoped(emu), "Content-Encoding": "zstd"}
    assert call("POST", ROWS_PATH, z[:-5], headers)[0] == 400
    lying = {**headers, "X-Snowflake-Uncompressed-Content-Length": str(len(raw) + 1)}
    status, body = call("POST", ROWS_PATH, z, lying)
    assert status == 400 and b"inflates to" in body


def test_append_is_acked_with_a_continuation_token_then_lands(emu, call):
    _, z = _rows_body(25, "ack")
    headers = {**_scoped(emu), "Content-Encoding": "zstd"}
    status, body = call("POST", ROWS_PATH, z, headers)
    assert status == 200 and json.loads(body)["next_continuation_token"]
    assert emu.wait_landed(20)
    assert emu.query("SELECT count(*) FROM RESORT_SALES WHERE RUN_ID = 'ack'") == [(25,)]


def test_delay_drop_and_malformed_faults(emu, call):
    headers = {**_scoped(emu), "Content-Encoding": "zstd"}
    emu.faults.add("rows", "delay", delay_s=0.3)
    t0 = time.monotonic()
    assert call("POST", ROWS_PATH, _rows_body(1, "delay")[1], headers)[0] == 200
    assert time.monotonic() - t0 >= 0.3
    emu.faults.add("rows", "malformed")
    status, body = call("POST", ROWS_PATH, _rows_body(1, "bad200")[1], headers)
    assert status == 200 and not body.startswith(b"{")
    emu.faults.add("rows", "drop")
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        call("POST", ROWS_PATH, _rows_body(1, "dropped")[1], headers)
    assert emu.wait_landed(20)
    runs = emu.query(
        "SELECT DISTINCT RUN_ID FROM RESORT_SALES WHERE RUN_ID IN ('bad200', 'dropped')"
    )
    assert runs == [], "faulted appends are never spooled"


def test_control_endpoints(emu, call):
    spec = {"endpoint": "rows", "action": "status", "status": 503, "count": 2}
    status, body = call("POST", "/_emulator/faults", json.dumps(spec).encode())
    assert status == 200 and json.loads(body)[0]["remaining"] == 2
    status, body = call("POST", "/_emulator/faults", b'{"endpoint": "rows", "action": "boom"}')
    assert status == 400 and b"unknown action" in body
    headers = {**_scoped(emu), "Content-Encoding": "zstd"}
    assert call("POST", ROWS_PATH, _rows_body(1, "c")[1], headers)[0] == 503
    stats = json.loads(call("GET", "/_emulator/stats")[1])
    assert stats["faults"][0]["remaining"] == 1
    assert stats["faults_fired"]["rows:status"] >= 1
    assert json.loads(call("DELETE", "/_emulator/faults")[1]) == []
    status, body = call("POST", "/_emulator/query", b'{"sql": "SELECT 1 AS one, 2.5 AS x"}')
    assert status == 200 and json.loads(body) == {"one": 1, "x": 2.5}
    status, body = call("POST", "/_emulator/query", b'{"sql": "SELEC nope"}')
    assert status == 400 and b"syntax error" in body.lower()
    assert json.loads(call("POST", "/_emulator/wait-landed", b"{}")[1]) == {"landed": True}


def test_named_channels_open_report_status_and_drop(emu, call):
    pipe = "/v2/streaming/databases/EMULATOR_DB/schemas/PUBLIC/pipes/RESORT_SALES_PIPE"
    status_body = json.dumps({"channel_names": ["NAMED_1", "ELASTIC", "NEVER_OPENED"]}).encode()
    status, body = call("PUT", pipe + "/channels/NAMED_1", b"{}", _scoped(emu))
    assert status == 200
    opened = json.loads(body)
    assert opened["channel_status"]["channel_name"] == "NAMED_1"
    assert "next_continuation_token" in opened
    status, body = call("POST", pipe + ":bulk-channel-status", status_body, _scoped(emu))
    statuses = json.loads(body)["channel_statuses"]
    # Unknown channels are reported, not left out (the documented API; issue #12 item 7).
    assert status == 200 and sorted(statuses) == ["ELASTIC", "NAMED_1", "NEVER_OPENED"]
    assert statuses["NAMED_1"]["channel_status_code"] == "SUCCESS"
    assert statuses["NEVER_OPENED"]["channel_status_code"] == "ERR_CHANNEL_DOES_NOT_EXIST"
    assert call("DELETE", pipe + "/channels/NAMED_1", None, _scoped(emu))[0] == 200
    assert call("DELETE", pipe + "/channels/NAMED_1", None, _scoped(emu))[0] == 404
    named_rows = ROWS_PATH.replace("/ELASTIC/", "/NAMED_1/")
    headers = {**_scoped(emu), "Content-Encoding": "zstd"}
    assert call("POST", named_rows, _rows_body(1, "named")[1], headers)[0] == 404
