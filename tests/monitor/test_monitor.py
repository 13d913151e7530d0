"""The Monitor's behaviours one at a time: writes, retries, ingest-to-visible, readback."""

from __future__ import annotations

import json
import random

import pytest
from monitor_support import EPOCH0, FakeWorker, duckdb_with_landing_table, make_sink

from elastic_channels.fleet.report import aggregate_window
from elastic_channels.monitor.monitor import Monitor, fleet_windows
from elastic_channels.monitor.sql_client import SqlError

RUN = "unit"


def two_workers(seconds: float = 12.0) -> list[FakeWorker]:
    rng = random.Random(7)
    workers = [FakeWorker(RUN, wid, EPOCH0 + 0.5 + wid, 5.0) for wid in range(2)]
    for w in workers:
        while w.now < w.start + seconds:
            w.step(0.25, rng)
        w.finish()
    return workers


def test_worker_rows_go_at_once_and_fleet_rows_when_complete():
    con = duckdb_with_landing_table()
    sink = make_sink(con)
    written = []
    monitor = Monitor(RUN, sink, grace_s=30.0, expected_workers=2, on_fleet=written.append)
    a, b = two_workers()
    monitor.feed(json.dumps(a.lines[0]))
    assert monitor.tick(now=EPOCH0 + 6) == 1  # worker 0's row; the fleet row waits
    assert [r["WORKER_ID"] for r in sink.read_rows(RUN)] == [0]
    monitor.feed(b.lines[0])
    assert monitor.tick(now=EPOCH0 + 6) == 2  # worker 1's row and the complete fleet row
    (fleet,) = fleet_windows(sink, RUN)
    assert fleet["workers"] == 2
    assert fleet["rows"] == a.lines[0]["rows"] + b.lines[0]["rows"]
    assert written and written[0]["window_start"] == EPOCH0
    # What was read back is what aggregate_window makes of the same lines.
    expected = aggregate_window([a.lines[0], b.lines[0]])
    for key in ("rows", "bytes", "acks", "ack_p50_ms", "ack_p99_ms", "behind_max_ms"):
        assert fleet[key] == expected[key], key


def test_a_line_seen_again_writes_nothing():
    sink = make_sink(duckdb_with_landing_table())
    monitor = Monitor(RUN, sink, grace_s=0.0)
    (w, _) = two_workers()
    monitor.feed(w.lines[0])
    assert monitor.tick(now=EPOCH0 + 100) == 2
    monitor.feed(json.dumps(w.lines[0]))
    assert monitor.tick(now=EPOCH0 + 100) == 0


class FlakySink:
    """Fails ``failures`` upserts, then passes to the real sink."""

    def __init__(self, sink, failures: int):
        self.sink, self.failures, self.calls = sink, failures, 0

    def upsert(self, rows):
        self.calls += 1
        if self.failures:
            self.failures -= 1
            raise SqlError("HTTP 503: try again")
        self.sink.upsert(rows)

    def __getattr__(self, name):
        return getattr(self.sink, name)


def test_a_failed_write_is_kept_and_retried():
    real = make_sink(duckdb_with_landing_table())
    flaky = FlakySink(real, failures=2)
    monitor = Monitor(RUN, flaky, grace_s=0.0)
    for w in two_workers():
        for line in w.lines:
            monitor.feed(line)
    assert monitor.tick(now=EPOCH0 + 100) == 0
    assert "503" in (monitor.last_error or "")
    assert monitor.flush(final=True) == 0  # still failing: nothing lost, nothing written
    assert monitor.pending() > 0
    written = monitor.flush(final=True)
    assert written > 0 and monitor.pending() == 0
    assert len(real.read_rows(RUN, fleet=False)) == sum(len(w.lines) for w in two_workers())


def test_ingest_to_visible_per_window_agrees_with_the_landed_rows():
    """Rows land with SALE_TIME and a commit time; each fleet window's p50/p99/avg of
    commit minus sale time equals a direct query of the rows committed in it."""
    con = duckdb_with_landing_table()
    rng = random.Random(3)
    landed = []
    for i in range(3000):
        sale = EPOCH0 + rng.uniform(0.0, 14.0)
        landed.append((RUN, i % 2, sale, sale + rng.uniform(0.05, 2.0)))
    landed.append(("other-run", 0, EPOCH0 + 1, EPOCH0 + 2))
    con.executemany(
        "INSERT INTO RESORT_SALES VALUES (?, ?, to_timestamp(?), to_timestamp(?))", landed
    )
    sink = make_sink(con)
    monitor = Monitor(RUN, sink, grace_s=0.0)
    for w in two_workers(seconds=15.0):
        for line in w.lines:
            monitor.feed(line)
    monitor.flush(final=True)
    direct = {
        ws: (n, p50, p99, avg)
        for ws, n, p50, p99, avg in con.execute(
            "SELECT floor(epoch_ms(_COMMIT_TIME) / 5000) * 5 AS ws, count(*), "
            "quantile_cont(d, 0.5) / 1e3, quantile_cont(d, 0.99) / 1e3, avg(d) / 1e3 FROM "
            "(SELECT _COMMIT_TIME, date_diff('microsecond', SALE_TIME, _COMMIT_TIME) AS d "
            f"FROM RESORT_SALES WHERE RUN_ID = '{RUN}') GROUP BY 1"
        ).fetchall()
    }
    fleet = fleet_windows(sink, RUN)
    assert {f["window_start"] for f in fleet} <= set(direct)
    assert sum(f["visible_rows"] for f in fleet) == sum(
        n for ws, (n, *_) in direct.items() if ws in {f["window_start"] for f in fleet}
    )
    for f in fleet:
        n, p50, p99, avg = direct[f["window_start"]]
        assert f["visible_rows"] == n
        assert f["visible_p50_ms"] == pytest.approx(p50, abs=1e-3)
        assert f["visible_p99_ms"] == pytest.approx(p99, abs=1e-3)
        assert f["visible_avg_ms"] == pytest.approx(avg, abs=1e-3)


def test_the_first_record_names_the_run_when_none_was_given():
    sink = make_sink(duckdb_with_landing_table())
    monitor = Monitor(None, sink, grace_s=0.0)
    assert monitor.flush(final=True) == 0  # nothing yet: nothing to do
    a, _ = two_workers()
    assert not monitor.feed("not a record")
    assert monitor.feed(a.lines[0])
    assert monitor.run_id == RUN
    other = dict(a.lines[1], run_id="other")
    assert not monitor.feed(other)
    assert (monitor.garbage_lines, monitor.other_run_lines) == (1, 1)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"ack_hist_us": "HISTgarbage"}, "ack_hist_us"),
        ({"rows": -1}, "'rows' must be an int >= 0"),
        ({"window_seconds": 0}, "'window_seconds' must be a number >= 0.001"),
        ({"end": EPOCH0 + 4.5}, "'end' is before 'start'"),
        ({"end": 0.0}, "'end' must be a number >= 946,684,800"),
        ({"worker_id": "7"}, "'worker_id' must be an int"),
        ({"window_start": None}, "'window_start' must be a number"),
        ({"cpu_pct": "abc"}, "'cpu_pct' must be a number"),
    ],
)
def test_a_malformed_record_is_skipped_with_its_reason(change, reason, caplog):
    sink = make_sink(duckdb_with_landing_table())
    monitor = Monitor(RUN, sink, grace_s=0.0)
    a, _ = two_workers()
    with caplog.at_level("DEBUG", logger="elastic_channels.monitor"):
        assert not monitor.feed(dict(a.lines[1], **change))
    assert monitor.garbage_lines == 1
    assert reason in caplog.text
    assert monitor.flush(final=True) == 0


def test_the_final_flush_waits_for_acked_rows_and_covers_every_commit():
    """Rows still committing after the workers' last window are counted in that window
    (no window is written after it: it would read 0 workers and 0 MB/s), so the fleet
    rows' visible counts add up to every landed row; and ``wait_visible`` waits until
    the rows the workers acknowledged are visible."""
    con = duckdb_with_landing_table()
    sink = make_sink(con)
    monitor = Monitor(RUN, sink, grace_s=0.0)
    workers = two_workers(seconds=9.0)
    for w in workers:
        for line in w.lines:
            monitor.feed(line)
        monitor.feed(dict(w.summary(), rows_acked=600))  # 1200 acknowledged in all
    last = max(x["window_start"] for w in workers for x in w.lines)
    commits = [last - 3.0 + 0.01 * i for i in range(1000)]  # up to 7 s after the last window
    con.executemany(
        "INSERT INTO RESORT_SALES VALUES (?, 0, to_timestamp(?), to_timestamp(?))",
        [(RUN, c - 1.0, c) for c in commits],
    )
    assert not monitor.wait_visible(timeout_s=0.2, poll_s=0.05)  # 1000 of 1200 visible
    con.executemany(
        "INSERT INTO RESORT_SALES VALUES (?, 1, to_timestamp(?), to_timestamp(?))",
        [(RUN, last + 9.0, last + 10.0)] * 200,
    )
    assert monitor.wait_visible(timeout_s=5, poll_s=0.05)
    monitor.flush(final=True)
    fleet = fleet_windows(sink, RUN)
    assert sum(f["visible_rows"] for f in fleet) == 1200
    assert [f for f in fleet if f["window_start"] > last] == []
    assert all(f["workers"] > 0 for f in fleet)
    # the last window: its own commits and every later one (700 of the first 1000: those
    # at or after its start; and the 200 at last + 10 s), each 1 s after its send time
    (final,) = [f for f in fleet if f["window_start"] == last]
    assert final["visible_rows"] == 900
    assert final["visible_p50_ms"] == pytest.approx(1000.0)


def test_rows_that_became_visible_late_are_counted_at_the_final_flush():
    """A landing transaction's commit time is when it began: its rows can appear after
    the window they belong to was read. The final flush reads every window again."""
    con = duckdb_with_landing_table()
    sink = make_sink(con)
    monitor = Monitor(RUN, sink, grace_s=0.0, settle_s=1.0)
    workers = two_workers(seconds=9.0)
    for w in workers:
        for line in w.lines:
            monitor.feed(line)
    first = min(x["window_start"] for w in workers for x in w.lines)
    monitor.tick(now=first + 100)  # every window written and read, long settled
    assert {f["visible_rows"] for f in fleet_windows(sink, RUN)} == {0}
    con.executemany(
        "INSERT INTO RESORT_SALES VALUES (?, 0, to_timestamp(?), to_timestamp(?))",
        [(RUN, first + 1.0, first + 2.0)] * 50,
    )
    monitor.flush(final=True)
    by_start = {f["window_start"]: f["visible_rows"] for f in fleet_windows(sink, RUN)}
    assert by_start[first] == 50
    assert sum(by_start.values()) == 50


def test_a_worker_that_never_connected_is_not_waited_for():
    """Its summary comes without any window: windows stop expecting it at once."""
    sink = make_sink(duckdb_with_landing_table())
    monitor = Monitor(RUN, sink, grace_s=1000.0, expected_workers=3)
    a, b = two_workers()
    monitor.feed({"type": "summary", "run_id": RUN, "worker_id": 2, "error": "connect",
                  "rows_sent": 0, "rows_acked": 0})  # fmt: skip
    monitor.feed(a.lines[1])
    monitor.feed(b.lines[1])
    monitor.tick(now=a.lines[1]["end"] + 1.0)  # long before the grace period ends
    (fleet,) = fleet_windows(sink, RUN)
    assert fleet["workers"] == 2


def test_on_fleet_hears_each_window_once_unless_a_line_changes_it():
    sink = make_sink(duckdb_with_landing_table())
    heard: list[float] = []
    monitor = Monitor(RUN, sink, grace_s=0.0, on_fleet=lambda f: heard.append(f["window_start"]))
    a, b = two_workers()
    for line in a.lines:
        monitor.feed(line)
    monitor.tick(now=EPOCH0 + 1000)
    assert heard == sorted(x["window_start"] for x in a.lines)
    monitor.flush(final=True)  # visible read again for all: nothing new to hear
    assert len(heard) == len(a.lines)
    monitor.feed(b.lines[0])  # a late line changes one window
    monitor.tick(now=EPOCH0 + 1000)
    assert heard[len(a.lines) :] == [b.lines[0]["window_start"]]


def _states(sink) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for r in sink.read_rows(RUN, fleet=False):
        out.setdefault(int(r["WORKER_ID"]), []).append(r["WORKER_STATE"])
    return out


def test_the_last_window_of_a_worker_says_how_it_ended():
    """done after a clean summary, failed after one with an error; a worker with no
    summary (killed) stays running on every row."""
    sink = make_sink(duckdb_with_landing_table())
    monitor = Monitor(RUN, sink, grace_s=0.0)
    a, b = two_workers()
    c = FakeWorker(RUN, 2, EPOCH0 + 0.5, 5.0)
    rng = random.Random(3)
    while c.now < c.start + 8:
        c.step(0.25, rng)
    for line in a.lines + b.lines + c.lines:
        monitor.feed(line)
    monitor.tick(now=EPOCH0 + 100)
    assert set(_states(sink)[0]) == {"running"}
    monitor.feed(a.summary())
    monitor.feed(dict(b.summary(), error="channel invalidated"))
    monitor.tick(now=EPOCH0 + 100)
    states = _states(sink)
    assert states[0] == ["running"] * (len(a.lines) - 1) + ["done"]
    assert states[1] == ["running"] * (len(b.lines) - 1) + ["failed"]
    assert set(states[2]) == {"running"}


def test_a_metrics_table_made_before_worker_state_gets_the_column():
    from elastic_channels.monitor.sql_client import SqlApiClient, local_transport
    from elastic_channels.snowflake.ddl import METRICS_COLUMNS

    con = duckdb_with_landing_table()
    old = ", ".join(f'"{n}" {t}' for n, t in METRICS_COLUMNS if n != "WORKER_STATE")
    SqlApiClient(local_transport(con)).execute(f"CREATE TABLE ELASTIC_K8S_METRICS ({old})")
    sink = make_sink(con)
    monitor = Monitor(RUN, sink, grace_s=0.0)
    (a, _) = two_workers()
    monitor.feed(a.lines[0])
    monitor.feed(a.summary())
    assert monitor.tick(now=EPOCH0 + 100) >= 1
    assert [r["WORKER_STATE"] for r in sink.read_rows(RUN, fleet=False)] == ["done"]
