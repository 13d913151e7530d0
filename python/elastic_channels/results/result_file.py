"""A run's result document: what ``run --json`` printed, and everything needed to read
it later without the machine it ran on (docs/RESULTS.md lists every key)."""

from __future__ import annotations

import datetime as dt
import math
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import derive, environment, store, thresholds

__all__ = ["document", "record"]

KIND = "elastic-channels run result"


def record(result: Mapping[str, Any], home: Path = store.DEFAULT_HOME) -> Path:
    """Write ``result`` (as ``run --json`` prints it, with the optional keys
    :func:`document` reads) as a new file in ``home/results``; its path."""
    return store.write(document(result), home)


def document(result: Mapping[str, Any], *, now: float | None = None) -> dict[str, Any]:
    """The result document of ``result``.

    Besides what ``run --json`` prints, ``result`` may hold ``scenario`` (``{name, hash,
    file, resolved}``), ``thresholds`` (``{figure: {max, min}}``; else the scenario's
    ``resolved.thresholds``), and ``started_at`` / ``ended_at`` (epoch seconds: when
    ``run`` started and ended; else the earliest window or send start, and now). A
    thresholds block that cannot be checked is recorded as ``thresholds_error`` (and
    the thresholds as not held): the run's result is kept all the same."""
    recorded = time.time() if now is None else now
    plain = _plain(dict(result))
    if not isinstance(plain.get("run_id"), str) or not plain["run_id"]:
        raise ValueError("a run's result needs its run_id (a non-empty string)")
    started = _epoch(plain.get("started_at")) or _first_start(plain) or recorded
    ended = _epoch(plain.get("ended_at")) or recorded
    figures, sources = derive.figures_of(plain)
    scenario = plain.get("scenario") if isinstance(plain.get("scenario"), dict) else None
    bounds = plain.get("thresholds")
    if bounds is None and scenario is not None:
        resolved = scenario.get("resolved")
        bounds = resolved.get("thresholds") if isinstance(resolved, dict) else None
    try:
        outcomes, problem = thresholds.evaluate(bounds, figures), None
    except thresholds.ThresholdError as e:  # the run's result is kept all the same
        outcomes, problem = [], str(e)
    return {
        "format": store.FORMAT,
        "kind": KIND,
        "run_id": plain["run_id"],
        "started_at": round(started, 3),
        "ended_at": round(ended, 3),
        "started_at_utc": _utc(started),
        "ended_at_utc": _utc(ended),
        "recorded_at_utc": _utc(recorded),
        "scenario": scenario,
        "versions": environment.versions(),
        "machine": environment.machine(),
        "figures": figures,
        "figure_sources": sources,
        "peak_rss_mib_per_worker": derive.peak_rss_per_worker(plain),
        "warmup": derive.warmup_figures(plain),
        "stages": derive.stage_figures(plain),
        "thresholds": [o.as_dict() for o in outcomes],
        "thresholds_held": _held(outcomes, problem),
        "thresholds_error": problem,
        "outcome": plain.get("outcome"),
        "run": plain,
    }


def _held(outcomes: list[thresholds.Outcome], problem: str | None) -> bool | None:
    """Whether every threshold held: None when there were none, False when the block
    could not be checked."""
    if problem:
        return False
    return all(o.held for o in outcomes) if outcomes else None


def _first_start(result: Mapping[str, Any]) -> float | None:
    """The earliest window start or send start the result holds."""
    starts = [w.get("start", w.get("window_start")) for w in derive.run_windows(result)]
    starts += [s.get("send_start") for s in result.get("worker_summaries") or [] if s]
    numbers = [x for x in (_epoch(s) for s in starts) if x is not None]
    return min(numbers) if numbers else None


def _epoch(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not x > 0:
        return None
    return float(x)


def _utc(epoch: float) -> str:
    moment = dt.datetime.fromtimestamp(epoch, dt.timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _plain(x: Any) -> Any:
    """``x`` as plain JSON: mappings with string keys, lists, finite numbers (NaN and
    infinities, which JSON has not, as None), paths and other objects as strings."""
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    return str(x)
