"""The real snowpipe-streaming SDK against the emulator, end to end over HTTPS."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest
from emulator_support import SALE_TIME_US, make_emulator, run_sdk, sdk_available
from key_files import pem_key

from elastic_channels.model import COLUMNS
from elastic_channels.rows import ResortGenerator

pytestmark = pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")

ROWS = 3000


@pytest.fixture
def emu(tmp_path):
    emulator = make_emulator(tmp_path)
    try:
        yield emulator
    finally:
        emulator.stop()


def landed(emu, run_id: str) -> dict[str, tuple]:
    assert emu.wait_landed(30), "landing did not finish in 30 s"
    names = ", ".join(f'"{c}"' for c, _ in COLUMNS)
    rows = emu.query(f"SELECT {names} FROM RESORT_SALES WHERE RUN_ID = '{run_id}'")
    by_txid = {r[0]: r for r in rows}
    assert len(by_txid) == len(rows), "a TXID landed more than once"
    return by_txid


def expected(run_id: str, n: int) -> dict[str, tuple]:
    out = {}
    for r in ResortGenerator(run_id, 0).next_rows(n, SALE_TIME_US):
        values = [getattr(r, c) for c, _ in COLUMNS]
        values[7] = decimal.Decimal(str(r.UNIT_PRICE)).quantize(decimal.Decimal("0.01"))
        values[8] = decimal.Decimal(str(r.AMOUNT)).quantize(decimal.Decimal("0.01"))
        out[r.TXID] = tuple(values)
    return out


def test_rows_land_exactly_with_generated_values(emu, tmp_path):
    result = run_sdk(emu, tmp_path, {"run_id": "exact", "rows": ROWS, "chunk": 500})
    assert result["futures"] == ["ok"] * (ROWS // 500), result
    assert not result["handler_errors"]
    got = landed(emu, "exact")
    want = expected("exact", ROWS)
    assert got.keys() == want.keys()
    for txid, row in want.items():
        assert got[txid] == row, txid
    # Every row carries a commit time at or after its sale time.
    (lag,) = emu.query(
        "SELECT min(_COMMIT_TIME - SALE_TIME) >= INTERVAL 0 SECOND FROM RESORT_SALES"
    )[0]
    assert lag is True
    status = emu.stats.snapshot()["channels"][0]
    assert (status["channel_name"], status["rows_inserted"]) == ("ELASTIC", ROWS)
    assert status["rows_error_count"] == 0


def test_wrong_key_gets_401_and_the_client_reports_it(emu, tmp_path):
    wrong = pem_key(tmp_path)  # a fresh key the emulator has never registered
    result = run_sdk(emu, tmp_path, {"properties": {"private_key_file": str(wrong)}})
    assert "401" in result.get("construct_error", ""), result
    assert "not registered" in result["construct_error"]
    responses = emu.stats.snapshot()["responses"]
    assert responses.get("hostname:401", 0) >= 1
    assert "hostname:200" not in responses


@pytest.mark.parametrize(
    "fault",
    [
        {"action": "status", "status": 500},
        {"action": "status", "status": 503},
        {"action": "status", "status": 429},
        {"action": "drop"},
        {"action": "status", "status": 401},  # the SDK fetches a new scoped token
    ],
    ids=["500", "503", "429", "drop", "401"],
)
def test_transient_faults_are_retried_and_rows_land_once(emu, tmp_path, fault):
    emu.faults.add("rows", count=2, **fault)
    result = run_sdk(emu, tmp_path, {"run_id": "retry", "rows": 1000, "chunk": 250})
    assert result["futures"] == ["ok"] * 4, result
    assert emu.faults.pending() == 0, "the faults never fired"
    snap = emu.stats.snapshot()
    assert snap["faults_fired"] == {f"rows:{fault['action']}": 2}
    if fault.get("status") == 401:
        assert snap["requests"]["token"] >= 2, "the SDK did not fetch a new scoped token"
    got = landed(emu, "retry")
    assert got.keys() == expected("retry", 1000).keys()


def test_400_fails_the_append_and_the_sdk_reports_it(emu, tmp_path):
    emu.faults.add("rows", "status", status=400, count=1)
    result = run_sdk(emu, tmp_path, {"run_id": "bad", "rows": 200, "chunk": 200})
    assert len(result["futures"]) == 1
    assert result["futures"][0] != "ok" and "400" in result["futures"][0], result
    assert result["handler_errors"], "the SDK error handler did not fire"
    assert landed(emu, "bad") == {}


def test_malformed_rows_are_rejected_and_good_rows_of_the_request_land(emu, tmp_path):
    good = ResortGenerator("mixed", 0).next_rows(3, SALE_TIME_US)
    template = {c: getattr(good[0], c) for c, _ in COLUMNS}
    template["SALE_TIME"] = dt.datetime.fromtimestamp(1_700_000_000, dt.timezone.utc).isoformat()
    unknown = {**template, "TXID": "mixed-bad-1", "COUPON": "X"}
    missing = {k: v for k, v in template.items() if k != "RESORT"} | {"TXID": "mixed-bad-2"}
    wrong_type = {**template, "TXID": "mixed-bad-3", "QUANTITY": "lots"}
    result = run_sdk(
        emu,
        tmp_path,
        {
            "run_id": "mixed",
            "rows": 100,
            "extra_rows": [unknown, missing, wrong_type],
            "chunk": 1000,  # one append, one request
        },
    )
    assert result["futures"] == ["ok"], result
    got = landed(emu, "mixed")
    assert got.keys() == expected("mixed", 100).keys()
    status = emu.stats.snapshot()["channels"][0]
    assert (status["rows_parsed"], status["rows_inserted"]) == (103, 100)
    assert status["rows_error_count"] == 3
    errors = emu.query("SELECT LINE_NUMBER, MESSAGE FROM _EMULATOR_ERRORS ORDER BY LINE_NUMBER")
    messages = " | ".join(m for _, m in errors)
    assert len(errors) == 3
    assert "unknown field `COUPON`" in messages
    assert "missing required field `RESORT`" in messages
    assert "$.QUANTITY" in messages


def test_a_lost_ack_lands_rows_twice_and_loses_none(emu, tmp_path):
    """The lose_ack fault: the request lands, its ack never arrives, the SDK sends it
    again. At-least-once made visible: duplicates, nothing lost (issue #12 item 8)."""
    emu.faults.add("rows", "lose_ack", count=1)
    result = run_sdk(emu, tmp_path, {"run_id": "lost", "rows": 1000, "chunk": 250})
    assert result["futures"] == ["ok"] * 4, result
    assert emu.stats.snapshot()["faults_fired"] == {"rows:lose_ack": 1}
    assert emu.wait_landed(30)
    counts = dict(
        emu.query("SELECT TXID, count(*) FROM RESORT_SALES WHERE RUN_ID = 'lost' GROUP BY 1")
    )
    assert counts.keys() == expected("lost", 1000).keys(), "nothing lost"
    duplicated = [t for t, n in counts.items() if n > 1]
    assert duplicated and max(counts.values()) == 2, "the unacked request landed twice"
    assert len(duplicated) % 250 == 0, "whole appends were duplicated"
