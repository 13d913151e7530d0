"""A scenario as ``deploy/run_job.sh --scenario FILE`` renders it into the Job.

``python -m elastic_channels.fleet.k8s_scenario FILE [--workers N] [--channels N]
[--max-inflight-bytes X] [--start-delay-seconds S]`` validates the scenario (a shipped
one's name works too), applies the script's overrides, and prints shell assignments
that ``run_job.sh`` evaluates:

- ``SCENARIO_WORKERS``, ``SCENARIO_TARGET_BPS`` (the first stage's starting rate) and
  ``SCENARIO_DURATION_SECONDS`` (warmup and stages, whole seconds up): what the Job's
  size and deadline follow;
- ``SCENARIO_ARGS``: the worker's arguments as lines of the container's ``args`` (the
  stages, warmup, scenario name and hash, channels, batch and in-flight bytes, window,
  SDK properties, and ``--start-at``);
- ``SCENARIO_DATA_LINE``: the ConfigMap's ``scenario.yaml`` key, the resolved scenario
  the pods follow (readable with ``kubectl get configmap``);
- the ``WORKLOAD_*`` variables of the scenario's workload (``k8s_workload``): a workload
  file's text goes in the ConfigMap, mounted into the pods, and their ``--workload``
  names the mounted file (``--workload NAME|FILE`` here overrides the scenario's key).

Each value is one YAML double-quoted scalar (:func:`yaml_scalar`), written as JSON with
every ``$`` as ``\\u0024`` and every character beyond ASCII as a YAML escape, so no text
of the file can end the scalar or look like one of the template's ``${...}``
placeholders.

Every pod gets the same ``--start-at``: the render time plus ``--start-delay-seconds``
(time to schedule the pods and pull the image), up to a window boundary. A pod whose
channel opens later follows the same wall-clock schedule from where it has got to.
Errors go to stderr in the scenario's own words (file, line, key), exit 2.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
import time
from typing import Any

from ..landing_table import WorkloadArgError
from ..scenario import (
    ScenarioError,
    find_scenario,
    load_file,
    run_seconds,
    stages_bps,
    to_yaml,
    with_overrides,
    worker_flags,
)

__all__ = ["arg_lines", "main", "render", "yaml_scalar"]

#: Seconds from rendering to the agreed start, unless given: a few hundred pods need a
#: minute or two to be scheduled, pull the image and open their channels.
DEFAULT_START_DELAY_S = 120.0


def render(
    file: str, overrides: dict[str, Any], start_delay_s: float, now: float | None = None
) -> dict[str, str]:
    """The shell variables for ``run_job.sh`` (see the module's docstring)."""
    s = with_overrides(load_file(find_scenario(file)), overrides)
    window = s.window_seconds
    now = time.time() if now is None else now
    start_at = math.ceil((now + start_delay_s) / window) * window
    args = [*worker_flags(s), "--start-at", f"{start_at:.3f}"]
    # k8s_workload quotes with this module's helpers, hence imported here, not at the top.
    from .k8s_workload import workload_values

    workload = workload_values(s.workload, "workload")
    for i in range(0, len(args), 2):  # flag, value pairs: a file is read where it is mounted
        if args[i] == "--workload":
            args[i + 1] = workload["WORKLOAD_ARG"]
    return {
        "SCENARIO_WORKERS": str(s.workers),
        "SCENARIO_TARGET_BPS": str(max(1, round(stages_bps(s)[0]["from_bps"]))),
        "SCENARIO_DURATION_SECONDS": str(max(1, math.ceil(run_seconds(s)))),
        "SCENARIO_START_AT": f"{start_at:.3f}",
        "SCENARIO_WINDOW_SECONDS": f"{window:g}",
        "SCENARIO_ARGS": arg_lines(args),
        "SCENARIO_DATA_LINE": f"  scenario.yaml: {yaml_scalar(to_yaml(s))}",
        **workload,
    }


def yaml_scalar(text: str) -> str:
    """``text`` as a YAML double-quoted scalar of ASCII that holds no ``$``: JSON's
    escapes, and YAML's ``\\u``/``\\U`` for every other character (YAML has no surrogate
    pairs: libyaml and kubectl's go-yaml refuse JSON's ``\\ud83d\\ude00``)."""
    return "".join(_ascii(c) for c in json.dumps(text, ensure_ascii=False))


def _ascii(c: str) -> str:
    n = ord(c)
    if c == "$" or n >= 0x7F:
        return f"\\u{n:04x}" if n <= 0xFFFF else f"\\U{n:08x}"
    return c


def arg_lines(args: list[str]) -> str:
    """``args`` as lines of the worker container's ``args`` list, each line first."""
    return "".join(f"\n            - {yaml_scalar(a)}" for a in args)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m elastic_channels.fleet.k8s_scenario",
        description="Validate a scenario and print the shell variables deploy/run_job.sh "
        "renders into the Job (one pod per worker, all on the scenario's stages).",
    )
    p.add_argument("scenario", help="a scenario file, or a shipped scenario's name")
    p.add_argument("--workers", type=int, help="pods (overrides the scenario's workers)")
    p.add_argument("--channels", type=int, help="channels per pod (overrides the scenario)")
    p.add_argument("--max-inflight-bytes", type=int, help="(overrides the scenario)")
    p.add_argument("--workload", help="a shipped workload or a workload file (overrides it)")
    p.add_argument(
        "--start-delay-seconds",
        type=float,
        default=DEFAULT_START_DELAY_S,
        help=f"seconds from now to the pods' agreed start [{DEFAULT_START_DELAY_S:g}]",
    )
    a = p.parse_args(argv)
    if not (math.isfinite(a.start_delay_seconds) and 0 <= a.start_delay_seconds <= 86400):
        p.error(f"--start-delay-seconds must be 0..86400, got {a.start_delay_seconds!r}")
    overrides = {
        "workers": a.workers, "channels": a.channels, "max_inflight_bytes": a.max_inflight_bytes,
        "workload": a.workload,
    }  # fmt: skip
    try:
        values = render(a.scenario, overrides, a.start_delay_seconds)
    except (ScenarioError, WorkloadArgError) as e:
        print(f"--scenario: {e}", file=sys.stderr)
        return 2
    for name, value in values.items():
        print(f"{name}={shlex.quote(value)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
