"""A worker's load shape: a warmup, then stages, each a constant rate or a linear ramp.

Times are seconds since the schedule's origin (the run's agreed start, ``--start-at``,
or when the channel opened), rates bytes/s. The schedule is data: the pacer
(:mod:`.pacing`) books bytes along it, the meter (:mod:`.meter`) reads each window's
target off it, and ``--channels N`` gives each channel the schedule scaled by 1/N.

The stages come from ``--stages`` (env ``STAGES``) as JSON, per worker, bytes/s::

    [{"seconds": 20, "from_bps": 1e7, "to_bps": 1e7},
     {"seconds": 20, "from_bps": 1e7, "to_bps": 3e7}]

Warmup runs at the first stage's starting rate and ends on a window boundary
(:meth:`Schedule.aligned`), so every window is wholly warmup or wholly not.
"""

from __future__ import annotations

import bisect
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ..measures import MAX_MBPS, MAX_RUN_SECONDS, MB
from ..setting import SettingError

__all__ = ["MAX_STAGES", "WARMUP", "Schedule", "Stage", "parse_stages", "stages_json"]

#: The stage index of warmup, in window lines and batches.
WARMUP = -1
#: At most this many stages (a staircase of a thousand steps is plenty, and each one is
#: an entry of the summary line).
MAX_STAGES = 1000
#: Slack when asking which stage a window's end falls in (window ends are computed on
#: a clock of epoch seconds, good to well under this).
END_SLACK_S = 1e-4
_STAGE_KEYS = ("seconds", "from_bps", "to_bps")


@dataclass(frozen=True)
class Stage:
    """``seconds`` long, the rate going linearly from ``from_bps`` to ``to_bps``
    (equal: a constant rate)."""

    seconds: float
    from_bps: float
    to_bps: float

    def __post_init__(self) -> None:
        for key in _STAGE_KEYS:
            value = getattr(self, key)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"{key} must be a finite number > 0, got {value!r}")

    @property
    def total_bytes(self) -> float:
        return self.seconds * (self.from_bps + self.to_bps) / 2

    @property
    def mean_bps(self) -> float:
        return (self.from_bps + self.to_bps) / 2

    def bytes_until(self, t: float) -> float:
        """The rate's integral from the stage's start to ``t`` seconds into it."""
        return t * (self.from_bps + (self.to_bps - self.from_bps) * t / (2 * self.seconds))

    def time_for(self, nbytes: float) -> float:
        """When, in seconds into the stage, ``nbytes`` are due (``bytes_until``'s
        inverse, in the form that needs no division by the slope)."""
        slope = (self.to_bps - self.from_bps) / self.seconds
        root = math.sqrt(max(0.0, self.from_bps**2 + 2 * slope * nbytes))
        return 2 * nbytes / (self.from_bps + root)

    def scaled(self, factor: float) -> Stage:
        return Stage(self.seconds, self.from_bps * factor, self.to_bps * factor)


class Schedule:
    """``warmup_s`` at the first stage's starting rate, then ``stages`` in turn.

    Past its end the schedule goes on at the last rate for the pacer's sake (a caller
    stops at :attr:`end`); :meth:`bytes_between` counts only what lies inside it."""

    def __init__(self, stages: Iterable[Stage], warmup_s: float = 0.0) -> None:
        self.stages = tuple(stages)
        if not self.stages:
            raise ValueError("a schedule needs at least one stage")
        if not (math.isfinite(warmup_s) and warmup_s >= 0):
            raise ValueError(f"warmup must be a finite number of seconds >= 0, got {warmup_s!r}")
        self.warmup_s = float(warmup_s)
        first = self.stages[0].from_bps
        #: (stage index, its shape): warmup first when there is one.
        segments = [(WARMUP, Stage(warmup_s, first, first))] if warmup_s > 0 else []
        self._segments = segments + list(enumerate(self.stages))
        self._starts: list[float] = []
        self._bytes: list[float] = []
        t = b = 0.0
        for _, s in self._segments:
            self._starts.append(t)
            self._bytes.append(b)
            t += s.seconds
            b += s.total_bytes
        self.end = t
        self.total_bytes = b

    @classmethod
    def constant(cls, bps: float, seconds: float, warmup_s: float = 0.0) -> Schedule:
        return cls([Stage(seconds, bps, bps)], warmup_s)

    def __repr__(self) -> str:
        return f"Schedule({list(self.stages)!r}, warmup_s={self.warmup_s!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Schedule)
            and self.stages == other.stages
            and self.warmup_s == other.warmup_s
        )

    __hash__ = None  # type: ignore[assignment]

    # --- derived schedules ---------------------------------------------------------------

    def scaled(self, factor: float) -> Schedule:
        """Every rate times ``factor`` (a channel's share of its worker's)."""
        return Schedule([s.scaled(factor) for s in self.stages], self.warmup_s)

    def aligned(self, origin: float, window_s: float) -> Schedule:
        """This schedule with its warmup stretched to end on the first window boundary
        (a multiple of ``window_s`` in epoch seconds) at or after ``origin +
        warmup_s``; no warmup stays none. From a boundary (``run``'s agreed start)
        that is the warmup rounded up to whole windows."""
        if self.warmup_s <= 0:
            return self
        boundary = math.ceil((origin + self.warmup_s) / window_s - 1e-9) * window_s
        return Schedule(self.stages, max(self.warmup_s, boundary - origin))

    # --- reading it --------------------------------------------------------------------

    def _segment(self, t: float) -> int:
        """The segment ``t`` falls in (``[start, end)``; clamped to the first and last)."""
        return max(0, min(bisect.bisect_right(self._starts, t) - 1, len(self._segments) - 1))

    def rate_at(self, t: float) -> float:
        i = self._segment(t)
        s = self._segments[i][1]
        return (
            s.from_bps
            + (s.to_bps - s.from_bps) * min(max(t - self._starts[i], 0.0), s.seconds) / s.seconds
        )

    def stage_at(self, t: float) -> int:
        """The stage ``t`` falls in (``WARMUP`` during warmup); before the start the
        first, past the end the last."""
        return self._segments[self._segment(t)][0]

    def stage_ending_at(self, t: float) -> int:
        """The stage a stretch of time ending at ``t`` ends in: a window ending on a
        stage's boundary belongs to the stage before it."""
        return self.stage_at(t - END_SLACK_S)

    def in_warmup(self, t: float) -> bool:
        """Whether a stretch ending at ``t`` lies within warmup."""
        return self.warmup_s > 0 and t <= self.warmup_s + END_SLACK_S

    @property
    def boundaries(self) -> tuple[float, ...]:
        """Where each stage after the first segment starts (the end of warmup too)."""
        return tuple(self._starts[1:])

    def stage_start(self, index: int) -> float:
        """When stage ``index`` starts."""
        return self.warmup_s + sum(s.seconds for s in self.stages[:index])

    def bytes_until(self, t: float) -> float:
        """Bytes due from the origin to ``t``, going on at the first rate before it and
        the last rate past the end (monotone, for the pacer)."""
        if t <= 0:
            return t * self._segments[0][1].from_bps
        if t >= self.end:
            return self.total_bytes + (t - self.end) * self.stages[-1].to_bps
        i = self._segment(t)
        return self._bytes[i] + self._segments[i][1].bytes_until(t - self._starts[i])

    def time_for(self, nbytes: float) -> float:
        """When the first ``nbytes`` are due (``bytes_until``'s inverse)."""
        if nbytes <= 0:
            return nbytes / self._segments[0][1].from_bps
        if nbytes >= self.total_bytes:
            return self.end + (nbytes - self.total_bytes) / self.stages[-1].to_bps
        i = max(0, bisect.bisect_right(self._bytes, nbytes) - 1)
        s = self._segments[i][1]
        return self._starts[i] + min(s.time_for(nbytes - self._bytes[i]), s.seconds)

    def bytes_between(self, a: float, b: float) -> float:
        """Bytes due from ``a`` to ``b`` within the schedule (nothing is due outside)."""
        lo, hi = max(a, 0.0), min(b, self.end)
        return self.bytes_until(hi) - self.bytes_until(lo) if hi > lo else 0.0

    def mean_bps(self, a: float, b: float) -> float:
        """The mean target rate from ``a`` to ``b`` (0 outside the schedule)."""
        return self.bytes_between(a, b) / (b - a) if b > a else self.rate_at(a)


def parse_stages(value: Any, where: str = "--stages (STAGES)") -> tuple[Stage, ...]:
    """Stages from their JSON text (or the list it holds); SettingError naming ``where``
    and the stage and key at fault."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as e:
            raise SettingError(f"{where} is not JSON: {e}") from None
    if not isinstance(value, list) or not value:
        raise SettingError(f"{where} must be a non-empty JSON list of stages, got {_show(value)}")
    if len(value) > MAX_STAGES:
        raise SettingError(f"{where} holds {len(value)} stages; at most {MAX_STAGES}")
    return tuple(_stage(item, f"{where}: stages[{i}]") for i, item in enumerate(value))


def _stage(item: Any, where: str) -> Stage:
    if not isinstance(item, Mapping):
        raise SettingError(
            f'{where} must be an object {{"seconds": S, "from_bps": R0, "to_bps": R1}}, '
            f"got {_show(item)}"
        )
    unknown = sorted(set(item) - set(_STAGE_KEYS))
    if unknown:
        raise SettingError(f"{where}: unknown key {unknown[0]!r} (keys: {', '.join(_STAGE_KEYS)})")
    values = {}
    for key in _STAGE_KEYS:
        if key not in item:
            raise SettingError(f"{where}.{key} is missing")
        v = item[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise SettingError(f"{where}.{key} must be a finite number > 0, got {_show(v)}")
        top = MAX_RUN_SECONDS if key == "seconds" else MAX_MBPS * MB
        if v > top:
            most = f"{top} (30 days)" if key == "seconds" else f"{top:g}"
            raise SettingError(f"{where}.{key} must be at most {most}, got {_show(v)}")
        values[key] = float(v)
    return Stage(**values)


def _show(value: Any) -> str:
    text = json.dumps(value) if isinstance(value, (list, dict, str, int, float)) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def stages_json(stages: Iterable[Stage | Mapping[str, Any]]) -> str:
    """The ``--stages`` text of ``stages`` (Stage objects or their dicts)."""
    return json.dumps(
        [asdict(s) if isinstance(s, Stage) else {k: s[k] for k in _STAGE_KEYS} for s in stages],
        separators=(",", ":"),
    )
