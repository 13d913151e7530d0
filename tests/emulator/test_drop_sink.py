"""The drop sink (``--sink drop``): every row checked and counted, acked, nothing landed;
bad lines reported in channel status; the answer delay honoured without holding up
other requests. Over real HTTPS, and through the real SDK via the worker."""

from __future__ import annotations

import http.client
import json
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import zstandard
from emulator_support import EmulatorProcess, child_env, make_emulator, sdk_available

from elastic_channels.emulator import EmulatorConfig
from elastic_channels.emulator.api.drop_sink import RowTypeChecker
from elastic_channels.model import COLUMNS
from elastic_channels.rows import ResortGenerator

PIPE = "/v2/streaming/databases/EMULATOR_DB/schemas/PUBLIC/pipes/RESORT_SALES_PIPE"
DATA = "/v2/streaming/data/databases/EMULATOR_DB/schemas/PUBLIC/pipes/RESORT_SALES_PIPE"


def _rows(n: int, run_id: str = "drop") -> bytes:
    return ResortGenerator(run_id, 0).next_batch(n, 1_700_000_000_000_000)


class Client:
    """Raw HTTPS calls to an in-process emulator, with a scoped token."""

    def __init__(self, emu) -> None:
        self.emu = emu
        self.ctx = ssl.create_default_context(cafile=emu.info()["ssl_cert_file"])
        self.token = emu.tokens.issue("EMULATOR_USER", "localhost")

    def call(self, method, path, body=None, headers=None, timeout=30):
        conn = http.client.HTTPSConnection("localhost", self.emu.port, context=self.ctx,
                                           timeout=timeout)  # fmt: skip
        all_headers = {"Authorization": f"Bearer {self.token}", **(headers or {})}
        if body is not None and "Content-Type" not in all_headers:
            all_headers["Content-Type"] = "application/json"
        try:
            conn.request(method, path, body=body, headers=all_headers)
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()

    def rows(self, raw: bytes, channel="ELASTIC", query="", encoding="zstd"):
        body = zstandard.ZstdCompressor().compress(raw) if encoding == "zstd" else raw
        headers = {
            "Content-Type": "application/x-ndjson",
            "Content-Encoding": encoding,
            "x-snowflake-uncompressed-content-length": str(len(raw)),
        }
        path = f"{DATA}/channels/{channel}/rows?requestId=r-{time.monotonic_ns()}{query}"
        return self.call("POST", path, body, headers)

    def status(self, *names: str) -> dict:
        body = json.dumps({"channel_names": list(names)}).encode()
        code, out = self.call("POST", PIPE + ":bulk-channel-status", body)
        assert code == 200, out
        return json.loads(out)["channel_statuses"]


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    emulator = make_emulator(tmp_path_factory.mktemp("drop"), sink="drop")
    yield emulator
    emulator.stop()


# --- the check itself ------------------------------------------------------------------


def test_checker_passes_generated_rows_and_skips_blank_lines() -> None:
    raw = _rows(500)
    checker = RowTypeChecker(COLUMNS)
    assert checker.check(raw) == (500, [])
    assert checker.check(raw.replace(b"\n", b"\n\n  \n", 3)) == (500, [])


def test_checker_names_each_bad_line_and_why() -> None:
    good = _rows(3).splitlines()
    row = json.loads(good[0])
    cases = [
        {**row, "QUANTITY": True},  # a boolean into NUMBER
        {**row, "UNIT_PRICE": 12345678901.0},  # too many integer digits for NUMBER(12,2)
        {k: v for k, v in row.items() if k != "AMOUNT"},  # missing column
        {**row, "EXTRA": 1},  # unknown column
        {**row, "SALE_TIME": "2023-13-14T00:00:00Z"},  # not a timestamp
        {**row, "RESORT": None},  # null
    ]
    lines = [good[0], *(json.dumps(c).encode() for c in cases), b"{not json", good[1], b"[1]"]
    parsed, errors = RowTypeChecker(COLUMNS).check(b"\n".join(lines) + b"\n")
    assert parsed == len(lines)
    assert [n for n, _ in errors] == [2, 3, 4, 5, 6, 7, 8, 10]
    why = dict(errors)
    assert "QUANTITY" in why[2] and "UNIT_PRICE" in why[3]
    assert "missing required field `AMOUNT`" in why[4] and "unknown field `EXTRA`" in why[5]
    assert "SALE_TIME" in why[6] and "null" in why[7] and "malformed" in why[8]
    assert "Expected `object`" in why[10]
    # Without the key check an unknown column is ignored; the rest still count.
    _, lax = RowTypeChecker(COLUMNS, check_keys=False).check(b"\n".join(lines) + b"\n")
    assert [n for n, _ in lax] == [2, 3, 4, 6, 7, 8, 10]


def test_config_refuses_an_unknown_sink_and_a_bad_delay(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="sink must be one of land, drop"):
        EmulatorConfig(data_dir=tmp_path, sink="bucket")
    with pytest.raises(ValueError, match=r"answer delay must be 0\.\.600 s"):
        EmulatorConfig(data_dir=tmp_path, answer_delay_s=-1)


# --- over HTTPS ------------------------------------------------------------------------


def test_rows_are_acked_counted_and_nothing_lands(emu) -> None:
    client = Client(emu)
    before = emu.stats_snapshot()
    raw = _rows(2000)
    for _ in range(3):
        code, body = client.rows(raw)
        assert code == 200 and "next_continuation_token" in json.loads(body)
    snap = emu.stats_snapshot()
    sink = snap["drop_sink"]
    assert snap["sink"] == "drop"
    assert sink["requests"] - before["drop_sink"]["requests"] == 3
    assert sink["rows_dropped"] - before["drop_sink"]["rows_dropped"] == 6000
    assert sink["bytes_raw"] - before["drop_sink"]["bytes_raw"] == 3 * len(raw)
    assert snap["rows_dropped"] - before["rows_dropped"] == 6000
    assert sink["seconds"] > 0 and sink["ms_per_mb"] > 0 and sink["ms_per_request_p99"] > 0
    assert sink["inflate_seconds"] > 0 and sink["check_seconds"] > 0
    status = client.status("ELASTIC")["ELASTIC"]
    assert status["rows_inserted"] >= 6000 and status["rows_error_count"] == 0
    # Nothing spooled, nothing landed.
    assert emu.wait_landed(10)
    assert emu.query("SELECT count(*) FROM RESORT_SALES") == [(0,)]
    assert snap["rows_landed"] == 0 and snap["files_landed"] == 0
    assert not list((emu.config.data_dir / "spool").glob("*.meta.json"))


def test_bad_lines_reported_in_channel_status_and_offset_token_moves_on(emu) -> None:
    client = Client(emu)
    code, body = client.call("PUT", PIPE + "/channels/DROP_NAMED", b"{}")
    assert code == 200
    token = json.loads(body)["next_continuation_token"]
    good = _rows(4).splitlines()
    raw = b"\n".join([good[0], b'{"TXID": 5}', good[1], b"nope", good[2]]) + b"\n"
    query = f"&continuationToken={token}&offsetToken=off-7"
    code, body = client.rows(raw, channel="DROP_NAMED", query=query, encoding="identity")
    assert code == 200, body
    status = client.status("DROP_NAMED")["DROP_NAMED"]
    assert status["rows_parsed"] == 5 and status["rows_inserted"] == 3
    assert status["rows_error_count"] == 2
    assert status["last_error_message"].startswith("line 4: ")
    assert status["last_error_offset_upper_bound"] == "off-7"
    assert status["last_committed_offset_token"] == "off-7"
    errors = emu.stats_snapshot()["drop_sink"]["errors"]
    assert {(e["channel"], e["line"]) for e in errors} >= {("DROP_NAMED", 2), ("DROP_NAMED", 4)}
    assert emu.query("SELECT count(*) FROM RESORT_SALES") == [(0,)]


def test_refusals_are_the_landing_emulators(emu) -> None:
    client = Client(emu)
    raw = _rows(10)
    headers = {"Content-Type": "application/x-ndjson", "Content-Encoding": "zstd",
               "x-snowflake-uncompressed-content-length": str(len(raw) + 1)}  # fmt: skip
    body = zstandard.ZstdCompressor().compress(raw)
    code, out = client.call("POST", f"{DATA}/channels/ELASTIC/rows?requestId=x", body, headers)
    assert code == 400 and b"inflates to" in out
    headers["x-snowflake-uncompressed-content-length"] = "9"
    rows_path = f"{DATA}/channels/ELASTIC/rows?requestId=x"
    code, out = client.call("POST", rows_path, b"\x28\xb5junk", headers)
    assert code == 400 and b"zstd body" in out
    client.token = "not-a-token"
    assert client.rows(raw)[0] == 401


def test_answer_delay_holds_the_rows_reply_but_not_other_requests(tmp_path: Path) -> None:
    delay = 1.0
    emu = make_emulator(tmp_path, sink="drop", answer_delay_s=delay)
    try:
        client = Client(emu)
        done: dict[str, float] = {}

        def rows(name: str) -> None:
            t0 = time.monotonic()
            assert client.rows(_rows(100))[0] == 200
            done[name] = time.monotonic() - t0

        threads = [threading.Thread(target=rows, args=(f"rows{i}",)) for i in range(3)]
        for t in threads:
            t.start()
        time.sleep(0.2)  # the rows requests are in their delay now
        t0 = time.monotonic()
        assert client.status("ELASTIC")["ELASTIC"]["channel_status_code"] == "SUCCESS"
        done["status"] = time.monotonic() - t0
        for t in threads:
            t.join(30)
        assert emu.stats_snapshot()["answer_delay_s"] == delay
    finally:
        emu.stop()
    assert all(done[f"rows{i}"] >= delay for i in range(3)), done
    # The status call went out while three rows answers were being held: it was not queued
    # behind them (it finished before the first of them could).
    assert done["status"] < delay, done


def test_without_the_check_lines_are_counted_and_not_typed(tmp_path: Path) -> None:
    emu = make_emulator(tmp_path, sink="drop", sink_check=False)
    try:
        good = _rows(3).splitlines()
        raw = b"\n".join([good[0], b"nope", good[1], b"", good[2]]) + b"\n"
        assert Client(emu).rows(raw)[0] == 200
        sink = emu.stats_snapshot()["drop_sink"]
        assert sink["check_rows"] is False and sink["check_seconds"] >= 0
        assert (sink["rows_dropped"], sink["rows_rejected"]) == (4, 0)  # "nope" unchecked
    finally:
        emu.stop()


# --- as a process, through the real SDK ------------------------------------------------


@pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")
def test_worker_through_the_sdk_is_acked_by_the_drop_sink(tmp_path: Path) -> None:
    server = EmulatorProcess(tmp_path / "emu", "--sink", "drop", "--answer-delay-seconds", "0.2")
    server.start()
    try:
        worker = subprocess.run(
            [sys.executable, "-m", "elastic_channels.k8s_worker", "--profile",
             str(server.info_file), "--run-id", "drop-sdk", "--worker-id", "3",
             "--target-bps", "3e6", "--duration-seconds", "3", "--window-seconds", "1",
             "--channels", "2"],
            capture_output=True, text=True, timeout=180,
            env=child_env(SSL_CERT_FILE=server.info["ssl_cert_file"], SS_LOG_LEVEL="error"),
        )  # fmt: skip
        assert worker.returncode == 0, worker.stderr[-3000:]
        summary = next(json.loads(x) for x in worker.stdout.splitlines() if '"summary"' in x)
        assert summary["unacked_rows"] == 0 and summary["rows_acked"] > 0
        stats = subprocess.run(
            [sys.executable, "-m", "elastic_channels.emulator", "stats",
             "--data-dir", str(server.data_dir)],
            capture_output=True, text=True, timeout=60, env=child_env(),
        )  # fmt: skip
        assert stats.returncode == 0, stats.stderr
        snap = json.loads(stats.stdout)
        assert snap["sink"] == "drop" and snap["answer_delay_s"] == 0.2
        assert snap["drop_sink"]["rows_dropped"] == summary["rows_acked"]
        assert snap["drop_sink"]["rows_rejected"] == 0 and snap["drop_sink"]["requests"] > 0
        assert snap["rows_landed"] == 0
        assert server.query("SELECT count(*) AS n FROM RESORT_SALES") == [{"n": 0}]
    finally:
        assert server.stop() == 0, server.stderr()
