"""The SQL API (``POST /api/v2/statements``) of a real emulator process, over HTTPS with
the user's key-pair JWT: a statement reads and writes the tables and never a file of the
machine, through the same guard as the control plane (issue #12 item 6); what the
monitor and ``setup`` send still works."""

from __future__ import annotations

import pytest
from emulator_support import ROWS_PATH, EmulatorProcess
from sql_api_support import run_setup_sql, sql_statement

from elastic_channels.monitor import rows as metric_rows
from elastic_channels.monitor.target import emulator_sink
from elastic_channels.rows import ResortGenerator

LANDED = 5


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    proc = EmulatorProcess(tmp_path_factory.mktemp("sqlapi") / "emu").start()
    yield proc
    assert proc.stop() == 0, proc.stderr()


@pytest.fixture(scope="module")
def ready(emu):
    """Setup's SQL run through the API, a metrics row and a few landed sales: what a
    statement that got through would change."""
    run_setup_sql(emu)
    status, reply = sql_statement(emu, "INSERT INTO ELASTIC_K8S_METRICS (RUN_ID) VALUES ('x')")
    assert status == 200, reply
    token = emu.scoped_token()
    body = ResortGenerator("sqlapi", 0).next_batch(LANDED, 1_700_000_000_000_000)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/x-ndjson"}
    status, _, out = emu.request("POST", ROWS_PATH.format(rid="sqlapi"), body, headers)
    assert status == 200, out
    assert emu.wait_landed(60)
    work = (emu.data_dir / "spool-work").resolve()
    planted = work / "planted.csv"
    planted.write_text("RUN_ID\nstolen\n")
    (emu.data_dir / "planted.csv").write_text("RUN_ID\nstolen\n")
    return {"work": work, "planted": planted, "data": emu.data_dir.resolve()}


def _state(emu, ready) -> dict:
    files = sorted(str(p) for d in (ready["data"], ready["work"]) for p in d.iterdir())
    return {
        "counts": emu.query(
            "SELECT (SELECT count(*) FROM RESORT_SALES) AS sales, "
            "(SELECT count(*) FROM ELASTIC_K8S_METRICS) AS metrics, "
            "(SELECT count(*) FROM _EMULATOR_LANDED) AS landed, "
            "(SELECT count(*) FROM _EMULATOR_ERRORS) AS errors"
        ),
        "relations": emu.query(
            "SELECT table_name AS t FROM duckdb_tables() UNION ALL "
            "SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY t"
        ),
        "files": [f for f in files if not f.endswith(".wal")],
    }


HOSTILE = [
    # reads of a file, in the lander's work dir (the one DuckDB may open) or the data dir
    ("SELECT * FROM '{planted}'", "002003", "does not exist"),
    ('SELECT * FROM "{planted}"', "002003", "does not exist"),
    ("SELECT * FROM '{data}/planted.csv'", "002003", "does not exist"),
    ("DESCRIBE '{planted}'", "002003", "does not exist"),
    ("SELECT * FROM read_csv('{planted}')", "001003", "read_csv() is not allowed"),
    ("SELECT * FROM READ_TEXT('{data}/control.secret')", "001003", "read_text() is not"),
    ("SELECT * FROM read_parquet('{work}/*.parquet')", "001003", "read_parquet() is not"),
    ("SELECT * FROM TABLE(read_csv('{planted}'))", "001003", "SQL compilation error"),
    ("SELECT (SELECT count(*) FROM read_blob('{planted}'))", "001003", "read_blob() is not"),
    ("SELECT * FROM read_duckdb('{data}/emulator.duckdb')", "001003", "read_duckdb() is not"),
    ("SELECT * FROM query('DELETE FROM RESORT_SALES')", "001003", "query() is not allowed"),
    ("WITH a AS (SELECT * FROM '{planted}') SELECT * FROM a", "002003", "does not exist"),
    ("SELECT * FROM glob('{work}/*')", "001003", "SQL compilation error"),
    ("SELECT $1 FROM @stage/planted.csv", "001003", "SQL compilation error"),
    # writes that read a file
    ("INSERT INTO ELASTIC_K8S_METRICS (RUN_ID) SELECT RUN_ID FROM '{planted}'", "002003",
     "does not exist"),
    ("INSERT INTO ELASTIC_K8S_METRICS (RUN_ID) SELECT * FROM read_csv('{planted}')",
     "001003", "read_csv() is not allowed"),
    ("INSERT INTO ELASTIC_K8S_METRICS (RUN_ID) SELECT (SELECT max(content) FROM "
     "read_text('{planted}'))", "001003", "read_text() is not allowed"),
    ("INSERT INTO ELASTIC_K8S_METRICS (RUN_ID) WITH a AS (SELECT * FROM '{planted}') "
     "SELECT * FROM a", "002003", "does not exist"),
    ("INSERT INTO ELASTIC_K8S_METRICS (RUN_ID) VALUES ((SELECT RUN_ID FROM '{planted}'))",
     "002003", "does not exist"),
    ("CREATE TABLE STOLEN AS SELECT * FROM '{planted}'", "002003", "does not exist"),
    ("CREATE OR REPLACE TABLE ELASTIC_K8S_METRICS AS SELECT * FROM read_csv('{planted}')",
     "001003", "read_csv() is not allowed"),
    ("CREATE TABLE STOLEN LIKE '{planted}'", "002003", "does not exist"),
    ("UPDATE ELASTIC_K8S_METRICS SET RUN_ID = f.RUN_ID FROM '{planted}' AS f", "002003",
     "does not exist"),
    ("DELETE FROM ELASTIC_K8S_METRICS USING '{planted}' AS f WHERE TRUE", "002003",
     "does not exist"),
    ("MERGE INTO ELASTIC_K8S_METRICS AS T USING read_csv('{planted}') AS S "
     "ON T.RUN_ID = S.RUN_ID WHEN MATCHED THEN DELETE", "001003", "read_csv() is not"),
    ("MERGE INTO ELASTIC_K8S_METRICS AS T USING (SELECT * FROM '{planted}') AS S "
     "ON T.RUN_ID = S.RUN_ID WHEN NOT MATCHED THEN INSERT (RUN_ID) VALUES (S.RUN_ID)",
     "002003", "does not exist"),
    ("CREATE VIEW V AS SELECT * FROM '{planted}'", "001003", "CREATE VIEW statements"),
    ("CREATE VIEW V AS SELECT * FROM RESORT_SALES", "001003", "CREATE VIEW statements"),
    # statements that reach past the tables
    ("COPY RESORT_SALES TO '{work}/out.csv'", "001003", "COPY statements"),
    ("COPY INTO ELASTIC_K8S_METRICS FROM '{planted}'", "001003", "COPY statements"),
    ("EXPLAIN ANALYZE DELETE FROM RESORT_SALES", "001003", "RESORT_SALES is the emulator's "
     "landing table"),
    ("EXPLAIN ANALYZE COPY RESORT_SALES TO '{work}/out.csv'", "001003", "not available"),
    ("EXPLAIN ANALYZE INSERT INTO ELASTIC_K8S_METRICS (RUN_ID) VALUES ('y')", "001003",
     "not available"),
    ("ATTACH '{work}/other.duckdb' AS o", "001003", "SQL compilation error"),
    ("EXPORT DATABASE '{work}/exported'", "001003", "SQL compilation error"),
    ("INSTALL httpfs", "001003", "SQL compilation error"),
    ("LOAD '{work}/x.duckdb_extension'", "001003", "not available"),
    ("CREATE MACRO M() AS TABLE SELECT * FROM '{planted}'", "001003", "not available"),
    ("PRAGMA enable_profiling", "001003", "not available"),
    ("CALL checkpoint()", "001003", "not available"),
    ("SET enable_external_access = true", "001003", "SET statements"),
    # the emulator's bookkeeping: what makes a restart exactly-once
    ("DELETE FROM _EMULATOR_LANDED", "001003", "bookkeeping"),
    ("DROP TABLE _EMULATOR_ERRORS", "001003", "bookkeeping"),
    ("DROP TABLE IF EXISTS SCRATCH, _EMULATOR_LANDED", "001003", "_EMULATOR_LANDED is the "
     "emulator's own bookkeeping"),
    ("ALTER TABLE _EMULATOR_LANDED RENAME TO GONE", "001003", "bookkeeping"),
    ("INSERT INTO _EMULATOR_ERRORS (ERROR_TIME) VALUES (current_timestamp)", "001003",
     "bookkeeping"),
]  # fmt: skip


@pytest.mark.parametrize(("template", "code", "words"), HOSTILE)
def test_a_statement_cannot_touch_a_file_or_the_bookkeeping(emu, ready, template, code, words):
    before = _state(emu, ready)
    statement = template.format(**ready)
    status, reply = sql_statement(emu, statement)
    assert status == 422, reply
    assert reply["code"] == code and words in reply["message"], reply
    assert reply["sqlState"] and reply["statementHandle"]
    assert "data" not in reply
    assert _state(emu, ready) == before, "the statement changed something"


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT count(*) FROM RESORT_SALES",
        "SELECT max(METADATA$ROW_LAST_COMMIT_TIME) FROM EMULATOR_DB.PUBLIC.RESORT_SALES",
        "SELECT COLUMN_NAME FROM EMULATOR_DB.INFORMATION_SCHEMA.COLUMNS "
        "WHERE TABLE_NAME = 'ELASTIC_K8S_METRICS'",
        "SHOW TABLES",
        "DESCRIBE TABLE RESORT_SALES",
        "SELECT count(*) FROM _EMULATOR_LANDED",
        "WITH A AS (SELECT RUN_ID FROM ELASTIC_K8S_METRICS) SELECT count(*) FROM A",
        "INSERT INTO ELASTIC_K8S_METRICS (RUN_ID) WITH A AS (SELECT 'w' AS R) SELECT R FROM A",
        "UPDATE ELASTIC_K8S_METRICS SET RAW = NULL WHERE RUN_ID = 'w'",
        "DELETE FROM ELASTIC_K8S_METRICS WHERE RUN_ID = 'w'",
        "CREATE TABLE IF NOT EXISTS SCRATCH AS SELECT RUN_ID FROM RESORT_SALES LIMIT 1",
        "ALTER TABLE SCRATCH ADD COLUMN IF NOT EXISTS N NUMBER(10,0)",
        "DROP TABLE IF EXISTS SCRATCH",
    ],
)
def test_reads_and_writes_of_the_tables_still_work(emu, ready, statement):
    status, reply = sql_statement(emu, statement)
    assert status == 200, reply


def test_the_monitor_writes_and_reads_its_table_through_the_api(emu, ready):
    """The monitor's own statements (CREATE IF NOT EXISTS, ALTER, MERGE, its reads) pass."""
    sink = emulator_sink(emu.info)
    sink.ensure_table()
    line = {
        "type": "window", "run_id": "m", "worker_id": 1, "window_start": 1767225600.0,
        "window_seconds": 5.0, "partial": False, "start": 1767225600.0, "end": 1767225605.0,
        "rows": 10, "bytes": 2920, "acks": 1, "ack_p50_ms": 12.5, "cpu_pct": 30.0,
    }  # fmt: skip
    sink.upsert([metric_rows.worker_row(line)])
    sink.upsert([metric_rows.worker_row(dict(line, rows=11))])
    (back,) = sink.read_rows("m")
    assert back["ROWS_APPENDED"] == 11
    assert sink.landed_rows("sqlapi") == LANDED
    windows = sink.visible_latency("sqlapi", 5.0, 0.0, 4e9)
    assert sum(w["visible_rows"] for w in windows.values()) == LANDED
