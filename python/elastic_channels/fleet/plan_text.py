"""``elastic-channels plan``'s text: every sizing with where its figures came from, the
range, what the reference measured beside it, and the chosen end's deploy line."""

from __future__ import annotations

import math
import textwrap
from typing import Any

from .nodes import NodeType
from .plan_limits import MEMORY_STEP_MIB, SDK_THROTTLE_SHARE, WORKER_MAX_INFLIGHT_DEFAULT

__all__ = ["render"]


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
        if "bound" in s:  # what the client pushed at least; nothing sized from it
            rows.append((name, f">= {s['pod_mbps_at_least']:.1f}", "-", "-", "-", "bound",
                         "-", "-"))  # fmt: skip
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
    bounds = [f"[{i}]" for i, s in enumerate(sizings, 1) if "bound" in s]
    carried = [f"[{i}]" for i, s in enumerate(sizings, 1) if "error" not in s and "bound" not in s]
    text = ""
    if bounds:
        text += (
            f"{' and '.join(bounds)} {'is a bound' if len(bounds) == 1 else 'are bounds'} "
            "the emulator set, not what the client can do: no pods are sized from "
            f"{'it' if len(bounds) == 1 else 'them'} (see below); "
        )
    if failed:
        text += f"{' and '.join(failed)} cannot size this plan (see below); "
    if failed or bounds:
        text += f"it rests on {', '.join(carried)} alone: "
    if (lo, nlo) != (hi, nhi):
        return text + (
            f"range: {lo} to {hi} pods on {nlo} to {nhi} x {node} (conservative end "
            f"[{p['conservative_at']}], optimistic end [{p['optimistic_at']}]); the "
            "figures disagree"
        )
    every = "" if failed or bounds else "every figure gives "
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
    headroom = p["pod_memory_headroom_mib"]
    used = p["pod_memory_mib"] - headroom
    other_at = p["optimistic_at"] if p["runs"] == "conservative" else p["conservative_at"]
    switch = "--optimistic" if p["runs"] == "conservative" else "without --optimistic"
    prose = [
        f"in flight a pod ({chosen}): {needed / 1e6:.0f} MB needed ({p['pod_mbps']:.1f} "
        f"MB/s x {p['ack_latency_s']:g} s ack latency x {f['inflight_factor']:.3g} "
        f"in-flight factor x {p['safety']:g} safety); {covers}: --max-inflight-bytes "
        f"{allowance} below, and the memory counts it",
        f"memory a pod ({chosen}): {f['rss_mib_per_pod']:g} MiB peak RSS (measured) + "
        f"{allowance / 2**20:.0f} MiB in flight, over {SDK_THROTTLE_SHARE:g} (the SDK "
        f"throttles at that share of the pod), rounded up to {MEMORY_STEP_MIB} MiB: "
        f"{p['pod_memory_mib']} MiB, {headroom:.0f} MiB ({headroom / used:.0%}) of "
        "headroom over the peak RSS and the bytes in flight",
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
    out += [_fill(f"[{i}] is a bound: held by {s['bound']}; the client pushed at least "
                  f"{s['pod_mbps_at_least']:.1f} MB/s a pod there, and may push more", "")
            for i, s in enumerate(sizings, 1) if "bound" in s]  # fmt: skip
    if p["pod_vcpu"] != 1:
        out.append(_fill(
            f"every figure was measured on one vCPU; {p['pod_vcpu']:g} vCPU a pod scales "
            "the per-vCPU rate, which no one measured (the reference: more CPU for one "
            "worker did not raise its rate)", ""))  # fmt: skip
    out.append("where the figures come from:")
    for i, s in enumerate(sizings, 1):
        out += _describe_source(i, s["figures"])
    return "\n".join(out + _chosen_text(p))


# fmt: off
