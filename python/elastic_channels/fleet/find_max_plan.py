"""The search for the highest rate held, as a plan: a scenario's ``search`` block
(or ``run --find-max``'s) checked, and the staircase of ``--stages`` it climbs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..measures import MB

__all__ = [
    "BOUND_KEYS", "DEFAULTS", "HOLD_FRACTION", "MAX_STEPS", "SearchPlan", "plan_from",
    "stages_for",
]  # fmt: skip

#: The window figures a bound may name (each a maximum; None: not a bound).
BOUND_KEYS = ("behind_p99_ms", "ack_p99_ms", "errors", "sdk_retries")
#: A step holds only if the acked bytes reach this share of the bytes it asked for.
HOLD_FRACTION = 0.95
#: At most this many steps (the worker takes at most this many stages).
MAX_STEPS = 1000
#: The search block's defaults (the scenario's ``search`` block has the same).
DEFAULTS: dict[str, Any] = {
    "start_mbps": 5.0, "step_mbps": 5.0, "max_mbps": 200.0, "step_seconds": 10.0,
    "bounds": {"behind_p99_ms": 1000.0, "ack_p99_ms": None, "errors": 0, "sdk_retries": None},
}  # fmt: skip


@dataclass(frozen=True)
class SearchPlan:
    """A checked search: rates per worker in MB/s (10^6 bytes/s)."""

    start_mbps: float
    step_mbps: float
    max_mbps: float
    step_seconds: float
    #: Window figure -> its maximum (only the bounds that are set).
    bounds: Mapping[str, float] = field(default_factory=dict)

    @property
    def steps_mbps(self) -> list[float]:
        """The staircase: start, start + step, ... up to max (included when on a step)."""
        n = math.floor((self.max_mbps - self.start_mbps) / self.step_mbps + 1e-9) + 1
        return [round(self.start_mbps + i * self.step_mbps, 9) for i in range(n)]

    @property
    def seconds(self) -> float:
        """How long the whole staircase runs (warmup apart)."""
        return self.step_seconds * len(self.steps_mbps)

    def as_dict(self) -> dict[str, Any]:
        return {
            "start_mbps": self.start_mbps, "step_mbps": self.step_mbps,
            "max_mbps": self.max_mbps, "step_seconds": self.step_seconds,
            "bounds": {k: self.bounds.get(k) for k in BOUND_KEYS},
            "hold_fraction": HOLD_FRACTION,
        }  # fmt: skip


def _get(search: Any, key: str) -> Any:
    if isinstance(search, Mapping):
        return search.get(key, DEFAULTS.get(key))
    return getattr(search, key, DEFAULTS.get(key))


def _number(where: str, value: Any, *, positive: bool = True) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0 or (positive and value == 0):
        wanted = "a number > 0" if positive else "a number >= 0 or null"
        raise ValueError(f"{where}: expected {wanted}, got {value!r}")
    return float(value)


def plan_from(search: Any, *, window_seconds: float | None = None) -> SearchPlan:
    """A checked plan from a scenario's ``search`` block (its Struct, or a mapping);
    ValueError naming the key (``search.step_mbps: ...``). ``window_seconds``: the run's
    window length; a step must last two of them, so that a window after its first is
    all its own."""
    if isinstance(search, SearchPlan):
        plan = search
    else:
        if isinstance(search, Mapping):
            unknown = sorted(set(search) - set(DEFAULTS))
            if unknown:
                raise ValueError(f"search: unknown key(s) {', '.join(unknown)}; known: "
                                 f"{', '.join(DEFAULTS)}")  # fmt: skip
        values = {k: _number(f"search.{k}", _get(search, k)) for k in DEFAULTS if k != "bounds"}
        plan = SearchPlan(**values, bounds=_bounds(_get(search, "bounds")))
    if plan.max_mbps < plan.start_mbps:
        raise ValueError(f"search.max_mbps: {plan.max_mbps:g} is below start_mbps "
                         f"{plan.start_mbps:g}")  # fmt: skip
    if len(plan.steps_mbps) > MAX_STEPS:
        raise ValueError(
            f"search.max_mbps: {len(plan.steps_mbps)} steps from {plan.start_mbps:g} by "
            f"{plan.step_mbps:g}; at most {MAX_STEPS}"
        )
    if window_seconds is not None and plan.step_seconds < 2 * window_seconds:
        raise ValueError(
            f"search.step_seconds: {plan.step_seconds:g} s is under two windows of "
            f"{window_seconds:g} s: no window after a step's first would be its own"
        )
    return plan


def _bounds(bounds: Any) -> dict[str, float]:
    """The bounds that are set. A mapping's missing keys take the defaults (as the
    scenario's block does); null turns a bound off."""
    if bounds is None:
        return {}
    items = {**DEFAULTS["bounds"], **bounds}.items() if isinstance(bounds, Mapping) else (
        (k, getattr(bounds, k)) for k in BOUND_KEYS if hasattr(bounds, k)
    )  # fmt: skip
    out: dict[str, float] = {}
    for key, value in items:
        if key not in BOUND_KEYS:
            raise ValueError(f"search.bounds: unknown bound {key!r}; known: "
                             f"{', '.join(BOUND_KEYS)}")  # fmt: skip
        if value is not None:
            out[key] = _number(f"search.bounds.{key}", value, positive=False)
    return out


def stages_for(plan: SearchPlan) -> list[dict[str, float]]:
    """The workers' ``--stages``: one constant stage per step, per worker, bytes/s."""
    return [
        {"seconds": plan.step_seconds, "from_bps": r * MB, "to_bps": r * MB}
        for r in plan.steps_mbps
    ]
