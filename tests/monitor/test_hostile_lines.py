"""One worker line with a mistyped or out-of-range field, too big or too deep, among
the clean lines of other workers: it is skipped and counted for its worker, a warning
names the field, and every clean row is written (none waits on it, nothing crashes)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from hostile_support import (
    RUN,
    clean_lines,
    histogram_holding,
    inflating_histogram,
    victim_line,
)
from monitor_support import EPOCH0, duckdb_with_landing_table, make_sink

from elastic_channels.monitor.monitor import Monitor, fleet_windows


def spoiled(**change: Any) -> str:
    return json.dumps(dict(victim_line(), **change))


def deeply_nested() -> str:
    """A worker line with a field of 100,000 nested arrays."""
    text = json.dumps(victim_line())
    return text[:-1] + ', "deep": ' + "[" * 100_000 + "]" * 100_000 + "}"


#: (line, the worker it is counted for, words the warning says)
CASES = {
    "cpu_pct text": (lambda: spoiled(cpu_pct="abc"), 0, "'cpu_pct'"),
    "in_flight_bytes text": (lambda: spoiled(in_flight_bytes="x"), 0, "'in_flight_bytes'"),
    "window_start 1e18": (lambda: spoiled(window_start=1e18), 0, "'window_start'"),
    "histogram value 1e12 us": (
        lambda: spoiled(ack_hist_us=histogram_holding(10**12)),
        0,
        "'ack_hist_us'",
    ),
    "histogram value above an hour": (
        lambda: spoiled(behind_hist_us=histogram_holding(4_000_000_000, 3_600_000_000)),
        0,
        "'behind_hist_us'",
    ),
    "histogram that inflates to 64 MB": (
        lambda: spoiled(ack_hist_us=inflating_histogram(64 << 20)),
        0,
        "'ack_hist_us'",
    ),
    "100,000 nested [": (deeply_nested, 0, "nested"),
    "mb_per_s text": (lambda: spoiled(mb_per_s="fast"), 0, "'mb_per_s'"),
    "rows 10**30": (lambda: spoiled(rows=10**30), 0, "'rows'"),
    "worker_id 2**40": (lambda: spoiled(worker_id=2**40), None, "'worker_id'"),
    "pod_name of 10 MB": (lambda: spoiled(pod_name="p" * (10 << 20)), 0, "bytes"),
    "pod_name of 1,000 characters": (lambda: spoiled(pod_name="p" * 1000), 0, "'pod_name'"),
    "NaN in a field of its own": (
        lambda: json.dumps(victim_line())[:-1] + ', "extra": NaN}',
        0,
        "'extra'",
    ),
    "end before its window": (lambda: spoiled(start=EPOCH0 - 3600.0), 0, "'start'"),
    "stage -2": (lambda: spoiled(stage=-2), 0, "'stage'"),
    "stage 2.5": (lambda: spoiled(stage=2.5), 0, "'stage'"),
    "warmup text": (lambda: spoiled(warmup="yes"), 0, "'warmup'"),
    "target_bps below 0": (lambda: spoiled(target_bps=-1.0), 0, "'target_bps'"),
    "scenario of 100 characters": (lambda: spoiled(scenario="s" * 100), 0, "'scenario'"),
    "summary with a bad stage total": (
        lambda: json.dumps(
            {
                "type": "summary",
                "run_id": RUN,
                "worker_id": 0,
                "stages": [{"stage": 0, "rows": 1}, {"stage": 1, "rows": "many"}],
            }
        ),
        0,
        "'stages' [1] 'rows'",
    ),
    "summary with text rows": (
        lambda: json.dumps({"type": "summary", "run_id": RUN, "worker_id": 0, "rows_acked": "x"}),
        0,
        "'rows_acked'",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_line_is_skipped_counted_and_blocks_nothing(case: str, caplog) -> None:
    make_line, worker, words = CASES[case]
    bad = make_line()
    clean = clean_lines()
    sink = make_sink(duckdb_with_landing_table())
    monitor = Monitor(RUN, sink, grace_s=0.0, visible=False)
    with caplog.at_level(logging.WARNING, logger="elastic_channels.monitor"):
        for i, line in enumerate(clean):
            if i == 5:
                assert not monitor.feed(bad)
            assert monitor.feed(json.dumps(line))
        monitor.tick(now=EPOCH0 + 12.0)  # mid-run: what is due by then
        monitor.flush(final=True)
    assert monitor.garbage_lines == 1
    assert dict(monitor.tally.bad_lines) == {worker: 1}
    assert monitor.pending() == 0, monitor.last_error
    held = sink.read_rows(RUN, fleet=False)
    written = {(r["WORKER_ID"], r["WINDOW_START"].timestamp()) for r in held}
    assert written == {(x["worker_id"], x["window_start"]) for x in clean}
    fleet = fleet_windows(sink, RUN)
    assert sum(f["rows"] for f in fleet) == sum(x["rows"] for x in clean)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any(words in m for m in warnings), warnings
    assert all(len(m) < 2000 for m in warnings)  # a 10 MB value is not logged whole


def test_bad_lines_are_counted_per_worker_and_logged_a_few_times_each(caplog) -> None:
    sink = make_sink(duckdb_with_landing_table())
    monitor = Monitor(RUN, sink, grace_s=0.0, visible=False)
    with caplog.at_level(logging.WARNING, logger="elastic_channels.monitor"):
        for _ in range(50):
            monitor.feed(spoiled(cpu_pct="abc"))
        for _ in range(3):
            monitor.feed(json.dumps(dict(victim_line(7), rows=-1)))
        monitor.feed("INFO sdk: an SDK log line, not a worker record")
    assert dict(monitor.tally.bad_lines) == {0: 50, 7: 3}
    assert monitor.garbage_lines == 54
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert 5 <= sum("worker 0" in m for m in logged) <= 6  # the first few, then a note
    assert sum("worker 7" in m for m in logged) == 3
    assert not any("SDK log line" in m for m in logged)  # noise is not a bad line
    report = "\n".join(monitor.tally.report())
    assert "53 bad worker line(s)" in report
    assert "worker 0: 50" in report and "worker 7: 3" in report


def test_a_line_of_another_run_is_not_a_bad_line() -> None:
    sink = make_sink(duckdb_with_landing_table())
    monitor = Monitor(RUN, sink, grace_s=0.0, visible=False)
    assert not monitor.feed(json.dumps(dict(victim_line(), run_id="other", cpu_pct="abc")))
    assert monitor.other_run_lines == 1 and not monitor.tally.bad_lines


def test_a_dict_fed_in_process_is_checked_alike() -> None:
    """``elastic-channels run`` feeds the workers' lines as dicts."""
    sink = make_sink(duckdb_with_landing_table())
    monitor = Monitor(RUN, sink, grace_s=0.0, visible=False)
    assert not monitor.feed(dict(victim_line(), cpu_pct="abc"))
    assert not monitor.feed(dict(victim_line(), extra=float("inf")))
    assert not monitor.feed(dict(victim_line(), extra=object()))
    assert dict(monitor.tally.bad_lines) == {0: 3}
    assert monitor.feed(victim_line())
