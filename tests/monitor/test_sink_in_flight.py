"""Several MERGE statements of one upsert in flight at once (issue #31 item 7): every
row lands once, a rewrite after an insert replaces its row, a refused row is set aside
alone, and a statement that fails as a whole fails the upsert only once every
statement has ended (its rows are kept and the retry adds nothing)."""

from __future__ import annotations

import threading
from typing import Any

import duckdb
import pytest
from hostile_support import RUN, clean_lines
from monitor_support import duckdb_with_landing_table

from elastic_channels.monitor import rows
from elastic_channels.monitor import sink as sink_module
from elastic_channels.monitor.sink import SqlMetricsSink
from elastic_channels.monitor.sql_client import SqlApiClient, SqlError, local_transport


class Overlapping:
    """The SQL API on ``con``; each MERGE waits (at most 5 s) until a second one is in
    flight, so statements that are not sent at once show as ``max_in_flight`` 1."""

    def __init__(self, con: duckdb.DuckDBPyConnection, fail_with: str | None = None) -> None:
        self.inner = local_transport(con)
        self.lock = threading.Lock()
        self.in_flight = self.max_in_flight = self.merges = 0
        self.two = threading.Event()
        self.fail_with = fail_with

    def __call__(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        if not (body and str(body.get("statement", "")).startswith("MERGE")):
            return self.inner(method, path, body)
        with self.lock:
            self.merges += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            if self.in_flight >= 2:
                self.two.set()
        try:
            self.two.wait(5.0)
            values = [b.get("value") for b in (body.get("bindings") or {}).values()]
            if self.fail_with is not None and self.fail_with in values:
                return 503, {"code": "000000", "message": "warehouse suspended"}
            return self.inner(method, path, body)
        finally:
            with self.lock:
                self.in_flight -= 1


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(sink_module, "CHUNK_ROWS", 3)
    monkeypatch.setattr(sink_module, "IN_FLIGHT", 4)


def _sink(target: Overlapping) -> SqlMetricsSink:
    sink = SqlMetricsSink(SqlApiClient(target))
    sink.ensure_table()
    return sink


def _count(con: duckdb.DuckDBPyConnection) -> int:
    return con.execute("SELECT count(*) FROM ELASTIC_K8S_METRICS").fetchone()[0]  # type: ignore[index]


def test_statements_in_flight_write_each_row_once_and_rewrites_replace(small_chunks) -> None:
    con = duckdb_with_landing_table()
    target = Overlapping(con)
    sink = _sink(target)
    lines = clean_lines()
    assert len(lines) >= 8
    assert sink.upsert([rows.worker_row(x) for x in lines]) == []
    assert target.max_in_flight >= 2, "the statements were sent one after another"
    assert target.merges == -(-len(lines) // 3)
    assert _count(con) == len(lines)
    # A late line rewrites rows already written, beside new ones: one row per key.
    rewritten = [dict(x, rows=x["rows"] + 1000) for x in lines[:5]]
    new = [dict(x, window_start=x["window_start"] + 3600) for x in lines[:4]]
    assert sink.upsert([rows.worker_row(x) for x in rewritten + new]) == []
    assert _count(con) == len(lines) + len(new)
    held = {(r["WORKER_ID"], r["WINDOW_START"]): r for r in sink.read_rows(RUN, fleet=False)}
    for x in rewritten:
        row = rows.worker_row(x)
        assert held[(row["WORKER_ID"], row["WINDOW_START"])]["ROWS_APPENDED"] == x["rows"]


def test_a_statement_failing_fails_the_upsert_after_the_others_and_the_retry_adds_nothing(
    small_chunks,
) -> None:
    con = duckdb_with_landing_table()
    lines = clean_lines()
    doomed = "pod-doomed"  # the last row, alone in its key: in the last statement
    lines = [*lines[:-1], dict(lines[-1], pod_name=doomed)]
    target = Overlapping(con, fail_with=doomed)
    sink = _sink(target)
    batch = [rows.worker_row(x) for x in lines]
    with pytest.raises(SqlError, match="warehouse suspended"):
        sink.upsert(batch)
    assert target.in_flight == 0  # raised once every statement had ended
    assert _count(con) == len(lines) - (len(lines) % 3 or 3)  # the other statements landed
    target.fail_with = None
    assert sink.upsert(batch) == []
    assert _count(con) == len(lines)
