"""Thresholds: a scenario's bounds on a run's figures, and whether each held.

A scenario's ``thresholds`` block maps a figure's name to its bounds::

    thresholds:
      ack_p99_ms: {max: 2000}
      mb_per_s: {min: 9.5, max: 11}

:func:`check` returns one :class:`Failure` per bound that did not hold. A figure this run
did not measure (``None``, or absent: ingest-to-visible latency against a table without
row timestamps, ``lost`` on an account, where nothing counts the landed rows) FAILS its
bound, as "not measured": a gate that cannot be checked does not pass silently. A figure
name that is not one of :data:`FIGURE_NAMES`, a bound other than ``max``/``min``, or a
bound that is not a number is a :class:`ThresholdError` naming it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..scenario.figures import FIGURES

__all__ = ["FIGURE_NAMES", "Failure", "Outcome", "ThresholdError", "check", "evaluate"]

#: The figures a threshold may bound, as a result's ``figures`` names them: the
#: scenario's one list.
FIGURE_NAMES = FIGURES
BOUNDS = ("max", "min")


class ThresholdError(ValueError):
    """A thresholds block that cannot be checked (an unknown figure, a bad bound)."""


@dataclass(frozen=True)
class Outcome:
    """One bound on one figure, and the run's value for it (None: not measured)."""

    figure: str
    bound: str  # "max" or "min"
    limit: float
    value: float | None

    @property
    def held(self) -> bool:
        if self.value is None:
            return False
        return self.value <= self.limit if self.bound == "max" else self.value >= self.limit

    def __str__(self) -> str:
        limit = f"{self.bound} {_num(self.limit)}"
        if self.value is None:
            return f"{self.figure} was not measured in this run, so its {limit} does not hold"
        if self.held:
            return f"{self.figure} {_num(self.value)} is within its {limit}"
        side = "over" if self.bound == "max" else "under"
        return f"{self.figure} {_num(self.value)} is {side} its {limit}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "figure": self.figure,
            "bound": self.bound,
            "limit": self.limit,
            "value": self.value,
            "held": self.held,
            "measured": self.value is not None,
            "text": str(self),
        }


#: A bound that did not hold (its value beyond the limit, or not measured).
Failure = Outcome


def check(thresholds: Mapping[str, Any] | None, figures: Mapping[str, Any]) -> list[Failure]:
    """The bounds of ``thresholds`` that ``figures`` do not hold, in the block's order
    (``max`` before ``min`` within a figure). ThresholdError for a block that names an
    unknown figure or a bound that is not ``max``/``min`` with a number."""
    return [o for o in evaluate(thresholds, figures) if not o.held]


def evaluate(thresholds: Mapping[str, Any] | None, figures: Mapping[str, Any]) -> list[Outcome]:
    """Every bound of ``thresholds`` with its value from ``figures``, held or not."""
    out = []
    for figure, limit_of in parse(thresholds).items():
        value = _value(figures.get(figure))
        for bound, limit in limit_of.items():
            out.append(Outcome(figure, bound, limit, value))
    return out


def parse(thresholds: Mapping[str, Any] | None) -> dict[str, dict[str, float]]:
    """The block, checked: ``{figure: {"max": x, "min": y}}`` (either or both)."""
    if thresholds is None:
        return {}
    if not isinstance(thresholds, Mapping):
        raise ThresholdError(
            f"thresholds: expected a mapping of figure to bounds, got {type(thresholds).__name__}"
        )
    out: dict[str, dict[str, float]] = {}
    for figure, bounds in thresholds.items():
        where = f"thresholds.{figure}"
        if figure not in FIGURE_NAMES:
            raise ThresholdError(
                f"{where}: unknown figure {figure!r}; known: {', '.join(FIGURE_NAMES)}"
            )
        if isinstance(bounds, Mapping):  # a bound of None is one not set (a Bound's default)
            bounds = {k: v for k, v in bounds.items() if v is not None}
        if not isinstance(bounds, Mapping) or not bounds:
            raise ThresholdError(f"{where}: expected {{max: X}} and/or {{min: Y}}, got {bounds!r}")
        limits: dict[str, float] = {}
        for bound in BOUNDS:  # max first, then min, whatever order the block has
            if bound in bounds:
                limits[bound] = _limit(f"{where}.{bound}", bounds[bound])
        unknown = [str(k) for k in bounds if k not in BOUNDS]
        if unknown:
            raise ThresholdError(f"{where}: unknown bound {unknown[0]!r}; a bound is max or min")
        if "max" in limits and "min" in limits and limits["min"] > limits["max"]:
            raise ThresholdError(
                f"{where}: min {_num(limits['min'])} is above max {_num(limits['max'])}; "
                "no value could hold both"
            )
        out[str(figure)] = limits
    return out


def _limit(where: str, x: Any) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise ThresholdError(f"{where}: expected a finite number, got {x!r}")
    return float(x)


def _value(x: Any) -> float | None:
    """A figure's value as a number; None (not measured) for None and anything that is
    not a finite number."""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        return None
    return float(x)


def _num(x: float) -> str:
    return f"{x:g}" if abs(x) < 1e15 else f"{x:.6g}"
