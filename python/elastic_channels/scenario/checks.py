"""The rules across a scenario's keys, each problem at the key it is about."""

from __future__ import annotations

import math
from typing import Any

import msgspec

from .errors import Path, close_match
from .figures import FIGURES
from .model import Scenario, Search, Stage

__all__ = ["problems"]

Found = list[tuple[Path, str]]


def problems(s: Scenario) -> Found:
    """Every rule ``s`` breaks, as (key path, message)."""
    out = _not_finite(msgspec.to_builtins(s), ())
    for i, stage in enumerate(s.stages):
        out += _stage(stage, ("stages", i))
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
