"""``elastic-channels run``'s scenario: the positional SCENARIO, the flags that override
one key of it, ``--print-scenario``, and the scenario they come to.

With a SCENARIO only flags given on the command line override it (the environment's
TARGET_BPS and the like are the flags-only form's); without one the flags (then the
environment, then the defaults) are a scenario of their own, named ``flags``.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from ..measures import MB
from ..worker.settings import BY_NAME
from .errors import Problem, ScenarioError
from .flags import COMMAND_LINE, from_flags, with_overrides
from .loader import load_file
from .model import Scenario
from .shipped import find_scenario, shipped_names

__all__ = ["add_arguments", "constant_bps", "describe", "run_scenario", "sdk_properties_of"]


#: run's settings (worker/settings.py) that are a scenario's keys.
_SETTINGS = (
    "target_bps", "duration_seconds", "warmup_seconds", "channels", "batch_bytes",
    "max_inflight_bytes", "window_seconds", "workload",
)  # fmt: skip


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "scenario",
        nargs="?",
        metavar="SCENARIO",
        help="a scenario file (YAML, docs/SCENARIOS.md), or the name of a shipped one: "
        + ", ".join(shipped_names())
        + ". Without it the flags are the scenario (--print-scenario shows it)",
    )
    p.add_argument(
        "--print-scenario",
        action="store_true",
        help="print the scenario this command line comes to, as a YAML file run takes "
        "back, and exit without running",
    )
    group = p.add_argument_group(
        "the scenario's keys",
        "With a SCENARIO, a flag given replaces its key; the defaults shown, and the\n"
        "environment, are the flags-only form's.",
    )
    group.add_argument("--workers", type=int, default=None, help="worker processes (default: 1)")
    for name in _SETTINGS:
        setting = BY_NAME[name]
        group.add_argument(
            str(setting.flag), dest=name, type=setting.kind, default=None,
            help=setting.help_text(),
        )  # fmt: skip
    group.add_argument(
        "--table-format",
        choices=("native", "iceberg"),
        default=None,
        help="what the embedded emulator lands into: a native table (Parquet files in "
        "DATA_DIR/files behind a DuckDB view), or an Apache "
        "Iceberg table (Parquet + Iceberg metadata in DATA_DIR/iceberg, one commit per "
        "landed flush; needs the iceberg extra). Against Snowflake the table is what setup "
        "made (setup --table-format) (default: native)",
    )
    group.add_argument(
        "--sdk-property",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="an SDK client property for every worker (repeatable; the scenario's "
        "sdk_properties, added to)",
    )


def sdk_properties_of(items: list[str] | None) -> dict[str, str] | None:
    """``--sdk-property KEY=VALUE`` flags as a mapping (None when none was given)."""
    if items is None:
        return None
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            problem = Problem((), f"--sdk-property expects KEY=VALUE, got {item!r}")
            raise ScenarioError(COMMAND_LINE, [problem])
        out[key.strip()] = value
    return out


def run_scenario(
    args: argparse.Namespace, values: Mapping[str, Any], environ: Mapping[str, str]
) -> tuple[Scenario, str | None]:
    """(the scenario, the file it came from or None): SCENARIO with the flags given, or
    the flags-only form from ``values`` (run's settings resolved: flag, environment,
    default). The target of the flags-only form is an account when a profile or
    SNOWFLAKE_ACCOUNT says so, as before scenarios."""
    props = sdk_properties_of(args.sdk_property)
    if args.scenario is None:
        account = bool(values.get("profile") or environ.get("SNOWFLAKE_ACCOUNT", "").strip())
        flags = {
            **{k: values.get(k) for k in _SETTINGS},
            "workers": args.workers,
            "table_format": args.table_format,
            "target": "account" if account else "emulator",
            "profile": values.get("profile"),
            "sdk_properties": props,
        }
        return from_flags(flags), None
    path = find_scenario(args.scenario)
    given = {k: getattr(args, k, None) for k in (*_SETTINGS, "workers", "table_format")}
    given["profile"] = args.profile
    given["sdk_properties"] = props
    return with_overrides(load_file(path), given), str(path)


def describe(s: Scenario) -> str:
    """The load a scenario puts on each worker, in a few words for the run's banner:
    ``20 MB/s for 30 s``, ``6 stages over 120 s, 20 to 120 MB/s``."""
    if len(s.stages) == 1 and s.stages[0].mbps is not None:
        shape = f"{s.stages[0].mbps:g} MB/s for {s.stages[0].seconds:g} s"
    else:
        rates = [r for st in s.stages for r in (st.first_mbps, st.last_mbps)]
        seconds = sum(st.seconds for st in s.stages)
        shape = (
            f"{len(s.stages)} stage(s) over {seconds:g} s, {min(rates):g} to {max(rates):g} MB/s"
        )
    if s.warmup_seconds:
        shape += f" after a {s.warmup_seconds:g} s warmup"
    return shape


def constant_bps(s: Scenario) -> float | None:
    """The one rate of a scenario of one constant stage, bytes/s per worker, else None."""
    if len(s.stages) == 1 and s.stages[0].mbps is not None:
        return s.stages[0].mbps * MB
    return None
