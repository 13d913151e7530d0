"""A row the target refuses is set aside with its reason (counted, logged), the rows
beside it in its statement are written, and it is not tried again every tick; a
statement is sized to what the target takes; a target that fails as a whole (down,
the table gone) keeps every row for the next try."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import duckdb
from hostile_support import RUN, clean_lines, victim_line
from monitor_support import EPOCH0, duckdb_with_landing_table, make_sink, sql_api_server
from test_cli import monitor_cli, write_profile

from elastic_channels.monitor import rows
from elastic_channels.monitor.monitor import Monitor
from elastic_channels.monitor.sink import SqlMetricsSink
from elastic_channels.monitor.sql_client import SqlApiClient, local_transport
from elastic_channels.monitor.target import profile_sink

POISON = "pod-poison"


class RefusingTarget:
    """The SQL API on ``con``, but a MERGE binding ``POISON`` is refused as Snowflake
    refuses a value it cannot store (HTTP 422); counts the statements that carried it."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.inner = local_transport(con)
        self.poisoned_merges = 0
        self.merges = 0

    def __call__(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        if body and str(body.get("statement", "")).startswith("MERGE"):
            self.merges += 1
            values = [b.get("value") for b in (body.get("bindings") or {}).values()]
            if POISON in values:
                self.poisoned_merges += 1
                return 422, {"code": "100038", "sqlState": "22018",
                             "message": f"Numeric value '{POISON}' is not recognized"}  # fmt: skip
        return self.inner(method, path, body)


def test_the_sink_isolates_the_row_the_target_refuses() -> None:
    con = duckdb_with_landing_table()
    sink = make_sink(con)
    good = [rows.worker_row(x) for x in clean_lines()]
    bad = rows.worker_row(dict(victim_line(), mb_per_s="fast"))  # past the line checks
    refused = sink.upsert([*good[:5], bad, *good[5:]])
    assert [r.row for r in refused] == [bad]
    assert "fast" in refused[0].reason
    assert len(sink.read_rows(RUN, fleet=False)) == len(good)


def test_a_refused_row_is_set_aside_not_retried_with_its_chunk(caplog) -> None:
    target = RefusingTarget(duckdb_with_landing_table())
    sink = SqlMetricsSink(SqlApiClient(target))
    sink.ensure_table()
    monitor = Monitor(RUN, sink, grace_s=0.0, visible=False)
    clean = clean_lines()
    with caplog.at_level(logging.WARNING, logger="elastic_channels.monitor"):
        for line in clean:
            monitor.feed(json.dumps(line))
        monitor.feed(victim_line(5), pod_name=POISON)
        assert monitor.tick(now=EPOCH0 + 100) > 0
    assert target.poisoned_merges >= 2  # its chunk, then the part that held it, ...
    poisoned = target.poisoned_merges
    assert monitor.tally.refused_rows == {5: 1}
    assert any(POISON in r.getMessage() and "worker 5" in r.getMessage()
               for r in caplog.records if r.levelno >= logging.WARNING)  # fmt: skip
    held = sink.read_rows(RUN, fleet=False)
    written = {(r["WORKER_ID"], r["WINDOW_START"].timestamp()) for r in held}
    assert written == {(x["worker_id"], x["window_start"]) for x in clean}
    for _ in range(3):
        monitor.tick(now=EPOCH0 + 100)
    monitor.flush(final=True)
    assert target.poisoned_merges == poisoned  # never tried again
    assert monitor.pending() == 0
    assert "1 row(s) refused by the target" in "\n".join(monitor.tally.report())


def test_a_target_that_fails_as_a_whole_keeps_every_row() -> None:
    """The table dropped under the monitor: every MERGE is refused, and so is the probe
    of the table, so nothing is set aside; once it is back every row is written."""
    con = duckdb_with_landing_table()
    sink = make_sink(con)
    monitor = Monitor(RUN, sink, grace_s=0.0, visible=False)
    clean = clean_lines()
    for line in clean:
        monitor.feed(line)
    con.execute("DROP TABLE ELASTIC_K8S_METRICS")
    assert monitor.tick(now=EPOCH0 + 100) == 0
    assert monitor.pending() > 0 and not monitor.tally.refused_rows
    sink.ensure_table()
    monitor.flush(final=True)
    assert monitor.pending() == 0 and not monitor.tally.refused_rows
    assert len(sink.read_rows(RUN, fleet=False)) == len(clean)


def test_statements_fit_the_targets_request_size(tmp_path: Path) -> None:
    """Lines with a 20 kB field of their own (kept in RAW): 300 of them do not fit in
    one 100-row statement under the emulator's 1 MiB request cap; every row is written."""
    con = duckdb.connect()
    with sql_api_server(con, max_body=1 << 20) as (url, pem):
        sink = profile_sink(write_profile(tmp_path, url, pem))
        sink.ensure_table()
        monitor = Monitor(RUN, sink, grace_s=0.0, visible=False)
        lines = [dict(line, worker_id=wid, note="n" * 20_000)
                 for wid in range(100) for line in clean_lines(3, (1,))]  # fmt: skip
        for line in lines:
            monitor.feed(line)
        monitor.flush(final=True)
        assert monitor.pending() == 0, monitor.last_error
        assert not monitor.tally.refused_rows
        assert len(sink.read_rows(RUN, fleet=False)) == len(lines) == 300


def test_the_command_reports_what_it_skipped_and_writes_the_rest(tmp_path: Path) -> None:
    """The hostile lines of the red team in one file with the clean lines of three
    workers: the command exits 0, every clean row is in the table, the summary names
    the bad lines per worker."""
    from test_hostile_lines import CASES

    clean = clean_lines(30)
    bad = [make() for make, _, _ in CASES.values()]
    body = [json.dumps(x) for x in clean]
    for i, line in enumerate(bad):
        body.insert(2 * i + 1, line)
    log = tmp_path / "workers.log"
    log.write_text("\n".join(body) + "\n")
    con = duckdb.connect()
    with sql_api_server(con, max_body=1 << 20) as (url, pem):
        profile = write_profile(tmp_path, url, pem)
        proc = monitor_cli(str(log), "--profile", str(profile), "--no-visible")
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "Traceback" not in proc.stderr
        n_bad = len(bad)
        assert f"{n_bad} line(s) skipped" in proc.stderr
        assert f"{n_bad} bad worker line(s)" in proc.stderr
        assert f"worker 0: {n_bad - 1}" in proc.stderr and "worker ?: 1" in proc.stderr
        sink = profile_sink(profile)
        written = {(r["WORKER_ID"], r["WINDOW_START"].timestamp())
                   for r in sink.read_rows(RUN, fleet=False)}  # fmt: skip
        assert written == {(x["worker_id"], x["window_start"]) for x in clean}
