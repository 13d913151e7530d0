"""A scenario and flags: the flag line that is a scenario, flags that override one key,
and the worker flags a scenario amounts to.

Rates: a scenario says MB/s per worker, the flags (``--target-bps``) and the workers'
``--stages`` say bytes/s (1 MB = 1e6 bytes).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from ..landing_table import DEFAULT_WORKLOAD, workload_arg
from ..measures import MB
from ..worker.settings import BY_NAME
from .canonical import resolved, scenario_hash
from .errors import Problem, ScenarioError
from .loader import from_data
from .model import Scenario

__all__ = [
    "COMMAND_LINE",
    "FLAGS_NAME",
    "OVERRIDES",
    "from_flags",
    "run_seconds",
    "stages_bps",
    "with_overrides",
    "worker_flags",
]

#: The name of the scenario a flag line is.
FLAGS_NAME = "flags"
#: How errors name where a flag's value came from.
COMMAND_LINE = "the command line"
#: The keys a flag overrides (``run``'s flag of the same name, dashes for underscores);
#: ``target_bps`` and ``duration_seconds`` act on the stages, ``table_format`` and
#: ``profile`` on the destination.
OVERRIDES = (
    "workers", "target_bps", "duration_seconds", "warmup_seconds", "channels", "batch_bytes",
    "max_inflight_bytes", "window_seconds", "table_format", "profile", "sdk_properties",
    "workload",
)  # fmt: skip
_PLAIN = ("workers", "warmup_seconds", "channels", "batch_bytes", "max_inflight_bytes",
          "window_seconds", "workload")  # fmt: skip


def from_flags(values: Mapping[str, Any]) -> Scenario:
    """The scenario a flag line is: named ``flags``, one constant stage of
    ``target_bps`` for ``duration_seconds``, the other keys as given (``target``:
    emulator or account; any key left out or None takes the scenario default)."""
    given = {k: v for k, v in values.items() if v is not None}
    data: dict[str, Any] = {
        "name": FLAGS_NAME,
        "description": "the flags-only form of run: one constant rate for a fixed time",
        "stages": [{"seconds": given["duration_seconds"], "mbps": given["target_bps"] / MB}],
        "destination": {k: given[k] for k in ("target", "table_format", "profile") if k in given},
    }
    data.update({k: given[k] for k in (*_PLAIN, "sdk_properties") if k in given})
    return _checked(data, given, with_env=True)


def with_overrides(s: Scenario, values: Mapping[str, Any]) -> Scenario:
    """``s`` with the keys of ``values`` that are not None replaced (see OVERRIDES):
    ``target_bps`` makes the stages one constant stage as long as they were;
    ``duration_seconds`` sets the one stage's length (an error when there are more);
    ``profile`` makes the target an account; ``sdk_properties`` are added."""
    given = {k: v for k, v in values.items() if v is not None}
    stray = set(given) - set(OVERRIDES)
    if stray:
        raise ValueError(f"not an override: {', '.join(sorted(stray))}")
    data = resolved(s)
    if "target_bps" in given:
        seconds = sum(st["seconds"] for st in data["stages"])
        data["stages"] = [{"seconds": seconds, "mbps": given["target_bps"] / MB}]
    if "duration_seconds" in given:
        n = len(data["stages"])
        if n != 1:
            raise ScenarioError(COMMAND_LINE, [Problem((), (
                f"--duration-seconds: scenario {s.name} has {n} stages, and only a "
                "scenario of one stage has one duration to set: change the stages' "
                "seconds in a copy of the file (run --print-scenario writes one), or give "
                "--target-bps too, which makes the stages one"
            ))])  # fmt: skip
        data["stages"][0]["seconds"] = given["duration_seconds"]
    data.update({k: given[k] for k in _PLAIN if k in given})
    if "table_format" in given:
        data["destination"]["table_format"] = given["table_format"]
    if "profile" in given:
        data["destination"].update(target="account", profile=given["profile"])
    data["sdk_properties"] = {**data["sdk_properties"], **given.get("sdk_properties", {})}
    return _checked(data, given, with_env=False)


def _checked(data: dict[str, Any], given: Mapping[str, Any], with_env: bool) -> Scenario:
    """``data`` as a scenario; a problem with a key a flag gave names the flag (and its
    environment variable, ``with_env``: the flags-only form reads them too)."""
    try:
        return from_data(data, COMMAND_LINE)
    except ScenarioError as e:
        problems = [_named(p, given, with_env) for p in e.problems]
        raise ScenarioError(COMMAND_LINE, problems) from None


def _named(p: Problem, given: Mapping[str, Any], with_env: bool) -> Problem:
    key = p.path[0] if p.path else None
    if key == "destination" and p.path[1:2] == ("table_format",):
        key = "table_format"
    elif key == "stages":
        key = "target_bps" if "target_bps" in given else None
    if key not in given:
        return p
    setting = BY_NAME.get(str(key))
    flag = "--" + str(key).replace("_", "-")
    name = setting.where if setting is not None and with_env else flag
    return Problem((), f"{name}: {p.message}", p.line)


def stages_bps(s: Scenario) -> list[dict[str, float]]:
    """The stages as the worker's ``--stages`` takes them: bytes/s per worker."""
    return [
        {
            "seconds": st.seconds,
            "from_bps": round(st.first_mbps * MB, 3),
            "to_bps": round(st.last_mbps * MB, 3),
        }
        for st in s.stages
    ]


def run_seconds(s: Scenario) -> float:
    """How long the workers send: warmup (which a worker rounds up to end on a window
    boundary) then the stages."""
    windows = math.ceil(s.warmup_seconds / s.window_seconds - 1e-9)
    return max(0, windows) * s.window_seconds + sum(st.seconds for st in s.stages)


def worker_flags(s: Scenario) -> list[str]:
    """The worker flags that make a worker follow ``s`` (the account, run id and start
    time are the run's, not the scenario's)."""
    flags = [
        "--stages", json.dumps(stages_bps(s), separators=(",", ":")),
        "--warmup-seconds", repr(s.warmup_seconds),
        "--scenario-name", s.name,
        "--scenario-hash", scenario_hash(s),
        "--channels", str(s.channels),
        "--batch-bytes", str(s.batch_bytes),
        "--max-inflight-bytes", str(s.max_inflight_bytes),
        "--window-seconds", repr(s.window_seconds),
    ]  # fmt: skip
    if s.workload != DEFAULT_WORKLOAD:  # a file by its absolute path: workers start anywhere
        flags += ["--workload", workload_arg(s.workload)]
    for key, value in s.sdk_properties.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        flags += ["--sdk-property", f"{key}={text}"]
    return flags
