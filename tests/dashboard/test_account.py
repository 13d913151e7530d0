"""The account data source: Snowflake's SQL API with a key-pair JWT (no driver),
settings from --profile / SNOWFLAKE_*, rows as dicts, named errors, every value sent as
a binding. The HTTPS to the account is replaced by a stand-in that records each request
(no account is reachable from a test); ``test_account_emulator`` reads a real SQL API."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jwt
import pytest

from elastic_channels.account import reach
from elastic_channels.dashboard import metrics_sql as m
from elastic_channels.dashboard import rows_sql
from elastic_channels.dashboard import sales_sql as q
from elastic_channels.dashboard.account import TIMEOUT_S, AccountSource
from elastic_channels.dashboard.landing import load_view
from elastic_channels.dashboard.source import NoData, QueryError
from elastic_channels.monitor import sql_client
from elastic_channels.snowflake.ddl import METRICS_COLUMNS

EVIL = "a\\' OR 1=1 --"


def _key_pem() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


class FakeSqlApi:
    """Snowflake's SQL API in place of HTTPS to the account URL: records each request
    (method, path, JSON body) and its JWT; answers a POST with one row (``RUN_ID``
    ``r1``, ``SALES`` 3), or the SQL API's error for a statement naming ``MISSING`` (an
    object that does not exist) or ``BROKEN`` (a syntax error)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, Any]] = []
        self.tokens: list[str] = []
        self.base_url: str | None = None
        self.cafile: str | None = None

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [body for method, _, body in self.requests if method == "POST"]

    def transport(
        self, base_url: str, token: Callable[[], str], *, cafile: str | None = None, **_: Any
    ) -> Callable[[str, str, Any], tuple[int, Any]]:
        self.base_url, self.cafile = base_url, cafile

        def send(method: str, path: str, body: Any) -> tuple[int, Any]:
            self.tokens.append(token())
            self.requests.append((method, path, json.loads(json.dumps(body))))
            text = body["statement"]
            if "MISSING" in text:
                return 422, {"code": "002003", "message": "SQL compilation error:\nObject "
                             "'MISSING' does not exist or not authorized."}  # fmt: skip
            if "BROKEN" in text:
                return 422, {"code": "001003", "message": "SQL compilation error: syntax error"}
            return 200, {
                "statementHandle": "01b2-0000",
                "resultSetMetaData": {
                    "numRows": 1,
                    "rowType": [
                        {"name": "RUN_ID", "type": "text"},
                        {"name": "SALES", "type": "fixed", "scale": 0},
                    ],
                },
                "data": [["r1", "3"]],
            }

        return send


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> FakeSqlApi:
    fake = FakeSqlApi()
    monkeypatch.setattr(sql_client, "http_transport", fake.transport)
    # it stands in for the account too: the preflight's own tests are tests/account/
    monkeypatch.setattr(reach, "check_reachable", lambda settings, **_: None)
    # the SQL API needs no driver: the connector cannot even be imported
    monkeypatch.setitem(sys.modules, "snowflake.connector", None)
    for name in ("ACCOUNT", "USER", "ROLE", "WAREHOUSE", "DATABASE", "SCHEMA",
                 "PRIVATE_KEY", "PRIVATE_KEY_FILE", "HOST", "PORT"):  # fmt: skip
        monkeypatch.delenv(f"SNOWFLAKE_{name}", raising=False)
    return fake


def _profile(tmp_path: Path, **extra: Any) -> str:
    path = tmp_path / "profile.json"
    values = {"account": "ACME-X1", "user": "BENCH", "private_key": _key_pem(), **extra}
    path.write_text(json.dumps(values))
    return str(path)


def test_profile_settings_and_rows(api: FakeSqlApi, tmp_path: Path) -> None:
    profile = _profile(tmp_path, database="DEMO", schema="runs", warehouse="WH", role="viewer")
    src = AccountSource(profile)
    assert src.description == "account ACME-X1, DEMO.runs"
    assert src.dialect.commit_time == "METADATA$ROW_LAST_COMMIT_TIME"
    assert src.rows("SELECT 1") == [{"RUN_ID": "r1", "SALES": 3}]
    src.rows("SELECT 2")
    assert api.base_url == "https://acme-x1.snowflakecomputing.com"
    for (method, path, _), body in zip(api.requests, api.bodies, strict=True):
        assert (method, path.split("?")[0]) == ("POST", "/api/v2/statements")
        # the context as the SQL API's body takes it: a plain name as Snowflake reads it
        assert {k: v for k, v in body.items() if k != "statement"} == {
            "timeout": TIMEOUT_S, "database": "DEMO", "schema": "RUNS",
            "warehouse": "WH", "role": "VIEWER",
        }  # fmt: skip
    assert [b["statement"] for b in api.bodies] == ["SELECT 1", "SELECT 2"]
    claims = jwt.decode(api.tokens[0], options={"verify_signature": False})
    assert claims["sub"] == "ACME-X1.BENCH"
    with pytest.raises(NoData, match="does not exist"):
        src.rows("SELECT * FROM MISSING")
    with pytest.raises(QueryError, match="syntax error"):
        src.rows("SELECT BROKEN")


def test_missing_settings_are_named(api: FakeSqlApi, tmp_path: Path) -> None:
    with pytest.raises(QueryError, match="no account"):
        AccountSource(None)
    with pytest.raises(QueryError, match="no database"):
        AccountSource(_profile(tmp_path))
    path = tmp_path / "nouser.json"
    path.write_text(json.dumps({"account": "A", "private_key": _key_pem(), "database": "D"}))
    with pytest.raises(QueryError, match="--user"):
        AccountSource(str(path))
    assert api.requests == []


def test_database_and_schema_flags_before_env_before_profile(
    api: FakeSqlApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = _profile(tmp_path, database="FROM_PROFILE", schema="FROM_PROFILE")
    monkeypatch.setenv("SNOWFLAKE_DATABASE", "FROM_ENV")
    assert AccountSource(profile).description == "account ACME-X1, FROM_ENV.FROM_PROFILE"
    src = AccountSource(profile, database="DEMO", schema='"Mixed Case"')
    src.rows("SELECT 1")
    (body,) = api.bodies
    assert (body["database"], body["schema"]) == ("DEMO", "Mixed Case")  # quoted: as written


def _every_query(run_id: str) -> dict[str, Any]:
    """Every statement the pages send with a run id, in Snowflake's dialect."""
    from elastic_channels.dashboard.dialect import SNOWFLAKE as d

    last = "2026-12-02T10:00:00+00:00"
    cols = m.MetricsColumns.resolve(n for n, _ in METRICS_COLUMNS)
    view = load_view("clickstream")
    scope = rows_sql.Scope(run_id)
    return {
        "latest sales": q.latest_sales(d, run_id, last),
        "recent delay": q.recent_delay(d, run_id, last),
        "sales mix": q.SALES_MIX.statement(d, run_id, last, last),
        "landed": m.landed(run_id, q.TABLE),
        "landed count": m.landed_count(d, run_id, q.TABLE, last),
        "landed by worker id": m.landed_count(
            d, run_id, q.TABLE, last, workers=m.WorkerFilter((0, 1), column="WORKER_ID")
        ),
        "landed by id prefix": m.landed_count(
            d, run_id, q.TABLE, last, workers=m.WorkerFilter((0, 1), unique_id="TXID")
        ),
        "totals": m.totals(d, run_id, cols),
        "workers": m.workers(d, run_id, cols, 10),
        "fleet": m.fleet_series(d, run_id, cols, 1),
        "run span": m.run_span(d, run_id, cols),
        "workload runs": rows_sql.runs_aggregate(d, view).statement(d, run_id, last, last),
        "latest rows": rows_sql.latest_rows(d, view, scope, last, 50),
        "rows delay": rows_sql.recent_delay(d, view, scope, last),
    }


def test_the_run_id_reaches_the_sql_api_as_a_binding(api: FakeSqlApi, tmp_path: Path) -> None:
    """Every statement's text holds a ``?`` per value and never the run id; the values
    go in ``bindings``, in order, typed (issue #23: ``a\\' OR 1=1 --``)."""
    src = AccountSource(_profile(tmp_path, database="DEMO"))
    queries = _every_query(EVIL)
    for stmt in queries.values():
        src.rows(stmt)
    assert len(api.bodies) == len(queries)
    for name, body in zip(queries, api.bodies, strict=True):
        text, bindings = body["statement"], body["bindings"]
        assert EVIL not in text and "OR 1=1" not in text, name
        assert "2026-12-02" not in text, name  # times are bound too
        marks = re.sub(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"", "", text).count("?")
        assert marks == len(bindings) > 0, name
        assert list(bindings) == [str(i) for i in range(1, len(bindings) + 1)], name
        values = [bindings[str(i)] for i in range(1, len(bindings) + 1)]
        assert {"type": "TEXT", "value": EVIL} in values, name
        assert all(v["type"] in ("TEXT", "FIXED") for v in values), name
