"""VARIANT columns in the emulator: both parse paths land the same rows with the same
JSON text (the native one takes a value only when its text is DuckDB's own, and leaves
the rest to the SQL path), null is refused as for every NOT NULL column, and a data dir
holds one workload's table."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import duckdb
import msgspec
import pytest
from emulator_support import require_native_parse
from hypothesis import given, settings
from hypothesis import strategies as st

from elastic_channels.emulator.landing.batch_native import column_specs
from elastic_channels.emulator.landing.rowcheck import RowChecker
from elastic_channels.emulator.storage.parquet_store import ParquetStore
from elastic_channels.emulator.storage.store import StoreError
from elastic_channels.landing_table import landing_table

COLUMNS = [("ID", "NUMBER(9,0)"), ("V", "VARIANT")]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
#: How a client may write a value: compactly (msgspec, as the SDK does), or with blanks
#: and ASCII escapes (json.dumps), which only the SQL path reads.
writers = st.sampled_from(
    [
        msgspec.json.encode,
        lambda v: json.dumps(v).encode(),
        lambda v: json.dumps(v, ensure_ascii=False).encode(),
    ]
)


def _body(values: list[Any], write: Any) -> bytes:
    return b"".join(b'{"ID":%d,"V":%s}\n' % (i, write(v)) for i, v in enumerate(values))


def _stored_by_duckdb(body: bytes) -> list[str | None]:
    """What the SQL path keeps of each line's V: DuckDB's JSON text of it (null: none)."""
    con = duckdb.connect()
    try:
        out = []
        for line in body.splitlines():
            (text,) = con.execute(
                "SELECT json_extract(?, '$.V')::VARCHAR", [line.decode()]
            ).fetchone()  # type: ignore[misc]
            out.append(None if text == "null" else text)
        return out
    finally:
        con.close()


@settings(max_examples=40)
@given(st.lists(json_values, min_size=1, max_size=8), writers)
def test_both_paths_land_the_same_variant_text(values: list[Any], write: Any) -> None:
    require_native_parse()
    import elastic_native

    body = _body(values, write)
    native = RowChecker(COLUMNS, parse="native").check(body)
    sql = RowChecker(COLUMNS, parse="sql").check(body)
    # The same rows (the native path lands what it took first, then the SQL path's),
    # the same count, the same refusals.
    assert sorted(native[0].splitlines()) == sorted(sql[0].splitlines())
    assert native[1:] == sql[1:]
    # The native parser's own text for each line it took is what the SQL path stores.
    rows, buffers, _, deferred_lines = elastic_native.RowParser(column_specs(COLUMNS)).parse(body)
    offsets = memoryview(buffers[1][0]).cast("q")
    texts = [buffers[1][1][offsets[i] : offsets[i + 1]].decode() for i in range(rows)]
    taken = [n for n in range(1, len(values) + 1) if n not in deferred_lines]
    duck = _stored_by_duckdb(body)
    assert texts == [duck[n - 1] for n in taken]
    # A null VARIANT is refused (every column is NOT NULL), on either path.
    for n, v in enumerate(values, 1):
        if v is None:
            assert any(e.line == n and "got `null`" in e.message for e in sql[2])


def test_numbers_of_every_magnitude_keep_duckdbs_text() -> None:
    """Thousands of decimals and integers as msgspec writes them, around every edge of
    the plain form (1e-6, 1e15, 1e21) and of exactness: what the native path takes is
    DuckDB's text, digit for digit."""
    require_native_parse()
    import elastic_native

    seed = random.randrange(2**32)
    rng = random.Random(seed)
    values: list[Any] = [0.0, -0.0, 1e-6, 9.99e-7, 1e15, 1e21, 1e20, 2**53 + 1, -(10**25)]
    values += [rng.uniform(-1, 1) * 10 ** rng.uniform(-9, 23) for _ in range(3000)]
    values += [round(rng.uniform(0, 500), rng.randrange(0, 7)) for _ in range(1000)]
    values += [rng.randrange(-(10**20), 10**20) for _ in range(200)]
    body = _body(values, msgspec.json.encode)
    rows, buffers, _, deferred_lines = elastic_native.RowParser(column_specs(COLUMNS)).parse(body)
    offsets = memoryview(buffers[1][0]).cast("q")
    texts = [buffers[1][1][offsets[i] : offsets[i + 1]].decode() for i in range(rows)]
    taken = [n for n in range(1, len(values) + 1) if n not in set(deferred_lines)]
    duck = _stored_by_duckdb(body)
    assert texts == [duck[n - 1] for n in taken], f"seed {seed}"
    assert rows > len(values) // 2, f"seed {seed}: most plain numbers take the native path"


def test_the_compact_form_of_the_shipped_shapes_takes_the_native_path() -> None:
    """msgspec's rows of every shipped VARIANT shape need no SQL: objects, arrays,
    nested, strings with escapes DuckDB writes alike, decimals that round-trip."""
    require_native_parse()
    import elastic_native

    values = [
        {"site": "p01", "zone": "A1", "fw": "2.5.2"},
        {"page": {"title": 'Trail "Runner"\tGuide', "search": ""}, "n": [1, 2.5, -0.75]},
        ["a", "b"],
        [],
        {},
        "text",
        12,
        129.95,
        True,
        {"x": None},
    ]
    rows, _, deferred, lines = elastic_native.RowParser(column_specs(COLUMNS)).parse(
        _body(values, msgspec.json.encode)
    )
    assert (rows, lines, deferred) == (len(values), [], b"")


def test_a_data_dir_holds_one_workloads_table(tmp_path: Path) -> None:
    db = tmp_path / "emulator.duckdb"
    resort = landing_table()
    ParquetStore(db, resort.name, resort.columns, compact=False).close()
    iot = landing_table("iot-telemetry")
    with pytest.raises(StoreError) as caught:
        ParquetStore(db, iot.name, iot.columns, compact=False)
    said = str(caught.value)
    assert "holds the landing table RESORT_SALES, not IOT_TELEMETRY" in said
    assert "use another --data-dir" in said
    ParquetStore(db, resort.name, resort.columns, compact=False).close()  # its own, again
