"""``elastic-channels plan``: size a fleet for a target throughput from a range of
measured figures, each named with where it came from.

A figure source is one measurement of a 1-vCPU worker: the MB/s it was seen to push
(per vCPU, and on one channel), its whole-process CPU per GB at that rate, and its RSS,
with where it was measured (bench, machine, what answered it, the answer delay, the
SDK's mode). The shipped sources (``figures/*.json`` beside this module) are the local
drop-sink bench (rowset mode), the local worker through the real SDK in file mode, and
the reference fleet on Graviton against Snowflake, the only one measured there.

Per source: a pod carries at most the rate its vCPU was seen to push, the rate its CPU
target allows at that source's CPU-s/GB, and what its channels carry; pods = target /
that rate, nodes = pods / what fits on a node, memory per pod = RSS + the bytes it may
hold in flight (never below the worker's default allowance), over the share of the pod
the SDK throttles at; the memory line says how much of it is headroom over the
measured peak RSS and the bytes in flight. The sources disagree by a factor of four, so
the plan prints every sizing, the conservative (most pods) and the optimistic (fewest)
end, and the ``deploy/run_job.sh`` line for the conservative end (``--optimistic``: the
other).

A figure the emulator held down (``Figures.bounded_by``: its channel limit, its drop
sink, its own CPU) measured the emulator, not the client: it is shown as a bound (the
client pushed at least that) and nothing is sized from it, so no deploy line comes of
it; with nothing else to size from, plan refuses.
``--figures FILE`` (a ``benches/bench_channels.py --out`` result, or a find-max result:
``find_max_figures.py``; repeatable) replaces the local sources; the reference stays
beside it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..results.price import price_settings
from .nodes import DEFAULT_NODE, NODES, REFERENCE, NodeType, ceil_count, node_type, reference_at
from .plan_cost import add_cost_arguments, billable_share, cost_text, hourly_cost
from .plan_figures import (  # noqa: F401 (re-exported: plan's figures)
    DEFAULT_SOURCES,
    DROP_SINK_BOUND,
    FIGURE_KEYS,
    FIGURES_DIR,
    FIGURES_HELP,
    INFLIGHT_KEYS,
    NOT_RECORDED,
    ORIGIN_TEXT_KEYS,
    REFERENCE_FIGURES,
    Figures,
    Origin,
    load_figures,
    parse_figures,
)
from .plan_limits import (
    MEMORY_STEP_MIB,
    SDK_CHANNEL_INFLIGHT_MB,
    SDK_THROTTLE_SHARE,
    WORKER_MAX_INFLIGHT_DEFAULT,
)
from .plan_text import render


def _pod_rate(f: Figures, pod_vcpu: float, cpu_target: float,
              channels: int | None, pod_mbps: float | None) -> float:  # fmt: skip
    """The MB/s one pod is planned to carry at most; ValueError if asked for more.

    At most what its vCPU was seen to push, what its CPU target allows at the source's
    CPU per GB, and what its channels carry, when they are given."""
    seen = f.per_vcpu_mbps * pod_vcpu
    cpu_limit = pod_vcpu * cpu_target * 1000 / f.cpu_s_per_gb
    channel_limit = math.inf if channels is None else channels * f.per_channel_mbps
    named = f" ({f.label})" if f.label else ""
    if pod_mbps is None:
        return min(seen, cpu_limit, channel_limit)
    if pod_mbps > seen * (1 + 1e-9):
        raise ValueError(
            f"--pod-mbps {pod_mbps:g} is more than {pod_vcpu:g} vCPU was seen to push"
            f"{named}: {f.per_vcpu_mbps:g} MB/s per vCPU; lower it, or raise --pod-vcpu"
        )
    if pod_mbps > cpu_limit * (1 + 1e-9):
        raise ValueError(
            f"--pod-mbps {pod_mbps:g} is more than {pod_vcpu:g} vCPU can push at a CPU "
            f"target of {cpu_target:g}{named}: {cpu_limit:.4g} MB/s at "
            f"{f.cpu_s_per_gb:g} CPU-s/GB; lower it, or raise --pod-vcpu or --cpu-target"
        )
    if pod_mbps > channel_limit * (1 + 1e-9):
        raise ValueError(
            f"--pod-mbps {pod_mbps:g} is more than {channels} channel(s) carry{named} "
            f"({f.per_channel_mbps:g} MB/s each); give --channels "
            f"{ceil_count(pod_mbps / f.per_channel_mbps)} or lower --pod-mbps"
        )
    return pod_mbps


def _check_inputs(target_gbps: float, ack_latency_s: float, pod_vcpu: float,
                  cpu_target: float, safety: float, channels: int | None,
                  pod_mbps: float | None) -> None:  # fmt: skip
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


def make_plan(target_gbps: float, node: NodeType, figures: Figures, *,
              ack_latency_s: float = 0.6, pod_vcpu: float = 1.0, cpu_target: float = 0.8,
              safety: float = 1.5, channels: int | None = None,
              pod_mbps: float | None = None) -> dict[str, Any]:  # fmt: skip
    """The fleet for ``target_gbps`` (GB/s, 10^9 bytes) on ``node`` from one source's
    figures; ValueError naming the flag when an input is out of range or a pod cannot
    fit."""
    _check_inputs(target_gbps, ack_latency_s, pod_vcpu, cpu_target, safety, channels, pod_mbps)
    capacity = _pod_rate(figures, pod_vcpu, cpu_target, channels, pod_mbps)
    target_mbps = target_gbps * 1000
    pods = ceil_count(target_mbps / capacity)
    rate = target_mbps / pods  # what each pod is then asked to carry
    needed = rate * 1e6 * ack_latency_s * figures.inflight_factor * safety
    # One in-flight figure: what the rate needs, never below the worker's default; the
    # channels, the memory and the command line all use it.
    allowance = max(math.ceil(needed / 1e6) * 10**6, WORKER_MAX_INFLIGHT_DEFAULT)
    # Enough channels for the rate, and for the bytes in flight under the SDK's cap.
    n_channels = channels or max(ceil_count(rate / figures.per_channel_mbps),
                                 ceil_count(allowance / 1e6 / SDK_CHANNEL_INFLIGHT_MB))  # fmt: skip
    used_mib = figures.rss_mib_per_pod + allowance / 2**20  # peak RSS + bytes in flight
    pod_mib = ceil_count(used_mib / SDK_THROTTLE_SHARE / MEMORY_STEP_MIB) * MEMORY_STEP_MIB
    per_node = node.pods_per_node(pod_vcpu, pod_mib)
    if per_node < 1:
        raise ValueError(
            f"a pod of {pod_vcpu:g} vCPU and {pod_mib} MiB does not fit on {node.describe()}; "
            f"pick a larger --node, or lower --pod-vcpu or --pod-mbps"
        )
    nodes = ceil_count(pods / per_node)
    return {
        "label": figures.label, "target_gbps": target_gbps, "ack_latency_s": ack_latency_s,
        "node": asdict(node), "figures": asdict(figures), "cpu_target": cpu_target,
        "safety": safety, "pods": pods, "channels_per_pod": n_channels, "pod_mbps": rate,
        "pod_capacity_mbps": capacity, "pod_mbps_given": pod_mbps is not None,
        "pod_vcpu": pod_vcpu, "pod_memory_mib": pod_mib,
        "pod_rss_mib": figures.rss_mib_per_pod,
        "pod_memory_headroom_mib": pod_mib - used_mib,
        "pod_inflight_needed_bytes": math.ceil(needed),
        "worker_max_inflight_bytes": allowance,
        "pod_cpu_used": rate * figures.cpu_s_per_gb / 1000, "pods_per_node": per_node,
        "nodes": nodes, "vcpu_pods": pods * pod_vcpu, "vcpu_nodes": nodes * node.vcpu,
        "memory_pods_gib": pods * pod_mib / 1024, "memory_nodes_gib": nodes * node.memory_gib,
        "cpu_used": target_gbps * figures.cpu_s_per_gb,
        "reference": reference_at(target_gbps),
    }  # fmt: skip


def _bound(f: Figures, pod_vcpu: float) -> dict[str, Any]:
    """A source the emulator held down, as the plan keeps it: what the client pushed at
    least (a pod of ``pod_vcpu``), and what held it."""
    return {"label": f.label, "figures": asdict(f), "bound": f.bounded_by,
            "pod_mbps_at_least": f.per_vcpu_mbps * pod_vcpu}  # fmt: skip


def _size_key(p: dict[str, Any]) -> tuple[int, int, int]:
    return (p["pods"], p["nodes"], p["pod_memory_mib"])


def command_line(p: dict[str, Any]) -> str:
    """The deploy/run_job.sh line that runs sizing ``p``."""
    n = p["channels_per_pod"]
    return (
        f"deploy/run_job.sh RUN_ID --workers {p['pods']} --target-bps "
        f"{p['pod_mbps']:.4g}e6 --duration-seconds SECONDS"
        + (f" --channels {n}" if n > 1 else "")
        + f" --max-inflight-bytes {p['worker_max_inflight_bytes']} --memory-mib "
        f"{p['pod_memory_mib']}"
    )


def make_range(target_gbps: float, node: NodeType,
               sources: Sequence[Figures] = DEFAULT_SOURCES, *, optimistic: bool = False,
               **kwargs: Any) -> dict[str, Any]:  # fmt: skip
    """One sizing per source (make_plan's keyword arguments), the range between them,
    and the one the command runs: the conservative end (most pods), or the optimistic
    end (fewest). The top level is that sizing's, so a script reads its pods and
    command where it always did. A source that cannot carry --pod-mbps, or whose pod
    does not fit the node, is kept with its error; a source the emulator held down is
    kept as a bound (``bound``: what held it), sized from by nothing; ValueError when
    no source can size the plan."""
    _check_inputs(target_gbps, kwargs.get("ack_latency_s", 0.6), kwargs.get("pod_vcpu", 1.0),
                  kwargs.get("cpu_target", 0.8), kwargs.get("safety", 1.5),
                  kwargs.get("channels"), kwargs.get("pod_mbps"))  # fmt: skip
    if not sources:
        raise ValueError("no figures to size from")
    sized: list[dict[str, Any]] = []
    for f in sources:
        if f.bounded_by:
            sized.append(_bound(f, kwargs.get("pod_vcpu", 1.0)))
            continue
        try:
            sized.append(make_plan(target_gbps, node, f, **kwargs))
        except ValueError as e:
            sized.append({"label": f.label, "figures": asdict(f), "error": str(e)})
    ok = [p for p in sized if "error" not in p and "bound" not in p]
    bounds = [p for p in sized if "bound" in p]
    if not ok:
        raise ValueError("; ".join(
            [p["error"] for p in sized if "error" in p]
            + [f"{p['label']} was held by {p['bound']}: it measured the emulator, not the "
               "client, so no fleet is sized from it" for p in bounds]
        ))  # fmt: skip
    # most pods first: the conservative end first, the optimistic last, then the bounds
    # and the errors
    ok.sort(key=_size_key, reverse=True)
    sized = [*ok, *bounds, *(p for p in sized if "error" in p)]
    chosen_at = len(ok) if optimistic else 1
    return {
        **sized[chosen_at - 1],
        "runs": "optimistic" if optimistic else "conservative",
        "conservative": ok[0]["label"],
        "conservative_at": 1,
        "optimistic": ok[-1]["label"],
        "optimistic_at": len(ok),
        "runs_at": chosen_at,
        "range": {key: [ok[-1][key], ok[0][key]] for key in ("pods", "nodes", "pod_mbps")},
        "sizings": sized,
        "command": command_line(sized[chosen_at - 1]),
        "reference_measured": REFERENCE,
    }


DESCRIPTION = (
    "Size a fleet for a target throughput: pods, channels per pod, nodes, vCPU and "
    "memory, once per measured figure, with where each was measured (bench, machine, "
    "what answered, answer delay, SDK mode) and beside them what the reference measured "
    "on Graviton against Snowflake (455 pods of 1 vCPU / 1 GiB at 92 MB/s on 15 "
    "m7g.8xlarge, 41.8 GB/s). Without --figures the figures are the local drop-sink "
    "bench (benches/bench_channels.py, rowset mode), the local worker through the real "
    "SDK in file mode (benches/bench_worker_paths.py) and the reference (shipped in "
    "elastic_channels/fleet/figures/; the runs in docs/PERFORMANCE.md). The printed "
    "deploy/run_job.sh line runs the conservative end (most pods) unless --optimistic. "
    "MB and GB are 10^6 and 10^9 bytes."
)


def configure_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--target-gbps",
        type=float,
        required=True,
        help="fleet-wide throughput to plan for, GB/s of NDJSON (the reference: 41.8)",
    )
    p.add_argument(
        "--node",
        default=DEFAULT_NODE,
        help=f"node type, one of {', '.join(NODES)} (default: %(default)s)",
    )
    p.add_argument(
        "--ack-latency-s",
        type=float,
        default=0.6,
        help="batch ack latency to hold bytes in flight for (default: %(default)s, "
        "the reference's)",
    )
    p.add_argument(
        "--figures",
        type=Path,
        action="append",
        help="measured figures of a run, in place of the local ones (the "
        "reference's stay beside them); repeat it for several runs: a "
        "find-max result (run --find-max: the rate a worker held, its CPU-s/GB "
        f"and RSS), or a {FIGURES_HELP}",
    )
    p.add_argument(
        "--optimistic",
        action="store_true",
        help="print the command for the optimistic end of the range (fewest "
        "pods) instead of the conservative end (most pods)",
    )
    p.add_argument(
        "--pod-vcpu",
        type=float,
        default=1.0,
        help="vCPU per pod (default: %(default)s, as the reference and every measured figure)",
    )
    p.add_argument(
        "--channels", type=int, help="channels per pod (default: as many as the pod's rate needs)"
    )
    p.add_argument(
        "--pod-mbps",
        type=float,
        help="MB/s per pod (default: the most each figure allows at --cpu-target)",
    )
    p.add_argument(
        "--cpu-target",
        type=float,
        default=0.8,
        help="share of a pod's vCPU the plan may use (default: %(default)s)",
    )
    p.add_argument(
        "--safety",
        type=float,
        default=1.5,
        help="factor on the bytes in flight, for ack latency above the "
        "typical (default: %(default)s)",
    )
    add_cost_arguments(p)
    p.add_argument("--json", action="store_true", help="print the plan as one JSON object")
    p.set_defaults(func=cmd_plan)


# fmt: on


def cmd_plan(args: argparse.Namespace) -> int:
    try:
        sources = DEFAULT_SOURCES
        if args.figures:
            sources = (*(load_figures(path) for path in args.figures), REFERENCE_FIGURES)
        plan = make_range(
            args.target_gbps, node_type(args.node), sources, optimistic=args.optimistic,
            ack_latency_s=args.ack_latency_s, pod_vcpu=args.pod_vcpu,
            cpu_target=args.cpu_target, safety=args.safety, channels=args.channels,
            pod_mbps=args.pod_mbps,
        )  # fmt: skip
        price = price_settings(vars(args), os.environ)
        if args.node_price_per_hour is not None and not args.node_price_per_hour >= 0:
            raise ValueError(
                f"--node-price-per-hour must be 0 or more, got {args.node_price_per_hour}"
            )
        plan["cost"] = hourly_cost(args.target_gbps, plan["nodes"], price,
                                   args.node_price_per_hour, billable_share())  # fmt: skip
    except ValueError as e:  # SettingError too
        print(f"elastic-channels plan: error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(plan))
    else:
        print(render(plan) + "\n" + cost_text(plan["cost"], plan["nodes"]))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="elastic-channels plan", description=DESCRIPTION)
    configure_parser(parser)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
