"""The landing table is derived from resort_sales.COLUMNS; the row-by-row checker."""

from __future__ import annotations

import json

import duckdb
import pytest

from elastic_channels.emulator.landing.rowcheck import RowChecker
from elastic_channels.emulator.storage.schema import (
    COMMIT_TIME_COLUMN,
    column_type,
    create_table_sql,
)
from elastic_channels.model import COLUMNS
from elastic_channels.rows import ResortGenerator


@pytest.mark.parametrize(
    ("snowflake", "duck"),
    [
        ("NUMBER(9,0)", "INTEGER"),
        ("NUMBER(10,0)", "BIGINT"),
        ("NUMBER(38,0)", "HUGEINT"),
        ("NUMBER(12,2)", "DECIMAL(12,2)"),
        ("number(14, 2)", "DECIMAL(14,2)"),
        ("VARCHAR", "VARCHAR"),
        ("VARCHAR(16777216)", "VARCHAR"),
        ("TIMESTAMP_TZ", "TIMESTAMPTZ"),
        ("TIMESTAMP_NTZ", "TIMESTAMP"),
        ("BOOLEAN", "BOOLEAN"),
    ],
)
def test_column_types_map_to_duckdb(snowflake, duck):
    assert column_type(snowflake).duckdb == duck


def test_unknown_type_is_a_clear_error():
    with pytest.raises(ValueError, match="unsupported Snowflake column type 'GEOGRAPHY'"):
        column_type("GEOGRAPHY")


def test_table_has_every_schema_column_in_order_plus_commit_time():
    con = duckdb.connect()
    con.execute(create_table_sql("RESORT_SALES", COLUMNS))
    described = con.execute("DESCRIBE RESORT_SALES").fetchall()
    names = [r[0] for r in described]
    assert names == [c for c, _ in COLUMNS] + [COMMIT_TIME_COLUMN]
    types = dict((r[0], r[1]) for r in described)
    assert types["QUANTITY"] == "INTEGER"
    assert types["UNIT_PRICE"] == "DECIMAL(12,2)"
    assert types["SALE_TIME"] == "TIMESTAMP WITH TIME ZONE"
    assert all(r[2] == "NO" for r in described), "every column is NOT NULL"


def _line(**changes):
    row = ResortGenerator("chk", 0).next_rows(1, 1_700_000_000_000_000)[0]
    d = {c: getattr(row, c) for c, _ in COLUMNS}
    d["SALE_TIME"] = "2023-11-14T22:13:20Z"
    for k, v in changes.items():
        if v is ...:
            del d[k]
        else:
            d[k] = v
    return json.dumps(d).encode()


def test_checker_keeps_good_rows_and_explains_bad_ones():
    body = b"\n".join(
        [
            _line(),
            b"",
            _line(EXTRA=1),
            _line(RESORT=...),
            _line(QUANTITY="many"),
            _line(RESORT=None),
            _line(UNIT_PRICE=12345678901.5),
            b"[1, 2]",
            b"{not json",
            _line(QUANTITY="3"),  # Snowflake casts numeric strings
            b"   ",
        ]
    )
    good, parsed, errors = RowChecker(COLUMNS).check(body)
    assert parsed == 9  # blank and whitespace-only lines are not rows
    assert len(good.splitlines()) == 2
    by_line = {e.line: e.message for e in errors}
    assert sorted(by_line) == [3, 4, 5, 6, 7, 8, 9]
    assert "unknown field `EXTRA`" in by_line[3]
    assert "missing required field `RESORT`" in by_line[4]
    assert "$.QUANTITY" in by_line[5]
    assert "got `null`" in by_line[6]
    assert "out of range for NUMBER(12,2)" in by_line[7]
    assert "Expected `object`" in by_line[8]
    assert "DecodeError" in by_line[9]
    assert all(e.excerpt for e in errors)
