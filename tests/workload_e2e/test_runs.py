"""run --workload, end to end for every shipped workload: two workers through the real
SDK into the embedded emulator, every row landed once (the unique id column checked),
the monitor's ingest-to-visible read off the workload's send time; VARIANT columns
queried by path through the SQL API and emulator query, against the rows the workers
generated. Short runs (3 s at 2 MB/s a worker); one working directory for the module,
each workload's emulator in a data dir of its own."""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from emulator_support import sdk_available

from elastic_channels.landing_table import landing_table
from elastic_channels.rows.workload_generator import WorkloadGenerator
from elastic_channels.workload import load_workload, shipped_names
from elastic_channels.workload.replay import resolve

pytestmark = pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")


def cli(
    *args: str, cwd: Path, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "elastic_channels.cli", *args],
        capture_output=True, text=True, timeout=timeout, cwd=cwd, check=False, env=env,
    )  # fmt: skip


class Runs:
    """Each workload's run, made once for the module."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.done: dict[str, tuple[subprocess.CompletedProcess[str], dict[str, Any]]] = {}

    def __call__(self, name: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
        if name not in self.done:
            # A WORKLOAD the workers inherit is not the run's: run tells them its own.
            other = "clickstream" if name == "resort-sales" else "resort-sales"
            proc = cli(
                "run", "--workload", name, "--workers", "2", "--target-bps", "2e6",
                "--duration-seconds", "3", "--window-seconds", "1", "--run-id", f"wl-{name}",
                "--json", cwd=self.cwd, env={**os.environ, "WORKLOAD": other},
            )  # fmt: skip
            assert proc.returncode == 0, proc.stderr[-3000:]
            self.done[name] = (proc, json.loads(proc.stdout.strip().splitlines()[-1]))
        return self.done[name]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return Runs(tmp_path_factory.mktemp("workload-runs"))


def data_dir(name: str) -> str:
    land = landing_table(name)
    return ".elastic-channels/" + (
        "emulator" if land.is_default else f"emulator-{land.name.lower()}"
    )


def query(runs: Runs, name: str, sql: str) -> list[dict[str, Any]]:
    done = cli("emulator", "query", "--data-dir", data_dir(name), sql, cwd=runs.cwd, timeout=60)
    assert done.returncode == 0, done.stderr
    return [json.loads(x) for x in done.stdout.splitlines() if x.strip()]


@pytest.mark.parametrize("name", shipped_names())
def test_every_row_lands_once(runs: Runs, name: str) -> None:
    proc, result = runs(name)
    land = landing_table(name)
    landed, totals = result["landed"], result["totals"]
    assert landed["lost"] == 0 and landed["duplicates"] == 0
    assert landed["rows_landed"] == landed["rows_expected"] == totals["rows_sent"] > 0
    assert totals["rows_acked"] == totals["rows_sent"]
    assert result["scenario"]["resolved"]["workload"] == name
    assert f"of {name} rows into {land.name}" in proc.stderr
    # The table is the workload's, in its own data dir: the run's rows are all there.
    (count,) = query(
        runs, name, f"SELECT count(*) AS n FROM {land.name} WHERE RUN_ID = 'wl-{name}'"
    )
    assert count["n"] == landed["rows_landed"]
    # Ingest-to-visible off the workload's send-time column, by the check and the monitor.
    assert landed["visible_p50_ms"] is not None and landed["visible_p99_ms"] >= 0
    seen = sum(w.get("visible_rows") or 0 for w in result["metrics_windows"])
    assert seen == landed["rows_landed"]


def generated(name: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows the run's workers generated, made again by the msgspec oracle."""
    resolved = resolve(load_workload(name))
    out: list[dict[str, Any]] = []
    for s in result["worker_summaries"]:
        gen = WorkloadGenerator(resolved, result["run_id"], s["worker_id"])
        out += [json.loads(line) for line in gen.next_batch(s["rows_generated"], 0).splitlines()]
    return out


def test_variant_paths_query_as_in_snowflake_through_the_sql_api(
    runs: Runs, tmp_path: Path
) -> None:
    from elastic_channels.emulator import Emulator, EmulatorConfig
    from elastic_channels.monitor.target import emulator_sink

    _, result = runs("clickstream")
    rows = generated("clickstream", result)
    by_os = collections.Counter(r["CONTEXT"]["device"]["os"] for r in rows)
    land = landing_table("clickstream")
    config = EmulatorConfig(
        data_dir=runs.cwd / data_dir("clickstream"), table=land.name, pipe=land.pipe,
        columns=land.columns,
    )  # fmt: skip
    with Emulator(config) as emu:
        sql = emulator_sink(emu.info()).client
        got = sql.execute(
            "SELECT CONTEXT:device:os::string AS OS, COUNT(*) AS N FROM "
            "EMULATOR_DB.PUBLIC.CLICKSTREAM_EVENTS WHERE RUN_ID = 'wl-clickstream' GROUP BY 1"
        ).dicts()
        assert {r["OS"]: int(r["N"]) for r in got} == dict(by_os)
        # A nested number, compared as one; a path compared with a string literal.
        wide = sum(1 for r in rows if r["CONTEXT"]["device"]["screen"]["width"] > 1000)
        n = sql.execute(
            "SELECT COUNT(*) AS N FROM CLICKSTREAM_EVENTS WHERE CONTEXT:device.screen.width > 1000"
        ).rows[0][0]
        assert int(n) == wide
        us = sum(1 for r in rows if r["CONTEXT"]["geo"]["country"] == "US")
        n = sql.execute(
            "SELECT COUNT(*) FROM CLICKSTREAM_EVENTS WHERE CONTEXT:geo:country = 'US'"
        ).rows[0][0]
        assert int(n) == us
        # The whole VARIANT comes back as its JSON, typed VARIANT.
        (first,) = sql.execute(
            "SELECT CONTEXT FROM CLICKSTREAM_EVENTS WHERE EVENT_ID = 'wl-clickstream-0-0'"
        ).rows
        text = first[0] if isinstance(first[0], str) else json.dumps(first[0])
        first_row = next(r for r in rows if r["EVENT_ID"] == "wl-clickstream-0-0")
        assert json.loads(text) == first_row["CONTEXT"]


def test_emulator_query_reads_variant_paths_too(runs: Runs) -> None:
    _, result = runs("clickstream")
    rows = generated("clickstream", result)
    titles = collections.Counter(r["CONTEXT"]["page"]["title"].split()[0] for r in rows)
    got = query(
        runs, "clickstream",
        "SELECT split_part(CONTEXT:page:title::string, ' ', 1) AS w, count(*) AS n "
        "FROM CLICKSTREAM_EVENTS WHERE RUN_ID = 'wl-clickstream' GROUP BY 1",
    )  # fmt: skip
    assert {r["w"]: r["n"] for r in got} == dict(titles)
    # A stopped emulator's stats count the table its data dir holds.
    done = cli("emulator", "stats", "--data-dir", data_dir("clickstream"), cwd=runs.cwd)
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)
    assert stats["table"] == "CLICKSTREAM_EVENTS" and stats["rows_landed"] == len(rows)
    # DuckDB's own JSON SQL is read as DuckDB's, as before.
    runs("iot-telemetry")
    (one,) = query(runs, "iot-telemetry", "SELECT TAGS->>'$.zone' AS z FROM IOT_TELEMETRY LIMIT 1")
    assert one["z"] in {"A1", "A2", "B1", "B2", "C1", "C2", "D1"}
