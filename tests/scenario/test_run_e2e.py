"""elastic-channels run SCENARIO end to end against the embedded emulator: the step
scenario at tiny durations (its stages followed, warmup marked), and every shipped
scenario at a few seconds (its shape kept, its durations and rates scaled down)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from emulator_support import query_emulator, sdk_available

from elastic_channels.results.derive import stage_figures
from elastic_channels.scenario import (
    find_scenario,
    from_data,
    load_file,
    resolved,
    scenario_hash,
    shipped_names,
    to_yaml,
    with_overrides,
)

pytestmark = pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")

#: The flags every run here gives: 1 s windows, batches small enough for 1-3 MB/s.
SMALL = {"window_seconds": 1.0, "batch_bytes": 100_000}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One working directory for the module: the runs share its emulator data dir."""
    return tmp_path_factory.mktemp("runs")


def run(*args: str, cwd: Path) -> tuple[int, dict[str, Any], str]:
    proc = subprocess.run(
        [sys.executable, "-m", "elastic_channels.cli", "run", *args, "--json",
         "--window-seconds", "1", "--batch-bytes", "100000"],
        capture_output=True, text=True, timeout=180, cwd=cwd, check=False,
    )  # fmt: skip
    result = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc.returncode, result, proc.stderr


def test_step_follows_its_stages_after_a_marked_warmup(home: Path) -> None:
    # step, with its durations and rates made tiny: 3 stages of 3 s at 1, 2 and 3 MB/s
    data = resolved(load_file(find_scenario("step")))
    data["stages"] = [{"seconds": 3, "mbps": r} for r in (1, 2, 3)]
    tiny = home / "step-tiny.yaml"
    tiny.write_text(to_yaml(from_data(data, "test")))
    code, result, err = run(str(tiny), "--warmup-seconds", "2", "--workers", "1",
                            "--run-id", "step-e2e", cwd=home)  # fmt: skip
    assert code == 0, err[-3000:]
    landed, (summary,) = result["landed"], result["worker_summaries"]
    assert landed["lost"] == 0 and landed["rows_landed"] == landed["rows_expected"]
    # the run's figures leave the warmup out; the table holds its rows all the same
    assert summary["warmup_rows_sent"] > 0
    assert landed["rows_landed"] == result["totals"]["rows_sent"] + summary["warmup_rows_sent"]
    expected = with_overrides(load_file(tiny), {"warmup_seconds": 2, **SMALL})
    assert result["scenario"] == {
        "name": "step", "hash": scenario_hash(expected), "file": str(tiny),
        "resolved": resolved(expected),
    }  # fmt: skip
    assert result["target_bps"] is None  # not one constant rate: the windows carry theirs
    assert "scenario step (" in err and "3 stage(s) over 9 s, 1 to 3 MB/s" in err
    rate = {-1: 1e6, 0: 1e6, 1: 2e6, 2: 3e6}  # warmup runs at the first stage's rate
    for source in ("windows", "metrics_windows"):
        windows = [w for w in result[source] if not w["partial"]]
        assert windows, source
        for w in windows:
            assert w["warmup"] is (w["stage"] == -1), (source, w)
            assert w["target_bps"] == pytest.approx(rate[w["stage"]]), (source, w)
        stages = [w["stage"] for w in windows]
        assert stages == sorted(stages) and stages[-1] == 2, (source, stages)
    assert {w["scenario_hash"] for w in result["metrics_windows"]} == {scenario_hash(expected)}
    assert summary["scenario"] == "step" and summary["warmup_seconds"] == 2
    assert [(x["stage"], x["target_bps"]) for x in summary["stages"]] == [
        (0, 1e6), (1, 2e6), (2, 3e6)
    ]  # fmt: skip
    # the per-stage table run prints (stderr with --json): a line a stage, then the run
    table = err[err.index("per stage (warmup left out") :].splitlines()
    assert [x.split()[0] for x in table[3:6]] == ["0", "1", "2"] and table[7].split()[0] == "run"
    targets = [float(x.split()[2]) for x in table[3:6]]
    assert targets == pytest.approx([1.0, 2.0, 3.0], abs=0.05)
    # the monitor's per-stage rows: the result file's per-stage figures, one row a stage
    rows = query_emulator(home, "SELECT * FROM ELASTIC_K8S_METRICS_STAGES WHERE RUN_ID = "
                          "'step-e2e' ORDER BY STAGE")  # fmt: skip
    want = stage_figures(result)
    assert [r["STAGE"] for r in rows] == [f["stage"] for f in want] == [0, 1, 2]
    for r, f in zip(rows, want, strict=True):
        assert r["TARGET_MB_PER_SEC"] == pytest.approx(f["target_mb_per_s"])
        assert r["TARGET_MB_PER_SEC"] == pytest.approx(r["STAGE"] + 1, rel=0.01)
        assert r["MB_PER_SEC"] == pytest.approx(f["mb_per_s"]) and r["WINDOWS"] == f["windows"]
        assert r["ACK_LATENCY_P99_MS"] == pytest.approx(f["ack_p99_ms"])


def scaled(name: str, home: Path) -> tuple[Path, int, bool]:
    """A copy of the shipped scenario ``name`` at a few seconds: each stage at least 1 s
    and about 3 s in all, the highest rate 3 MB/s, a 1 s warmup if it has one."""
    s = load_file(find_scenario(name))
    seconds, mbps = 3 / s.stages_seconds, 3 / s.peak_mbps
    stages = []
    for st in s.stages:
        stage: dict[str, float] = {"seconds": max(1, round(st.seconds * seconds))}
        if st.mbps is not None:
            stage["mbps"] = round(st.mbps * mbps, 3)
        else:
            stage.update(from_mbps=round(st.first_mbps * mbps, 3),
                         to_mbps=round(st.last_mbps * mbps, 3))  # fmt: skip
        stages.append(stage)
    data = {**resolved(s), "stages": stages, "warmup_seconds": 1 if s.warmup_seconds else 0}
    path = home / f"{name}-short.yaml"
    path.write_text(to_yaml(from_data(data, name)))
    return path, len(stages), bool(s.warmup_seconds)


@pytest.mark.parametrize("name", ["smoke", "reference", "step", "spike", "soak"])
def test_every_shipped_scenario_runs_at_a_short_duration(name: str, home: Path) -> None:
    assert name in shipped_names()
    path, n, warmup = scaled(name, home)
    code, result, err = run(str(path), "--no-monitor", "--run-id", f"short-{name}", cwd=home)
    assert code == 0, err[-3000:]
    assert result["landed"]["lost"] == 0 and result["failed_workers"] == []
    assert result["scenario"]["name"] == name and result["workers"] == 1
    (summary,) = result["worker_summaries"]
    assert [x["stage"] for x in summary["stages"]] == list(range(n))
    assert summary["errors"] == 0
    seen = {w["stage"] for w in result["windows"]}
    assert seen <= set(range(-1, n)) and n - 1 in seen
    assert summary["warmup_seconds"] == (1 if warmup else 0)
    assert ("per stage (warmup left out" in err) is (n > 1), err[-2000:]
