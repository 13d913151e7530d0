"""A replay of 455 workers' lines through the monitor, into the real metrics sink.

The lines are made by the worker's own Meter (fake clocks, seeded random latencies)
and arrive the way a cluster delivers them: out of order, the first part of some pods'
logs again after a reconnect, one worker dying mid-window (no more lines, no summary),
and garbage between them (the SDK's log lines, a cut-off line, another run's lines).
The table must end up with exactly one row per worker per window and one fleet row per
window, whose sums are exact and whose percentiles are those of all the raw latencies.
"""

from __future__ import annotations

import json
import math
import random

import pytest
from monitor_support import EPOCH0, FakeWorker, duckdb_with_landing_table, make_sink

from elastic_channels.monitor import histogram
from elastic_channels.monitor.monitor import Monitor

WORKERS = 455
WINDOW_S = 5.0
RUN = "replay-455"
DEAD = 17  # dies 11.3 s in: in the middle of its third window
SEED = 455


def build_fleet(seed: int = SEED) -> tuple[list[FakeWorker], list[str]]:
    rng = random.Random(seed)
    workers = []
    for wid in range(WORKERS):
        w = FakeWorker(RUN, wid, EPOCH0 + 1.0 + rng.uniform(0, 3.0), WINDOW_S)
        life = 11.3 if wid == DEAD else 20.0
        t = 0.0
        while t < life:
            step = rng.uniform(0.2, 0.6)
            w.step(step, rng)
            t += step
        if wid != DEAD:
            w.finish()
        workers.append(w)
    garbage = [
        "2026-01-01T00:00:03Z WARN snowpipe_streaming: retrying request",
        '{"type": "window", "run_id": "replay-455", "worker_id": 3, "window_st',
        json.dumps({"type": "window", "run_id": RUN, "worker_id": -1}),
        json.dumps({"type": "heartbeat", "run_id": RUN, "worker_id": 4}),
        "",
        "\x00\x01 binary noise",
    ]
    return workers, garbage


def delivery(
    workers: list[FakeWorker], garbage: list[str], seed: int = SEED
) -> tuple[list[str], list[float]]:
    """Every line once in the order of its window's end plus a random delay of up to 4 s
    (so out of order), the first half of every 10th pod's log again (a reconnect), the
    garbage between them, and every summary."""
    rng = random.Random(seed + 1)
    timed: list[tuple[float, str]] = []
    for w in workers:
        for line in w.lines:
            timed.append((line["end"] + rng.uniform(0.0, 4.0), json.dumps(line)))
        if w.worker_id % 10 == 0:  # reconnect: the log again from its start
            again = w.lines[: len(w.lines) // 2 + 1]
            timed += [(w.lines[-1]["end"] + 1.0, json.dumps(x)) for x in again]
        if w.worker_id != DEAD:
            timed.append((w.lines[-1]["end"] + 0.5, json.dumps(w.summary())))
    for i, g in enumerate(garbage * 5):
        timed.append((EPOCH0 + 2.0 + i, g))
    other = dict(workers[1].lines[0], run_id="another-run")
    timed.append((EPOCH0 + 9.0, json.dumps(other)))
    timed.sort(key=lambda x: x[0])
    return [line for _, line in timed], [t for t, _ in timed]


def oracle(workers: list[FakeWorker]) -> dict[float, dict]:
    """Per window start: the workers reporting, rows, and a histogram of every raw latency."""
    out: dict[float, dict] = {}
    for w in workers:
        for line in w.lines:
            o = out.setdefault(
                line["window_start"],
                {"workers": set(), "rows": 0, "raw": [], "hist": histogram.new_histogram()},
            )
            o["workers"].add(w.worker_id)
            o["rows"] += line["rows"]
        reported = {line["window_start"] for line in w.lines}
        for t, latency in w.latencies:
            ws = math.floor(t / WINDOW_S) * WINDOW_S
            if ws not in reported:
                continue  # the dead worker's last window never reached anyone
            out[ws]["raw"].append(latency)
            histogram.record_seconds(out[ws]["hist"], latency)
    return out


@pytest.fixture(scope="module")
def fleet():
    return build_fleet()


def replay(monitor: Monitor, lines: list[str], times: list[float], tick_every: int = 400) -> None:
    for i, line in enumerate(lines):
        t = times[i]
        monitor.feed(line)
        if i % tick_every == 0:
            monitor.tick(now=t)


def test_replay_writes_exactly_one_row_per_worker_window_and_per_fleet_window(fleet):
    workers, garbage = fleet
    lines, times = delivery(workers, garbage)
    con = duckdb_with_landing_table()
    sink = make_sink(con)
    monitor = Monitor(RUN, sink, grace_s=6.0, expected_workers=WORKERS)
    replay(monitor, lines, times)
    monitor.flush(final=True)
    assert monitor.pending() == 0

    assert monitor.garbage_lines == len(garbage) * 5
    assert monitor.other_run_lines == 1
    rows = sink.read_rows(RUN)
    worker_rows = [r for r in rows if not r["IS_FLEET"]]
    fleet_rows = [r for r in rows if r["IS_FLEET"]]
    emitted = {(w.worker_id, line["window_start"]): line for w in workers for line in w.lines}
    assert len(worker_rows) == len(emitted)  # no duplicates from the reconnects
    keys = {(r["WORKER_ID"], r["WINDOW_START"].timestamp()) for r in worker_rows}
    assert keys == set(emitted)
    for r in worker_rows:
        line = emitted[(r["WORKER_ID"], r["WINDOW_START"].timestamp())]
        assert (r["ROWS_APPENDED"], r["BYTES_APPENDED"]) == (line["rows"], line["bytes"])
        assert r["RAW"] == line
        assert r["WORKERS_REPORTING"] == 1

    expected = oracle(workers)
    assert sorted(r["WINDOW_START"].timestamp() for r in fleet_rows) == sorted(expected)
    for r in fleet_rows:
        o = expected[r["WINDOW_START"].timestamp()]
        assert r["WORKERS_REPORTING"] == len(o["workers"])
        assert r["ROWS_APPENDED"] == o["rows"]
        assert r["ACKS"] == len(o["raw"])
        # Percentiles of the merged histograms are those of every raw latency together
        # (exactly, against a histogram of the raw values; to HdrHistogram's 3 digits
        # against the raw values at HdrHistogram's rank, round(q% of n)).
        raw = sorted(o["raw"])
        for q, col in ((50, "ACK_LATENCY_P50_MS"), (99, "ACK_LATENCY_P99_MS")):
            assert r[col] == histogram.percentile_ms(o["hist"], q)
            rank = max(1, int(q / 100 * len(raw) + 0.5))
            assert r[col] == pytest.approx(raw[rank - 1] * 1e3, rel=1e-3, abs=1e-3)
        # ... which the largest of the workers' own p99s is not, in general
        by_worker = [
            line["ack_p99_ms"]
            for w in workers
            for line in w.lines
            if line["window_start"] == r["WINDOW_START"].timestamp() and line["acks"]
        ]
        assert max(by_worker) > r["ACK_LATENCY_P99_MS"]
        assert r["INGEST_TO_VISIBLE_ROWS"] == 0  # nothing landed in this replay
    # The dead worker is in its windows up to the one it died in, and in none after.
    died_in = max(line["window_start"] for line in workers[DEAD].lines)
    for r in fleet_rows:
        ws = r["WINDOW_START"].timestamp()
        assert (DEAD in expected[ws]["workers"]) == (ws <= died_in)
    assert died_in < max(r["WINDOW_START"].timestamp() for r in fleet_rows)
    # One summary row per worker that printed its summary (the reconnects did not double
    # them), with its whole-run rows; none for the dead worker.
    summaries = sink.read_rows(RUN, summary=True)
    assert sorted(r["WORKER_ID"] for r in summaries) == [w for w in range(WORKERS) if w != DEAD]
    for r in summaries:
        lines = workers[r["WORKER_ID"]].lines
        assert r["ROWS_APPENDED"] == sum(x["rows"] for x in lines)
        assert r["WINDOW_END"].timestamp() == lines[-1]["end"]


def test_a_window_waits_for_its_workers_then_for_the_grace_period(fleet):
    workers, _ = fleet
    con = duckdb_with_landing_table()
    sink = make_sink(con)
    monitor = Monitor(RUN, sink, grace_s=6.0, expected_workers=WORKERS)
    # The window [EPOCH0+10, +15) from everyone who reported it but workers 3 and 4.
    ws = EPOCH0 + 10.0
    late = {3, 4}
    for w in workers:
        for line in w.lines:
            if line["window_start"] == ws and w.worker_id not in late:
                monitor.feed(line)
    monitor.tick(now=ws + WINDOW_S + 1.0)
    assert sink.read_rows(RUN, fleet=True) == []  # waiting for workers 3 and 4
    monitor.tick(now=ws + WINDOW_S + 6.0)  # the grace period is over: written without them
    (row,) = sink.read_rows(RUN, fleet=True)
    reported = sum(1 for w in workers for x in w.lines if x["window_start"] == ws)
    assert row["WORKERS_REPORTING"] == reported - len(late)
    # The late lines come: the same fleet row is updated, not a second one added.
    for w in workers:
        if w.worker_id in late:
            monitor.feed(next(x for x in w.lines if x["window_start"] == ws))
    monitor.tick(now=ws + WINDOW_S + 7.0)
    (row,) = sink.read_rows(RUN, fleet=True)
    assert row["WORKERS_REPORTING"] == reported
    assert row["ROWS_APPENDED"] == sum(
        x["rows"] for w in workers for x in w.lines if x["window_start"] == ws
    )


def test_a_restarted_monitor_reading_the_logs_again_counts_nothing_twice(fleet):
    workers, garbage = fleet
    lines, times = delivery(workers, garbage)
    con = duckdb_with_landing_table()
    sink = make_sink(con)
    first = Monitor(RUN, sink, grace_s=6.0, expected_workers=WORKERS)
    # It crashes once half the workers have printed their summary.
    ends = [i for i, line in enumerate(lines) if '"type": "summary"' in line]
    half = ends[len(ends) // 2]
    replay(first, lines[:half], times[:half])
    first.tick(now=times[half])  # then it crashes: no final flush
    written_before = len(sink.read_rows(RUN, summary=None))
    assert written_before > len(sink.read_rows(RUN)) > 0  # summary rows among them

    second = Monitor(RUN, sink, grace_s=6.0, expected_workers=WORKERS)
    assert second.resume() == written_before
    replay(second, lines, times)  # the logs from their start again
    second.flush(final=True)

    one_pass = make_sink(duckdb_with_landing_table())
    clean = Monitor(RUN, one_pass, grace_s=6.0, expected_workers=WORKERS)
    replay(clean, lines, times)
    clean.flush(final=True)

    def comparable(rows):
        skip = {"INSERTED_AT", "UPDATED_AT"}
        return sorted(
            (tuple((k, v) for k, v in r.items() if k not in skip) for r in rows), key=repr
        )

    assert comparable(sink.read_rows(RUN, summary=None)) == comparable(
        one_pass.read_rows(RUN, summary=None)
    )
