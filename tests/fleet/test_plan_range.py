"""elastic-channels plan says what it knows (issue #22 item 4): it sizes once per measured
figure, names where each came from, prints the reference measured on Graviton against
Snowflake beside them, keeps one in-flight figure, and runs the conservative end."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import pytest

from elastic_channels.fleet import plan as planmod
from elastic_channels.fleet.nodes import NODES, REFERENCE
from elastic_channels.fleet.plan import (
    DEFAULT_SOURCES,
    NOT_RECORDED,
    REFERENCE_FIGURES,
    WORKER_MAX_INFLIGHT_DEFAULT,
    Figures,
    make_range,
    parse_figures,
)

REPO = Path(__file__).resolve().parents[2]
M8 = NODES["m7g.8xlarge"]
FILE_MODE = next(f for f in DEFAULT_SOURCES if f.origin.sdk_mode.startswith("file"))
DROP_SINK = next(f for f in DEFAULT_SOURCES if "drop sink" in f.origin.target)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser()
    planmod.configure_parser(parser)
    args = parser.parse_args(argv)
    code = args.func(args)
    out, err = capsys.readouterr()
    return code, out, err


def flat(text: str) -> str:
    return " ".join(text.split())


def command_of(out: str) -> list[str]:
    return next(x for x in out.splitlines() if "deploy/run_job.sh" in x).split()


def flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def client_figures(tmp_path: Path, per_vcpu: float, label: str) -> str:
    """A figures file of a run nothing but the client held (no ``bounded_by``)."""
    path = tmp_path / f"{label}.json"
    path.write_text(json.dumps({
        "label": label, "per_vcpu_mbps": per_vcpu, "per_channel_mbps": per_vcpu,
        "cpu_s_per_gb": 1.2, "rss_mib_per_pod": 140,
    }))  # fmt: skip
    return str(path)


def bench_channels_result(per_vcpu: float, date: str = "2026-12-05 10:00 UTC") -> dict[str, Any]:
    """What benches/bench_channels.py --out writes, cut to what plan reads."""
    point = {"answer_delay_s": 0.0, "sink_check": True, "exit": 0, "channels": 4}
    return {
        "benchmark": "bench_channels",
        "command": "python benches/bench_channels.py --out r.json",
        "date": date,
        "machine": {"cpus": 2, "arch": "x86_64", "python": "3.11.7"},
        "points": [point, {**point, "answer_delay_s": 0.6}],
        "figures": {
            "per_vcpu_mbps": per_vcpu, "per_channel_mbps": per_vcpu * 0.7,
            "cpu_s_per_gb": 1.2, "rss_mib_per_pod": 140,
            "inflight": {"mb_per_s": per_vcpu, "ack_latency_s": 0.25, "bytes": 96000000},
            "source": f"benches/bench_channels.py, {date}: per vCPU {per_vcpu} MB/s",
        },
    }  # fmt: skip


# --- the shipped sources ----------------------------------------------------------------


def test_three_sources_ship_each_named_in_full() -> None:
    assert len(DEFAULT_SOURCES) == 3
    for f in DEFAULT_SOURCES:
        assert f.label and f.source
        missing = [k for k in planmod.ORIGIN_TEXT_KEYS if getattr(f.origin, k) == NOT_RECORDED]
        assert not missing, (f.label, missing)
    assert FILE_MODE.origin.bench.startswith("benches/bench_worker_paths.py")
    assert DROP_SINK.origin.bench == "benches/bench_channels.py"
    assert DROP_SINK.origin.sdk_mode.startswith("rowset")
    for f in (FILE_MODE, DROP_SINK):  # measured here: x86, not Graviton, not Snowflake
        assert "x86_64" in f.origin.machine and not f.origin.snowflake
        assert f.origin.answer_delay.startswith("0 s")


def test_the_reference_is_the_only_source_measured_against_snowflake() -> None:
    assert [f for f in DEFAULT_SOURCES if f.origin.snowflake] == [REFERENCE_FIGURES]
    r = REFERENCE_FIGURES
    assert "Graviton" in r.origin.machine and "arm64" in r.origin.machine
    assert r.origin.target == REFERENCE["target"] == "Snowflake"
    # its figures are the reference's measured ones (../shared/CONTEXT.md)
    assert r.per_vcpu_mbps == r.per_channel_mbps == REFERENCE["pod_mbps"] == 92
    assert r.rss_mib_per_pod == REFERENCE["rss_mib"][1] == 183  # 68-183 MiB: the top
    assert r.cpu_s_per_gb == pytest.approx(REFERENCE["cpu_m"][1] / 92, rel=1e-3)  # 540m
    assert (REFERENCE["pods"], REFERENCE["nodes"], REFERENCE["cpu_m"]) == (455, 15, (240, 540))


def test_the_file_mode_cpu_figure_is_the_whole_worker_through_the_sdk() -> None:
    # 3.38 CPU-s/GB in file mode (PERFORMANCE.md), not the drop sink's 1.17 flat out
    assert FILE_MODE.cpu_s_per_gb == 3.38 and DROP_SINK.cpu_s_per_gb == 1.168
    performance = (REPO / "docs" / "PERFORMANCE.md").read_text()
    for f in (FILE_MODE, DROP_SINK):
        assert f"{f.per_vcpu_mbps:g}" in performance and f"{f.cpu_s_per_gb:g}" in performance


# --- a range, never one number ---------------------------------------------------------


def test_the_default_plan_sizes_from_the_reference_the_local_figures_are_bounds() -> None:
    """Both local figures were held by the emulator (its drop sink's CPU; landing every
    row on the same CPUs): they say what the client pushed at least, not what it can."""
    p = make_range(41.8, M8)
    sizings = p["sizings"]
    assert sorted(s["label"] for s in sizings) == sorted(f.label for f in DEFAULT_SOURCES)
    by = {s["label"]: s for s in sizings}
    assert by[REFERENCE_FIGURES.label]["pods"] == 455  # 92 MB/s a pod: the reference
    assert by[REFERENCE_FIGURES.label]["nodes"] == 15
    for f in (FILE_MODE, DROP_SINK):
        assert by[f.label]["bound"] == f.bounded_by and "emulator" in f.bounded_by
        assert by[f.label]["pod_mbps_at_least"] == f.per_vcpu_mbps and "pods" not in by[f.label]
    assert p["range"]["pods"] == [455, 455]
    assert p["conservative"] == p["optimistic"] == REFERENCE_FIGURES.label
    assert p["pods"] == 455 and p["runs"] == "conservative"


def test_cli_prints_every_sizing_the_range_and_where_each_came_from(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(["--target-gbps", "41.8"], capsys)
    assert code == 0 and err == ""
    p = make_range(41.8, M8)
    lo, hi = p["range"]["pods"]
    nlo, nhi = p["range"]["nodes"]
    text = flat(out)
    assert (lo, nlo) == (hi, nhi) == (455, 15)
    assert "[2] and [3] are bounds the emulator set, not what the client can do" in text
    assert "it rests on [1] alone: 455 pods on 15 x m7g.8xlarge" in text
    for i, s in enumerate(p["sizings"], 1):
        row = next(x for x in out.splitlines() if x.startswith(f"  [{i}] {s['label']}"))
        if "bound" in s:
            assert row.split()[-3] == "bound" and f">= {s['pod_mbps_at_least']:.1f}" in row
            assert f"[{i}] is a bound: held by {flat(s['bound'])}" in text
        else:
            assert row.split()[-4:-2] == [str(s["pods"]), str(s["nodes"])]
        o = s["figures"]["origin"]
        for said in (o["bench"], o["machine"], o["target"], o["answer_delay"], o["sdk_mode"]):
            assert flat(said) in text
    ref_at = next(i for i, s in enumerate(p["sizings"], 1) if s["label"] == REFERENCE_FIGURES.label)
    assert f"* measured against Snowflake: [{ref_at}] only" in out
    assert f"[{ref_at}] {REFERENCE_FIGURES.label} *" in out
    for said in ("the reference measured (arm64, AWS Graviton against Snowflake)",
                 "92 MB/s per 1-vCPU pod", "455 pods of 1 vCPU / 1024 MiB on 15 x m7g.8xlarge",
                 "240-540m CPU and 68-183 MiB RSS a pod", "batch acks 570-611 ms",
                 "SDK mode: file", "SDK mode: rowset"):  # fmt: skip
        assert said in text


def test_the_command_runs_the_conservative_end_unless_optimistic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    slow, fast = client_figures(tmp_path, 60, "slow"), client_figures(tmp_path, 200, "fast")
    base = ["--target-gbps", "41.8", "--figures", slow, "--figures", fast]
    _, out, _ = run([*base, "--json"], capsys)
    p = json.loads(out)
    assert [s["label"] for s in p["sizings"]] == ["slow", REFERENCE_FIGURES.label, "fast"]
    _, out, _ = run(base, capsys)
    argv = command_of(out)
    assert flag(argv, "--workers") == str(p["range"]["pods"][1])
    assert "to run the conservative end, [1]" in flat(out) and "--optimistic for [3]" in flat(out)
    _, out, _ = run([*base, "--optimistic"], capsys)
    argv = command_of(out)
    assert flag(argv, "--workers") == str(p["range"]["pods"][0])
    assert "to run the optimistic end, [3]" in flat(out)
    _, out, _ = run([*base, "--optimistic", "--json"], capsys)
    q = json.loads(out)
    assert q["runs"] == "optimistic" and q["pods"] == p["range"]["pods"][0]
    assert q["command"] == " ".join(argv)


def test_a_bench_channels_result_is_a_bound_and_the_reference_stays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "result.json"
    path.write_text(json.dumps(bench_channels_result(60.0)))
    code, out, _ = run(["--target-gbps", "41.8", "--figures", str(path), "--json"], capsys)
    assert code == 0
    p = json.loads(out)
    labels = [s["label"] for s in p["sizings"]]
    # against the drop sink: a bound, not a sizing; the reference sizes the plan
    assert labels == [REFERENCE_FIGURES.label, "bench_channels 2026-12-05 10:00 UTC"]
    assert p["sizings"][1]["bound"] == planmod.DROP_SINK_BOUND and p["pods"] == 455
    o = p["sizings"][1]["figures"]["origin"]
    assert o["bench"] == "benches/bench_channels.py" and o["date"] == "2026-12-05 10:00 UTC"
    assert o["machine"].startswith("x86_64, 2 CPUs") and "drop sink" in o["target"]
    assert o["answer_delay"] == "0 s"  # the least delay of its checked, clean points
    assert o["sdk_mode"] == NOT_RECORDED and not o["snowflake"]
    code, out, _ = run(["--target-gbps", "41.8", "--figures", str(path)], capsys)
    assert "SDK mode: not recorded" in flat(out)


def test_several_figures_files_make_the_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--target-gbps", "41.8", "--json"]
    for per_vcpu, hour in ((360.0, "10"), (60.0, "11")):  # the same run an hour apart
        argv += ["--figures", client_figures(tmp_path, per_vcpu, f"run {hour}:00")]
    code, out, _ = run(argv, capsys)
    p = json.loads(out)
    assert code == 0 and len(p["sizings"]) == 3
    assert p["conservative"] == "run 11:00"
    assert p["optimistic"] == "run 10:00"
    assert p["range"]["pods"][1] > 455 > p["range"]["pods"][0]


def test_one_run_alone_is_said_to_be_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 200 MB/s a pod: only the fast run was seen to push that
    figures = ["--figures", client_figures(tmp_path, 360, "fast"),
               "--figures", client_figures(tmp_path, 60, "slow")]  # fmt: skip
    code, out, _ = run(["--target-gbps", "41.8", "--pod-mbps", "200", *figures], capsys)
    assert code == 0
    text = flat(out)
    assert "[2] and [3] cannot size this plan (see below); it rests on [1] alone" in text
    assert "[3] cannot: --pod-mbps 200 is more than 1 vCPU was seen to push" in text
    assert f"({REFERENCE_FIGURES.label}): 92 MB/s per vCPU" in text
    code, _, err = run(["--target-gbps", "41.8", "--pod-mbps", "400", *figures], capsys)
    assert code == 2 and all(x in err for x in ("fast", "slow", REFERENCE_FIGURES.label))


def test_bigger_pods_are_said_to_be_unmeasured(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["--target-gbps", "41.8", "--pod-vcpu", "2"], capsys)
    assert "every figure was measured on one vCPU" in flat(out)
    _, out, _ = run(["--target-gbps", "41.8"], capsys)
    assert "every figure was measured on one vCPU" not in flat(out)


# --- the CPU target applies to CPU --------------------------------------------------------


def test_the_cpu_target_limits_by_cpu_per_gb_not_by_the_rate_seen() -> None:
    # a worker seen at 400 MB/s using 4 CPU-s/GB would need 1.6 vCPU: 0.8 allows 200
    heavy = Figures(per_channel_mbps=400, per_vcpu_mbps=400, cpu_s_per_gb=4.0,
                    rss_mib_per_pod=100, label="heavy")  # fmt: skip
    p = make_range(41.8, M8, [heavy])
    assert p["pod_capacity_mbps"] == pytest.approx(200)
    assert p["pod_cpu_used"] <= 0.8 + 1e-9
    # the reference, seen at 92 MB/s at most 0.54 vCPU: 92, not 92 x 0.8
    ref = make_range(41.8, M8, [REFERENCE_FIGURES])
    assert ref["pod_capacity_mbps"] == 92 and ref["pods"] == 455


# --- one in-flight figure -------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["--target-gbps", "0.001"],  # a tiny pod: the default allowance, not 1 MB
        ["--target-gbps", "41.8"],
        ["--target-gbps", "41.8", "--optimistic"],  # more than the default
        ["--target-gbps", "41.8", "--ack-latency-s", "3"],
        ["--target-gbps", "5", "--pod-mbps", "50", "--ack-latency-s", "0.1"],
    ],
)
def test_one_in_flight_figure_printed_once_and_used(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(argv, capsys)
    assert code == 0
    text = flat(out)
    said = {int(x) for x in re.findall(r"--max-inflight-bytes (\d+)", text)}
    command = int(flag(command_of(out), "--max-inflight-bytes"))
    assert said == {command} and command >= WORKER_MAX_INFLIGHT_DEFAULT
    code, js, _ = run([*argv, "--json"], capsys)
    p = json.loads(js)
    assert p["worker_max_inflight_bytes"] == command
    assert command >= p["pod_inflight_needed_bytes"]
    row = next(x for x in out.splitlines() if x.startswith(f"  [{p['runs_at']}] "))
    assert f"{command / 1e6:g} MB" in row
    default = WORKER_MAX_INFLIGHT_DEFAULT // 10**6
    if command == WORKER_MAX_INFLIGHT_DEFAULT:
        assert f"the worker's default {default} MB covers that" in text
        assert "more than the worker's default" not in text
    else:
        assert f"more than the worker's default {default} MB" in text
        assert "covers that" not in text
    # the memory holds the bytes the command allows in flight
    rss = p["figures"]["rss_mib_per_pod"]
    assert p["pod_memory_mib"] * planmod.SDK_THROTTLE_SHARE >= rss + command / 2**20


def test_parse_figures_reads_a_shipped_file_round_trip() -> None:
    for path in sorted(planmod.FIGURES_DIR.glob("*.json")):
        data = json.loads(path.read_text())
        f = parse_figures(data, "x")
        assert f in DEFAULT_SOURCES and f.label == data["label"]


def test_the_fleet_guide_states_the_range_plan_prints() -> None:
    p = make_range(41.8, M8)
    lo, hi = p["range"]["pods"]
    nodes = p["range"]["nodes"][0]
    readme = flat((REPO / "docs" / "FLEET.md").read_text())
    assert lo == hi and f"at 41.8 GB/s {lo} pods on {nodes} m7g.8xlarge" in readme
    for f in (FILE_MODE, DROP_SINK):
        assert f"{f.per_vcpu_mbps:g} MB/s" in readme or f"{f.per_vcpu_mbps:.0f} MB/s" in readme
