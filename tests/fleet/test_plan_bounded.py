"""``plan`` plans from what the client can do (issue #29 item 8): a figure the emulator
held down (its channel limit, its drop sink, its own CPU) is shown as a bound, never
sized from and never given a deploy line; pod memory is the measured peak RSS plus the
bytes in flight, its headroom stated."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from elastic_channels.fleet import plan as planmod
from elastic_channels.fleet.find_max import Judge, plan_from
from elastic_channels.fleet.nodes import NODES
from elastic_channels.fleet.plan import REFERENCE_FIGURES, Figures, make_range, parse_figures

MB = 1e6
M8 = NODES["m7g.8xlarge"]


def find_max_report(
    limit_mbps: float,
    step_mbps: float,
    channels: int = 1,
    target: str = "emulator",
    context_limit: bool = True,
) -> dict[str, Any]:
    """A search of one worker from ``step_mbps`` up by ``step_mbps`` against a service
    acking at most ``limit_mbps`` a channel, judged by the real Judge."""
    p = plan_from({"start_mbps": step_mbps, "step_mbps": step_mbps,
                   "max_mbps": 12 * step_mbps, "step_seconds": 3})  # fmt: skip
    judge = Judge(p, workers=1)
    for k, rate in enumerate(p.steps_mbps):
        for i in range(3):
            start = 1000.0 + 3 * k + i
            acked = min(rate, limit_mbps * channels)
            judge.feed({
                "window_start": start, "start": start, "end": start + 1, "partial": False,
                "warmup": False, "stage": k, "workers": 1, "target_bps": rate * MB,
                "bytes": int(rate * MB), "acked_bytes": int(acked * MB),
                "behind_p99_ms": 1.0, "errors": 0, "sdk_retries": 0, "cpu_pct": 30.0,
                "rss_mib": 120.0,
            })  # fmt: skip
    context = {"date": "2026-12-06", "target": target, "channels": channels,
               "channel_limit_mbps": limit_mbps if context_limit else None}  # fmt: skip
    return judge.report(ran_to_end=True, context=context)


def plan(tmp_path: Path, doc: dict[str, Any], capsys: pytest.CaptureFixture[str],
         *extra: str) -> tuple[int, str, str]:  # fmt: skip
    path = tmp_path / "result.json"
    path.write_text(json.dumps(doc))
    parser = argparse.ArgumentParser()
    planmod.configure_parser(parser)
    args = parser.parse_args(["--target-gbps", "41.8", "--figures", str(path), *extra])
    code = args.func(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_a_search_held_by_the_channel_limit_sizes_no_fleet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's run: find-max against --channel-limit-mbps 4 held ~4 MB/s; plan
    printed a deploy line for ~10,000 workers of 0.01 vCPU. Now the figure is a bound
    and the line is the reference's."""
    report = find_max_report(limit_mbps=4, step_mbps=2)
    assert report["held_mbps"] == 4  # the limit, not the client
    code, out, _ = plan(tmp_path, report, capsys, "--json")
    assert code == 0
    p = json.loads(out)
    mine = next(s for s in p["sizings"] if s["label"].startswith("find-max"))
    assert "pods" not in mine and "channel limit of 4 MB/s" in mine["bound"]
    assert mine["pod_mbps_at_least"] == 4
    assert p["label"] == REFERENCE_FIGURES.label and p["pods"] == 455
    assert "--workers 455 " in p["command"]
    code, out, _ = plan(tmp_path, report, capsys)
    lines = [x for x in out.splitlines() if "deploy/run_job.sh" in x]
    assert len(lines) == 1 and "--workers 455 " in lines[0]  # none from the bound
    text = " ".join(out.split())
    assert "[2] is a bound: held by the emulator's channel limit of 4 MB/s a channel" in text
    assert "it rests on [1] alone" in text


def test_the_limit_is_read_from_the_result_files_emulator_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = find_max_report(limit_mbps=4, step_mbps=2, context_limit=False)
    settings = {"channel_limit_bps": 4e6}
    result = {"kind": "elastic-channels run result",
              "run": {"find_max": report, "emulator_settings": settings}}  # fmt: skip
    code, out, _ = plan(tmp_path, result, capsys, "--json")
    p = json.loads(out)
    assert code == 0 and p["pods"] == 455
    assert any("channel limit of 4 MB/s" in s.get("bound", "") for s in p["sizings"])


@pytest.mark.parametrize(
    ("limit", "target"),
    [(100.0, "emulator"), (4.0, "account")],
    ids=["limit far above the rate held", "an account"],
)
def test_a_search_the_emulator_did_not_hold_is_sized(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], limit: float, target: str
) -> None:
    # steps of 5 to 60 against a service that acks 30 at most: the search stops at 30
    report = find_max_report(limit_mbps=30, step_mbps=5)
    report["context"] = {**report["context"], "channel_limit_mbps": limit, "target": target}
    code, out, _ = plan(tmp_path, report, capsys, "--json")
    p = json.loads(out)
    mine = next(s for s in p["sizings"] if s["label"].startswith("find-max"))
    assert code == 0 and "bound" not in mine and mine["pods"] > 455
    assert p["label"] == mine["label"]  # the conservative end: the deploy line is its


def test_nothing_but_bounds_is_refused_naming_them() -> None:
    limit = "the emulator's channel limit of 4 MB/s"
    held = Figures(per_channel_mbps=4, per_vcpu_mbps=4, cpu_s_per_gb=3, rss_mib_per_pod=100,
                   label="limited", bounded_by=limit)  # fmt: skip
    with pytest.raises(ValueError, match="limited was held by the emulator's channel limit of 4"):
        make_range(41.8, M8, [held])


def test_a_figures_file_says_what_held_it() -> None:
    doc = {"per_channel_mbps": 80, "per_vcpu_mbps": 80, "cpu_s_per_gb": 3,
           "rss_mib_per_pod": 99, "bounded_by": "the emulator's CPU"}  # fmt: skip
    assert parse_figures(doc, "x").bounded_by == "the emulator's CPU"
    with pytest.raises(ValueError, match="'bounded_by' must be text"):
        parse_figures({**doc, "bounded_by": True}, "x")
    shipped = [f for f in planmod.DEFAULT_SOURCES if not f.origin.snowflake]
    assert len(shipped) == 2 and all("emulator" in f.bounded_by for f in shipped)


def test_pod_memory_is_the_measured_peak_rss_with_its_headroom_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The held step's windows saw 120 MiB; the run's worst worker peaked at 310: the
    pod is sized for 310 plus what it may hold in flight, and says how much is left."""
    report = find_max_report(limit_mbps=30, step_mbps=5, target="account", context_limit=False)
    result = {"kind": "elastic-channels run result", "run": {"find_max": report},
              "peak_rss_mib_per_worker": {"0": 310.0, "1": 150.0, "2": None}}  # fmt: skip
    code, out, _ = plan(tmp_path, result, capsys, "--json")
    p = json.loads(out)
    assert code == 0 and p["label"].startswith("find-max")
    assert p["pod_rss_mib"] == 310.0
    used = 310.0 + p["worker_max_inflight_bytes"] / 2**20
    assert p["pod_memory_headroom_mib"] == pytest.approx(p["pod_memory_mib"] - used)
    assert p["pod_memory_mib"] * planmod.SDK_THROTTLE_SHARE >= used
    code, out, _ = plan(tmp_path, result, capsys)
    text = " ".join(out.split())
    headroom = p["pod_memory_headroom_mib"]
    assert (
        f"310 MiB peak RSS (measured) + {p['worker_max_inflight_bytes'] / 2**20:.0f} MiB in flight"
        in text
    )
    assert (
        f"{p['pod_memory_mib']} MiB, {headroom:.0f} MiB ({headroom / used:.0%}) of headroom" in text
    )
    assert "RSS: the run's peak, the worst worker's" in text
