"""The end of a ``run``: what it collected turned into its result, its one outcome
(results/outcome.py), the tables, the chart and the result file; its exit code."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..results.price import price_line, price_settings
from ..results.sdk_figures import sdk_line
from ..results.store import safe_name
from ..scenario import Scenario, resolved, run_seconds, scenario_hash
from ..scenario.run_args import constant_bps
from . import local, report
from .interrupt import Interruption
from .run_output import NOT_JUDGED, print_tables, record_result, write_chart
from .run_search import SearchRun
from .run_verdict import failed_workers, process_figures, run_outcome, say_process, warmup_note

__all__ = ["Collected", "record_run"]

DEFAULT_HOME = Path(".elastic-channels")


@dataclass
class Collected:
    """What a run gathered: its workers, the fleet windows printed live, the monitor's
    windows, the landed check, when ``run`` started and the agreed start of sending."""

    workers: list[local.WorkerProc]
    fleet: list[dict[str, Any]]
    metrics: list[dict[str, Any]] | None
    landed: dict[str, Any] | None
    started_at: float
    start_at: float | None


def record_run(
    args: argparse.Namespace,
    v: dict[str, Any],
    s: Scenario,
    scenario_file: str | None,
    emu: Any,
    search: SearchRun | None,
    got: Collected,
    intr: Interruption,
) -> int:
    """Say and record the run; its exit code (its outcome's)."""
    run_id = v["run_id"]
    digest = scenario_hash(s)
    workers, fleet, metrics, landed = got.workers, got.fleet, got.metrics, got.landed
    start_at = got.start_at
    summaries = [wp.summary for wp in workers if wp.summary]
    totals = report.fleet_totals(summaries)
    out = sys.stderr if args.json else sys.stdout  # --json: stdout holds the JSON alone
    failed = failed_workers(workers, start_at, landed)
    scenario_block: dict[str, Any] = {"name": s.name, "hash": digest, "file": scenario_file}
    scenario_block["resolved"] = resolved(s)
    proc_figures = process_figures(totals.get("bytes_acked"))
    interrupt = intr.interrupt(start_at, run_seconds(s))
    result: dict[str, Any] = {
        "run_id": run_id,
        "workers": s.workers,
        # the one rate of a constant scenario, per worker; else the windows carry theirs
        "target_bps": constant_bps(s),
        "scenario": scenario_block,
        "started_at": round(got.started_at, 3),
        "ended_at": round(time.time(), 3),
        "start_at": start_at,
        "totals": totals,
        "landed": landed,
        "windows": fleet,
        "metrics_windows": metrics,
        "worker_summaries": summaries,
        "failed_workers": [f["worker_id"] for f in failed],
        "failed_worker_details": failed,
        "interrupt": interrupt.as_dict() if interrupt is not None else None,
        "run_process": proc_figures,
        "emulator_settings": _emulator_settings(emu),
        # what a GB of values costs (credits per GB, the user's price of a credit)
        "price": price_settings(vars(args), os.environ),
        "billable_check": _billable_check(totals, emu),
    }
    if search is not None:  # plan --figures reads it from here (or the result file)
        done = not failed and len(summaries) == s.workers and interrupt is None
        result["find_max"] = search.finish(done, "emulator" if emu is not None else "account")
    from .. import results

    doc = results.document(result)
    outcome = run_outcome(doc, interrupt, failed, landed)
    result["outcome"] = doc["outcome"] = doc["run"]["outcome"] = outcome.as_dict()
    if outcome.name in NOT_JUDGED:  # no threshold "held" of a run that went wrong
        doc["thresholds_held"] = None
    print(outcome.headline(run_id), file=out)
    print_tables(out, run_id, metrics, summaries, totals, landed, args.data_dir)
    note = warmup_note(summaries)
    if note and landed is not None:
        print(note, file=out)
    say_process(proc_figures, emu is not None)
    _say_billable(out, doc.get("figures") or {}, result)
    said = sdk_line(doc.get("figures") or {})
    if said:
        print(said, file=out)
    # the default chart stays in DEFAULT_HOME whatever the run id holds (issue #23)
    chart = args.chart or DEFAULT_HOME / f"{safe_name(run_id)}.png"
    print(write_chart(chart, fleet, run_id, totals, result), file=sys.stderr)
    result["chart"] = doc["run"]["chart"] = str(chart) if chart.exists() else None
    record_result(result, DEFAULT_HOME, out, doc)
    if args.json:
        print(json.dumps(result))
    under = [x["worker_id"] for x in summaries if x.get("under_target")]
    if under and search is None:  # a search stops its workers under target on purpose
        print(
            f"worker(s) {under} ended under their target rate (see under_target)", file=sys.stderr
        )
    print(outcome.headline(run_id), file=sys.stderr)
    return outcome.exit_code


def _billable_check(totals: dict[str, Any], emu: Any) -> dict[str, Any] | None:
    """Against the embedded emulator: the workers' billable bytes (acked, warmup
    included) beside the emulator's own count of the bodies it landed (once every
    spooled append has landed: a stopped emulator landed them; else within 30 s)."""
    if emu is None or emu.config.sink == "drop" or "billable_bytes" not in totals:
        return None  # an account, or an emulator that lands nothing (the drop sink)
    if emu.lander is not None:  # still running (a stopped one landed all it had)
        emu.lander.wait_idle(30.0)
    workers = int(totals["billable_bytes"] or 0) + int(totals.get("warmup_billable_bytes") or 0)
    landed = int(emu.stats.snapshot()["billable_bytes"])
    return {"workers": workers, "emulator": landed, "agree": workers == landed}


def _say_billable(out: Any, figures: dict[str, Any], result: dict[str, Any]) -> None:
    """The billable line (issue #32); a line when the emulator's count of the landed
    rows' values disagrees with the workers'."""
    line = price_line(figures, result["price"])
    if line:
        print(line, file=out)
    check = result.get("billable_check")
    if check and not check["agree"]:
        print(
            f"billable bytes disagree: the workers counted {check['workers']:,} acked, the "
            f"emulator {check['emulator']:,} landed (a resent batch that landed twice, rows "
            "it refused, or rows still landing make the two differ)",
            file=out,
        )


def _emulator_settings(emu: Any) -> dict[str, Any] | None:
    """What of the embedded emulator shapes the run's figures: any pipe-info override it
    sends the SDK, its channel limit."""
    if emu is None:
        return None
    cfg = emu.config
    return {"append_buffer_ms": cfg.append_buffer_ms, "channel_limit_bps": cfg.channel_limit_bps}
