"""elastic-channels plan: fleet sizing from measured figures, its inputs and its CLI."""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from elastic_channels.fleet import plan as planmod
from elastic_channels.fleet.nodes import NODES, REFERENCE, node_type, reference_at
from elastic_channels.fleet.plan import (
    DEFAULT_SOURCES,
    WORKER_MAX_INFLIGHT_DEFAULT,
    Figures,
    make_plan,
    parse_figures,
)

REPO = Path(__file__).resolve().parents[2]
M8 = NODES["m7g.8xlarge"]
#: Fixed figures, so the sizing math is checked apart from what a benchmark measured.
F = Figures(per_channel_mbps=150, per_vcpu_mbps=370, cpu_s_per_gb=2.7, rss_mib_per_pod=85)
GOOD = {"per_channel_mbps": 200, "per_vcpu_mbps": 600, "cpu_s_per_gb": 1.5,
        "rss_mib_per_pod": 90}  # fmt: skip


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser()
    planmod.configure_parser(parser)
    args = parser.parse_args(argv)
    code = args.func(args)
    out, err = capsys.readouterr()
    return code, out, err


# --- the reference reproduces itself -------------------------------------------------


def test_reference_figures_give_the_reference_fleet() -> None:
    # 92 MB/s per 1-vCPU pod, one channel, on m7g.8xlarge: 455 pods on 15 nodes.
    p = make_plan(41.8, M8, F, pod_mbps=92, channels=1)
    assert (p["pods"], p["nodes"], p["pods_per_node"]) == (455, 15, 31)
    assert p["channels_per_pod"] == 1
    assert p["vcpu_pods"] == 455 and p["vcpu_nodes"] == 15 * 32
    assert p["pod_mbps"] == pytest.approx(41_800 / 455)
    ref = p["reference"]
    assert (ref["pods"], ref["nodes"]) == (REFERENCE["pods"], REFERENCE["nodes"]) == (455, 15)


def test_reference_scales_with_the_target() -> None:
    assert (reference_at(9.2)["pods"], reference_at(9.2)["nodes"]) == (100, 4)
    # 8.188 GB/s is exactly 89 x 92 MB/s (89.00000000000001 in floating point): not 90.
    assert reference_at(8.188)["pods"] == 89
    assert reference_at(0.001)["pods"] == 1 and reference_at(0.001)["nodes"] == 1


# --- the sizing math ----------------------------------------------------------------


def test_figures_plan() -> None:
    p = make_plan(41.8, M8, F)
    # 0.8 of a vCPU at 2.7 CPU-s/GB = 296 MB/s per pod (under the 370 seen), over 150
    # MB/s channels.
    assert p["pod_capacity_mbps"] == pytest.approx(800 / 2.7)
    assert p["pods"] == math.ceil(41_800 / 296) == 142
    inflight = 41_800 / 142 * 1e6 * 0.6 * 1.5
    # 2 channels carry the rate, but 265 MB in flight needs 3 under the SDK's 128 MB cap.
    assert p["channels_per_pod"] == 3 == math.ceil(inflight / 128e6)
    assert p["nodes"] == math.ceil(142 / 31) == 5
    assert p["pod_inflight_needed_bytes"] == math.ceil(inflight)
    assert p["pod_memory_mib"] == 512  # (85 + 253 MiB) / 0.75 = 451, rounded up to 64 MiB
    assert p["worker_max_inflight_bytes"] == 265_000_000
    assert p["cpu_used"] == pytest.approx(41.8 * 2.7)


def test_channels_limit_the_pod_rate() -> None:
    p = make_plan(41.8, M8, Figures(100, 1000, 1.0, 80), channels=3, cpu_target=1)
    assert p["pod_capacity_mbps"] == 300 and p["channels_per_pod"] == 3
    assert p["pods"] == math.ceil(41_800 / 300)


def test_small_target_needs_fewer_channels_than_capacity() -> None:
    p = make_plan(0.1, M8, F)  # one pod carrying 100 MB/s: one 150 MB/s channel is enough
    assert (p["pods"], p["nodes"], p["channels_per_pod"]) == (1, 1, 1)
    assert p["pod_mbps"] == pytest.approx(100)


def test_ack_latency_and_safety_drive_memory() -> None:
    low = make_plan(10, M8, F, pod_mbps=200, ack_latency_s=0.1, safety=1)
    high = make_plan(10, M8, F, pod_mbps=200, ack_latency_s=2.0, safety=2)
    assert low["pod_inflight_needed_bytes"] == math.ceil(200e6 * 0.1)
    assert high["pod_inflight_needed_bytes"] == math.ceil(200e6 * 2.0 * 2)
    # 20 MB needed, but the allowance is never below the worker's default: 96 MB
    assert low["worker_max_inflight_bytes"] == WORKER_MAX_INFLIGHT_DEFAULT == 96_000_000
    assert high["worker_max_inflight_bytes"] == 800_000_000
    assert low["pod_memory_mib"] == 256  # (85 + 92 MiB) / 0.75
    assert high["pod_memory_mib"] == 1152  # (85 + 763 MiB) / 0.75
    assert (low["channels_per_pod"], high["channels_per_pod"]) == (2, 7)  # 800 MB / 128
    assert low["pods"] == high["pods"] == 50


def test_memory_can_limit_pods_per_node() -> None:
    # c7g.4xlarge: 15 vCPU and 29 GiB for pods; 2 GB in flight per pod -> memory bound.
    p = make_plan(10, node_type("c7g.4xlarge"), F, pod_mbps=250, ack_latency_s=8, safety=1)
    assert p["pod_memory_mib"] == 2688  # (85 + 1907 MiB) / 0.75, rounded up to 64 MiB
    assert p["pods_per_node"] == 11  # 29 * 1024 // 2688, fewer than the 15 vCPU allow
    assert (p["pods"], p["nodes"]) == (40, 4)


def test_bigger_pods_and_nodes() -> None:
    p = make_plan(41.8, node_type("m7g.16xlarge"), F, pod_vcpu=2)
    assert p["pods_per_node"] == 31  # (64 - 2) / 2
    assert p["pod_capacity_mbps"] == pytest.approx(1600 / 2.7)  # 2 x 0.8 vCPU at 2.7
    # 4 channels carry ~590 MB/s; its ~532 MB in flight needs 5 under the 128 MB cap.
    assert p["channels_per_pod"] == 5
    assert p["vcpu_pods"] == 2 * p["pods"]


@given(
    target=st.floats(0.001, 200),
    latency=st.floats(0.01, 3),
    per_channel=st.floats(10, 500),
    per_vcpu=st.floats(10, 2000),
    node=st.sampled_from(sorted(NODES)),
)
def test_plan_invariants(
    target: float, latency: float, per_channel: float, per_vcpu: float, node: str
) -> None:
    f = Figures(per_channel, per_vcpu, 2.0, 80)
    p = make_plan(target, node_type(node), f, ack_latency_s=latency)
    cap = p["pod_capacity_mbps"]
    assert cap == pytest.approx(min(per_vcpu, 0.8 * 1000 / 2.0))
    assert p["pod_cpu_used"] <= 0.8 * (1 + 1e-9)  # the CPU target holds
    assert p["pods"] * cap >= target * 1000 * (1 - 1e-9)  # enough pods
    assert p["pods"] == 1 or (p["pods"] - 1) * cap < target * 1000  # and no more
    assert p["pod_mbps"] <= cap * (1 + 1e-9)
    # Enough channels for the rate and for the bytes in flight (128 MB each), no more.
    n = p["channels_per_pod"]
    assert n * per_channel >= p["pod_mbps"] * (1 - 1e-9)
    allowance = p["worker_max_inflight_bytes"]
    assert allowance >= max(p["pod_inflight_needed_bytes"], WORKER_MAX_INFLIGHT_DEFAULT)
    assert allowance % 10**6 == 0
    assert n * 128e6 >= allowance * (1 - 1e-9)
    assert n == 1 or (n - 1) * per_channel < p["pod_mbps"] or (n - 1) * 128e6 < allowance
    assert p["nodes"] * p["pods_per_node"] >= p["pods"] > (p["nodes"] - 1) * p["pods_per_node"]
    kind = NODES[node]
    assert p["pods_per_node"] * p["pod_vcpu"] <= kind.vcpu - kind.reserved_vcpu
    assert p["pods_per_node"] * p["pod_memory_mib"] <= (kind.memory_gib - kind.reserved_gib) * 1024
    assert p["pod_memory_mib"] % 64 == 0
    assert p["pod_memory_mib"] >= 80 + allowance / 2**20


# --- bad input ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"target_gbps": 0}, "--target-gbps must be a finite number > 0, got 0"),
        ({"target_gbps": -3}, "--target-gbps must be a finite number > 0, got -3"),
        ({"target_gbps": math.inf}, "--target-gbps must be a finite number > 0, got inf"),
        ({"ack_latency_s": 0}, "--ack-latency-s must be"),
        ({"pod_vcpu": -1}, "--pod-vcpu must be"),
        ({"cpu_target": 1.5}, "--cpu-target must be a finite number in (0, 1]"),
        ({"safety": 0.5}, "--safety must be a finite number >= 1"),
        ({"channels": 0}, "--channels must be"),
        ({"pod_mbps": 0}, "--pod-mbps must be"),
        ({"pod_mbps": 400}, "--pod-mbps 400 is more than 1 vCPU was seen to push"),
        ({"pod_mbps": 300}, "--pod-mbps 300 is more than 1 vCPU can push at a CPU target"),
        ({"pod_mbps": 200, "channels": 1}, "give --channels 2"),
        ({"pod_vcpu": 32}, "does not fit on m7g.8xlarge"),
        ({"pod_mbps": 100, "ack_latency_s": 1000}, "does not fit on m7g.8xlarge"),
    ],
)
def test_bad_inputs_are_named(kwargs: dict, message: str) -> None:
    args = {"target_gbps": 41.8, **kwargs}
    with pytest.raises(ValueError) as e:
        make_plan(args.pop("target_gbps"), M8, F, **args)
    assert message in str(e.value)


def test_unknown_node_lists_the_known_ones() -> None:
    with pytest.raises(ValueError) as e:
        node_type("m5.large")
    assert "'m5.large'" in str(e.value)
    assert all(name in str(e.value) for name in NODES)


# --- the figures file -----------------------------------------------------------------


def test_figures_parse_top_level_and_under_figures_key() -> None:
    f = parse_figures({**GOOD, "source": "bench run 7"}, "f.json")
    assert (f.per_channel_mbps, f.per_vcpu_mbps, f.cpu_s_per_gb, f.rss_mib_per_pod) == (
        200,
        600,
        1.5,
        90,
    )
    assert f.source == "bench run 7" and f.inflight_factor == 1.0 and f.label == "f.json"
    nested = parse_figures({"runs": [1, 2], "figures": GOOD}, "result.json")
    assert nested.per_vcpu_mbps == 600 and "result.json" in nested.source


def test_figures_inflight_gives_the_factor() -> None:
    inflight = {"mb_per_s": 200, "ack_latency_s": 0.5, "bytes": 150_000_000}
    f = parse_figures({**GOOD, "inflight": inflight}, "f.json")
    assert f.inflight_factor == pytest.approx(1.5)
    p = make_plan(10, M8, f, pod_mbps=100, safety=1, ack_latency_s=0.6)
    assert p["pod_inflight_needed_bytes"] == math.ceil(100e6 * 0.6 * 1.5)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([1, 2], "f.json: expected a JSON object"),
        ({"figures": "x"}, "f.json ['figures']: expected a JSON object"),
        ({k: v for k, v in GOOD.items() if k != "cpu_s_per_gb"}, "missing cpu_s_per_gb"),
        ({**GOOD, "per_vcpu": 3}, "unknown key(s) per_vcpu"),
        ({**GOOD, "per_channel_mbps": 0}, "'per_channel_mbps' must be a positive number"),
        ({**GOOD, "rss_mib_per_pod": "85"}, "'rss_mib_per_pod' must be a positive number"),
        ({**GOOD, "cpu_s_per_gb": True}, "'cpu_s_per_gb' must be a positive number"),
        ({**GOOD, "per_vcpu_mbps": math.inf}, "'per_vcpu_mbps' must be a positive number"),
        ({**GOOD, "source": 3}, "'source' must be text"),
        ({**GOOD, "label": 3}, "'label' must be text"),
        ({**GOOD, "origin": "x"}, "'origin' must be an object"),
        ({**GOOD, "origin": {"arch": "x"}}, "unknown origin key(s) arch"),
        ({**GOOD, "origin": {"sdk_mode": 1}}, "origin 'sdk_mode' must be text"),
        ({**GOOD, "origin": {"snowflake": "yes"}}, "origin 'snowflake' must be true or false"),
        ({**GOOD, "inflight": {"bytes": 5}}, "'inflight' must be an object with exactly"),
        ({**GOOD, "inflight": {"mb_per_s": 1, "ack_latency_s": -1, "bytes": 5}},
         "f.json ['inflight']: 'ack_latency_s' must be a positive number"),
    ],
)  # fmt: skip
def test_figures_errors_are_named(data: object, message: str) -> None:
    with pytest.raises(ValueError) as e:
        parse_figures(data, "f.json")
    assert message in str(e.value)


# --- the command ----------------------------------------------------------------------


def test_cli_prints_the_plan_next_to_the_reference(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["--target-gbps", "41.8"], capsys)
    assert code == 0 and err == ""
    assert "plan for 41.8 GB/s on m7g.8xlarge" in out
    flat = " ".join(out.split())
    assert "455 pods of 1 vCPU / 1024 MiB on 15 x m7g.8xlarge, 41.8 GB/s" in flat
    for f in DEFAULT_SOURCES:
        assert f.label in out and f.source in flat


def test_cli_json_with_a_figures_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bench.json"
    path.write_text(json.dumps({"figures": {**GOOD, "source": "drop sink, 4 channels"}}))
    argv = ["--target-gbps", "41.8", "--figures", str(path), "--node", "c7g.8xlarge", "--json"]
    code, out, _ = run(argv, capsys)
    assert code == 0
    p = json.loads(out)
    mine = next(s for s in p["sizings"] if s["label"] == f"--figures {path} ['figures']")
    assert mine["figures"]["source"] == "drop sink, 4 channels"
    # 600 MB/s seen a vCPU; at 1.5 CPU-s/GB a CPU target of 0.8 allows 533
    assert mine["pod_capacity_mbps"] == pytest.approx(800 / 1.5)
    # 3 channels of 200 MB/s carry 528 MB/s; its 476 MB in flight needs 4 of 128 MB.
    assert mine["pods"] == math.ceil(41_800 * 1.5 / 800) and mine["channels_per_pod"] == 4
    # the reference stays beside it, and the command runs the conservative end: its
    assert [s["label"] for s in p["sizings"]] == ["reference, Graviton + Snowflake", mine["label"]]
    assert p["pods"] == p["sizings"][0]["pods"] == 455
    assert p["node"]["name"] == "c7g.8xlarge"
    assert p["reference"]["pods"] == 455


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--target-gbps", "0"], "--target-gbps must be a finite number > 0"),
        (["--target-gbps", "1", "--node", "t4g.nano"], "known: m7g.2xlarge"),
        (["--target-gbps", "1", "--figures", "/nonexistent/f.json"], "cannot read it"),
    ],
)
def test_cli_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert err.startswith("elastic-channels plan: error: ") and message in err


def test_cli_figures_not_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "f.json"
    path.write_text("{not json")
    code, _, err = run(["--target-gbps", "1", "--figures", str(path)], capsys)
    assert code == 2 and f"--figures {path}: not JSON" in err


def test_main_help_names_the_defaults_source(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        planmod.main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "docs/PERFORMANCE.md" in out and "--figures" in out and "c7g.16xlarge" in out
    assert "bench_channels.py" in out
    assert planmod.main(["--target-gbps", "4.6", "--pod-mbps", "92", "--json"]) == 0
    p = json.loads(capsys.readouterr().out)
    # the reference sizes it; the two local figures are bounds the emulator set
    assert p["pods"] == 50 and len(p["sizings"]) == 3
    assert ["bound" in s for s in p["sizings"]] == [False, True, True]


# --- in step with what it is read from and what runs it --------------------------------


def test_shipped_drop_sink_figures_are_a_bench_channels_result() -> None:
    path = planmod.FIGURES_DIR / "local_drop_sink_rowset.json"
    data = json.loads(path.read_text())
    f = parse_figures(data, "file")
    assert f in DEFAULT_SOURCES and f.origin.bench == "benches/bench_channels.py"
    # what bench_channels' figures_of writes: a dated run and the in-flight point
    assert re.match(r"\d{4}-\d\d-\d\d ", f.origin.date)
    assert set(data["inflight"]) == {"mb_per_s", "ack_latency_s", "bytes"}
    assert data["inflight"]["mb_per_s"] == data["per_vcpu_mbps"]


def test_sdk_limits_match_the_fleets_sdk_properties() -> None:
    props = json.loads((REPO / "deploy" / "sdk-properties.json").read_text())
    assert int(props["max_inflight_megabytes_per_channel"]) == planmod.SDK_CHANNEL_INFLIGHT_MB
    share = int(props["mem_throttle_threshold_percentage"]) / 100
    assert share == planmod.SDK_THROTTLE_SHARE
    # and the 1 GiB default pod's process threshold is that share of it
    assert int(props["mem_throttle_threshold_mb_by_process"]) == 1024 * share


@pytest.mark.parametrize("end", [[], ["--optimistic"]])
def test_the_printed_run_job_command_renders_that_pod(
    end: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["--target-gbps", "41.8", "--json", *end], capsys)
    p = json.loads(out)
    assert code == 0
    code, out, _ = run(["--target-gbps", "41.8", *end], capsys)
    assert code == 0
    line = next(x for x in out.splitlines() if "deploy/run_job.sh" in x).split()
    line[line.index("SECONDS")] = "60"
    argv = [str(REPO / line[0]), "plan-1", *line[2:], "--dry-run", "--image", "r/i:t",
            "--account", "A", "--user", "U", "--database", "D"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
    docs = [d for d in yaml.safe_load_all(done.stdout) if d]
    job = next(d for d in docs if d["kind"] == "Job")
    assert job["spec"]["completions"] == p["pods"]
    container = job["spec"]["template"]["spec"]["containers"][0]
    args = container["args"]
    channels = args[args.index("--channels") + 1] if "--channels" in args else "1"
    assert channels == str(p["channels_per_pod"])
    got = int(args[args.index("--max-inflight-bytes") + 1])
    assert got == p["worker_max_inflight_bytes"]
    mem = f"{p['pod_memory_mib']}Mi"
    assert container["resources"]["requests"]["memory"] == mem
    assert container["resources"]["limits"]["memory"] == mem
    config = next(d for d in docs if d["kind"] == "ConfigMap")["data"]
    props = json.loads(config["SNOWPIPE_SDK_PROPERTIES"])
    assert int(props["mem_throttle_threshold_mb_by_process"]) == p["pod_memory_mib"] * 3 // 4
