"""Snowflake's VARIANT SQL as the emulator's SQL API translates it, run on DuckDB over
a JSON column: paths (``v:a.b``, ``v:a:b``, ``v['a']``, ``v[0]``), text casts and string
comparisons (the value's text, not its JSON), numbers in comparisons and arithmetic,
``ARRAY_SIZE``; each answer checked against the same question asked of the values in
Python."""

from __future__ import annotations

import json

import duckdb
import pytest

from elastic_channels.emulator.sql.translate import translate, variant_paths_to_duckdb

ROWS = [
    {"page": {"url": "/c/sale", "title": "Sale"}, "screen": {"width": 390}, "tags": ["a", "b"]},
    {"page": {"url": "/p/x", "title": "X"}, "screen": {"width": 1920}, "tags": []},
    {"page": {"url": "/c/sale", "title": 'Say "hi"'}, "screen": {"width": 1280.5}, "tags": ["c"]},
]


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    c = duckdb.connect()
    c.execute("CREATE TABLE CLICKS (ID INTEGER, CONTEXT JSON)")
    c.executemany(
        "INSERT INTO CLICKS VALUES (?, ?)", [(i, json.dumps(r)) for i, r in enumerate(ROWS)]
    )
    return c


def ask(con: duckdb.DuckDBPyConnection, snowflake_sql: str) -> list[tuple]:
    duck, is_query, _ = translate(snowflake_sql)
    assert is_query and duck is not None
    return con.execute(duck).fetchall()


def test_a_path_is_the_json_value_and_its_text_cast_is_the_text(con) -> None:
    got = ask(con, "SELECT CONTEXT:page:url, CONTEXT:page.title::string FROM CLICKS ORDER BY ID")
    assert got == [(json.dumps(r["page"]["url"]), r["page"]["title"]) for r in ROWS]


def test_strings_compare_as_text_and_numbers_as_numbers(con) -> None:
    sale = sum(1 for r in ROWS if r["page"]["url"] == "/c/sale")
    assert ask(con, "SELECT COUNT(*) FROM CLICKS WHERE CONTEXT:page:url = '/c/sale'") == [(sale,)]
    like = sum(1 for r in ROWS if r["page"]["url"].startswith("/c"))
    assert ask(con, "SELECT COUNT(*) FROM CLICKS WHERE CONTEXT:page.url LIKE '/c%'") == [(like,)]
    wide = sum(1 for r in ROWS if r["screen"]["width"] > 1000)
    assert ask(con, "SELECT COUNT(*) FROM CLICKS WHERE CONTEXT:screen.width > 1000") == [(wide,)]
    over = sum(1 for r in ROWS if 1280 < r["screen"]["width"])
    assert ask(con, "SELECT COUNT(*) FROM CLICKS WHERE 1280 < CONTEXT:screen:width") == [(over,)]


def test_arithmetic_and_sums_read_a_path_as_a_number(con) -> None:
    total = sum(r["screen"]["width"] for r in ROWS)
    assert ask(con, "SELECT SUM(CONTEXT:screen.width) FROM CLICKS") == [(total,)]
    got = ask(con, "SELECT CONTEXT:screen.width * 2 + 1 FROM CLICKS ORDER BY ID")
    assert got == [(r["screen"]["width"] * 2 + 1,) for r in ROWS]


def test_subscripts_count_from_zero_and_array_size(con) -> None:
    got = ask(
        con,
        "SELECT CONTEXT['page']['title']::string, CONTEXT:tags[0]::string, "
        "ARRAY_SIZE(CONTEXT:tags) FROM CLICKS ORDER BY ID",
    )
    want = [(r["page"]["title"], r["tags"][0] if r["tags"] else None, len(r["tags"])) for r in ROWS]
    assert got == want


def test_emulator_query_translates_only_statements_with_a_variant_path() -> None:
    duckdb_sql = "SELECT CONTEXT->>'$.page.url' AS u FROM CLICKS"
    assert variant_paths_to_duckdb(duckdb_sql) == duckdb_sql
    plain = "SELECT count(*) FROM RESORT_SALES WHERE RUN_ID = 'x'"
    assert variant_paths_to_duckdb(plain) == plain
    assert variant_paths_to_duckdb("SELECT CONTEXT:page:url FROM CLICKS") == (
        "SELECT CONTEXT -> '$.page.url' FROM CLICKS"
    )
    assert variant_paths_to_duckdb("SELECT FROM WHERE") == "SELECT FROM WHERE"  # DuckDB's to say
