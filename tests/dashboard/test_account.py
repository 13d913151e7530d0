"""The account data source: settings from --profile / SNOWFLAKE_*, rows as dicts, named
errors. The connector is replaced by a stand-in module that records what it is given
(no account is reachable from a test)."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from elastic_channels.dashboard.account import AccountSource
from elastic_channels.dashboard.source import NoData, QueryError


def _key_pem() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


class _Cursor:
    def __init__(self, conn: _Conn) -> None:
        self.conn = conn

    def execute(self, sql: str, params: Any = None) -> None:
        self.conn.sql.append(sql)
        self.conn.bound.append(params)
        if "MISSING" in sql:
            raise RuntimeError("002003 (42S02): Object 'MISSING' does not exist or not authorized.")
        if "BROKEN" in sql:
            raise RuntimeError("001003 (42000): SQL compilation error: syntax error")

    def fetchall(self) -> list[dict[str, Any]]:
        return [{"RUN_ID": "r1", "SALES": 3}]

    def close(self) -> None:
        pass


class _Conn:
    def __init__(self, params: dict[str, Any]) -> None:
        self.params, self.sql, self.bound = params, [], []

    def cursor(self, kind: Any = None) -> _Cursor:
        assert kind is _DictCursor
        return _Cursor(self)


class _DictCursor:
    pass


@pytest.fixture
def connector(monkeypatch: pytest.MonkeyPatch) -> list[_Conn]:
    made: list[_Conn] = []
    fake = types.ModuleType("snowflake.connector")
    fake.DictCursor = _DictCursor  # type: ignore[attr-defined]
    fake.connect = lambda **params: made.append(_Conn(params)) or made[-1]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "snowflake.connector", fake)
    for name in ("ACCOUNT", "USER", "ROLE", "WAREHOUSE", "DATABASE", "SCHEMA",
                 "PRIVATE_KEY", "PRIVATE_KEY_FILE"):  # fmt: skip
        monkeypatch.delenv(f"SNOWFLAKE_{name}", raising=False)
    return made


def test_profile_settings_and_rows(connector: list[_Conn], tmp_path: Path) -> None:
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({
        "account": "ACME-X1", "user": "BENCH", "private_key": _key_pem(),
        "database": "DEMO", "schema": "RUNS", "warehouse": "WH",
    }))  # fmt: skip
    src = AccountSource(str(profile))
    assert src.description == "account ACME-X1, DEMO.RUNS"
    assert src.dialect.commit_time == "METADATA$ROW_LAST_COMMIT_TIME"
    assert src.rows("SELECT 1") == [{"RUN_ID": "r1", "SALES": 3}]
    src.rows("SELECT 2")
    (conn,) = connector  # one session, reused
    assert conn.params["database"] == "DEMO" and conn.params["schema"] == "RUNS"
    assert conn.params["warehouse"] == "WH" and isinstance(conn.params["private_key"], bytes)
    assert conn.sql == ["SELECT 1", "SELECT 2"]
    assert conn.params["paramstyle"] == "qmark"  # values bound by the server
    with pytest.raises(NoData, match="does not exist"):
        src.rows("SELECT * FROM MISSING")
    with pytest.raises(QueryError, match="syntax error"):
        src.rows("SELECT BROKEN")


def test_missing_settings_are_named(connector: list[_Conn], tmp_path: Path) -> None:
    with pytest.raises(QueryError, match="no account"):
        AccountSource(None)
    profile = tmp_path / "p.json"
    profile.write_text(json.dumps({"account": "A", "user": "U", "private_key": _key_pem()}))
    with pytest.raises(QueryError, match="no database"):
        AccountSource(str(profile))
    profile.write_text(json.dumps({"account": "A", "private_key": _key_pem()}))
    with pytest.raises(QueryError, match="--user"):
        AccountSource(str(profile))
    assert connector == []


def test_database_and_schema_flags_before_env_before_profile(
    connector: list[_Conn], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({
        "account": "ACME-X1", "user": "BENCH", "private_key": _key_pem(),
        "database": "FROM_PROFILE", "schema": "FROM_PROFILE",
    }))  # fmt: skip
    monkeypatch.setenv("SNOWFLAKE_DATABASE", "FROM_ENV")
    assert AccountSource(str(profile)).description == "account ACME-X1, FROM_ENV.FROM_PROFILE"
    src = AccountSource(str(profile), database="DEMO", schema="RUNS")
    assert src.description == "account ACME-X1, DEMO.RUNS"
    src.rows("SELECT 1")
    (conn,) = connector
    assert (conn.params["database"], conn.params["schema"]) == ("DEMO", "RUNS")


def test_values_are_bound_never_written_into_the_sql(
    connector: list[_Conn], tmp_path: Path
) -> None:
    """A run id reaches the account as a binding (``paramstyle="qmark"``): the SQL text
    holds a ``?``, whatever the id (Snowflake reads ``\\'`` as a quote inside a literal)."""
    from elastic_channels.dashboard import metrics_sql as m
    from elastic_channels.dashboard import sales_sql as q

    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({
        "account": "ACME-X1", "user": "BENCH", "private_key": _key_pem(), "database": "DEMO",
    }))  # fmt: skip
    src = AccountSource(str(profile))
    evil = "a\\' OR 1=1 --"
    src.rows(q.latest_sales(src.dialect, evil, "2026-12-02T10:00:00+00:00"))
    src.rows(m.landed(evil, q.TABLE))
    (conn,) = connector
    assert conn.params["paramstyle"] == "qmark"
    assert all(evil not in sql and "?" in sql for sql in conn.sql)
    assert conn.bound == [[evil, "2026-12-02T10:00:00+00:00"], [evil]]
