"""What a scenario holds: msgspec Structs whose types carry the simple bounds.

Rates are MB/s (1 MB = 1e6 bytes) per worker. The bounds a type can say (> 0, >= 1, a
name's pattern) are in the annotations, where msgspec checks them and the loader reads
them back to word its errors; the rules across keys are in :mod:`.checks`. Every Struct
refuses unknown keys and is frozen (an override makes a new scenario). Defaults are the
worker's own (``worker/settings.py``), so a scenario that leaves a key out runs as the
flags-only form does.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from ..worker.settings import BY_NAME

__all__ = [
    "MAX_STAGES",
    "NAME_PATTERN",
    "Bound",
    "Destination",
    "Scenario",
    "Search",
    "SearchBounds",
    "Stage",
]

#: A scenario's name, as the worker takes it (--scenario-name).
NAME_PATTERN = r"^[A-Za-z0-9_.-]{1,64}$"
#: At most this many stages (the worker's limit).
MAX_STAGES = 1000

Positive = Annotated[float, Meta(gt=0)]
NotNegative = Annotated[float, Meta(ge=0)]
Count = Annotated[int, Meta(ge=0)]


def _default(name: str) -> object:
    return BY_NAME[name].default


class Stage(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """``seconds`` at a constant ``mbps``, or a linear ramp ``from_mbps`` -> ``to_mbps``."""

    seconds: Positive
    mbps: Positive | None = None
    from_mbps: Positive | None = None
    to_mbps: Positive | None = None

    @property
    def first_mbps(self) -> float:
        return float(self.mbps if self.mbps is not None else self.from_mbps or 0.0)

    @property
    def last_mbps(self) -> float:
        return float(self.mbps if self.mbps is not None else self.to_mbps or 0.0)

    @property
    def mean_mbps(self) -> float:
        return (self.first_mbps + self.last_mbps) / 2

    @property
    def peak_mbps(self) -> float:
        return max(self.first_mbps, self.last_mbps)


class Destination(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    target: Literal["emulator", "account"] = "emulator"
    table_format: Literal["native", "iceberg"] = "native"
    #: target account: a connection profile (JSON) path; None: the SNOWFLAKE_* environment.
    profile: str | None = None
    #: target emulator: each channel's throughput limit, 429 over it.
    channel_limit_mbps: Positive | None = None


class Bound(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """A threshold on one figure: it holds when the figure is <= max and >= min."""

    max: float | None = None
    min: float | None = None


class SearchBounds(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """What breaks a step of the search (None: not a bound)."""

    behind_p99_ms: NotNegative | None = 1000.0
    ack_p99_ms: NotNegative | None = None
    errors: Count | None = 0
    sdk_retries: Count | None = None


class Search(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """Raise the rate from ``start_mbps`` by ``step_mbps`` up to ``max_mbps``, each step
    held ``step_seconds``, until a bound breaks."""

    start_mbps: Positive = 5.0
    step_mbps: Positive = 5.0
    max_mbps: Positive = 200.0
    step_seconds: Positive = 10.0
    bounds: SearchBounds = msgspec.field(default_factory=SearchBounds)


class Scenario(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """Everything a run is; see docs/SCENARIOS.md for every key."""

    name: Annotated[str, Meta(pattern=NAME_PATTERN)]
    description: str = ""
    workers: Annotated[int, Meta(ge=1)] = 1
    #: A shipped workload's name or a workload file's path (``checks`` loads it).
    workload: Annotated[str, Meta(min_length=1)] = "resort-sales"
    channels: Annotated[int, Meta(ge=1, le=64)] = _default("channels")  # type: ignore[assignment]
    batch_bytes: Annotated[int, Meta(ge=1000)] = _default("batch_bytes")  # type: ignore[assignment]
    max_inflight_bytes: Annotated[int, Meta(ge=1000)] = _default("max_inflight_bytes")  # type: ignore[assignment]
    window_seconds: Positive = _default("window_seconds")  # type: ignore[assignment]
    warmup_seconds: Annotated[float, Meta(ge=0, le=86_400)] = 0.0
    stages: Annotated[list[Stage], Meta(min_length=1, max_length=MAX_STAGES)]
    destination: Destination = msgspec.field(default_factory=Destination)
    sdk_properties: dict[str, str | int | float | bool] = msgspec.field(default_factory=dict)
    thresholds: dict[str, Bound] = msgspec.field(default_factory=dict)
    search: Search | None = None

    @property
    def stages_seconds(self) -> float:
        return sum(s.seconds for s in self.stages)

    @property
    def peak_mbps(self) -> float:
        """The highest rate any stage asks of a worker."""
        return max(s.peak_mbps for s in self.stages)
