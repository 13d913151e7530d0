"""The monitor's memory stays bounded over a long run: written windows are pruned to a
stub, a line seen again of one changes nothing (without a query), and a late line of
one reads its lines back and updates its rows, never adding a second."""

from __future__ import annotations

import random
from typing import Any

import pytest
from monitor_support import EPOCH0, FakeWorker, duckdb_with_landing_table, make_sink

from elastic_channels.monitor.monitor import Monitor
from elastic_channels.monitor.pruning import LATE_MARGIN_S, line_digest

RUN = "long-run"
WINDOWS = 2000
WORKERS = 3
LOST = (2, 7)  # worker 2's line of window 7 does not come until the run is over


class CountingClient:
    """The sink's SQL client, counting the statements run through it."""

    def __init__(self, client: Any) -> None:
        self.client, self.statements = client, []

    def execute(self, statement: str, params: Any = ()) -> Any:
        self.statements.append(statement)
        return self.client.execute(statement, params)


@pytest.fixture(scope="module")
def lines() -> list[list[dict[str, Any]]]:
    """Each worker's window lines, without their histograms: what is held matters here,
    and reading percentiles off merged histograms costs ~6 ms a window."""
    rng = random.Random(2000)
    out = []
    for wid in range(WORKERS):
        w = FakeWorker(RUN, wid, EPOCH0, 1.0)
        while w.now < w.start + WINDOWS - 0.5:
            w.step(0.5, rng)
        w.finish()
        out.append([{k: v for k, v in x.items() if not k.endswith("_hist_us")} for x in w.lines])
    return out


def fleet_rows(sink: Any) -> dict[float, dict[str, Any]]:
    rows = sink.read_rows(RUN, fleet=True)
    assert len({r["WINDOW_START"] for r in rows}) == len(rows)  # one row per window
    return {r["WINDOW_START"].timestamp(): r for r in rows}


def test_a_long_run_holds_a_bounded_number_of_windows(lines):
    sink = make_sink(duckdb_with_landing_table())
    monitor = Monitor(RUN, sink, grace_s=2.0, expected_workers=WORKERS, visible=False)
    most_held = 0
    for i in range(WINDOWS):
        for wid in range(WORKERS):
            if (wid, i) != LOST:
                monitor.feed(lines[wid][i])
        if i % 20 == 19:
            monitor.tick(now=lines[0][i]["end"] + 0.5)
            most_held = max(most_held, len(monitor.book.windows))
    # Held in full: the windows of the grace period, the margin and a tick's worth.
    assert most_held <= 2.0 + LATE_MARGIN_S + 20 + 2
    assert len(monitor.book.archive) >= WINDOWS - most_held
    window = {wid: {x["window_start"]: x for x in ls} for wid, ls in enumerate(lines)}
    ws7 = lines[0][7]["window_start"]
    before = fleet_rows(sink)
    assert before[ws7]["WORKERS_REPORTING"] == 2 and len(before) == WINDOWS

    later = lines[0][-1]["end"] + 100  # every window written, final, and pruned
    monitor.tick(now=later)
    assert monitor.book.windows == {} and len(monitor.book.archive) == WINDOWS

    # A reconnect replays an old stretch of a log: the lines are the ones written.
    counting = CountingClient(sink.client)
    sink.client = counting
    for line in lines[0][:50]:
        monitor.feed(line)
    assert monitor.tick(now=later + 1) == 0
    assert counting.statements == []  # known by their digests: not even a read

    # The lost line comes at last, and worker 1's window 9 comes again, changed.
    monitor.feed(lines[2][7])
    changed = dict(lines[1][9], rows=lines[1][9]["rows"] + 1000, errors=1)
    monitor.feed(changed)
    assert monitor.tick(now=later + 2) == 4  # 2 worker rows + 2 fleet rows
    assert len(counting.statements) == 2 + 1  # a read of each window, one MERGE
    after = fleet_rows(sink)
    assert len(after) == WINDOWS
    assert after[ws7]["WORKERS_REPORTING"] == 3
    assert after[ws7]["ROWS_APPENDED"] == sum(window[w][ws7]["rows"] for w in range(WORKERS))
    ws9 = changed["window_start"]
    assert after[ws9]["ROWS_APPENDED"] == before[ws9]["ROWS_APPENDED"] + 1000
    assert after[ws9]["ERRORS"] == before[ws9]["ERRORS"] + 1
    worker_rows = sink.read_rows(RUN, fleet=False)
    assert len(worker_rows) == WINDOWS * WORKERS  # updated in place, none added
    (row,) = [r for r in worker_rows if (r["WORKER_ID"], r["WINDOW_START"].timestamp()) == (1, ws9)]
    assert row["ROWS_APPENDED"] == changed["rows"]

    sink.client = counting.client
    monitor.flush(final=True)
    assert monitor.pending() == 0 and monitor.last_error is None
    final = fleet_rows(sink)
    assert len(final) == WINDOWS
    for ws, r in final.items():
        lines_of = [window[w][ws] for w in range(WORKERS)]
        assert r["ROWS_APPENDED"] == sum(x["rows"] for x in lines_of) + (1000 if ws == ws9 else 0)
        assert r["BYTES_APPENDED"] == sum(x["bytes"] for x in lines_of)


def test_the_final_flush_rereads_visible_of_pruned_windows_and_a_restart_prunes(lines):
    con = duckdb_with_landing_table()
    sink = make_sink(con)
    first = Monitor(RUN, sink, grace_s=2.0, expected_workers=WORKERS, prune_after_s=5.0)
    for i in range(100):
        for wid in range(WORKERS):
            first.feed(lines[wid][i])
    end = lines[0][99]["end"]
    first.tick(now=end + 10)
    assert len(first.book.windows) <= 6 and len(first.book.archive) >= 94
    before = fleet_rows(sink)
    ws3 = lines[0][3]["window_start"]
    assert before[ws3]["INGEST_TO_VISIBLE_ROWS"] == 0
    # Rows of window 3 become visible late (a large landing transaction).
    landed = [(RUN, 0, ws3 + 0.1 * k, ws3 + 0.1 * k + 0.2) for k in range(8)]
    con.executemany(
        "INSERT INTO RESORT_SALES VALUES (?, ?, to_timestamp(?), to_timestamp(?))", landed
    )
    first.flush(final=True)
    assert first.pending() == 0 and first.last_error is None
    after = fleet_rows(sink)
    assert after.keys() == before.keys()
    assert after[ws3]["INGEST_TO_VISIBLE_ROWS"] == 8
    assert after[ws3]["INGEST_TO_VISIBLE_P50_MS"] == pytest.approx(200.0, abs=0.01)
    for ws, r in after.items():  # the rest of each row as it was
        for column in ("WORKERS_REPORTING", "ROWS_APPENDED", "BYTES_APPENDED", "ACKS"):
            assert r[column] == before[ws][column], (ws, column)

    second = Monitor(RUN, sink, grace_s=2.0, expected_workers=WORKERS, prune_after_s=5.0)
    assert second.resume() == 100 * (WORKERS + 1)
    second.tick(now=end + 20)
    assert len(second.book.windows) == 0 and len(second.book.archive) == 100
    for wid in range(WORKERS):  # the logs again from the start: nothing to write
        for line in lines[wid][:100]:
            second.feed(line)
    assert second.tick(now=end + 21) == 0
    assert len(sink.read_rows(RUN, summary=None)) == 100 * (WORKERS + 1)


def test_line_digests_tell_changed_lines_apart():
    line = {"window_start": 10.0, "rows": 3, "p50": 1.5, "hist": "HISTFAAA"}
    assert line_digest(line) == line_digest(dict(line, window_start=10))  # as a VARIANT may
    assert line_digest(line) == line_digest(dict(reversed(line.items())))
    assert line_digest(line) != line_digest(dict(line, rows=4))
    assert line_digest(line) != line_digest(dict(line, p50=1.5000001))
