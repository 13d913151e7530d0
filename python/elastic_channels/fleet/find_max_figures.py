"""A find-max result as ``plan --figures``: the highest rate a worker held, with its
CPU-seconds per GB and its RSS, as one figure source.

Taken as given: the report itself (``"kind": "find-max"``, what
``fleet.find_max.run_search`` returns), or a document holding it under ``find_max``:
``run --json``'s output, or a run's result file (``results/``), which also says where
the run was (machine, date, versions) when the report's own ``context`` does not.

What plan reads of it: ``held_mbps`` is what one worker carried (plan's
``per_vcpu_mbps``: the reference's pods and every shipped figure are one vCPU; the
machine's line says what the workers ran on), over its channels (``per_channel_mbps``);
``cpu_s_per_gb`` is the held step's; the RSS is the run's measured peak (the worst
worker's, from a result file), else the held step's highest window; a result that does
not carry them (its windows had no CPU or RSS figures) is given the shipped local
worker's (``figures/local_worker_file_mode.json``), and its source line says so.

A search against the emulator with a channel limit, whose next step asked for what that
limit lets a worker through or more, measured the limit, not the client: the figure is
``bounded_by`` it, and plan shows it as a bound and sizes nothing from it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .find_max_report import KIND

__all__ = ["emulator_bound", "figures_document", "is_find_max", "is_run_result"]

RUN_RESULT_KIND = "elastic-channels run result"


def _report_in(data: Any) -> Mapping[str, Any] | None:
    if not isinstance(data, Mapping):
        return None
    if data.get("kind") == KIND:
        return data
    for holder in (data, data.get("run")):
        if isinstance(holder, Mapping):
            inner = holder.get("find_max")
            if isinstance(inner, Mapping) and inner.get("kind") == KIND:
                return inner
    return None


def is_find_max(data: Any) -> bool:
    """Whether ``data`` is a find-max report or holds one."""
    return _report_in(data) is not None


def is_run_result(data: Any) -> bool:
    return isinstance(data, Mapping) and data.get("kind") == RUN_RESULT_KIND


def _positive(where: str, key: str, value: Any, why: str) -> float:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not (number and math.isfinite(value) and value > 0):
        raise ValueError(f"{where}: {key} is {value!r}: {why}")
    return float(value)


def _machine_text(machine: Any) -> str | None:
    if isinstance(machine, str):
        return machine
    if isinstance(machine, Mapping) and machine.get("arch"):
        cpus = machine.get("cpu_count") or machine.get("cpus")
        model = machine.get("cpu_model")
        return ", ".join(str(x) for x in (machine["arch"], cpus and f"{cpus} CPUs", model) if x)
    return None


def _target_text(context: Mapping[str, Any]) -> str | None:
    target = context.get("target")
    if target == "account":
        return "Snowflake (an account)"
    if target == "emulator":
        limit = context.get("channel_limit_mbps")
        return "the emulator" + (
            f", each channel limited to {limit:g} MB/s (429 over it)"
            if isinstance(limit, int | float) else ""
        )  # fmt: skip
    return str(target) if isinstance(target, str) else None


def _number(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok and value > 0 else None


def _channel_limit_mbps(context: Mapping[str, Any], run: Mapping[str, Any]) -> float | None:
    """The emulator's per-channel limit the search ran against (MB/s), if any: the
    report's context, else the run's emulator settings."""
    limit = _number(context.get("channel_limit_mbps"))
    settings = run.get("emulator_settings")
    if limit is None and isinstance(settings, Mapping):
        bps = _number(settings.get("channel_limit_bps"))
        limit = None if bps is None else bps / 1e6
    return limit


def emulator_bound(
    report: Mapping[str, Any],
    context: Mapping[str, Any],
    run: Mapping[str, Any],
    held: float,
    channels: int,
) -> str:
    """What of the emulator held the search, in words ('' when nothing known did): its
    channel limit, when the step after the one held asked for at least what the limit
    lets a worker through (``channels`` of them), so the search could not see more."""
    if context.get("target") != "emulator":
        return ""
    limit = _channel_limit_mbps(context, run)
    if limit is None:
        return ""
    search = report.get("search")
    step = _number(search.get("step_mbps")) if isinstance(search, Mapping) else None
    through = limit * channels
    asked = held + (step or 0.0)
    if asked < through * (1 - 1e-9):
        return ""
    return (
        f"the emulator's channel limit of {limit:g} MB/s a channel ({through:g} MB/s a "
        f"worker on {channels} channel(s)): the step after {held:g} asked {asked:g}, which "
        "the limit does not let through"
    )


def _peak_rss(data: Any) -> float | None:
    """The run's measured peak RSS a worker (the worst worker's), from a result file."""
    per = data.get("peak_rss_mib_per_worker") if isinstance(data, Mapping) else None
    peaks = [p for p in (per.values() if isinstance(per, Mapping) else ()) if _number(p)]
    return max(float(p) for p in peaks) if peaks else None


def _bound_text(report: Mapping[str, Any]) -> str:
    stop = report.get("stopped_by")
    ended = report.get("ended")
    if isinstance(stop, Mapping):
        return f"the search's bound {stop.get('bound')}: {ended}"
    return str(ended) if isinstance(ended, str) else "not recorded"


#: Whose CPU-s/GB and RSS a result without its own is given: the local worker through
#: the real SDK in file mode (the SDK's defaults, as on an account).
FALLBACK_FIGURES = Path(__file__).with_name("figures") / "local_worker_file_mode.json"


def _fallback() -> dict[str, Any]:
    data = json.loads(FALLBACK_FIGURES.read_text())
    return data if isinstance(data, dict) else {}


def figures_document(data: Any, where: str) -> dict[str, Any]:
    """The figures object ``plan.parse_figures`` takes, from a find-max result;
    ValueError naming ``where`` and what is missing."""
    report = _report_in(data)
    if report is None:
        raise ValueError(f"{where}: no find-max result in it (a 'kind': '{KIND}' object, "
                         "or one under 'find_max')")  # fmt: skip
    held = report.get("held_mbps")
    if held is None:
        raise ValueError(f"{where}: the search held no step ({report.get('ended')}): no "
                         "rate to plan from")  # fmt: skip
    held = _positive(where, "held_mbps", held, "expected the MB/s a worker held, > 0")
    peak = _peak_rss(data)
    if peak is not None:  # the whole run's peak, not one step's windows
        report = {**report, "rss_mib": peak}
    borrowed = [k for k in ("cpu_s_per_gb", "rss_mib") if report.get(k) is None]
    fallback = _fallback() if borrowed else {}
    lend = {"cpu_s_per_gb": "cpu_s_per_gb", "rss_mib": "rss_mib_per_pod"}
    own = {k: fallback.get(lend[k]) if k in borrowed else report.get(k) for k in lend}
    expected = "expected a number > 0 (or none: the shipped local worker's is taken)"
    cpu = _positive(where, "cpu_s_per_gb", own["cpu_s_per_gb"], expected)
    rss = _positive(where, "rss_mib", own["rss_mib"], expected)
    given = report.get("context")
    context: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    holder = data if is_run_result(data) else {}
    channels = context.get("channels", 1)
    if not (isinstance(channels, int) and not isinstance(channels, bool) and channels > 0):
        raise ValueError(f"{where}: context.channels is {channels!r}: expected a whole "
                         "number > 0 (channels a worker)")  # fmt: skip
    date = context.get("date") or str(holder.get("started_at_utc") or "")[:10] or None
    origin = {
        "bench": "elastic-channels run --find-max",
        "date": date,
        "machine": _machine_text(context.get("machine") or holder.get("machine")),
        "target": _target_text(context),
        "answer_delay": context.get("answer_delay"),
        "sdk_mode": context.get("sdk_mode"),
        "bound": _bound_text(report),
        "command": context.get("command"),
    }
    origin = {k: v for k, v in origin.items() if isinstance(v, str) and v}
    origin["snowflake"] = context.get("target") == "account"
    run = data.get("run") if is_run_result(data) else data
    bound = emulator_bound(report, context, run if isinstance(run, Mapping) else {}, held,
                           channels)  # fmt: skip
    workers = report.get("workers")
    lent = (
        f"; {' and '.join(borrowed)} not in the result: the shipped "
        f"{fallback.get('label', 'local worker')}'s"
        if borrowed else ""
    )  # fmt: skip
    return {
        "label": f"find-max {date}" if date else "find-max",
        "source": f"{where}: the highest rate held for a full step"
        + (f" by each of {workers} workers" if isinstance(workers, int) else "")
        + lent
        + ("; RSS: the run's peak, the worst worker's" if peak is not None else ""),
        "per_vcpu_mbps": held,
        "per_channel_mbps": held / channels,
        "cpu_s_per_gb": cpu,
        "rss_mib_per_pod": rss,
        "origin": origin,
        "bounded_by": bound,
    }
