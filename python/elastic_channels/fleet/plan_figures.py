"""The figures a plan sizes from: one measured 1-vCPU worker each (its MB/s, CPU-s/GB
and RSS) with where it was measured; the shipped ones (``figures/*.json``), and what
``--figures`` reads (a bench_channels result, or a find-max result)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .find_max_figures import figures_document, is_find_max, is_run_result

__all__ = [
    "DEFAULT_SOURCES", "DROP_SINK_BOUND", "FIGURES_DIR", "FIGURES_HELP", "FIGURE_KEYS",
    "INFLIGHT_KEYS", "NOT_RECORDED", "ORIGIN_TEXT_KEYS", "REFERENCE_FIGURES", "Figures",
    "Origin", "load_figures", "parse_figures",
]  # fmt: skip

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
    #: What outside the client held the rate down, when the emulator did (its channel
    #: limit, its drop sink, its own CPU): the figure measured that, not the client, so
    #: plan shows it as a bound and sizes nothing from it. Empty: nothing known held it.
    bounded_by: str = ""


FIGURE_KEYS = ("per_channel_mbps", "per_vcpu_mbps", "cpu_s_per_gb", "rss_mib_per_pod")
INFLIGHT_KEYS = ("mb_per_s", "ack_latency_s", "bytes")
FIGURES_HELP = (
    "JSON object (or a benches/bench_channels.py --out result, with it under the key "
    "'figures'): " + ", ".join(FIGURE_KEYS) + " (positive numbers); optional: 'source' "
    'and \'label\' (text), \'inflight\': {"mb_per_s", "ack_latency_s", "bytes"} (the bytes '
    "in flight a run needed at that rate and ack latency), 'origin': {"
    + ", ".join(f'"{k}"' for k in ORIGIN_TEXT_KEYS)
    + " (text), \"snowflake\" (true if measured against Snowflake)}, 'bounded_by' (text: "
    "what of the emulator held the rate, if it did: then the figure is shown as a bound "
    "and nothing is sized from it)"
)
#: What held a bench_channels result: it drives the client flat out against the
#: emulator's drop sink, whose CPU sets the rate (docs/PERFORMANCE.md).
DROP_SINK_BOUND = (
    "the emulator's drop sink (benches/bench_channels.py drives the client flat out "
    "against it: the rate is the sink's as much as the client's)"
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
        got["bounded_by"] = DROP_SINK_BOUND
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
    known = {*FIGURE_KEYS, "source", "inflight", "label", "origin", "bounded_by"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {FIGURES_HELP}")
    missing = [k for k in FIGURE_KEYS if k not in data]
    if missing:
        raise ValueError(f"{where}: missing {', '.join(missing)}")
    values = {k: _positive(where, k, data[k]) for k in FIGURE_KEYS}
    source = data.get("source", str(where))
    held_by = derived.pop("bounded_by", "")  # what the result's kind says held it
    bounded_by = data.get("bounded_by", held_by)
    named = (
        f"{Path(derived['bench']).stem} {derived['date']}"
        if {"bench", "date"} <= set(derived)
        else str(where)
    )
    label = data.get("label", named)
    for key, text in (("source", source), ("label", label), ("bounded_by", bounded_by)):
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
    return Figures(**values, inflight_factor=factor, source=source, label=label, origin=origin,
                   bounded_by=bounded_by)  # fmt: skip


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
