"""The SQL API client: request bodies, result decoding, polling, partitions, errors,
and the HTTP transport with a key-pair JWT against a server that checks it."""

from __future__ import annotations

import datetime as dt
import decimal

import duckdb
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from monitor_support import sql_api_server

from elastic_channels.monitor.keypair import account_identifier, token_factory
from elastic_channels.monitor.sql_client import (
    SqlApiClient,
    SqlError,
    SqlUnreachable,
    decode_value,
    http_transport,
)


def test_values_decode_by_row_type():
    assert decode_value("42", {"type": "FIXED", "scale": 0}) == 42
    assert decode_value("4.20", {"type": "FIXED", "scale": 2}) == decimal.Decimal("4.20")
    assert decode_value("1.5", {"type": "REAL"}) == 1.5
    assert decode_value("true", {"type": "BOOLEAN"}) is True
    assert decode_value(None, {"type": "TEXT"}) is None
    assert decode_value("19723", {"type": "DATE"}) == dt.date(2024, 1, 1)
    tz = decode_value("1767225603.500000000 1500", {"type": "TIMESTAMP_TZ"})
    assert tz == dt.datetime(2026, 1, 1, 0, 0, 3, 500000, tzinfo=dt.timezone.utc)
    assert tz.utcoffset() == dt.timedelta(minutes=60)
    ntz = decode_value("1767225603.000000000", {"type": "TIMESTAMP_NTZ"})
    assert ntz == dt.datetime(2026, 1, 1, 0, 0, 3)
    assert decode_value('{"a": [1]}', {"type": "VARIANT"}) == {"a": [1]}


class Scripted:
    """A transport answering from a script, recording the requests."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests = []

    def __call__(self, method, path, body):
        self.requests.append((method, path, body))
        return self.answers.pop(0)


def result(data, handle="h1", partitions=1):
    return {
        "resultSetMetaData": {
            "numRows": len(data),
            "format": "jsonv2",
            "rowType": [{"name": "A", "type": "FIXED", "scale": 0}],
            "partitionInfo": [{"rowCount": 1}] * partitions,
        },
        "data": data,
        "statementHandle": handle,
    }


def test_request_body_and_bindings():
    t = Scripted((200, result([["1"]])))
    client = SqlApiClient(t, database="DEMO", schema="PUBLIC", warehouse="WH", role="R")
    now = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    client.execute("SELECT ?, ?, ?, ?, ?, ?", ["x", 3, 1.5, True, None, now])
    method, path, body = t.requests[0]
    assert method == "POST" and path.startswith("/api/v2/statements?requestId=")
    assert body["statement"] == "SELECT ?, ?, ?, ?, ?, ?"
    assert (body["database"], body["schema"], body["warehouse"], body["role"]) == (
        "DEMO", "PUBLIC", "WH", "R",
    )  # fmt: skip
    assert body["bindings"] == {
        "1": {"type": "TEXT", "value": "x"},
        "2": {"type": "FIXED", "value": "3"},
        "3": {"type": "REAL", "value": "1.5"},
        "4": {"type": "BOOLEAN", "value": "true"},
        "5": {"type": "TEXT", "value": None},
        "6": {"type": "TEXT", "value": "2026-01-01T00:00:00+00:00"},
    }
    with pytest.raises(TypeError, match="cannot bind"):
        client.execute("SELECT ?", [object()])


def test_a_long_statement_is_polled_and_partitions_are_fetched():
    t = Scripted(
        (202, {"statementHandle": "h9", "statementStatusUrl": "/api/v2/statements/h9"}),
        (200, result([["1"], ["2"]], handle="h9", partitions=3)),
        (200, {"data": [["3"]]}),
        (200, {"data": [["4"]]}),
    )
    got = SqlApiClient(t, poll_s=0.0).execute("SELECT A FROM T")
    assert got.rows == [(1,), (2,), (3,), (4,)]
    assert [r[:2] for r in t.requests[1:]] == [
        ("GET", "/api/v2/statements/h9"),
        ("GET", "/api/v2/statements/h9?partition=1"),
        ("GET", "/api/v2/statements/h9?partition=2"),
    ]


def test_errors_carry_the_servers_code_and_message():
    t = Scripted((422, {"code": "002003", "message": "Object 'X' does not exist"}))
    with pytest.raises(SqlError, match=r"HTTP 422 \(code 002003\): Object 'X' does not exist"):
        SqlApiClient(t).execute("SELECT * FROM X")


def test_account_identifier_in_jwt_claims():
    assert account_identifier("xy12345.us-east-1") == "XY12345"
    assert account_identifier("myorg-acct") == "MYORG-ACCT"
    assert account_identifier("myorg-acct.snowflakecomputing.com") == "MYORG-ACCT"


@pytest.fixture
def server():
    with sql_api_server(duckdb.connect()) as (url, pem):
        yield url, pem


def test_http_transport_authenticates_with_a_key_pair_jwt(server):
    url, pem = server
    client = SqlApiClient(http_transport(url, token_factory("emu", "monitor", pem)))
    assert client.execute("SELECT 1 + ? AS X", [41]).rows == [(42,)]
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )  # fmt: skip
    refused = SqlApiClient(http_transport(url, token_factory("emu", "monitor", stranger)))
    with pytest.raises(SqlError, match=r"HTTP 401.*not registered"):
        refused.execute("SELECT 1")


def test_http_transport_names_an_unreachable_server():
    client = SqlApiClient(http_transport("http://127.0.0.1:9", lambda: "t", timeout_s=2))
    with pytest.raises(SqlUnreachable, match=r"cannot reach http://127\.0\.0\.1:9"):
        client.execute("SELECT 1")


def test_an_unreachable_server_is_not_taken_for_a_missing_metrics_table():
    """Issue #22: with the emulator stopped the monitor said the metrics table 'is missing;
    run setup'. Unreachable is said as such, and nothing is created."""
    from elastic_channels.monitor.sink import SqlMetricsSink

    client = SqlApiClient(http_transport("http://127.0.0.1:9", lambda: "t", timeout_s=2))
    with pytest.raises(SqlUnreachable) as e:
        SqlMetricsSink(client).ensure_table()
    assert "cannot reach" in str(e.value) and "missing" not in str(e.value)


def test_upserts_bind_each_column_with_one_type_in_every_row():
    """A worker row and a fleet row in one MERGE: a NULL (the fleet row's WORKER_ID, a
    worker's missing percentile) is bound with its column's type, as Snowflake's
    VALUES list needs one type per column."""
    from monitor_support import duckdb_with_landing_table

    from elastic_channels.monitor import rows
    from elastic_channels.monitor.sink import SqlMetricsSink
    from elastic_channels.monitor.sql_client import local_transport

    con = duckdb_with_landing_table()
    inner = local_transport(con)
    bodies = []

    def spy(method, path, body):
        bodies.append(body)
        return inner(method, path, body)

    sink = SqlMetricsSink(SqlApiClient(spy))
    sink.ensure_table()
    line = {"type": "window", "run_id": "r", "worker_id": 1, "window_start": 1767225600.0,
            "window_seconds": 5.0, "start": 1767225600.0, "end": 1767225605.0, "rows": 3,
            "bytes": 9, "ack_p50_ms": None, "cpu_pct": 1.0}  # fmt: skip
    fleet = {**line, "workers": 1}
    sink.upsert([rows.worker_row(line), rows.fleet_row("r", fleet)])
    merge = bodies[-1]
    assert merge["statement"].startswith("MERGE INTO ELASTIC_K8S_METRICS")
    binds = [merge["bindings"][str(i)] for i in range(1, len(merge["bindings"]) + 1)]
    width = len(rows.WRITTEN_COLUMNS)
    assert len(binds) == 2 * width
    for j, (name, _) in enumerate(rows.WRITTEN_COLUMNS):
        kinds = {binds[j]["type"], binds[width + j]["type"]}
        assert len(kinds) == 1, (name, kinds)
    assert len(sink.read_rows("r")) == 2
