"""``elastic-channels runs``: the recorded results, newest first."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from . import store, table
from .outcome import outcome_of
from .price import dollars

DESCRIPTION = (
    "List the results every `elastic-channels run` recorded in HOME/results (one JSON "
    "file per run), newest first: when it started (UTC), its run id, its outcome (passed, "
    "thresholds_failed, interrupted, workers_failed, rows_lost; unknown for a file "
    "recorded before outcomes were), its scenario's name and hash, its workload, its "
    "planned seconds, workers, the fleet's target MB/s, MB/s (acked over the sending "
    "window), ack p99, billable GB (the values' bytes, what Snowflake bills) and the "
    "ingest cost ($ at the run's --price-per-credit, else credits). `elastic-channels "
    "compare` sets results side by side."
)


def configure_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--home",
        type=Path,
        default=store.DEFAULT_HOME,
        help=f"where run keeps its results, in HOME/results (default: {store.DEFAULT_HOME})",
    )
    p.add_argument("--json", action="store_true", help="print one JSON list instead")
    p.set_defaults(func=cmd_runs)


def cmd_runs(args: argparse.Namespace) -> int:
    entries, errors = store.scan(args.home)
    for e in errors:
        print(f"elastic-channels runs: skipped {e}", file=sys.stderr)
    listed = [listing(e) for e in entries]
    if args.json:
        print(json.dumps(listed))
        return 0
    if not listed:
        print(f"no results in {store.results_dir(args.home)}", file=sys.stderr)
        return 0
    header = [
        "started (UTC)", "run id", "outcome", "scenario", "workload", "seconds", "workers",
        "target MB/s", "MB/s", "ack p99 ms", "billable GB", "ingest",
    ]  # fmt: skip
    print(table.render(header, [_cells(x) for x in listed], left=3))
    return 0


def listing(entry: store.Entry) -> dict[str, Any]:
    """What ``runs`` shows of one result (its --json item)."""
    doc = entry.doc
    figures = doc.get("figures") or {}
    scenario = doc.get("scenario") or {}
    failed = [t.get("text") for t in doc.get("thresholds") or [] if not t.get("held")]
    got = scenario.get("resolved")
    resolved: dict[str, Any] = got if isinstance(got, dict) else {}
    return {
        "path": str(entry.path),
        "started_at_utc": doc.get("started_at_utc"),
        "run_id": doc.get("run_id"),
        "scenario": {"name": scenario.get("name"), "hash": scenario.get("hash")}
        if scenario
        else None,
        "outcome": outcome_of(doc),
        "workload": resolved.get("workload"),
        "planned_seconds": _planned_seconds(resolved),
        "workers": figures.get("workers"),
        "target_mb_per_s": figures.get("target_mb_per_s"),
        "mb_per_s": figures.get("mb_per_s"),
        "ack_p99_ms": figures.get("ack_p99_ms"),
        "billable_gb": figures.get("billable_gb"),
        "ingest_credits": figures.get("ingest_credits"),
        "ingest_cost": figures.get("ingest_cost"),
        "thresholds_held": doc.get("thresholds_held"),
        "thresholds_failed": failed,
        "thresholds_error": doc.get("thresholds_error"),
    }


def scenario_label(scenario: dict[str, Any] | None) -> str:
    """``name hash8`` of a scenario block, or "-" for a run without one."""
    if not scenario:
        return "-"
    name = str(scenario.get("name") or "?")
    digest = str(scenario.get("hash") or "")[:8]
    return f"{name} {digest}".strip()


def _planned_seconds(resolved: dict[str, Any]) -> float | None:
    """Warmup and every stage of a resolved scenario, in seconds (None if not known)."""
    try:
        stages = sum(float(st["seconds"]) for st in resolved["stages"])
        return stages + float(resolved.get("warmup_seconds") or 0)
    except (KeyError, TypeError, ValueError):
        return None


def _cells(x: dict[str, Any]) -> list[str]:
    started = str(x["started_at_utc"] or "-").replace("T", " ")[:19]
    return [
        started,
        str(x["run_id"]),
        str(x["outcome"]["outcome"]),
        scenario_label(x["scenario"]),
        str(x["workload"] or "-"),
        _num(x["planned_seconds"], "{:.0f}"),
        _num(x["workers"], "{:d}"),
        _num(x["target_mb_per_s"], "{:.2f}"),
        _num(x["mb_per_s"], "{:.2f}"),
        _num(x["ack_p99_ms"], "{:.0f}"),
        _num(x.get("billable_gb"), "{:.3f}"),
        _ingest(x),
    ]


def _ingest(x: dict[str, Any]) -> str:
    """The run's ingest cost: dollars at its price per credit, else credits, else -."""
    if _num(x.get("ingest_cost"), "") != "-":
        return dollars(x["ingest_cost"])
    return _num(x.get("ingest_credits"), "{:.4f} cr")


def _num(value: Any, fmt: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "-"
    return fmt.format(value)
