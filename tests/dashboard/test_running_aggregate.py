"""Aggregates kept across refreshes: after each read they equal the aggregate of the
whole table read from scratch, while the reads after the first ones ask only for the
rows committed since the kept boundary."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from typing import Any

import duckdb
import pandas as pd
import pytest

from elastic_channels.dashboard import running_aggregate as ra
from elastic_channels.dashboard import sales_sql as q
from elastic_channels.dashboard.dialect import DUCKDB
from elastic_channels.dashboard.source import DataSource, frame, statement
from elastic_channels.dashboard.statement import Statement

T0 = dt.datetime(2026, 12, 2, 10, 0, tzinfo=dt.timezone.utc)
RESORTS = ("Vail", "Alta", "Taos")


class TableSource(DataSource):
    """A live target over an in-memory RESORT_SALES whose commit times the test sets."""

    dialect = DUCKDB
    _description = "test table"

    def __init__(self) -> None:
        self.con = duckdb.connect()
        self.con.execute("SET TimeZone = 'UTC'")
        self.con.execute(
            "CREATE TABLE RESORT_SALES (RUN_ID VARCHAR, RESORT VARCHAR, CATEGORY VARCHAR, "
            "CUSTOMER_TYPE VARCHAR, PAYMENT_METHOD VARCHAR, AMOUNT DECIMAL(12, 2), "
            "SALE_TIME TIMESTAMPTZ, _COMMIT_TIME TIMESTAMPTZ)"
        )
        self.sent: list[Statement] = []
        self.gen = "1"

    def rows(self, query: Statement | str) -> list[dict[str, Any]]:
        stmt = statement(query)
        self.sent.append(stmt)
        cur = self.con.execute(stmt.sql, list(stmt.params) or None)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]

    def query(self, query: Statement | str, times: Any = ()) -> pd.DataFrame:
        return frame(self.rows(query), times=times)

    def version(self) -> str | None:
        return None  # rows may land any time

    def generation(self) -> str | None:
        return self.gen

    def land(self, rng: random.Random, n: int, commit_s: float, run: str = "r1") -> None:
        if n == 0:
            return
        commit = T0 + dt.timedelta(seconds=commit_s)
        rows = [
            (run, rng.choice(RESORTS), rng.choice(("MERCH", "FOOD_BEV")), "STAFF", "CASH",
             rng.randint(1, 9999) / 100, commit - dt.timedelta(seconds=1), commit)
            for _ in range(n)
        ]  # fmt: skip
        self.con.executemany("INSERT INTO RESORT_SALES VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)


@pytest.fixture
def src(monkeypatch: pytest.MonkeyPatch) -> Iterator[TableSource]:
    monkeypatch.setattr(ra, "FRESH_S", 0.0)  # every read asks the target
    s = TableSource()
    yield s
    s.con.close()


def _full(src: TableSource, run_id: str | None) -> pd.DataFrame:
    keys = list(q.SALES_MIX.keys)
    where = "" if run_id is None else f" WHERE RUN_ID = '{run_id}'"
    got = src.con.execute(
        f"SELECT {', '.join(keys)}, count(*) AS SALES, sum(AMOUNT) AS REVENUE "
        f"FROM RESORT_SALES{where} GROUP BY ALL"
    ).df()
    return got.sort_values(keys, ignore_index=True)


def _same(kept: pd.DataFrame, full: pd.DataFrame) -> None:
    keys = list(q.SALES_MIX.keys)
    kept = kept.sort_values(keys, ignore_index=True)
    assert list(kept[keys].itertuples(index=False)) == list(full[keys].itertuples(index=False))
    assert list(kept["SALES"]) == list(full["SALES"])
    assert list(kept["REVENUE"]) == pytest.approx([float(v) for v in full["REVENUE"]])


def test_equals_a_full_read_as_rows_land(src: TableSource) -> None:
    seed = random.randrange(2**32)
    print(f"seed {seed}")
    rng = random.Random(seed)
    t = 0.0
    for _ in range(40):
        src.land(rng, rng.randint(0, 30), t)
        src.land(rng, rng.randint(0, 5), t, run="r2")
        _same(ra.read(src, q.SALES_MIX, "r1"), _full(src, "r1"))
        _same(ra.read(src, q.SALES_MIX, None), _full(src, None))
        t += rng.choice((0.0, 0.5, 3.0, 12.0))  # several batches in one commit instant too
    # once rows settled, a read asks only for what was committed since the boundary
    src.land(rng, 3, t + 1)
    for _ in range(3):  # seen, settled, then the boundary of the next read
        ra.read(src, q.SALES_MIX, "r1")
    last = src.sent[-1]
    assert "_COMMIT_TIME > CAST(? AS TIMESTAMPTZ)" in last.sql
    since = dt.datetime.fromisoformat(last.params[-1])
    assert since == T0 + dt.timedelta(seconds=t + 1 - ra.SETTLE_S)


def test_rows_on_the_boundary_count_once(src: TableSource) -> None:
    rng = random.Random(7)
    src.land(rng, 10, 0.0)
    src.land(rng, 10, 100.0)  # the latest commit: the boundary is SETTLE_S before it
    ra.read(src, q.SALES_MIX, "r1")
    ra.read(src, q.SALES_MIX, "r1")  # the rows up to 100 s - SETTLE_S settle
    edge = 100.0 - ra.SETTLE_S
    src.land(rng, 5, edge)  # exactly on the boundary, landed late: already settled past
    src.land(rng, 5, edge + 0.000001)  # just after it: still read
    got = ra.read(src, q.SALES_MIX, "r1")
    assert int(got["SALES"].sum()) == 10 + 10 + 5  # the late rows on the boundary are not
    # ... until what is kept is read again from scratch
    ra.FULL_EVERY_S, before = 0.0, ra.FULL_EVERY_S
    try:
        assert int(ra.read(src, q.SALES_MIX, "r1")["SALES"].sum()) == 30
    finally:
        ra.FULL_EVERY_S = before


def test_another_server_is_read_from_scratch(src: TableSource) -> None:
    rng = random.Random(3)
    src.land(rng, 10, 0.0)
    src.land(rng, 10, 100.0)
    ra.read(src, q.SALES_MIX, "r1")
    ra.read(src, q.SALES_MIX, "r1")
    src.con.execute("DELETE FROM RESORT_SALES")  # a fresh data dir, another emulator
    src.land(rng, 4, 200.0)
    src.gen = "2"
    _same(ra.read(src, q.SALES_MIX, "r1"), _full(src, "r1"))
    assert "_COMMIT_TIME >" not in src.sent[-1].sql  # a full read


def test_runs_headline_kept_across_reads(src: TableSource) -> None:
    rng = random.Random(11)
    agg = q.runs_aggregate(DUCKDB)
    for t in (0.0, 40.0, 80.0, 120.0):
        src.land(rng, 20, t)
        runs = q.runs_list(ra.read(src, agg, None))
    (row,) = runs.itertuples()
    assert row.SALES == 80 and row.LAST_COMMIT == pd.Timestamp(T0 + dt.timedelta(seconds=120))
    assert row.FIRST_SALE == pd.Timestamp(T0 - dt.timedelta(seconds=1))
    ((revenue,),) = src.con.execute("SELECT sum(AMOUNT) FROM RESORT_SALES").fetchall()
    assert row.REVENUE == pytest.approx(float(revenue))


def test_forget_makes_the_next_read_full(src: TableSource) -> None:
    """A page whose run is over forgets what it kept: its last figures are a full read."""
    rng = random.Random(5)
    src.land(rng, 10, 0.0)
    src.land(rng, 10, 100.0)
    ra.read(src, q.SALES_MIX, "r1")
    ra.read(src, q.SALES_MIX, "r1")
    assert "_COMMIT_TIME >" in ra.read(src, q.SALES_MIX, "r1").pipe(lambda _: src.sent[-1].sql)
    ra.forget(src)
    _same(ra.read(src, q.SALES_MIX, "r1"), _full(src, "r1"))
    assert "_COMMIT_TIME >" not in src.sent[-1].sql
