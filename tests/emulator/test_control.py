"""The control plane of a real emulator process: it needs the secret the emulator keeps
in its data dir, and its queries cannot change anything or touch the machine
(issue #12 item 6)."""

from __future__ import annotations

import json
import stat

import pytest
from emulator_support import EmulatorProcess


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    proc = EmulatorProcess(tmp_path_factory.mktemp("control") / "emu").start()
    yield proc
    assert proc.stop() == 0, proc.stderr()


def _post(emu, path, body, secret):
    headers = {"Content-Type": "application/json"}
    if secret is not None:
        headers["Authorization"] = f"Bearer {secret}"
    return emu.request("POST", f"/_emulator/{path}", json.dumps(body).encode(), headers)


def test_the_secret_is_private_to_its_owner(emu):
    mode = (emu.data_dir / "control.secret").stat().st_mode
    assert stat.S_IMODE(mode) == 0o600
    assert len(emu.secret) >= 32


@pytest.mark.parametrize("secret", [None, "", "wrong", "x" * 43])
def test_control_calls_without_the_secret_are_401(emu, secret):
    for path, body in (
        ("query", {"sql": "SELECT 1"}),
        ("faults", {"endpoint": "rows", "action": "drop"}),
    ):
        status, _, reply = _post(emu, path, body, secret)
        assert status == 401, reply
        assert b"control.secret" in reply or b"Authorization" in reply
    status, _, _ = emu.request("GET", "/_emulator/stats")
    assert status == 401
    assert emu.control("GET", "faults") == b"[]", "no fault got in"


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        ("DROP TABLE RESORT_SALES", "only SELECT"),
        ("DELETE FROM RESORT_SALES", "only SELECT"),
        ("CREATE TABLE x AS SELECT 1", "only SELECT"),
        ("COPY RESORT_SALES TO '/tmp/stolen.csv'", "only SELECT"),
        ("ATTACH '/tmp/other.duckdb'", "only SELECT"),
        ("INSTALL httpfs", "only SELECT"),
        ("SET enable_external_access = true", "only SELECT"),
        ("SELECT 1; DROP TABLE RESORT_SALES", "exactly one"),
        ("SELECT * FROM read_csv('/etc/passwd')", "disabled"),
        ("SELECT * FROM read_text('/etc/hostname')", "disabled"),
        ("SELECT * FROM '/etc/passwd'", ""),
        ("SELECT * FROM glob('/*')", "disabled"),
    ],
)
def test_queries_cannot_change_anything_or_read_files(emu, sql, why):
    status, _, reply = _post(emu, "query", {"sql": sql}, emu.secret)
    assert status == 400, reply
    assert why in json.loads(reply)["message"]
    assert emu.query("SELECT count(*) AS n FROM RESORT_SALES") == [{"n": 0}]


def test_a_select_works_for_the_owner(emu):
    assert emu.query("SELECT 41 + 1 AS answer") == [{"answer": 42}]
