"""``elastic-channels compare A B [...]``: results side by side, and one chart."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from . import compare, store
from .runs_cli import scenario_label

DESCRIPTION = (
    "Set two or more recorded runs side by side: every figure of each (MB/s, rows/s, ack "
    "and visible latency percentiles, counts, CPU-s per GB, peak RSS, and per stage when "
    "the runs had stages), each against the first with its change and change in %. "
    "Writes one PNG of the runs' throughput and ack p99 per window, aligned at their "
    "start. A run is named by its result file, its run id, or latest / latest~N (the "
    "newest result, the one before it, ...)."
)
EPILOG = (
    "examples:\n"
    "  elastic-channels compare latest~1 latest\n"
    "  elastic-channels compare run-20260101-120000 .elastic-channels/results/X.json\n"
)


def configure_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "runs", nargs="+", metavar="RUN",
        help="a result file, a run id, or latest / latest~N; the first is the baseline",
    )  # fmt: skip
    p.add_argument(
        "--home",
        type=Path,
        default=store.DEFAULT_HOME,
        help=f"where run keeps its results, in HOME/results (default: {store.DEFAULT_HOME})",
    )
    p.add_argument(
        "--chart",
        type=Path,
        default=None,
        help="the PNG to write (default: HOME/compare-A-vs-B.png, after the run ids)",
    )
    p.add_argument("--json", action="store_true", help="print the comparison as one JSON document")
    p.set_defaults(func=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    if len(args.runs) < 2:
        return _fail(f"give two runs or more to compare, got {len(args.runs)}: {args.runs[0]!r}")
    try:
        entries = [store.find(ref, args.home) for ref in args.runs]
    except store.ResultError as e:
        return _fail(str(e))
    comp = compare.comparison(entries)
    chart = args.chart or args.home / default_chart_name(entries)
    said = _write_chart(chart, entries)
    comp["chart"] = str(chart) if said is None else None
    if args.json:
        print(json.dumps(comp))
    else:
        print(compare.render(comp))
    print(f"chart: {chart}" if said is None else said, file=sys.stderr)
    return 0


def default_chart_name(entries: list[store.Entry]) -> str:
    ids = [re.sub(r"[^A-Za-z0-9_.-]", "_", str(e.doc.get("run_id")))[:60] for e in entries]
    tail = ids[1] if len(ids) == 2 else f"{ids[1]}-and-{len(ids) - 2}-more"
    return f"compare-{ids[0]}-vs-{tail}.png"


def _write_chart(path: Path, entries: list[store.Entry]) -> str | None:
    """None when written, else why not (a missing extra, no windows at all)."""
    try:
        from .compare_chart import write_compare_chart
    except ImportError as e:
        return f"no chart: {e} (pip install '.[chart]' in a checkout)"
    runs = [(_label(i, e), _windows(e.doc)) for i, e in enumerate(entries)]
    if not any(windows for _, windows in runs):
        return "no chart: none of these runs recorded a window"
    write_compare_chart(path, runs)
    return None


def _label(i: int, entry: store.Entry) -> str:
    scenario = entry.doc.get("scenario")
    tail = f" ({scenario_label(scenario)})" if scenario else ""
    return f"{compare.letter(i)}: {entry.doc.get('run_id')}{tail}"


def _windows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    run = doc.get("run") or {}
    windows = run.get("windows") or run.get("metrics_windows") or []
    return [w for w in windows if isinstance(w, dict) and "window_start" in w]


def _fail(message: str) -> int:
    print(f"elastic-channels compare: error: {message}", file=sys.stderr)
    return 2
