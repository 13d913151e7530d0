"""The control plane of a real emulator process: it needs the secret the emulator keeps
in its data dir, and its queries cannot change anything or touch the machine
(issue #12 item 6)."""

from __future__ import annotations

import json
import stat

import pytest
from emulator_support import ROWS_PATH, EmulatorProcess

from elastic_channels.rows import ResortGenerator


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


@pytest.fixture(scope="module")
def rows_landed(emu):
    """A few rows in the table, so a query that changed it would show."""
    token = emu.scoped_token()
    body = ResortGenerator("control", 0).next_batch(5, 1_700_000_000_000_000)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/x-ndjson"}
    status, _, reply = emu.request("POST", ROWS_PATH.format(rid="control"), body, headers)
    assert status == 200, reply
    assert emu.wait_landed(60)
    return 5


def _refused(emu, sql, why, rows_landed):
    status, _, reply = _post(emu, "query", {"sql": sql}, emu.secret)
    assert status == 400, reply
    assert why in json.loads(reply)["message"]
    assert emu.query("SELECT count(*) AS n FROM RESORT_SALES") == [{"n": rows_landed}]
    assert emu.query("SELECT count(*) AS n FROM duckdb_tables()")[0]["n"] == 3, "no table made"


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
        ("EXPLAIN ANALYZE DELETE FROM RESORT_SALES", "EXPLAIN ANALYZE runs"),
        ("EXPLAIN ANALYZE CREATE TABLE x AS SELECT 1", "EXPLAIN ANALYZE runs"),
        ("explain  analyze select 1", "EXPLAIN ANALYZE runs"),
        ("EXPLAIN DELETE FROM RESORT_SALES", "only EXPLAIN of a SELECT"),
        ("SELECT * FROM read_csv('/etc/passwd')", "read_csv() is not allowed"),
        ("SELECT * FROM read_text('/etc/hostname')", "read_text() is not allowed"),
        ("SELECT * FROM '/etc/passwd'", "not a table or view"),
        ("SELECT * FROM glob('/*')", "glob() is not allowed"),
        ("SELECT * FROM query('DELETE FROM RESORT_SALES')", "query() is not allowed"),
        ("SELECT (SELECT count(*) FROM read_parquet('/x'))", "read_parquet() is not allowed"),
    ],
)
def test_queries_cannot_change_anything_or_read_files(emu, rows_landed, sql, why):
    _refused(emu, sql, why, rows_landed)


def test_the_lander_work_files_stay_unread_and_nothing_is_written(emu, rows_landed):
    """The lander's work directory is the one place DuckDB may open files: a query still
    cannot read a file there, nor write one (COPY TO, EXPLAIN ANALYZE COPY TO)."""
    work = (emu.data_dir / "spool-work").resolve()
    assert work.is_dir()
    planted = work / "planted.csv"
    planted.write_text("secret\n1\n")
    for sql, why in (
        (f"SELECT * FROM read_csv('{planted}')", "read_csv() is not allowed"),
        (f"SELECT * FROM '{planted}'", "not a table or view"),
        (f'SELECT * FROM "{planted}"', "not a table or view"),
        (f"DESCRIBE '{planted}'", "not a table or view"),
        (f"WITH a AS (SELECT * FROM '{planted}'), \"{planted}\" AS (SELECT 1) FROM a",
         "not a table or view"),
        (f"COPY RESORT_SALES TO '{work}/out.csv'", "only SELECT"),
        (f"EXPLAIN ANALYZE COPY RESORT_SALES TO '{work}/out.csv'", "EXPLAIN ANALYZE runs"),
        (f"ATTACH '{work}/other.duckdb'", "only SELECT"),
    ):  # fmt: skip
        _refused(emu, sql, why, rows_landed)
    assert not (work / "out.csv").exists() and not (work / "other.duckdb").exists()
    planted.unlink()


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 41 + 1 AS answer",
        "WITH a AS (SELECT 42 AS answer) SELECT * FROM a",
        "EXPLAIN SELECT count(*) FROM RESORT_SALES",
        "SELECT count(*) AS answer FROM resort_sales",
        "DESCRIBE RESORT_SALES",
        "SELECT * FROM range(3)",
    ],
)
def test_a_query_works_for_the_owner(emu, sql):
    assert emu.query(sql)


def test_a_select_works_for_the_owner(emu):
    assert emu.query("SELECT 41 + 1 AS answer") == [{"answer": 42}]


def test_the_client_keeps_its_connection_between_calls(emu):
    """One TLS connection serves a client's calls (a dashboard page's dozen queries every
    few seconds), and a kept connection that was closed meanwhile is opened again for a
    read, never for a call that changes something."""
    import socket

    from elastic_channels.emulator.control import ControlClient, ControlError

    client = ControlClient(emu.data_dir, timeout_s=30)
    try:
        assert json.loads(client.call("POST", "query", {"sql": "SELECT 1 AS X"})) == {"X": 1}
        (kept,) = client._idle
        assert client.json("GET", "faults") == []
        assert client._idle == [kept]  # the same connection, not a new one
        kept.sock.shutdown(socket.SHUT_RDWR)  # as when the server closes an idle one
        assert json.loads(client.call("POST", "query", {"sql": "SELECT 2 AS X"})) == {"X": 2}
        (again,) = client._idle
        assert again is not kept
        again.sock.shutdown(socket.SHUT_RDWR)
        with pytest.raises(ControlError, match="cannot reach the emulator"):
            client.call("POST", "faults", {"endpoint": "rows", "action": "drop", "count": 1})
        assert client.json("GET", "faults") == []  # not sent twice, not sent at all
        with pytest.raises(ControlError, match="HTTP 400"):  # errors still say what
            client.call("POST", "query", {"sql": "DELETE FROM RESORT_SALES"})
    finally:
        client.close()
    assert client._idle == []
