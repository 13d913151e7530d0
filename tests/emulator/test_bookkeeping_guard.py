"""The emulator's own relations are out of reach of SQL users (issue #23 item 1): through
the SQL API (key-pair JWT) and the control query endpoint (control secret) of a real
emulator process, every write or DDL of an ``_EMULATOR_*`` table, of one that does not
exist yet, or of the landing view ``RESORT_SALES`` is refused with a 4xx naming the
relation, changes nothing, and leaves a data dir that lands and restarts; reads pass.

On main before this: ``DELETE FROM _EMULATOR_FILES`` answered 200 (1,000 landed rows
vanished and their file was deleted at the next start), ``INSERT`` of a registry row
named ``../../<other data dir>/files/...`` made the merger read another emulator's file,
``ALTER TABLE _EMULATOR_FILES RENAME`` made the next acked rows land as 0 and the data
dir unstartable, and ``DROP VIEW RESORT_SALES`` did the same."""

from __future__ import annotations

import json

import pytest
from emulator_support import ROWS_PATH, EmulatorProcess
from sql_api_support import run_setup_sql, sql_statement

from elastic_channels.emulator.sql.api import handle_statement
from elastic_channels.emulator.storage.store import Store
from elastic_channels.model import COLUMNS
from elastic_channels.rows import ResortGenerator

T_US = 1_700_000_000_000_000

#: (statement, the relation its refusal must name)
OWN_WRITES = [
    ("DELETE FROM _EMULATOR_FILES", "_EMULATOR_FILES"),
    ("INSERT INTO _EMULATOR_FILES VALUES ('../../other/files/land-x.parquet', 32000, 1, 0, "
     "current_timestamp)", "_EMULATOR_FILES"),
    ("UPDATE _EMULATOR_FILES SET NAME = '/etc/passwd'", "_EMULATOR_FILES"),
    ("MERGE INTO _EMULATOR_FILES AS T USING (SELECT 'a' AS N) AS S ON T.NAME = S.N "
     "WHEN MATCHED THEN DELETE", "_EMULATOR_FILES"),
    ("ALTER TABLE _EMULATOR_FILES RENAME TO FILES_GONE", "_EMULATOR_FILES"),
    ("ALTER TABLE _EMULATOR_FILES ADD COLUMN X NUMBER(10,0)", "_EMULATOR_FILES"),
    ("DROP TABLE _EMULATOR_FILES", "_EMULATOR_FILES"),
    ("DROP TABLE IF EXISTS _EMULATOR_FILES", "_EMULATOR_FILES"),
    ("TRUNCATE TABLE _EMULATOR_FILES", "_EMULATOR_FILES"),
    ("CREATE OR REPLACE TABLE _EMULATOR_FILES AS SELECT 1 AS A", "_EMULATOR_FILES"),
    ("COMMENT ON TABLE _EMULATOR_FILES IS 'mine'", "_EMULATOR_FILES"),
    ("CREATE TABLE HOLDS (N VARCHAR REFERENCES _EMULATOR_FILES (NAME))", "_EMULATOR_FILES"),
    ("CREATE TABLE _EMULATOR_SHADOW (A NUMBER(10,0))", "_EMULATOR_SHADOW"),
    ("CREATE TABLE IF NOT EXISTS _EMULATOR_SHADOW (A NUMBER(10,0))", "_EMULATOR_SHADOW"),
    ("ALTER TABLE ELASTIC_K8S_METRICS RENAME TO _EMULATOR_FILES_2", "_EMULATOR_FILES_2"),
    ("DELETE FROM EMULATOR_DB.PUBLIC._EMULATOR_LANDED", "_EMULATOR_LANDED"),
    ('DELETE FROM "_emulator_landed" WHERE SEQ > 0', "_EMULATOR_LANDED"),
    ("UPDATE _EMULATOR_LANDED SET ROWS_INSERTED = 0", "_EMULATOR_LANDED"),
    ("DELETE FROM _EMULATOR_ERRORS", "_EMULATOR_ERRORS"),
    # the landing view
    ("DROP VIEW RESORT_SALES", "RESORT_SALES"),
    ("DROP TABLE RESORT_SALES", "RESORT_SALES"),
    ("CREATE TABLE RESORT_SALES (A NUMBER(10,0))", "RESORT_SALES"),
    ("CREATE OR REPLACE TABLE RESORT_SALES AS SELECT 1 AS A", "RESORT_SALES"),
    ("INSERT INTO RESORT_SALES (RUN_ID) VALUES ('x')", "RESORT_SALES"),
    ("DELETE FROM RESORT_SALES", "RESORT_SALES"),
    ("UPDATE RESORT_SALES SET RUN_ID = 'x'", "RESORT_SALES"),
    ("ALTER TABLE RESORT_SALES RENAME TO SALES_GONE", "RESORT_SALES"),
    ("ALTER VIEW RESORT_SALES RENAME TO SALES_GONE", "RESORT_SALES"),
    ("ALTER TABLE ELASTIC_K8S_METRICS RENAME TO RESORT_SALES", "RESORT_SALES"),
    ("TRUNCATE TABLE RESORT_SALES", "RESORT_SALES"),
    ("CREATE OR REPLACE VIEW RESORT_SALES AS SELECT 1 AS A", "RESORT_SALES"),
]  # fmt: skip
#: Only Snowflake's SQL reads these (the control endpoint takes DuckDB's).
SNOWFLAKE_ONLY = [
    ("UNDROP TABLE _EMULATOR_FILES", "_EMULATOR_FILES"),
    ("EXPLAIN ANALYZE DELETE FROM _EMULATOR_LANDED", "_EMULATOR_LANDED"),
]
READS = [
    "SELECT count(*) AS n FROM _EMULATOR_FILES",
    "SELECT NAME, ROW_COUNT FROM _EMULATOR_FILES ORDER BY NAME",
    "SELECT count(*) AS n FROM _EMULATOR_LANDED",
    "SELECT count(*) AS n FROM RESORT_SALES",
]


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    proc = EmulatorProcess(tmp_path_factory.mktemp("bookkeeping") / "emu").start()
    run_setup_sql(proc)  # setup's SQL still passes
    _append(proc, "before", 1000)
    yield proc
    assert proc.stop() == 0, proc.stderr()


def _control_query(emu, sql: str) -> tuple[int, bytes]:
    headers = {"Authorization": f"Bearer {emu.secret}", "Content-Type": "application/json"}
    status, _, out = emu.request("POST", "/_emulator/query", json.dumps({"sql": sql}).encode(),
                                 headers)  # fmt: skip
    return status, out


def _append(emu, run_id: str, rows: int) -> None:
    body = ResortGenerator(run_id, 0).next_batch(rows, T_US)
    headers = {"Authorization": f"Bearer {emu.scoped_token()}",
               "Content-Type": "application/x-ndjson"}  # fmt: skip
    status, _, out = emu.request("POST", ROWS_PATH.format(rid=run_id), body, headers)
    assert status == 200, out
    assert emu.wait_landed(60)


def _state(emu) -> dict:
    return {
        "counts": emu.query(
            "SELECT (SELECT count(*) FROM RESORT_SALES) AS sales, "
            "(SELECT count(*) FROM _EMULATOR_FILES) AS files, "
            "(SELECT count(*) FROM _EMULATOR_LANDED) AS landed, "
            "(SELECT count(*) FROM _EMULATOR_ERRORS) AS errors"
        ),
        "relations": emu.query(
            "SELECT table_name AS t, comment AS c FROM duckdb_tables() UNION ALL "
            "SELECT view_name, comment FROM duckdb_views() WHERE NOT internal ORDER BY t"
        ),
        "files": sorted(p.name for p in (emu.data_dir / "files").iterdir()),
    }


@pytest.mark.parametrize(("statement", "name"), OWN_WRITES + SNOWFLAKE_ONLY)
def test_the_sql_api_refuses_every_write_of_the_emulators_relations(emu, statement, name):
    before = _state(emu)
    status, reply = sql_statement(emu, statement)
    assert 400 <= status < 500, reply
    assert name in reply["message"], reply
    assert "data" not in reply and reply["sqlState"]
    assert _state(emu) == before, "the statement changed something"


@pytest.mark.parametrize(("statement", "name"), OWN_WRITES)
def test_the_control_query_refuses_them_naming_the_relation(emu, statement, name):
    before = _state(emu)
    status, out = _control_query(emu, statement)
    assert status == 400, out
    assert name in json.loads(out)["message"], out
    assert _state(emu) == before


@pytest.mark.parametrize("sql", READS)
def test_reads_of_them_stay_allowed(emu, sql):
    status, reply = sql_statement(emu, sql)
    assert status == 200 and reply["data"], reply
    status, out = _control_query(emu, sql)
    assert status == 200 and out.strip(), out


def test_after_every_attempt_rows_land_once_and_the_data_dir_restarts(emu):
    for statement, _ in OWN_WRITES + SNOWFLAKE_ONLY:
        sql_statement(emu, statement)
    _append(emu, "after", 300)
    count = "SELECT RUN_ID AS r, count(*) AS n FROM RESORT_SALES GROUP BY 1 ORDER BY 1"
    want = [{"r": "after", "n": 300}, {"r": "before", "n": 1000}]
    assert emu.query(count) == want
    assert emu.stop() == 0, emu.stderr()
    emu.start()
    assert emu.query(count) == want
    _append(emu, "restarted", 10)
    assert emu.query("SELECT count(*) AS n FROM RESORT_SALES")[0]["n"] == 1310


def test_an_older_data_dirs_landing_table_is_refused_alike(tmp_path):
    """An older data dir keeps RESORT_SALES as a DuckDB table: marked when its store opens
    it, refused alike; a table of the same name in another database is not."""
    store = Store(tmp_path / "emulator.duckdb", "RESORT_SALES", COLUMNS, threads=1)
    try:
        for statement in ("DELETE FROM RESORT_SALES", "DROP TABLE RESORT_SALES",
                          "ALTER TABLE RESORT_SALES RENAME TO GONE"):  # fmt: skip
            status, reply = handle_statement({"statement": statement}, store.connection)
            assert (
                status == 422
                and "RESORT_SALES is the emulator's landing table" in (reply["message"])
            ), reply
        status, reply = handle_statement(
            {"statement": "SELECT count(*) FROM RESORT_SALES"}, store.connection
        )
        assert status == 200 and reply["data"] == [["0"]]
    finally:
        store.close()
    import duckdb

    con = duckdb.connect()
    con.execute("CREATE TABLE RESORT_SALES (A INTEGER)")
    status, reply = handle_statement({"statement": "DELETE FROM RESORT_SALES"}, con)
    assert status == 200, reply
