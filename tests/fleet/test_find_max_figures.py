"""``plan --figures`` takes a find-max result: the rate a worker held for a full step,
with that step's CPU-seconds per GB and RSS (the shipped local worker's when the result
carries none), named with where it was found."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from elastic_channels.fleet import plan as planmod
from elastic_channels.fleet.find_max import Judge, plan_from
from elastic_channels.fleet.find_max_figures import figures_document
from elastic_channels.fleet.plan import FIGURES_DIR, REFERENCE_FIGURES

MB = 1e6


def find_max_report(limit_mbps: float, *, context: dict | None = None, **over: Any) -> dict:
    """A search 10, 20, ... 60 MB/s a worker against a service acking at most
    ``limit_mbps``, judged by the real Judge: the report run_search returns."""
    p = plan_from({"start_mbps": 10, "step_mbps": 10, "max_mbps": 60, "step_seconds": 3})
    judge = Judge(p, workers=2)
    t0 = 2000.0
    for k, rate in enumerate(p.steps_mbps):
        for i in range(3):
            start = t0 + 3 * k + i
            judge.feed({
                "window_start": start, "start": start, "end": start + 1, "partial": False,
                "warmup": False, "stage": k, "workers": 2, "target_bps": rate * MB * 2,
                "bytes": int(rate * MB * 2), "acked_bytes": int(min(rate, limit_mbps) * MB * 2),
                "behind_p99_ms": 1.0, "errors": 0, "sdk_retries": 0, "cpu_pct": 40.0,
                "rss_mib": 200.0,
            })  # fmt: skip
    context = {"date": "2026-12-05", "target": "emulator", "channel_limit_mbps": limit_mbps,
               "channels": 2, "machine": {"arch": "x86_64", "cpu_count": 2},
               "command": "elastic-channels run scenarios/step.yaml --find-max",
               **(context or {})}  # fmt: skip
    return {**judge.report(ran_to_end=True, context=context), **over}


#: A run's result file with no search in it.
PLAIN_RESULT = {
    "kind": "elastic-channels run result", "figures": {"mb_per_s": 1.0},
    "run": {"run_id": "plain"},
}  # fmt: skip


def plan_json(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, Any, str]:
    parser = argparse.ArgumentParser()
    planmod.configure_parser(parser)
    args = parser.parse_args(["--target-gbps", "41.8", "--figures", str(path), "--json"])
    code = args.func(args)
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else None), err


def test_a_find_max_result_is_a_figure_source(tmp_path, capsys):
    report = find_max_report(35)
    assert report["held_mbps"] == 30 and report["stopped_by"]["bound"] == "mb_per_s"
    path = tmp_path / "find-max.json"
    path.write_text(json.dumps(report))
    code, p, err = plan_json(path, capsys)
    assert code == 0, err
    assert [s["label"] for s in p["sizings"]] == ["find-max 2026-12-05", REFERENCE_FIGURES.label]
    f = p["sizings"][0]["figures"]
    assert (f["per_vcpu_mbps"], f["per_channel_mbps"]) == (30, 15)  # 2 channels a worker
    # 40% of a core for 60 MB/s of two workers' sends a second: 0.4 / 0.06 GB
    assert f["cpu_s_per_gb"] == pytest.approx(0.4 / 0.06, rel=0.01)
    assert f["rss_mib_per_pod"] == 100  # 200 MiB for two workers
    o = f["origin"]
    assert o["bench"] == "elastic-channels run --find-max" and o["date"] == "2026-12-05"
    assert o["target"] == "the emulator, each channel limited to 35 MB/s (429 over it)"
    assert o["machine"] == "x86_64, 2 CPUs" and not o["snowflake"]
    assert "mb_per_s" in o["bound"] and "step 3 (40 MB/s a worker)" in o["bound"]
    assert o["command"].endswith("--find-max")
    assert "by each of 2 workers" in f["source"]


def test_a_run_result_holding_the_search_is_read_through(tmp_path, capsys):
    report = find_max_report(35, context={"target": "account", "machine": None, "date": None})
    doc = {
        "kind": "elastic-channels run result", "started_at_utc": "2026-12-06T08:00:00Z",
        "machine": {"arch": "aarch64", "cpu_count": 1, "cpu_model": "Neoverse-V1"},
        "figures": {"mb_per_s": 60.0}, "run": {"run_id": "fm-1", "find_max": report},
    }  # fmt: skip
    path = tmp_path / "result.json"
    path.write_text(json.dumps(doc))
    code, p, err = plan_json(path, capsys)
    assert code == 0, err
    o = p["sizings"][0]["figures"]["origin"]
    assert o["date"] == "2026-12-06" and o["machine"] == "aarch64, 1 CPUs, Neoverse-V1"
    assert o["snowflake"] and o["target"] == "Snowflake (an account)"


def test_a_result_without_cpu_or_rss_takes_the_shipped_local_workers(tmp_path, capsys):
    shipped = json.loads((FIGURES_DIR / "local_worker_file_mode.json").read_text())
    path = tmp_path / "no-cpu.json"
    path.write_text(json.dumps(find_max_report(35, cpu_s_per_gb=None)))
    code, p, err = plan_json(path, capsys)
    assert code == 0, err
    f = p["sizings"][0]["figures"]
    assert f["cpu_s_per_gb"] == shipped["cpu_s_per_gb"]  # lent
    assert f["rss_mib_per_pod"] == 100  # its own
    assert f"cpu_s_per_gb not in the result: the shipped {shipped['label']}'s" in f["source"]
    path.write_text(json.dumps(find_max_report(35, cpu_s_per_gb=None, rss_mib=None)))
    code, p, err = plan_json(path, capsys)
    f = p["sizings"][0]["figures"]
    assert (f["cpu_s_per_gb"], f["rss_mib_per_pod"]) == (
        shipped["cpu_s_per_gb"],
        shipped["rss_mib_per_pod"],
    )
    assert "cpu_s_per_gb and rss_mib not in the result" in f["source"]


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (find_max_report(5), r"the search held no step \(a bound broke: .*\): no rate"),
        (find_max_report(35, cpu_s_per_gb=0), r"cpu_s_per_gb is 0: expected a number > 0"),
        (find_max_report(35, rss_mib="a lot"), r"rss_mib is 'a lot': expected a number > 0"),
        (find_max_report(35, context={"channels": 0}), r"context.channels is 0: expected"),
        (PLAIN_RESULT, r"no find-max result in it"),
    ],
)
def test_a_result_plan_cannot_size_from_is_refused_naming_why(tmp_path, capsys, doc, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    code, _, err = plan_json(path, capsys)
    assert code == 2
    assert f"--figures {path}: " in err
    with pytest.raises(ValueError, match=message):
        figures_document(doc, "x")
