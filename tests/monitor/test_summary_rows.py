"""Each worker's summary line becomes one ``IS_SUMMARY`` row of its whole-run totals,
never two, and the dashboard's totals query reads them (its lost = rows of the
summaries - distinct TXIDs landed)."""

from __future__ import annotations

import random

import duckdb
from monitor_support import EPOCH0, FakeWorker, duckdb_with_landing_table, make_sink

from elastic_channels.dashboard import metrics_sql as m
from elastic_channels.dashboard.dialect import DUCKDB
from elastic_channels.monitor.monitor import Monitor
from elastic_channels.monitor.sql_client import SqlApiClient, local_transport
from elastic_channels.snowflake.ddl import METRICS_COLUMNS

RUN = "summaries"


def fleet_of(n: int, seconds: float = 12.0) -> list[FakeWorker]:
    rng = random.Random(21)
    workers = [FakeWorker(RUN, wid, EPOCH0 + 0.4 + 0.3 * wid, 5.0) for wid in range(n)]
    for w in workers:
        while w.now < w.start + seconds:
            w.step(0.25, rng)
        w.finish()
    return workers


def summary_of(w: FakeWorker, **change) -> dict:
    """The worker's summary line with the counts a real worker's has beside them."""
    s = w.summary()
    rows = sum(x["rows"] for x in w.lines)
    return {**s, "rows_generated": rows, "first_seq": 0, "next_seq": rows,
            "resent_batches": 2 + w.worker_id, "sdk_retries": 5, "errors": 1, **change}  # fmt: skip


def summary_rows(sink) -> dict[int, dict]:
    return {int(r["WORKER_ID"]): r for r in sink.read_rows(RUN, summary=True)}


def test_one_summary_row_per_worker_with_its_whole_run_totals():
    sink = make_sink(duckdb_with_landing_table())
    monitor = Monitor(RUN, sink, grace_s=0.0)
    a, b = fleet_of(2)
    for line in a.lines + b.lines:
        monitor.feed(line)
    monitor.feed(summary_of(a))
    monitor.feed(summary_of(b, error="channel invalidated"))
    monitor.tick(now=EPOCH0 + 100)
    got = summary_rows(sink)
    assert sorted(got) == [0, 1]
    for w in (a, b):
        r, s = got[w.worker_id], summary_of(w)
        assert r["IS_SUMMARY"] is True and r["IS_FLEET"] is False
        assert r["ROWS_APPENDED"] == s["rows_generated"] == sum(x["rows"] for x in w.lines)
        assert r["BYTES_APPENDED"] == s["bytes_sent"] == sum(x["bytes"] for x in w.lines)
        assert r["ROWS_ACKED"] == s["rows_acked"]
        cols = ("RESENT_BATCHES", "SDK_RETRIES", "ERRORS", "ACK_LATENCY_P99_MS")
        assert [r[c] for c in cols] == [
            s["resent_batches"], s["sdk_retries"], s["errors"], s["ack_p99_ms"],
        ]  # fmt: skip
        assert r["WINDOW_START"].timestamp() == w.lines[0]["window_start"]
        assert r["WINDOW_END"].timestamp() == w.lines[-1]["end"]
        assert r["RAW"]["rows_generated"] == s["rows_generated"]
    assert (got[0]["WORKER_STATE"], got[1]["WORKER_STATE"]) == ("done", "failed")
    # The window rows are what they were: one per window, none of them a summary.
    windows = sink.read_rows(RUN, fleet=False)
    assert len(windows) == len(a.lines) + len(b.lines)
    assert not any(r["IS_SUMMARY"] for r in windows)


def test_a_summary_seen_again_or_after_a_restart_is_never_a_second_row():
    con = duckdb_with_landing_table()
    sink = make_sink(con)
    a, b = fleet_of(2)
    sa, sb = summary_of(a), summary_of(b)
    lines = [*a.lines, sa, *b.lines, sb]
    first = Monitor(RUN, sink, grace_s=0.0)
    for line in lines:
        first.feed(line)
    first.feed(dict(sa))  # a reconnect: the same line again
    first.tick(now=EPOCH0 + 100)
    assert first.tick(now=EPOCH0 + 100) == 0
    second = Monitor(RUN, sink, grace_s=0.0)  # restarted, reads the logs from the start
    assert second.resume() == len(sink.read_rows(RUN, summary=None))
    for line in lines:
        second.feed(line)
    assert second.tick(now=EPOCH0 + 100) == 0  # nothing new: nothing written
    # A summary whose figures differ (a replay of a later line) updates the same row.
    second.feed({**sb, "errors": 9})
    second.flush(final=True)
    (n, errors) = con.execute(
        "SELECT count(*), max(ERRORS) FILTER (WHERE WORKER_ID = 1) FROM ELASTIC_K8S_METRICS "
        f"WHERE RUN_ID = '{RUN}' AND IS_SUMMARY"
    ).fetchone()
    assert (n, errors) == (2, 9)


def test_a_summary_before_its_windows_gets_their_span_when_they_come():
    sink = make_sink(duckdb_with_landing_table())
    monitor = Monitor(RUN, sink, grace_s=0.0)
    (a,) = fleet_of(1)
    monitor.feed(summary_of(a))  # out of order: the summary first
    monitor.tick(now=EPOCH0 + 100)
    (early,) = summary_rows(sink).values()
    assert early["WINDOW_START"] is None and early["WINDOW_END"] is None
    for line in a.lines:
        monitor.feed(line)
    monitor.tick(now=EPOCH0 + 100)
    (late,) = summary_rows(sink).values()
    assert late["WINDOW_START"].timestamp() == a.lines[0]["window_start"]
    assert late["WINDOW_END"].timestamp() == a.lines[-1]["end"]


def test_a_table_made_before_is_summary_gets_the_column_and_keeps_its_rows():
    con = duckdb_with_landing_table()
    old = ", ".join(f'"{n}" {t}' for n, t in METRICS_COLUMNS if n != "IS_SUMMARY")
    SqlApiClient(local_transport(con)).execute(f"CREATE TABLE ELASTIC_K8S_METRICS ({old})")
    (a,) = fleet_of(1)
    line = a.lines[0]
    con.execute(  # a row an older monitor wrote
        "INSERT INTO ELASTIC_K8S_METRICS (RUN_ID, WORKER_ID, IS_FLEET, WINDOW_START, "
        "ROWS_APPENDED) VALUES (?, 0, FALSE, to_timestamp(?), ?)",
        [RUN, line["window_start"], line["rows"]],
    )
    sink = make_sink(con)  # ensure_table adds IS_SUMMARY
    monitor = Monitor(RUN, sink, grace_s=0.0)
    for x in a.lines:
        monitor.feed(x)
    monitor.feed(summary_of(a))
    monitor.tick(now=EPOCH0 + 100)
    counts = con.execute(
        "SELECT count(*) FILTER (WHERE IS_SUMMARY), count(*) FILTER (WHERE NOT IS_FLEET "
        "AND NOT coalesce(IS_SUMMARY, FALSE)) FROM ELASTIC_K8S_METRICS"
    ).fetchone()
    assert counts == (1, len(a.lines))  # the old row was updated, not doubled


def dashboard_totals(con: duckdb.DuckDBPyConnection) -> dict:
    cols = [r[0] for r in con.execute("DESCRIBE ELASTIC_K8S_METRICS").fetchall()]
    sql, params = m.totals(DUCKDB, RUN, m.MetricsColumns.resolve(cols))  # a Statement
    cur = con.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return dict(zip(names, cur.fetchone(), strict=True))


def test_the_dashboards_totals_read_the_summaries_and_the_windows_of_a_killed_worker():
    con = duckdb_with_landing_table()
    sink = make_sink(con)
    monitor = Monitor(RUN, sink, grace_s=0.0)
    a, b, killed = fleet_of(3)
    for w in (a, b):
        for line in w.lines:
            monitor.feed(line)
        monitor.feed(summary_of(w))
    monitor.flush(final=True)
    t = dashboard_totals(con)
    assert t["FROM_SUMMARIES"] is True and t["WORKERS"] == 2
    summed = [summary_of(w) for w in (a, b)]
    assert t["ROWS"] == sum(s["rows_generated"] for s in summed)  # not doubled by windows
    assert t["BYTES"] == sum(s["bytes_sent"] for s in summed)
    assert t["RESENDS"] == sum(s["resent_batches"] for s in summed)
    assert (t["SDK_RETRIES"], t["ERRORS"]) == (10, 2)
    # A worker killed without a summary: totals fall back to its windows, and lost is
    # not computed from them (FROM_SUMMARIES false).
    for line in killed.lines:
        monitor.feed(line)
    monitor.flush(final=True)
    t = dashboard_totals(con)
    assert t["FROM_SUMMARIES"] is False and t["WORKERS"] == 3
    assert t["ROWS"] == sum(s["rows_generated"] for s in summed) + sum(
        x["rows"] for x in killed.lines
    )
