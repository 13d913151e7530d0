"""The rules across a scenario's keys, each problem at the key it is about."""

from __future__ import annotations

import math
from typing import Any

import msgspec

from ..measures import MAX_MBPS, MAX_RUN_SECONDS, MIN_MBPS
from .errors import Path, close_match
from .figures import FIGURES
from .model import Scenario, Search, Stage

__all__ = ["MAX_MBPS", "MAX_RUN_SECONDS", "MAX_WORKERS", "MIN_MBPS", "RANGES", "problems"]

Found = list[tuple[Path, str]]

#: Every number has a range a run can hold, so a slip (``mbps: 1e300``, ``seconds:
#: 1e30``, ``workers: 1e9``) is refused naming its key instead of overflowing a worker.
#: A rate (MB/s per worker, a channel's limit too) is in ``measures.MIN_MBPS`` to
#: ``MAX_MBPS``; a stage, the stages together and a search step last at most
#: ``measures.MAX_RUN_SECONDS`` (30 days).
#: The most workers (pods) one run starts.
MAX_WORKERS = 10_000
_RATE = (MIN_MBPS, MAX_MBPS, "MB/s")
_SECONDS = (0.001, MAX_RUN_SECONDS, "s")
#: (key path, "*" for every item of a list; lowest; highest; unit). The model's types
#: say the lower bounds that need no more words (> 0, >= 1); these add the rest.
RANGES: tuple[tuple[Path, float, float, str], ...] = (
    (("workers",), 1, MAX_WORKERS, "workers"),
    (("batch_bytes",), 1000, 10**9, "bytes"),
    (("max_inflight_bytes",), 1000, 10**12, "bytes"),
    (("window_seconds",), 0.1, 3600, "s"),
    (("stages", "*", "seconds"), *_SECONDS),
    (("stages", "*", "mbps"), *_RATE),
    (("stages", "*", "from_mbps"), *_RATE),
    (("stages", "*", "to_mbps"), *_RATE),
    (("destination", "channel_limit_mbps"), *_RATE),
    (("search", "start_mbps"), *_RATE),
    (("search", "step_mbps"), *_RATE),
    (("search", "max_mbps"), *_RATE),
    (("search", "step_seconds"), *_SECONDS),
)


def problems(s: Scenario) -> Found:
    """Every rule ``s`` breaks, as (key path, message)."""
    plain = msgspec.to_builtins(s)
    out = _not_finite(plain, ())
    if not out:
        out += _out_of_range(plain)
    for i, stage in enumerate(s.stages):
        out += _stage(stage, ("stages", i))
    if not out and s.stages_seconds > MAX_RUN_SECONDS:
        out.append(
            (
                ("stages",),
                f"last {_num(s.stages_seconds)} s together, over the {MAX_RUN_SECONDS:,} s "
                "(30 days) a run may last",
            )
        )
    if s.max_inflight_bytes < s.batch_bytes:
        out.append(
            (
                ("max_inflight_bytes",),
                f"{s.max_inflight_bytes} is less than batch_bytes ({s.batch_bytes}): "
                "a worker must be able to hold one batch in flight",
            )
        )
    out += _destination(s)
    out += _workload(s)
    for key in s.sdk_properties:
        if not key or "=" in key or key != key.strip():
            out.append((("sdk_properties", key), "a property name cannot be empty or hold '='"))
    out += _thresholds(s)
    if s.search is not None:
        out += _search(s.search)
    return out


def _not_finite(value: Any, path: Path) -> Found:
    """Infinities and NaN, which a YAML file cannot hold but a flag can."""
    if isinstance(value, float) and not math.isfinite(value):
        return [(path, f"expected a finite number, got {value}")]
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in _not_finite(v, (*path, k))]
    if isinstance(value, list):
        return [x for i, v in enumerate(value) for x in _not_finite(v, (*path, i))]
    return []


def _out_of_range(plain: dict[str, Any]) -> Found:
    out: Found = []
    for pattern, low, high, unit in RANGES:
        for path, value in _values_at(plain, pattern, ()):
            if isinstance(value, (int, float)) and not low <= value <= high:
                said = f"give {_num(low)} to {_num(high)} {unit}"
                out.append((path, f"{_num(value)} is out of range: {said}"))
    return out


def _num(x: float) -> str:
    """``2,592,000``, ``0.001``, ``1e+300``: a number as a range's message says it."""
    if float(x).is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    return f"{x:g}"


def _values_at(data: Any, pattern: Path, path: Path) -> list[tuple[Path, Any]]:
    """The values at ``pattern`` in ``data`` ("*": every item of a list), with their paths."""
    if not pattern:
        return [(path, data)]
    head, rest = pattern[0], pattern[1:]
    if head == "*":
        items = list(enumerate(data)) if isinstance(data, list) else []
        return [x for i, item in items for x in _values_at(item, rest, (*path, i))]
    if isinstance(data, dict) and data.get(head) is not None:
        return _values_at(data[head], rest, (*path, head))
    return []


def _stage(stage: Stage, at: Path) -> Found:
    ramp = (stage.from_mbps, stage.to_mbps)
    if stage.mbps is not None and any(x is not None for x in ramp):
        return [
            (
                at,
                "has both mbps and from_mbps/to_mbps: a stage is a constant rate (mbps) "
                "or a ramp (from_mbps and to_mbps), not both",
            )
        ]
    if stage.mbps is None and all(x is None for x in ramp):
        return [(at, "needs mbps (a constant rate) or from_mbps and to_mbps (a ramp)")]
    if stage.mbps is None and None in ramp:
        lacking = "to_mbps" if stage.to_mbps is None else "from_mbps"
        return [(at, f"a ramp needs both from_mbps and to_mbps; {lacking} is missing")]
    return []


def _workload(s: Scenario) -> Found:
    """A workload that cannot be loaded (an unknown name, a bad file), with why."""
    from ..landing_table import DEFAULT_WORKLOAD, WorkloadArgError, load_checked

    if s.workload == DEFAULT_WORKLOAD:
        return []
    try:
        load_checked(s.workload, "")
    except WorkloadArgError as e:
        return [(("workload",), str(e).removeprefix(": "))]
    return []


def _destination(s: Scenario) -> Found:
    d = s.destination
    out: Found = []
    if d.target == "account":
        if d.table_format == "iceberg":
            out.append(
                (
                    ("destination", "table_format"),
                    "iceberg needs target emulator: on an account the table is what setup "
                    "made (elastic-channels setup --table-format iceberg); leave it native",
                )
            )
        if d.channel_limit_mbps is not None:
            out.append(
                (
                    ("destination", "channel_limit_mbps"),
                    "is the embedded emulator's limit; it needs target emulator (Snowflake "
                    "enforces its own)",
                )
            )
    elif d.profile is not None:
        out.append(
            (
                ("destination", "profile"),
                "is an account's connection profile; it needs target account",
            )
        )
    return out


def _thresholds(s: Scenario) -> Found:
    out: Found = []
    for figure, bound in s.thresholds.items():
        at: Path = ("thresholds", figure)
        if figure not in FIGURES:
            out.append((at, "not a figure a threshold can name" + close_match(figure, FIGURES)))
        elif bound.max is None and bound.min is None:
            out.append((at, "needs max or min (or both), e.g. {max: 2000}"))
        elif bound.max is not None and bound.min is not None and bound.min > bound.max:
            out.append((at, f"min ({bound.min:g}) is above max ({bound.max:g}): none can hold"))
    return out


def _search(search: Search) -> Found:
    out: Found = []
    if search.max_mbps < search.start_mbps:
        out.append(
            (
                ("search", "max_mbps"),
                f"{search.max_mbps:g} is below start_mbps ({search.start_mbps:g})",
            )
        )
    if all(v is None for v in msgspec.structs.astuple(search.bounds)):
        out.append((("search", "bounds"), "every bound is null: nothing would stop the search"))
    return out
