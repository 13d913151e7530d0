"""A statement's run of ``VALUES`` tuples of bind variables is translated and checked
once (issue #31 item 7: the monitor's 100-row MERGEs spent 90% of their time in
sqlglot reading each row): the rows still land, each with its own values, the guard
still refuses what it refused, and text that only looks like such a run is left as it
is."""

from __future__ import annotations

import duckdb
import pytest

from elastic_channels.emulator.sql.api import handle_statement
from elastic_channels.emulator.sql.values_rows import collapse, expand


@pytest.fixture
def con():
    c = duckdb.connect()
    c.execute("CREATE TABLE T (A INTEGER, B VARCHAR)")
    yield c
    c.close()


def _bind(*values) -> dict:
    return {
        str(i): {"type": "FIXED" if isinstance(v, int) else "TEXT", "value": str(v)}
        for i, v in enumerate(values, 1)
    }


def test_a_run_of_tuples_is_cut_to_one_and_expanded_back() -> None:
    cut = collapse("INSERT INTO T (A, B) VALUES (?, ?), (?, ?),(?,?)")
    assert cut is not None  # the last tuple is spelled otherwise: the run is the first two
    assert (cut.statement, cut.rows) == ("INSERT INTO T (A, B) VALUES (?, ?),(?,?)", 2)
    cut = collapse("INSERT INTO T (A, B) VALUES (?, ?), (?, ?), (?, ?) ")
    assert cut is not None
    assert (cut.statement, cut.width, cut.rows) == ("INSERT INTO T (A, B) VALUES (?, ?) ", 2, 3)
    sql, n = expand("INSERT INTO T (A, B) VALUES (?, ?)", 2, cut) or ("", 0)
    assert (sql, n) == ("INSERT INTO T (A, B) VALUES (?, ?), (?, ?), (?, ?)", 6)
    # The one tuple twice in the translation: not expanded (the full path reads it).
    assert (
        expand("SELECT 1 FROM (VALUES (?, ?)) UNION SELECT 1 FROM (VALUES (?, ?))", 4, cut) is None
    )


def test_values_in_a_string_or_a_comment_is_not_a_run() -> None:
    assert collapse("SELECT 'VALUES (?), (?)' AS x") is None
    assert collapse("SELECT 1 /* VALUES (?), (?) */") is None
    assert collapse("SELECT ? -- VALUES (?), (?)") is None


def test_every_row_of_a_run_lands_with_its_own_values(con) -> None:
    status, reply = handle_statement(
        {"statement": "INSERT INTO T (A, B) VALUES (?, ?), (?, ?),(?,?)",
         "bindings": _bind(1, "a", 2, "b", 3, "c")},
        con,
    )  # fmt: skip
    assert status == 200, reply
    assert con.execute("SELECT A, B FROM T ORDER BY A").fetchall() == [(1, "a"), (2, "b"), (3, "c")]
    merge = (
        "MERGE INTO T USING (SELECT CAST(V.A AS INTEGER) AS A, V.B AS B "
        "FROM (VALUES (?, ?), (?, ?)) AS V(A, B)) AS S ON T.A = S.A "
        "WHEN MATCHED THEN UPDATE SET B = S.B WHEN NOT MATCHED THEN INSERT (A, B) VALUES (S.A, S.B)"
    )
    status, reply = handle_statement({"statement": merge, "bindings": _bind(2, "B", 4, "d")}, con)
    assert status == 200, reply
    assert con.execute("SELECT A, B FROM T ORDER BY A").fetchall() == [
        (1, "a"), (2, "B"), (3, "c"), (4, "d"),
    ]  # fmt: skip


def test_a_run_counts_its_bind_variables(con) -> None:
    status, reply = handle_statement(
        {"statement": "INSERT INTO T (A, B) VALUES (?, ?), (?, ?), (?, ?)",
         "bindings": _bind(1, "a", 2, "b", 3)},
        con,
    )  # fmt: skip
    assert status == 422
    assert "6 bind variable(s) in the statement, 5 binding(s) given" in reply["message"]
    assert con.execute("SELECT count(*) FROM T").fetchone() == (0,)


def test_the_guard_reads_a_statement_with_a_run_as_before(con) -> None:
    status, reply = handle_statement(
        {"statement": "INSERT INTO T (A, B) SELECT V.A, V.B FROM (VALUES (?, ?), (?, ?)) "
         "AS V(A, B) JOIN read_csv('/etc/passwd') AS F ON TRUE",
         "bindings": _bind(1, "a", 2, "b")},
        con,
    )  # fmt: skip
    assert status == 422, reply
    assert "read_csv" in reply["message"]
    status, reply = handle_statement(
        {"statement": "INSERT INTO _EMULATOR_LANDED VALUES (?, ?), (?, ?)",
         "bindings": _bind(1, "a", 2, "b")},
        con,
    )  # fmt: skip
    assert status == 422, reply
    assert con.execute("SELECT count(*) FROM T").fetchone() == (0,)
