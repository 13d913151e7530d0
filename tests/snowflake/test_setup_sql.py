"""The setup SQL: its landing table matches the generator's schema and the emulator's table.

Three things describe RESORT_SALES: ``resort_sales.COLUMNS`` (the source), the
Snowflake DDL from ``elastic-channels setup`` and the emulator's DuckDB table.
These tests parse the DDL back and compare all three, so none can drift. No network.
``--via connector`` runs the statements through snowflake-connector-python (faked here);
the SQL API, the default, is test_setup_sql_api.py's.
"""

from __future__ import annotations

import re
import subprocess
import sys
import types
from pathlib import Path

import pytest
from key_files import pem_key

from elastic_channels.account import reach
from elastic_channels.emulator.storage import schema as emu_schema
from elastic_channels.model import COLUMNS, ResortSale
from elastic_channels.snowflake import cli as setup_cli
from elastic_channels.snowflake import ddl as setup

REPO = Path(__file__).resolve().parents[2]

_CREATE_TABLE = re.compile(
    r"CREATE TABLE IF NOT EXISTS (\S+) \(\n(.*)\n\)(?:\nROW_TIMESTAMP = TRUE)?$", re.S
)
_COLUMN = re.compile(r'\s*"([A-Z_][A-Z0-9_]*)" (.+?),?$')


def _parse_create_table(stmt: str) -> tuple[str, list[tuple[str, str]]]:
    m = _CREATE_TABLE.match(stmt)
    assert m, stmt
    cols = []
    for line in m.group(2).splitlines():
        c = _COLUMN.fullmatch(line)
        assert c, line
        cols.append((c.group(1), c.group(2)))
    return m.group(1), cols


def _tables(stmts: list[str]) -> dict[str, list[tuple[str, str]]]:
    return dict(_parse_create_table(s) for s in stmts if s.startswith("CREATE TABLE"))


def test_resort_sales_ddl_matches_columns() -> None:
    tables = _tables(setup.statements("demo", "public"))
    cols = tables["DEMO.PUBLIC.RESORT_SALES"]
    assert cols == list(COLUMNS)
    assert [n for n, _ in cols] == list(ResortSale.__struct_fields__)


def test_resort_sales_ddl_matches_emulator_table() -> None:
    duckdb = pytest.importorskip("duckdb")
    cols = _tables(setup.statements("D", "S"))["D.S.RESORT_SALES"]
    con = duckdb.connect()
    con.execute(emu_schema.create_table_sql("RESORT_SALES", COLUMNS))
    described = con.execute("DESCRIBE RESORT_SALES").fetchall()
    emulated = [(r[0], r[1]) for r in described if r[0] != emu_schema.COMMIT_TIME_COLUMN]
    # Same names in the same order, and each DuckDB type is what the emulator maps
    # the setup SQL's Snowflake type to (both spelled by DuckDB itself, via DESCRIBE).
    assert [n for n, _ in emulated] == [n for n, _ in cols]
    probe = ", ".join(f'"{n}" {emu_schema.column_type(t).duckdb}' for n, t in cols)
    con.execute(f"CREATE TABLE FROM_SETUP_SQL ({probe})")
    expected = [(r[0], r[1]) for r in con.execute("DESCRIBE FROM_SETUP_SQL").fetchall()]
    assert emulated == expected


def test_pipe_maps_json_keys_case_sensitively() -> None:
    stmts = setup.statements("DEMO", "PUBLIC")
    pipes = [s for s in stmts if s.startswith("CREATE PIPE")]
    assert len(pipes) == 1
    pipe = " ".join(pipes[0].split())
    assert pipe == (
        "CREATE PIPE IF NOT EXISTS DEMO.PUBLIC.RESORT_SALES_PIPE "
        "AS COPY INTO DEMO.PUBLIC.RESORT_SALES "
        "FROM TABLE(DATA_SOURCE(TYPE => 'STREAMING')) "
        "MATCH_BY_COLUMN_NAME = CASE_SENSITIVE"
    )


def test_resort_sales_has_row_timestamps_new_or_existing() -> None:
    """METADATA$ROW_LAST_COMMIT_TIME (ingest-to-visible) exists only with row timestamps:
    a new table is created with them, and an existing one gets them turned on."""
    stmts = setup.statements("DEMO", "PUBLIC")
    create = next(s for s in stmts if s.startswith("CREATE TABLE IF NOT EXISTS DEMO.PUBLIC.RE"))
    assert create.endswith(")\nROW_TIMESTAMP = TRUE")
    alter = "ALTER TABLE DEMO.PUBLIC.RESORT_SALES SET ROW_TIMESTAMP = TRUE"
    assert alter in stmts
    assert stmts.index(alter) == stmts.index(create) + 1  # before the pipe writes to it


def test_an_older_metrics_table_gains_every_new_column() -> None:
    stmts = setup.statements("DEMO", "PUBLIC")
    added = [
        m.group(1, 2)
        for s in stmts
        if (m := re.fullmatch(r'ALTER TABLE DEMO\.PUBLIC\.ELASTIC_K8S_METRICS ADD COLUMN IF '
                              r'NOT EXISTS "(\w+)" (.+)', s))
    ]  # fmt: skip
    assert added == [(n, t) for n, t in setup.METRICS_COLUMNS if "DEFAULT" not in t]
    assert {"IS_FLEET", "INGEST_TO_VISIBLE_P50_MS", "ACK_LATENCY_HIST"} <= {n for n, _ in added}


def test_metrics_table_and_idempotence() -> None:
    stmts = setup.statements("DEMO", "PUBLIC")
    idempotent = (
        r"CREATE \w+ IF NOT EXISTS "
        r"|ALTER TABLE \S+ (SET ROW_TIMESTAMP = TRUE$|ADD COLUMN IF NOT EXISTS )"
    )
    assert all(re.match(idempotent, s) for s in stmts), stmts
    assert not any(re.search(r"\b(OR REPLACE|DROP|TRUNCATE|DELETE)\b", s) for s in stmts)
    metrics = _tables(stmts)["DEMO.PUBLIC.ELASTIC_K8S_METRICS"]
    assert metrics == list(setup.METRICS_COLUMNS)
    names = [n for n, _ in metrics]
    assert {"RUN_ID", "WORKER_ID", "WINDOW_START", "MB_PER_SEC", "RAW", "IS_FLEET"} <= set(names)
    assert len(names) == len(set(names))
    # Every type the metrics table uses is one the emulator could create too.
    for _, sf_type in metrics:
        if sf_type != "VARIANT":
            emu_schema.column_type(sf_type.split(" DEFAULT ")[0])


def test_no_create_database_and_custom_names() -> None:
    stmts = setup.statements(
        "db", "sc", create_database=False, table="T1", pipe="P1", metrics_table="M1"
    )
    assert not any(s.startswith(("CREATE DATABASE", "CREATE SCHEMA")) for s in stmts)
    assert set(_tables(stmts)) == {"DB.SC.T1", "DB.SC.M1", "DB.SC.M1_STAGES"}
    assert any("PIPE IF NOT EXISTS DB.SC.P1\n  AS COPY INTO DB.SC.T1\n" in s for s in stmts)


@pytest.mark.parametrize(
    ("kwargs", "flag"),
    [
        ({"database": "bad name"}, "--database"),
        ({"schema": 'x";drop'}, "--schema"),
        ({"pipe": "1PIPE"}, "--pipe"),
        ({"table": ""}, "--table"),
    ],
)
def test_bad_identifiers_are_named(kwargs: dict[str, str], flag: str) -> None:
    args = {"database": "D", "schema": "S", **kwargs}
    database, schema = args.pop("database"), args.pop("schema")
    with pytest.raises(setup.SetupError, match=re.escape(flag)):
        setup.statements(database, schema, **args)


def _run_cli(*argv: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO / "python"), **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "elastic_channels", "setup", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_cli_print_runs_nothing_and_shows_every_statement() -> None:
    stmts = setup.statements("DEMO", "PUBLIC")
    proc = _run_cli("--database", "DEMO", "--schema", "PUBLIC", "--print", "--upgrade")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == setup.render(stmts)
    assert proc.stdout.count(";\n") == len(stmts)


def test_cli_print_leaves_out_the_upgrade_alters_and_says_so() -> None:
    """What --print shows makes the objects on a new account: no ALTER that is a no-op
    after the CREATE beside it; a last comment says how many were left out and how to
    see them."""
    stmts = setup.statements("DEMO", "PUBLIC")
    proc = _run_cli("--database", "DEMO", "--schema", "PUBLIC", "--print")
    assert proc.returncode == 0, proc.stderr
    body, _, note = proc.stdout.rstrip("\n").rpartition("\n")
    shown = [s for s in stmts if not s.startswith("ALTER TABLE")]
    assert body + "\n" == setup.render(shown)
    assert note.startswith(f"-- {len(stmts) - len(shown)} ALTER(s)") and "--upgrade" in note
    assert len(stmts) - len(shown) > 1  # the metrics columns and the row timestamps


def test_cli_errors_name_what_is_missing() -> None:
    proc = _run_cli("--print")
    assert proc.returncode == 2
    assert "--database" in proc.stderr
    proc = _run_cli("--database", "DEMO")
    assert proc.returncode == 2
    assert "no credentials" in proc.stderr and "--print" in proc.stderr
    proc = _run_cli("--database", "DEMO", "--account", "a", "--user", "u")
    assert proc.returncode == 2
    assert "no private key" in proc.stderr


def test_via_connector_runs_each_statement_on_one_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --via connector, main() connects once and executes the statements in order."""
    calls: list[tuple[str, object]] = []

    class Cursor:
        def execute(self, sql: str) -> None:
            calls.append(("execute", sql))

        def close(self) -> None:
            calls.append(("cursor.close", None))

    class Conn:
        def cursor(self) -> Cursor:
            return Cursor()

        def close(self) -> None:
            calls.append(("close", None))

    def connect(**params: object) -> Conn:
        calls.append(("connect", params))
        return Conn()

    connector = types.ModuleType("snowflake.connector")
    connector.connect = connect  # type: ignore[attr-defined]
    connector.Error = RuntimeError  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "snowflake.connector", connector)
    monkeypatch.setattr(reach, "check_reachable", lambda settings, **_: None)  # no account
    key = pem_key(tmp_path)
    argv = ["--database", "DEMO", "--account", "ORG-ACCT", "--user", "INGEST", "--role", "R"]
    rc = setup_cli.main([*argv, "--private-key-file", str(key), "--via", "connector"])
    assert rc == 0
    kind, params = calls[0]
    assert kind == "connect"
    assert isinstance(params, dict)
    assert params["account"] == "ORG-ACCT" and params["user"] == "INGEST"
    assert params["role"] == "R"
    assert isinstance(params["private_key"], bytes)  # DER, as the connector takes it
    executed = [sql for kind, sql in calls if kind == "execute"]
    assert executed == setup.statements("DEMO", "PUBLIC")
    assert calls[-1] == ("close", None)


def test_via_connector_without_it_says_which_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "snowflake.connector", None)  # import fails
    key = pem_key(tmp_path)
    argv = ["--database", "DEMO", "--account", "A", "--user", "U", "--private-key-file"]
    rc = setup_cli.main([*argv, str(key), "--via", "connector"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "--via connector needs snowflake-connector-python" in err
    assert "pip install '.[setup]'" in err


def test_setup_sql_runs_on_the_emulator_and_the_monitor_writes_that_table() -> None:
    """The setup SQL, statement by statement through the emulator's SQL API, makes the
    tables the monitor writes and reads: setup, emulator and monitor stay in step."""
    duckdb = pytest.importorskip("duckdb")
    from elastic_channels.emulator.sql.api import handle_statement
    from elastic_channels.monitor import rows
    from elastic_channels.monitor.sink import SqlMetricsSink
    from elastic_channels.monitor.sql_client import SqlApiClient, local_transport

    con = duckdb.connect()
    con.execute(emu_schema.create_table_sql("RESORT_SALES", COLUMNS))  # the emulator's own
    for stmt in setup.statements("DEMO", "PUBLIC"):
        status, reply = handle_statement({"statement": stmt}, con)
        assert status == 200, (stmt.splitlines()[0], reply)
    metrics = [r[0] for r in con.execute("DESCRIBE ELASTIC_K8S_METRICS").fetchall()]
    assert metrics == [n for n, _ in setup.METRICS_COLUMNS]
    sink = SqlMetricsSink(SqlApiClient(local_transport(con)))
    line = {
        "type": "window", "run_id": "r", "worker_id": 1, "window_start": 1767225600.0,
        "window_seconds": 5.0, "partial": False, "start": 1767225600.0, "end": 1767225605.0,
        "rows": 10, "bytes": 2920, "acks": 1, "ack_p50_ms": 12.5, "cpu_pct": 30.0,
    }  # fmt: skip
    sink.upsert([rows.worker_row(line)])
    (back,) = sink.read_rows("r")
    assert {c for c, v in back.items() if v is not None} >= {
        "RUN_ID", "WORKER_ID", "IS_FLEET", "WINDOW_START", "ROWS_APPENDED", "RAW", "INSERTED_AT",
    }  # fmt: skip
    assert sink.visible_latency("r", 5.0, 1767225600.0, 1767225610.0) == {}
