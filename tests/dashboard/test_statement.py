"""Statements: a ``?`` per value, bound in order; for the one target that takes no
parameters, the values written in by DuckDB's complete rules."""

from __future__ import annotations

import duckdb
import pytest

from elastic_channels.dashboard.statement import Binder, Statement, duckdb_text


def test_binder_keeps_values_in_the_order_written() -> None:
    b = Binder()
    sql = f"SELECT {b(1)} AS A WHERE x = {b('r')} AND y = {b(2.5)}"
    assert sql == "SELECT ? AS A WHERE x = ? AND y = ?"
    assert Statement(sql, b.params).params == (1, "r", 2.5)


@pytest.mark.parametrize(
    "value",
    ["plain", "it's", "a\\' OR 1=1 --", "\\", "'", "''; DROP TABLE t; --", "?", "é\n\t", ""],
)
def test_duckdb_text_keeps_a_string_one_string(value: str) -> None:
    text = duckdb_text(Statement("SELECT ? AS V, ? AS N", (value, 7)))
    assert duckdb.sql(text).fetchall() == [(value, 7)]


def test_duckdb_text_skips_question_marks_in_literals_names_and_comments() -> None:
    stmt = Statement(
        "SELECT '?' AS \"q?\", ? AS v -- what?\n, 'it''s ?' AS w /* ? */, ? AS x", ("a", 2)
    )
    assert duckdb.sql(duckdb_text(stmt)).fetchall() == [("?", "a", "it's ?", 2)]


@pytest.mark.parametrize(
    ("value", "literal"), [(None, "NULL"), (True, "TRUE"), (3, "3"), (0.5, "0.5")]
)
def test_duckdb_text_literals(value: object, literal: str) -> None:
    assert duckdb_text(Statement("SELECT ?", (value,))) == f"SELECT {literal}"


def test_duckdb_text_refuses_what_it_cannot_write() -> None:
    with pytest.raises(ValueError, match="2 '\\?' in the SQL, 1 value"):
        duckdb_text(Statement("SELECT ?, ?", ("a",)))
    with pytest.raises(TypeError, match="bytes"):
        duckdb_text(Statement("SELECT ?", (b"x",)))
    with pytest.raises(ValueError, match="nan"):
        duckdb_text(Statement("SELECT ?", (float("nan"),)))
    with pytest.raises(ValueError, match="unterminated"):
        duckdb_text(Statement("SELECT 'open ?", ()))
