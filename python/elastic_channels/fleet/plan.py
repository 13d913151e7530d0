"""``elastic-channels plan``: size a fleet for a target throughput from measured figures.

Per pod: the rate its vCPU can push (per-vCPU MB/s x vCPU x the CPU target), split
over enough channels (per-channel MB/s each); then pods = target / that rate, nodes =
pods / what fits on a node, and memory per pod = RSS + the bytes in flight (rate x ack
latency x a safety factor). The figures come from a JSON file (``--figures``) or are
the defaults below, measured in docs/PERFORMANCE.md.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..worker.settings import BY_NAME as SETTINGS_BY_NAME
from .nodes import DEFAULT_NODE, NODES, NodeType, ceil_count, node_type, reference_at


@dataclass(frozen=True)
class Figures:
    per_channel_mbps: float  # one channel flat out, MB/s (10^6 bytes/s)
    per_vcpu_mbps: float  # what one vCPU can push, over as many channels as it takes
    cpu_s_per_gb: float  # CPU-seconds per GB sent, the whole worker process
    rss_mib_per_pod: float  # a worker's resident memory apart from bytes in flight
    inflight_factor: float = 1.0  # bytes in flight / (rate x ack latency), measured
    source: str = ""


#: The worker's --max-inflight-bytes default, from its settings table.
WORKER_MAX_INFLIGHT_DEFAULT: int = SETTINGS_BY_NAME["max_inflight_bytes"].default
MEMORY_STEP_MIB = 64  # pod memory requests are rounded up to a multiple of this
#: The fleet's SDK properties (deploy/sdk-properties.json, which run_job.sh scales with
#: --memory-mib) throttle at this share of the pod's memory, and cap each channel's
#: bytes in flight at this many MB; a test keeps these in step with that file.
SDK_THROTTLE_SHARE = 0.75
SDK_CHANNEL_INFLIGHT_MB = 128
FIGURE_KEYS = ("per_channel_mbps", "per_vcpu_mbps", "cpu_s_per_gb", "rss_mib_per_pod")
INFLIGHT_KEYS = ("mb_per_s", "ack_latency_s", "bytes")
FIGURES_HELP = (
    "JSON object (or a benchmark result with it under the key 'figures'): "
    + ", ".join(FIGURE_KEYS)
    + " (positive numbers), optional 'source' (text) and optional 'inflight': "
    '{"mb_per_s", "ack_latency_s", "bytes"}, the bytes in flight a run needed at that '
    "rate and ack latency"
)


def _positive(where: str, key: str, value: Any) -> float:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not (number and value > 0 and math.isfinite(value)):
        raise ValueError(f"{where}: {key!r} must be a positive number, got {value!r}")
    return float(value)


def parse_figures(data: Any, where: str) -> Figures:
    """Figures from a parsed JSON document; ValueError naming ``where`` and the key."""
    if isinstance(data, dict) and "figures" in data:
        data, where = data["figures"], f"{where} ['figures']"
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a JSON object of figures ({FIGURES_HELP})")
    unknown = sorted(set(data) - {*FIGURE_KEYS, "source", "inflight"})
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {FIGURES_HELP}")
    missing = [k for k in FIGURE_KEYS if k not in data]
    if missing:
        raise ValueError(f"{where}: missing {', '.join(missing)}")
    values = {k: _positive(where, k, data[k]) for k in FIGURE_KEYS}
    source = data.get("source", str(where))
    if not isinstance(source, str):
        raise ValueError(f"{where}: 'source' must be text, got {source!r}")
    factor = 1.0
    if "inflight" in data:
        inflight = data["inflight"]
        if not isinstance(inflight, dict) or set(inflight) != set(INFLIGHT_KEYS):
            raise ValueError(f"{where}: 'inflight' must be an object with exactly "
                             f"{', '.join(INFLIGHT_KEYS)}, got {inflight!r}")  # fmt: skip
        n = {k: _positive(f"{where} ['inflight']", k, inflight[k]) for k in INFLIGHT_KEYS}
        factor = n["bytes"] / (n["mb_per_s"] * 1e6 * n["ack_latency_s"])
    return Figures(**values, inflight_factor=factor, source=source)


def load_figures(path: Path, flag: str = "--figures") -> Figures:
    where = f"{flag} {path}"
    try:
        text = path.read_text()
    except OSError as e:
        raise ValueError(f"{where}: cannot read it: {e.strerror or e}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{where}: not JSON: {e}") from None
    return parse_figures(data, where)


#: What plan uses without --figures: the "figures" of a benches/bench_channels.py run,
#: shipped beside this module (docs/PERFORMANCE.md has that run in full).
DEFAULT_FIGURES_FILE = Path(__file__).with_name("figures.json")
DEFAULT_FIGURES = load_figures(DEFAULT_FIGURES_FILE, "the default figures")


def _pod_rate(f: Figures, pod_vcpu: float, cpu_target: float,
              channels: int | None, pod_mbps: float | None) -> float:  # fmt: skip
    """The MB/s one pod is planned to carry at most; ValueError if asked for more."""
    cpu_limit = f.per_vcpu_mbps * pod_vcpu * cpu_target
    channel_limit = math.inf if channels is None else channels * f.per_channel_mbps
    if pod_mbps is None:
        return min(cpu_limit, channel_limit)
    if pod_mbps > cpu_limit * (1 + 1e-9):
        raise ValueError(
            f"--pod-mbps {pod_mbps:g} is more than {pod_vcpu:g} vCPU can push at a CPU "
            f"target of {cpu_target:g} ({cpu_limit:.4g} MB/s at {f.per_vcpu_mbps:g} MB/s "
            "per vCPU); lower it, or raise --pod-vcpu or --cpu-target"
        )
    if pod_mbps > channel_limit * (1 + 1e-9):
        raise ValueError(
            f"--pod-mbps {pod_mbps:g} is more than {channels} channel(s) carry "
            f"({f.per_channel_mbps:g} MB/s each); give --channels "
            f"{ceil_count(pod_mbps / f.per_channel_mbps)} or lower --pod-mbps"
        )
    return pod_mbps


def make_plan(target_gbps: float, node: NodeType, figures: Figures = DEFAULT_FIGURES, *,
              ack_latency_s: float = 0.6, pod_vcpu: float = 1.0, cpu_target: float = 0.8,
              safety: float = 1.5, channels: int | None = None,
              pod_mbps: float | None = None) -> dict[str, Any]:  # fmt: skip
    """The fleet for ``target_gbps`` (GB/s, 10^9 bytes) on ``node``; ValueError naming
    the flag when an input is out of range or a pod cannot fit."""
    checks = (("--target-gbps", target_gbps, target_gbps > 0, "> 0"),
              ("--ack-latency-s", ack_latency_s, ack_latency_s > 0, "> 0"),
              ("--pod-vcpu", pod_vcpu, pod_vcpu > 0, "> 0"),
              ("--cpu-target", cpu_target, 0 < cpu_target <= 1, "in (0, 1]"),
              ("--safety", safety, safety >= 1, ">= 1"),
              ("--channels", channels, channels is None or channels >= 1, ">= 1"),
              ("--pod-mbps", pod_mbps, pod_mbps is None or pod_mbps > 0, "> 0"))  # fmt: skip
    for flag, value, ok, rule in checks:
        if not (ok and math.isfinite(value if value is not None else 1)):
            raise ValueError(f"{flag} must be a finite number {rule}, got {value:g}")
    capacity = _pod_rate(figures, pod_vcpu, cpu_target, channels, pod_mbps)
    target_mbps = target_gbps * 1000
    pods = ceil_count(target_mbps / capacity)
    rate = target_mbps / pods  # what each pod is then asked to carry
    inflight = rate * 1e6 * ack_latency_s * figures.inflight_factor * safety
    # Enough channels for the rate, and for the bytes in flight under the SDK's cap.
    n_channels = channels or max(ceil_count(rate / figures.per_channel_mbps),
                                 ceil_count(inflight / 1e6 / SDK_CHANNEL_INFLIGHT_MB))  # fmt: skip
    need_mib = (figures.rss_mib_per_pod + inflight / 2**20) / SDK_THROTTLE_SHARE
    pod_mib = ceil_count(need_mib / MEMORY_STEP_MIB) * MEMORY_STEP_MIB
    per_node = node.pods_per_node(pod_vcpu, pod_mib)
    if per_node < 1:
        raise ValueError(
            f"a pod of {pod_vcpu:g} vCPU and {pod_mib} MiB does not fit on {node.describe()}; "
            f"pick a larger --node, or lower --pod-vcpu or --pod-mbps"
        )
    nodes = ceil_count(pods / per_node)
    return {
        "target_gbps": target_gbps, "ack_latency_s": ack_latency_s, "node": asdict(node),
        "figures": asdict(figures), "cpu_target": cpu_target, "safety": safety,
        "pods": pods, "channels_per_pod": n_channels, "pod_mbps": rate,
        "pod_capacity_mbps": capacity, "pod_mbps_given": pod_mbps is not None,
        "pod_vcpu": pod_vcpu, "pod_memory_mib": pod_mib,
        "pod_rss_mib": figures.rss_mib_per_pod, "pod_inflight_bytes": math.ceil(inflight),
        "pod_cpu_used": rate * figures.cpu_s_per_gb / 1000, "pods_per_node": per_node,
        "nodes": nodes, "vcpu_pods": pods * pod_vcpu, "vcpu_nodes": nodes * node.vcpu,
        "memory_pods_gib": pods * pod_mib / 1024, "memory_nodes_gib": nodes * node.memory_gib,
        "cpu_used": target_gbps * figures.cpu_s_per_gb,
        "worker_max_inflight_bytes": max(math.ceil(inflight / 1e6) * 10**6, 1_000_000),
        "reference": reference_at(target_gbps),
    }  # fmt: skip


def render(p: dict[str, Any]) -> str:
    r, f, node = p["reference"], p["figures"], p["node"]
    rows = (
        ("", "this plan", f"reference ({r['total_gbps']:g} GB/s measured)"),
        ("MB/s per pod", f"{p['pod_mbps']:.1f} (at most {p['pod_capacity_mbps']:.4g})",
         f"{r['pod_mbps']:g}"),
        ("channels per pod", f"{p['channels_per_pod']}", f"{r['channels_per_pod']}"),
        ("pod", f"{p['pod_vcpu']:g} vCPU, {p['pod_memory_mib']} MiB",
         f"{r['pod_vcpu']:g} vCPU, {r['pod_memory_mib']} MiB"),
        ("pods", f"{p['pods']}", f"{r['pods']} (measured {r['measured']['pods']})"),
        ("pods per node", f"{p['pods_per_node']}", f"{r['pods_per_node']}"),
        ("nodes", f"{p['nodes']} x {node['name']}",
         f"{r['nodes']} x {r['node']} (measured {r['measured']['nodes']})"),
        ("vCPU pods / nodes", f"{p['vcpu_pods']:g} / {p['vcpu_nodes']}",
         f"{r['pods'] * r['pod_vcpu']:g} / {r['vcpu_nodes']}"),
        ("memory pods / nodes", f"{p['memory_pods_gib']:.1f} / {p['memory_nodes_gib']} GiB",
         f"{r['pods'] * r['pod_memory_mib'] / 1024:.1f} / {r['memory_nodes_gib']} GiB"),
    )  # fmt: skip
    w0, w1 = (max(len(row[i]) for row in rows) for i in (0, 1))
    table = "\n".join(f"  {a:<{w0}}  {b:<{w1}}  {c}".rstrip() for a, b, c in rows)
    inflight, n = p["pod_inflight_bytes"], p["channels_per_pod"]
    how = (
        "--pod-mbps"
        if p["pod_mbps_given"]
        else (
            f"{p['pod_vcpu']:g} vCPU x {f['per_vcpu_mbps']:g} MB/s per vCPU x CPU target "
            f"{p['cpu_target']:g}, over channels of {f['per_channel_mbps']:g} MB/s"
        )
    )
    enough = "enough" if inflight <= WORKER_MAX_INFLIGHT_DEFAULT else "too small"
    prose = [
        f"per pod: at most {p['pod_capacity_mbps']:.4g} MB/s ({how}); CPU used "
        f"~{p['pod_cpu_used']:.2f} vCPU a pod at {f['cpu_s_per_gb']:g} CPU-s/GB, "
        f"~{p['cpu_used']:.0f} vCPU in all",
        f"memory per pod: {f['rss_mib_per_pod']:g} MiB RSS + {inflight / 2**20:.0f} MiB in "
        f"flight ({p['pod_mbps']:.1f} MB/s x {p['ack_latency_s']:g} s ack latency x "
        f"{f['inflight_factor']:.3g} in-flight factor x {p['safety']:g} safety), over "
        f"{SDK_THROTTLE_SHARE:g} (the SDK throttles at that share of the pod), rounded up "
        f"to {MEMORY_STEP_MIB} MiB",
        f"the worker's default in flight, {WORKER_MAX_INFLIGHT_DEFAULT // 10**6} MB, is "
        f"{enough} here; to run this plan:",
        f"figures: {f['source']}",
    ]
    head = (
        f"plan for {p['target_gbps']:g} GB/s on {NodeType(**node).describe()}, "
        f"ack latency {p['ack_latency_s']:g} s"
    )
    command = (
        f"  deploy/run_job.sh RUN_ID --workers {p['pods']} --target-bps "
        f"{p['pod_mbps']:.4g}e6 --duration-seconds SECONDS"
        + (f" --channels {n}" if n > 1 else "")
        + f" --max-inflight-bytes {p['worker_max_inflight_bytes']} --memory-mib "
        f"{p['pod_memory_mib']}"
    )
    wrapped = [textwrap.fill(x, 100, subsequent_indent="  ") for x in prose]
    return "\n".join([head, table, *wrapped[:-1], command, wrapped[-1]])  # fmt: skip


DESCRIPTION = (
    "Size a fleet for a target throughput: pods, channels per pod, nodes, vCPU and "
    "memory, from measured per-vCPU and per-channel figures, next to the reference "
    "benchmark (455 pods of 1 vCPU / 1 GiB at 92 MB/s on 15 m7g.8xlarge, 41.8 GB/s). "
    "Without --figures it uses the figures that benches/bench_channels.py measured "
    "(shipped as elastic_channels/fleet/figures.json; printed with the plan, and in "
    "docs/PERFORMANCE.md). MB and GB are 10^6 and 10^9 bytes."
)


# fmt: off
def configure_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target-gbps", type=float, required=True,
                   help="fleet-wide throughput to plan for, GB/s of NDJSON (the reference: 41.8)")
    p.add_argument("--node", default=DEFAULT_NODE,
                   help=f"node type, one of {', '.join(NODES)} (default: %(default)s)")
    p.add_argument("--ack-latency-s", type=float, default=0.6,
                   help="batch ack latency to hold bytes in flight for (default: %(default)s, "
                   "the reference's)")
    p.add_argument("--figures", type=Path, help=f"measured figures: {FIGURES_HELP}")
    p.add_argument("--pod-vcpu", type=float, default=1.0,
                   help="vCPU per pod (default: %(default)s, as the reference)")
    p.add_argument("--channels", type=int,
                   help="channels per pod (default: as many as the pod's rate needs)")
    p.add_argument("--pod-mbps", type=float,
                   help="MB/s per pod (default: what its vCPU can push at --cpu-target)")
    p.add_argument("--cpu-target", type=float, default=0.8,
                   help="share of a pod's vCPU the plan may use (default: %(default)s)")
    p.add_argument("--safety", type=float, default=1.5,
                   help="factor on the bytes in flight, for ack latency above the "
                   "typical (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="print the plan as one JSON object")
    p.set_defaults(func=cmd_plan)
# fmt: on


def cmd_plan(args: argparse.Namespace) -> int:
    try:
        figures = DEFAULT_FIGURES if args.figures is None else load_figures(args.figures)
        plan = make_plan(
            args.target_gbps, node_type(args.node), figures,
            ack_latency_s=args.ack_latency_s, pod_vcpu=args.pod_vcpu,
            cpu_target=args.cpu_target, safety=args.safety, channels=args.channels,
            pod_mbps=args.pod_mbps,
        )  # fmt: skip
    except ValueError as e:
        print(f"elastic-channels plan: error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(plan) if args.json else render(plan))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="elastic-channels plan", description=DESCRIPTION)
    configure_parser(parser)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
