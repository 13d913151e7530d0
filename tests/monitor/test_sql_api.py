"""The emulator's SQL API handler: Snowflake SQL in, DuckDB underneath, the documented
shapes out. (Lives with the monitor's tests: the monitor is its first client.)"""

from __future__ import annotations

import datetime as dt

import duckdb
import pytest

from elastic_channels.emulator.sql.api import handle_statement, translate
from elastic_channels.monitor.sql_client import decode_value


@pytest.fixture
def con():
    c = duckdb.connect()
    c.execute("SET TimeZone = 'UTC'")
    c.execute(
        'CREATE TABLE RESORT_SALES ("RUN_ID" VARCHAR, "SALE_TIME" TIMESTAMPTZ, '
        '"_COMMIT_TIME" TIMESTAMPTZ)'
    )
    c.execute(
        "INSERT INTO RESORT_SALES VALUES "
        "('r1', '2026-01-01 00:00:00Z', '2026-01-01 00:00:01.5Z'), "
        "('r1', '2026-01-01 00:00:00Z', '2026-01-01 00:00:03Z'), "
        "('r2', '2026-01-01 00:00:00Z', '2026-01-01 00:00:09Z')"
    )
    return c


def run(con, statement, *bindings):
    body = {"statement": statement, "database": "DEMO", "schema": "PUBLIC"}
    if bindings:
        body["bindings"] = {str(i): b for i, b in enumerate(bindings, 1)}
    return handle_statement(body, con)


def test_a_query_returns_the_documented_result_set(con):
    status, body = run(
        con,
        "SELECT RUN_ID, COUNT(*) AS N, MAX(METADATA$ROW_LAST_COMMIT_TIME) AS LAST "
        "FROM DEMO.PUBLIC.RESORT_SALES WHERE RUN_ID = ? GROUP BY RUN_ID",
        {"type": "TEXT", "value": "r1"},
    )
    assert status == 200
    meta = body["resultSetMetaData"]
    assert meta["format"] == "jsonv2" and meta["numRows"] == 1
    assert [c["name"] for c in meta["rowType"]] == ["RUN_ID", "N", "LAST"]
    assert [c["type"] for c in meta["rowType"]] == ["TEXT", "FIXED", "TIMESTAMP_TZ"]
    assert meta["partitionInfo"][0]["rowCount"] == 1
    assert body["code"] == "090001" and body["sqlState"] == "00000"
    assert body["statementHandle"] and body["statementStatusUrl"].endswith(body["statementHandle"])
    # jsonv2: every value is text; TIMESTAMP_TZ is epoch seconds and offset minutes + 1440
    assert body["data"] == [["r1", "2", "1767225603.000000000 1440"]]
    last = decode_value(body["data"][0][2], meta["rowType"][2])
    assert last == dt.datetime(2026, 1, 1, 0, 0, 3, tzinfo=dt.timezone.utc)


def test_row_timestamps_are_the_commit_time_and_percentiles_translate(con):
    status, body = run(
        con,
        "SELECT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY TIMESTAMPDIFF(MILLISECOND, "
        "SALE_TIME, METADATA$ROW_LAST_COMMIT_TIME)) AS P50 FROM RESORT_SALES "
        "WHERE RUN_ID = 'r1'",
    )
    assert status == 200, body
    assert body["data"] == [["2250.0"]]


def test_create_merge_and_variant_round_trip(con):
    assert run(con, "CREATE TABLE IF NOT EXISTS M (K VARCHAR, V VARIANT, N NUMBER(10,0))")[0] == 200
    merge = (
        "MERGE INTO M AS T USING (SELECT ? AS K, PARSE_JSON(?) AS V, ? AS N) AS S ON T.K = S.K "
        "WHEN MATCHED THEN UPDATE SET V = S.V, N = S.N "
        "WHEN NOT MATCHED THEN INSERT (K, V, N) VALUES (S.K, S.V, S.N)"
    )
    for n in (1, 2):
        status, body = run(
            con, merge,
            {"type": "TEXT", "value": "a"}, {"type": "TEXT", "value": f'{{"n": {n}}}'},
            {"type": "FIXED", "value": str(n)},
        )  # fmt: skip
        assert status == 200, body
        assert body["data"] == [["1"]]
    status, body = run(con, "SELECT K, V, N FROM M")
    assert [c["type"] for c in body["resultSetMetaData"]["rowType"]] == ["TEXT", "VARIANT", "FIXED"]
    assert len(body["data"]) == 1
    row_type = body["resultSetMetaData"]["rowType"]
    assert decode_value(body["data"][0][1], row_type[1]) == {"n": 2}


def test_row_timestamp_statements_are_accepted(con):
    assert run(con, "ALTER TABLE DEMO.PUBLIC.RESORT_SALES SET ROW_TIMESTAMP = TRUE")[0] == 200
    status, _ = run(con, "CREATE TABLE IF NOT EXISTS X (A VARCHAR) ROW_TIMESTAMP = TRUE")
    assert status == 200
    assert con.execute("SELECT count(*) FROM X").fetchone() == (0,)


def test_queries_cannot_write(con):
    """A query runs in a read-only transaction: even a function with a side effect
    inside a SELECT cannot change the database."""
    sql, is_query, _ = translate("SELECT * FROM RESORT_SALES")
    assert is_query and sql is not None
    con.execute("CREATE SEQUENCE SEQ START 1")
    status, body = run(con, "SELECT nextval('SEQ')")
    assert status == 422 and "read-only" in body["message"], body
    assert con.execute("SELECT nextval('SEQ')").fetchone() == (1,)  # never advanced


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({}, 400, "'statement'"),
        ([], 400, "JSON object"),
        ({"statement": "SELECT 1; SELECT 2"}, 422, "statement count 2"),
        ({"statement": "SELEC 1"}, 422, "SQL compilation error"),
        ({"statement": "SELECT * FROM NOPE"}, 422, "NOPE"),
        ({"statement": "SELECT ?"}, 422, "1 bind variable(s)"),
        ({"statement": "SELECT ?", "bindings": {"1": {"type": "FIXED", "value": "x"}}}, 400,
         "not a valid FIXED"),
        ({"statement": "SELECT ?", "bindings": {"2": {"type": "TEXT", "value": "x"}}}, 400,
         "'1', '2'"),
        ({"statement": "SELECT * FROM read_csv('/etc/passwd')"}, 422, "read_csv"),
        ({"statement": "COPY INTO @stage FROM RESORT_SALES"}, 422, "COPY statements"),
        ({"statement": "ATTACH '/tmp/other.db' AS o"}, 422, "SQL compilation error"),
        ({"statement": "SET x = 1"}, 422, "SET statements"),
        ({"statement": "BEGIN"}, 422, "not available"),
    ],
)  # fmt: skip
def test_bad_requests_get_a_status_and_a_reason(con, body, status, words):
    got, reply = handle_statement(body, con)
    assert got == status
    assert words in reply["message"]
    assert reply["code"] and reply["sqlState"]


def test_information_schema_keeps_its_name(con):
    """The dashboard reads a table's columns from information_schema."""
    status, body = run(
        con,
        "SELECT COLUMN_NAME FROM DEMO.INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = ? "
        "ORDER BY ORDINAL_POSITION",
        {"type": "TEXT", "value": "RESORT_SALES"},
    )
    assert status == 200, body
    assert body["data"] == [["RUN_ID"], ["SALE_TIME"], ["_COMMIT_TIME"]]


def test_a_file_beside_the_database_is_never_read(con, tmp_path):
    """The guard alone (this connection may read any file) keeps queries and writes to
    the tables: a file is refused as a table, a file function as a table function."""
    planted = tmp_path / "planted.csv"
    planted.write_text("RUN_ID\nstolen\n")
    assert con.execute(f"SELECT count(*) FROM '{planted}'").fetchone() == (1,)  # it could
    for statement, code in (
        (f"SELECT * FROM '{planted}'", "002003"),
        (f"SELECT * FROM read_csv('{planted}')", "001003"),
        (f"INSERT INTO RESORT_SALES (RUN_ID) SELECT RUN_ID FROM '{planted}'", "002003"),
        (f"INSERT INTO RESORT_SALES (RUN_ID) SELECT RUN_ID FROM read_csv('{planted}')", "001003"),
        (f"CREATE TABLE S AS SELECT * FROM '{planted}'", "002003"),
        (f"CREATE VIEW S AS SELECT * FROM '{planted}'", "001003"),
        (f"UPDATE RESORT_SALES SET RUN_ID = f.RUN_ID FROM '{planted}' AS f", "002003"),
    ):
        status, body = run(con, statement)
        assert (status, body["code"]) == (422, code), (statement, body)
    counts = con.execute("SELECT RUN_ID, count(*) FROM RESORT_SALES GROUP BY 1 ORDER BY 1")
    assert counts.fetchall() == [("r1", 2), ("r2", 1)]
    assert [t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()] == [
        "RESORT_SALES"
    ]


def test_a_write_may_read_the_tables(con):
    """What the monitor's MERGE does: a write whose SELECT reads a table and VALUES."""
    assert run(con, "CREATE TABLE IF NOT EXISTS C (RUN_ID VARCHAR, N NUMBER(10,0))")[0] == 200
    status, body = run(
        con,
        "INSERT INTO C SELECT RUN_ID, COUNT(*) FROM RESORT_SALES WHERE RUN_ID IN "
        "(SELECT K FROM (VALUES ('r1'), ('r2')) AS V(K)) GROUP BY RUN_ID",
    )
    assert status == 200 and body["data"] == [["2"]], body
    status, body = run(con, "DELETE FROM C USING RESORT_SALES AS R WHERE C.RUN_ID = R.RUN_ID")
    assert status == 200 and body["data"] == [["2"]], body
