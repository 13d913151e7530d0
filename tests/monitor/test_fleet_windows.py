"""Fleet windows (fleet/report.py): exact sums and merged-histogram percentiles."""

from __future__ import annotations

import random

import pytest
from monitor_support import EPOCH0, FakeWorker

from elastic_channels.fleet.report import aggregate_window, aggregate_windows
from elastic_channels.monitor import histogram


def fleet(n: int = 8, seconds: float = 11.0) -> list[FakeWorker]:
    rng = random.Random(5)
    workers = []
    for wid in range(n):
        w = FakeWorker("agg", wid, EPOCH0 + rng.uniform(0.0, 2.0), 5.0)
        while w.now < w.start + seconds:
            w.step(rng.uniform(0.1, 0.4), rng)
        w.finish()
        workers.append(w)
    return workers


def test_windows_group_by_wall_clock_start_and_sum_exactly():
    workers = fleet()
    lines = [x for w in workers for x in w.lines]
    out = aggregate_windows(lines)
    assert [f["window_start"] for f in out] == sorted({x["window_start"] for x in lines})
    for f in out:
        mine = [x for x in lines if x["window_start"] == f["window_start"]]
        assert f["workers"] == len(mine)
        for key in ("rows", "bytes", "acked_rows", "acks", "resent_batches", "errors"):
            assert f[key] == sum(x[key] for x in mine), key
        assert f["start"] == min(x["start"] for x in mine)
        assert f["end"] == max(x["end"] for x in mine)
        assert f["partial"] == any(x["partial"] for x in mine)
    assert out[0]["partial"] and out[-1]["partial"]  # the run's first and last windows


def test_percentiles_are_those_of_all_latencies_not_the_max_of_the_workers():
    workers = fleet(n=12)
    ws = EPOCH0 + 5.0
    mine = [x for w in workers for x in w.lines if x["window_start"] == ws]
    f = aggregate_window(mine)
    everything = histogram.new_histogram()
    raw = []
    for w in workers:
        for t, latency in w.latencies:
            if ws <= t < ws + 5.0:
                histogram.record_seconds(everything, latency)
                raw.append(latency)
    assert f["acks"] == len(raw)
    for q, key in ((50, "ack_p50_ms"), (95, "ack_p95_ms"), (99, "ack_p99_ms"), (100, "ack_max_ms")):
        assert f[key] == histogram.percentile_ms(everything, q), key
    assert f["ack_max_ms"] == pytest.approx(max(raw) * 1e3, rel=1e-3)
    assert max(x["ack_p99_ms"] for x in mine) != f["ack_p99_ms"]
    assert histogram.decode(f["ack_hist_us"]).get_total_count() == len(raw)


def test_mixed_windows_and_empty_input_are_refused():
    a, b = fleet(n=2)[0].lines[:2]
    with pytest.raises(ValueError, match="different window_start"):
        aggregate_window([a, b])
    with pytest.raises(ValueError, match="at least one"):
        aggregate_window([])


def test_a_bad_histogram_is_named():
    line = dict(fleet(n=1)[0].lines[1], ack_hist_us="HISTnot-base64!")
    with pytest.raises(histogram.HistogramError, match="cannot decode histogram"):
        aggregate_window([line])


def test_run_totals_merge_the_workers_whole_run_histograms():
    from elastic_channels.fleet.report import fleet_totals

    workers = fleet(n=6)
    summaries = [dict(w.summary(), append_mode="ffi", seconds=11.0) for w in workers]
    totals = fleet_totals(summaries)
    everything = histogram.new_histogram()
    for w in workers:
        for _, latency in w.latencies:
            histogram.record_seconds(everything, latency)
    assert totals["ack_p50_ms"] == histogram.percentile_ms(everything, 50)
    assert totals["ack_p99_ms"] == histogram.percentile_ms(everything, 99)
    assert totals["rows_sent"] == sum(s["rows_sent"] for s in summaries)
