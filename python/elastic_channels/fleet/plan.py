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
the SDK throttles at. The sources disagree by a factor of four, so the plan prints
every sizing, the conservative (most pods) and the optimistic (fewest) end, and the
``deploy/run_job.sh`` line for the conservative end (``--optimistic``: the other).
``--figures FILE`` (a ``benches/bench_channels.py --out`` result, or a find-max result:
``find_max_figures.py``; repeatable) replaces the local sources; the reference stays
beside it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from ..worker.settings import BY_NAME as SETTINGS_BY_NAME
from .find_max_figures import figures_document, is_find_max, is_run_result
from .nodes import DEFAULT_NODE, NODES, REFERENCE, NodeType, ceil_count, node_type, reference_at

NOT_RECORDED = "not recorded"


@dataclass(frozen=True)
class Origin:
    """Where a figure was measured; every field is text for a reader."""

    bench: str = NOT_RECORDED
    date: str = NOT_RECORDED
    machine: str = NOT_RECORDED  # architecture, CPUs, how shared
    target: str = NOT_RECORDED  # what answered the worker: a sink, the emulator, Snowflake
    answer_delay: str = NOT_RECORDED
    sdk_mode: str = NOT_RECORDED  # file or rowset
    bound: str = NOT_RECORDED  # what held the rate back
    command: str = NOT_RECORDED
    snowflake: bool = False  # measured against Snowflake


ORIGIN_TEXT_KEYS = tuple(f.name for f in fields(Origin) if f.name != "snowflake")


@dataclass(frozen=True)
class Figures:
    per_channel_mbps: float  # one channel flat out, MB/s (10^6 bytes/s)
    per_vcpu_mbps: float  # what one vCPU was seen to push, over as many channels as it took
    cpu_s_per_gb: float  # CPU-seconds per GB sent, the whole worker process
    rss_mib_per_pod: float  # a worker's resident memory apart from bytes in flight
    inflight_factor: float = 1.0  # bytes in flight / (rate x ack latency), measured
    source: str = ""
    label: str = ""
    origin: Origin = field(default_factory=Origin)


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
    "JSON object (or a benches/bench_channels.py --out result, with it under the key "
    "'figures'): " + ", ".join(FIGURE_KEYS) + " (positive numbers); optional: 'source' "
    'and \'label\' (text), \'inflight\': {"mb_per_s", "ack_latency_s", "bytes"} (the bytes '
    "in flight a run needed at that rate and ack latency), 'origin': {"
    + ", ".join(f'"{k}"' for k in ORIGIN_TEXT_KEYS)
    + ' (text), "snowflake" (true if measured against Snowflake)}'
)


def _positive(where: str, key: str, value: Any) -> float:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not (number and value > 0 and math.isfinite(value)):
        raise ValueError(f"{where}: {key!r} must be a positive number, got {value!r}")
    return float(value)


def _result_origin(result: dict[str, Any]) -> dict[str, Any]:
    """What a benchmark result says about where its figures came from, beside them."""
    got: dict[str, Any] = {}
    bench = result.get("benchmark")
    if isinstance(bench, str):
        got["bench"] = f"benches/{bench}.py"
    for key in ("date", "command", "sdk_mode"):
        if isinstance(result.get(key), str):
            got[key] = result[key]
    machine = result.get("machine")
    if isinstance(machine, dict) and "arch" in machine:
        cpus = f", {machine['cpus']} CPUs" if "cpus" in machine else ""
        got["machine"] = f"{machine['arch']}{cpus}; the worker pinned to one"
    if bench == "bench_channels":
        got["target"] = "the emulator's drop sink on another CPU: rows checked, then dropped"
        # figures_of takes its figures from the checked, clean points at the least delay
        points = result.get("points")
        delays: list[float] = [
            p["answer_delay_s"] for p in points if isinstance(p, dict)
            and isinstance(p.get("answer_delay_s"), int | float)
            and p.get("sink_check") and p.get("exit") == 0
        ] if isinstance(points, list) else []  # fmt: skip
        if delays:
            got["answer_delay"] = f"{min(delays):g} s"
    return got


def _parse_origin(where: str, data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError(f"{where}: 'origin' must be an object, got {data!r}")
    unknown = sorted(set(data) - {*ORIGIN_TEXT_KEYS, "snowflake"})
    if unknown:
        raise ValueError(f"{where}: unknown origin key(s) {', '.join(unknown)}; known: "
                         f"{', '.join(ORIGIN_TEXT_KEYS)}, snowflake")  # fmt: skip
    for key, value in data.items():
        ok = isinstance(value, bool) if key == "snowflake" else isinstance(value, str)
        if not ok:
            kind = "true or false" if key == "snowflake" else "text"
            raise ValueError(f"{where}: origin {key!r} must be {kind}, got {value!r}")
    return dict(data)


def parse_figures(data: Any, where: str) -> Figures:
    """Figures from a parsed JSON document; ValueError naming ``where`` and the key."""
    derived: dict[str, Any] = {}
    if isinstance(data, dict) and "figures" in data:
        derived = _result_origin(data)
        data, where = data["figures"], f"{where} ['figures']"
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a JSON object of figures ({FIGURES_HELP})")
    unknown = sorted(set(data) - {*FIGURE_KEYS, "source", "inflight", "label", "origin"})
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {FIGURES_HELP}")
    missing = [k for k in FIGURE_KEYS if k not in data]
    if missing:
        raise ValueError(f"{where}: missing {', '.join(missing)}")
    values = {k: _positive(where, k, data[k]) for k in FIGURE_KEYS}
    source = data.get("source", str(where))
    named = (
        f"{Path(derived['bench']).stem} {derived['date']}"
        if {"bench", "date"} <= set(derived)
        else str(where)
    )
    label = data.get("label", named)
    for key, text in (("source", source), ("label", label)):
        if not isinstance(text, str):
            raise ValueError(f"{where}: {key!r} must be text, got {text!r}")
    origin = Origin(**{**derived, **_parse_origin(where, data.get("origin", {}))})
    factor = 1.0
    if "inflight" in data:
        inflight = data["inflight"]
        if not isinstance(inflight, dict) or set(inflight) != set(INFLIGHT_KEYS):
            raise ValueError(f"{where}: 'inflight' must be an object with exactly "
                             f"{', '.join(INFLIGHT_KEYS)}, got {inflight!r}")  # fmt: skip
        n = {k: _positive(f"{where} ['inflight']", k, inflight[k]) for k in INFLIGHT_KEYS}
        factor = n["bytes"] / (n["mb_per_s"] * 1e6 * n["ack_latency_s"])
    return Figures(**values, inflight_factor=factor, source=source, label=label, origin=origin)


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
    if is_find_max(data) or is_run_result(data):  # run --find-max's result
        data = figures_document(data, where)
    return parse_figures(data, where)


#: What plan sizes from without --figures: one JSON file a source, shipped beside this
#: module (docs/PERFORMANCE.md has each run in full).
FIGURES_DIR = Path(__file__).with_name("figures")
DEFAULT_SOURCES: tuple[Figures, ...] = tuple(
    load_figures(path, "the shipped figures") for path in sorted(FIGURES_DIR.glob("*.json"))
)
#: The reference's figures (the one source measured against Snowflake): kept beside
#: whatever --figures gives.
REFERENCE_FIGURES: Figures = next(f for f in DEFAULT_SOURCES if f.origin.snowflake)


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
    need_mib = (figures.rss_mib_per_pod + allowance / 2**20) / SDK_THROTTLE_SHARE
    pod_mib = ceil_count(need_mib / MEMORY_STEP_MIB) * MEMORY_STEP_MIB
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
        "pod_rss_mib": figures.rss_mib_per_pod, "pod_inflight_needed_bytes": math.ceil(needed),
        "worker_max_inflight_bytes": allowance,
        "pod_cpu_used": rate * figures.cpu_s_per_gb / 1000, "pods_per_node": per_node,
        "nodes": nodes, "vcpu_pods": pods * pod_vcpu, "vcpu_nodes": nodes * node.vcpu,
        "memory_pods_gib": pods * pod_mib / 1024, "memory_nodes_gib": nodes * node.memory_gib,
        "cpu_used": target_gbps * figures.cpu_s_per_gb,
        "reference": reference_at(target_gbps),
    }  # fmt: skip


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
    does not fit the node, is kept with its error; ValueError when no source can."""
    _check_inputs(target_gbps, kwargs.get("ack_latency_s", 0.6), kwargs.get("pod_vcpu", 1.0),
                  kwargs.get("cpu_target", 0.8), kwargs.get("safety", 1.5),
                  kwargs.get("channels"), kwargs.get("pod_mbps"))  # fmt: skip
    if not sources:
        raise ValueError("no figures to size from")
    sized: list[dict[str, Any]] = []
    for f in sources:
        try:
            sized.append(make_plan(target_gbps, node, f, **kwargs))
        except ValueError as e:
            sized.append({"label": f.label, "figures": asdict(f), "error": str(e)})
    ok = [p for p in sized if "error" not in p]
    if not ok:
        raise ValueError("; ".join(p["error"] for p in sized))
    # most pods first: the conservative end first, the optimistic last, then the errors
    ok.sort(key=_size_key, reverse=True)
    sized = [*ok, *(p for p in sized if "error" in p)]
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


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _fill(text: str, indent: str = "  ", width: int = 100, then: str | None = None) -> str:
    then = indent + "  " if then is None else then
    return textwrap.fill(text, width, initial_indent=indent, subsequent_indent=then)


def _describe_source(i: int, f: dict[str, Any]) -> list[str]:
    o = f["origin"]
    head = (
        f"[{i}] {f['label']}: {f['per_vcpu_mbps']:g} MB/s a vCPU, {f['per_channel_mbps']:g} "
        f"on one channel, {f['cpu_s_per_gb']:g} CPU-s/GB, {f['rss_mib_per_pod']:g} MiB RSS"
    )
    where = (
        f"{o['bench']}, {o['date']}; {o['machine']}; against: {o['target']}; answer "
        f"delay: {o['answer_delay']}; SDK mode: {o['sdk_mode']}; bound: {o['bound']}"
    )
    lines = [_fill(head, "  ", 100, "      "), _fill(where, "      ")]
    if f["source"] and f["source"] != f["label"]:
        lines.append(_fill(f["source"], "      "))
    return lines


def _table(sizings: list[dict[str, Any]]) -> list[str]:
    rows = [("figure", "MB/s a pod", "channels", "in flight", "memory", "pods", "nodes",
             "CPU a pod")]  # fmt: skip
    for i, s in enumerate(sizings, 1):
        mark = " *" if s["figures"]["origin"]["snowflake"] else ""
        name = f"[{i}] {s['label']}{mark}"
        if "error" in s:
            rows.append((name, "cannot", "-", "-", "-", "-", "-", "-"))
            continue
        rows.append((
            name, f"{s['pod_mbps']:.1f}", str(s["channels_per_pod"]),
            f"{s['worker_max_inflight_bytes'] / 1e6:g} MB", f"{s['pod_memory_mib']} MiB",
            str(s["pods"]), str(s["nodes"]), f"{s['pod_cpu_used']:.2f} vCPU",
        ))  # fmt: skip
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    aligns = ["<"] + [">"] * (len(widths) - 1)
    return ["  " + "  ".join(f"{c:{a}{w}}" for c, a, w in zip(r, aligns, widths, strict=True))
            for r in rows]  # fmt: skip


def _range_text(p: dict[str, Any]) -> str:
    sizings, node = p["sizings"], p["node"]["name"]
    (lo, hi), (nlo, nhi) = p["range"]["pods"], p["range"]["nodes"]
    failed = [f"[{i}]" for i, s in enumerate(sizings, 1) if "error" in s]
    carried = [f"[{i}]" for i, s in enumerate(sizings, 1) if "error" not in s]
    text = (
        f"{' and '.join(failed)} cannot size this plan (see below); it rests on "
        f"{', '.join(carried)} alone: "
        if failed
        else ""
    )
    if (lo, nlo) != (hi, nhi):
        return text + (
            f"range: {lo} to {hi} pods on {nlo} to {nhi} x {node} (conservative end "
            f"[{p['conservative_at']}], optimistic end [{p['optimistic_at']}]); the "
            "figures disagree"
        )
    every = "" if failed else "every figure gives "
    return text + f"{every}{_count(lo, 'pod')} on {nlo} x {node}"


def _reference_text(p: dict[str, Any]) -> str:
    ref, at = p["reference_measured"], p["reference"]
    text = (
        f"the reference measured ({ref['arch']} against {ref['target']}): "
        f"{ref['pod_mbps']:g} MB/s per {ref['pod_vcpu']:g}-vCPU pod, {ref['pods']} pods of "
        f"{ref['pod_vcpu']:g} vCPU / {ref['pod_memory_mib']} MiB on {ref['nodes']} x "
        f"{ref['node']}, {ref['total_gbps']:g} GB/s; {ref['cpu_m'][0]}-{ref['cpu_m'][1]}m "
        f"CPU and {ref['rss_mib'][0]}-{ref['rss_mib'][1]} MiB RSS a pod; batch acks "
        f"{ref['ack_latency_ms'][0]}-{ref['ack_latency_ms'][1]} ms"
    )
    if not math.isclose(p["target_gbps"], ref["total_gbps"]):
        text += (
            f"; its layout at {p['target_gbps']:g} GB/s: {_count(at['pods'], 'pod')} on "
            f"{at['nodes']} x {at['node']}"
        )
    return text


def _chosen_text(p: dict[str, Any]) -> list[str]:
    """The in-flight figure, the memory and the command of the sizing the command runs:
    one in-flight figure, printed once, the same in the command line."""
    f = p["figures"]
    needed, allowance = p["pod_inflight_needed_bytes"], p["worker_max_inflight_bytes"]
    default = WORKER_MAX_INFLIGHT_DEFAULT / 1e6
    covers = (
        f"the worker's default {default:g} MB covers that, so the plan keeps it"
        if allowance == WORKER_MAX_INFLIGHT_DEFAULT
        else f"more than the worker's default {default:g} MB, so the plan gives "
        f"{allowance / 1e6:g} MB"
    )
    chosen = f"[{p['runs_at']}]"
    other_at = p["optimistic_at"] if p["runs"] == "conservative" else p["conservative_at"]
    switch = "--optimistic" if p["runs"] == "conservative" else "without --optimistic"
    prose = [
        f"in flight a pod ({chosen}): {needed / 1e6:.0f} MB needed ({p['pod_mbps']:.1f} "
        f"MB/s x {p['ack_latency_s']:g} s ack latency x {f['inflight_factor']:.3g} "
        f"in-flight factor x {p['safety']:g} safety); {covers}: --max-inflight-bytes "
        f"{allowance} below, and the memory counts it",
        f"memory a pod ({chosen}): {f['rss_mib_per_pod']:g} MiB RSS + "
        f"{allowance / 2**20:.0f} MiB in flight, over {SDK_THROTTLE_SHARE:g} (the SDK "
        f"throttles at that share of the pod), rounded up to {MEMORY_STEP_MIB} MiB: "
        f"{p['pod_memory_mib']} MiB",
        f"to run the {p['runs']} end, {chosen} {p['label']} ({_count(p['pods'], 'pod')} on "
        f"{_count(p['nodes'], 'node')})"
        + (f"; {switch} for [{other_at}]" if other_at != p["runs_at"] else "")
        + ":",
    ]
    return [*(_fill(x, "") for x in prose), "  " + p["command"]]


def render(p: dict[str, Any]) -> str:
    sizings = p["sizings"]
    head = (
        f"plan for {p['target_gbps']:g} GB/s on {NodeType(**p['node']).describe()}; pods "
        f"of {p['pod_vcpu']:g} vCPU, ack latency {p['ack_latency_s']:g} s, CPU target "
        f"{p['cpu_target']:g}"
    )
    snowflake = [f"[{i}]" for i, s in enumerate(sizings, 1) if s["figures"]["origin"]["snowflake"]]
    star = (
        f"* measured against Snowflake: {', '.join(snowflake)} only"
        if snowflake
        else "none of these figures was measured against Snowflake"
    )
    out = [_fill(head, ""), *_table(sizings), star, _fill(_range_text(p), ""),
           _fill(_reference_text(p), "")]  # fmt: skip
    out += [_fill(f"[{i}] cannot: {s['error']}", "")
            for i, s in enumerate(sizings, 1) if "error" in s]  # fmt: skip
    if p["pod_vcpu"] != 1:
        out.append(_fill(
            f"every figure was measured on one vCPU; {p['pod_vcpu']:g} vCPU a pod scales "
            "the per-vCPU rate, which no one measured (the reference: more CPU for one "
            "worker did not raise its rate)", ""))  # fmt: skip
    out.append("where the figures come from:")
    for i, s in enumerate(sizings, 1):
        out += _describe_source(i, s["figures"])
    return "\n".join(out + _chosen_text(p))


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


# fmt: off
def configure_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target-gbps", type=float, required=True,
                   help="fleet-wide throughput to plan for, GB/s of NDJSON (the reference: 41.8)")
    p.add_argument("--node", default=DEFAULT_NODE,
                   help=f"node type, one of {', '.join(NODES)} (default: %(default)s)")
    p.add_argument("--ack-latency-s", type=float, default=0.6,
                   help="batch ack latency to hold bytes in flight for (default: %(default)s, "
                   "the reference's)")
    p.add_argument("--figures", type=Path, action="append",
                   help="measured figures of a run, in place of the local ones (the "
                   "reference's stay beside them); repeat it for several runs: a "
                   "find-max result (run --find-max: the rate a worker held, its CPU-s/GB "
                   f"and RSS), or a {FIGURES_HELP}")
    p.add_argument("--optimistic", action="store_true",
                   help="print the command for the optimistic end of the range (fewest "
                   "pods) instead of the conservative end (most pods)")
    p.add_argument("--pod-vcpu", type=float, default=1.0,
                   help="vCPU per pod (default: %(default)s, as the reference and every "
                   "measured figure)")
    p.add_argument("--channels", type=int,
                   help="channels per pod (default: as many as the pod's rate needs)")
    p.add_argument("--pod-mbps", type=float,
                   help="MB/s per pod (default: the most each figure allows at --cpu-target)")
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
        sources = DEFAULT_SOURCES
        if args.figures:
            sources = (*(load_figures(path) for path in args.figures), REFERENCE_FIGURES)
        plan = make_range(
            args.target_gbps, node_type(args.node), sources, optimistic=args.optimistic,
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
