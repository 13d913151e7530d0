"""``elastic-channels bench --workload``: a workload's rows, not resort sales', on both paths.

Each bench runs for real as a user would (one worker, 2 MB/s, 1 s); its first row must
be the workload's, column for column, and the summary must name the workload.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from bench_support import ENCODERS

from elastic_channels.workload import load_workload, shipped_names

#: A workload file of the test's own: every value of its row can be told in advance
#: but the choice and the range.
TINY = """\
name: bench-tiny
description: a few columns, for the bench's tests
table: BENCH_TINY
columns:
  - {name: ID, type: VARCHAR, unique_id: {}}
  - {name: RUN, type: VARCHAR, run_id: {}}
  - {name: WORKER, type: "NUMBER(10,0)", worker_id: {}}
  - {name: COLOR, type: VARCHAR(8), choice: {values: [red, green, blue]}}
  - {name: N, type: "NUMBER(3,0)", range: {min: 0, max: 10}}
"""
RUN_ID = "bench-wl"
SHIPPED = ["resort-sales", "iot-telemetry", "clickstream", "wide-events"]


def bench(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "elastic_channels", "bench", *args],
        capture_output=True, text=True, timeout=60, check=False, cwd=cwd,
        env={k: v for k, v in os.environ.items() if k != "WORKLOAD"},
    )  # fmt: skip


def test_shipped_names_are_the_ones_tested() -> None:
    assert sorted(shipped_names()) == sorted(SHIPPED)


@pytest.mark.parametrize("encoder", ENCODERS)
@pytest.mark.parametrize("name", [*SHIPPED, "tiny.yaml"])
def test_bench_generates_the_workloads_rows(name: str, encoder: str, tmp_path: Path) -> None:
    (tmp_path / "tiny.yaml").write_text(TINY, encoding="utf-8")
    workload = load_workload(tmp_path / name if name.endswith(".yaml") else name)
    columns = [c.name for c in workload.columns]
    proc = bench(
        "--workload", name, "--encoder", encoder, "--workers", "1", "--target-bps", "2e6",
        "--duration-seconds", "1", "--batch-bytes", "200000", "--run-id", RUN_ID, "--json",
        "--quiet", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)  # --json: stdout is the one JSON document
    (worker,) = result["workers"]
    assert worker["backend"] == encoder and worker["rows"] > 0
    row = json.loads(worker["first_row"])
    assert list(row) == columns  # the workload's columns, in its order, and no others
    if name == "tiny.yaml":
        assert {k: row[k] for k in ("ID", "RUN", "WORKER")} == {
            "ID": f"{RUN_ID}-0-0", "RUN": RUN_ID, "WORKER": 0,
        }  # fmt: skip
        assert row["COLOR"] in ("red", "green", "blue") and 0 <= row["N"] <= 10
    # The summary names the workload and its mean row bytes, in the JSON and the table.
    total = result["total"]
    mean = round(total["bytes"] / total["rows"], 1)
    assert result["workload"] == name
    assert result["mean_row_bytes"] == total["avg_row_bytes"] == mean
    assert f"workload {name}: mean row {mean:.1f} bytes" in proc.stderr  # --json: there
    assert f"workload {name}" in proc.stderr  # the opening line too


def test_a_bad_workload_file_is_named_before_any_worker_starts(tmp_path: Path) -> None:
    bad = TINY.replace("max: 10}", "max: 10, bogus: 3}")
    (tmp_path / "bad.yaml").write_text(bad, encoding="utf-8")
    proc = bench("--workload", "bad.yaml", "--duration-seconds", "1", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "--workload: bad.yaml:9: columns[4] (N): range.bogus" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "benchmark:" not in proc.stderr  # no run announced, no worker spawned


@pytest.mark.parametrize("via", ["flag", "env"])
def test_an_unknown_workload_name_exits_2_naming_it(via: str) -> None:
    argv = ["bench", "--duration-seconds", "1"]
    env = {k: v for k, v in os.environ.items() if k != "WORKLOAD"}
    if via == "flag":
        argv += ["--workload", "no-such-rows"]
    else:
        env["WORKLOAD"] = "no-such-rows"
    proc = subprocess.run(
        [sys.executable, "-m", "elastic_channels", *argv],
        capture_output=True, text=True, timeout=60, check=False, env=env,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    where = "--workload" if via == "flag" else "WORKLOAD"
    assert f"{where}: no shipped workload 'no-such-rows'" in proc.stderr
    assert "Traceback" not in proc.stderr and "benchmark:" not in proc.stderr


def test_help_explains_the_workload_flag() -> None:
    proc = bench("--help")
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    assert "--workload WORKLOAD" in text
    assert "workload file (YAML, docs/WORKLOADS.md)" in text
    assert "[WORKLOAD] (default: resort-sales)" in text
