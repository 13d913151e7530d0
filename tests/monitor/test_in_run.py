"""RunMonitor, as ``elastic-channels run`` uses it, on a real emulator in this process."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from emulator_support import make_emulator
from monitor_support import EPOCH0, FakeWorker

from elastic_channels.monitor.in_run import RunMonitor
from elastic_channels.monitor.sql_client import SqlApiClient, SqlError


def test_lines_in_fleet_windows_out_of_the_emulators_table(tmp_path: Path) -> None:
    rng = random.Random(2)
    workers = [FakeWorker("in-run", w, EPOCH0 + 0.1 * w, 5.0) for w in range(3)]
    for w in workers:
        while w.now < w.start + 11:
            w.step(0.3, rng)
        w.finish()
    heard = []
    emu = make_emulator(tmp_path)
    try:
        mon = RunMonitor("in-run", 3, emulator=emu, tick_s=0.0, on_fleet=heard.append)
        for w in workers:
            for line in w.lines:
                mon.feed(json.dumps(line))
            mon.feed(dict(w.summary(), rows_acked=0))  # nothing landed in this test
        fleet = mon.finish(visible_wait_s=1)
        rows = emu.query(
            "SELECT count(*) FROM ELASTIC_K8S_METRICS WHERE RUN_ID = 'in-run' AND IS_FLEET"
        )
    finally:
        emu.stop()
    starts = sorted({x["window_start"] for w in workers for x in w.lines})
    assert [f["window_start"] for f in fleet] == starts
    assert rows[0][0] == len(starts)
    for f in fleet:
        mine = [x for w in workers for x in w.lines if x["window_start"] == f["window_start"]]
        assert (f["workers"], f["rows"]) == (len(mine), sum(x["rows"] for x in mine))
    assert sorted({f["window_start"] for f in heard}) == starts


class _OtherKey:
    """The embedded emulator as RunMonitor sees it, but with a key it does not know."""

    def __init__(self, emu: Any, key_file: Path) -> None:
        self._emu, self._key_file = emu, key_file

    def info(self) -> dict[str, Any]:
        return {**self._emu.info(), "private_key_file": str(self._key_file)}


def test_every_statement_goes_over_https_with_the_users_jwt(tmp_path: Path, monkeypatch) -> None:
    """No shortcut past the API: each statement the in-run monitor runs is one
    authenticated HTTP request to the emulator's SQL API, and a key the emulator does not
    know is refused (nothing written)."""
    executed = []
    real_execute = SqlApiClient.execute

    def counting(self: SqlApiClient, statement: str, params: Any = ()) -> Any:
        executed.append(statement)
        return real_execute(self, statement, params)

    monkeypatch.setattr(SqlApiClient, "execute", counting)
    rng = random.Random(5)
    worker = FakeWorker("over-http", 0, EPOCH0, 5.0)
    while worker.now < worker.start + 11:
        worker.step(0.3, rng)
    worker.finish()
    emu = make_emulator(tmp_path)
    try:
        stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        key_file = tmp_path / "stranger.p8"
        pem = stranger.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )  # fmt: skip
        key_file.write_bytes(pem)
        with pytest.raises(SqlError, match="HTTP 401"):
            RunMonitor("over-http", 1, emulator=_OtherKey(emu, key_file), tick_s=0.0)
        refused = answered(emu)
        assert refused and set(refused) == {"sql_statements:401"}
        executed.clear()

        mon = RunMonitor("over-http", 1, emulator=emu, tick_s=0.0, visible=False)
        for line in worker.lines:
            mon.feed(line)
        mon.feed(dict(worker.summary(), rows_acked=0))
        fleet = mon.finish(visible_wait_s=1)
        stored = emu.query("SELECT count(*) FROM ELASTIC_K8S_METRICS WHERE RUN_ID = 'over-http'")[
            0
        ][0]
    finally:
        emu.stop()
    assert len(fleet) == len(worker.lines) and stored == 2 * len(worker.lines) + 1
    assert executed and any(s.startswith("MERGE") for s in executed)
    # One request per statement (the first, probing for the table, answered 422).
    after = answered(emu)
    assert after.pop("sql_statements:401") == refused["sql_statements:401"]
    assert sum(after.values()) == len(executed) and after["sql_statements:200"] >= 3


def answered(emu: Any) -> dict[str, int]:
    """The emulator's SQL API answers so far, by status (counted after the request was
    routed, so only what came over HTTP)."""
    return {k: n for k, n in emu.stats.responses.items() if k.startswith("sql_statements:")}
