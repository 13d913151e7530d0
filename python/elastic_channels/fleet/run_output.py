"""What ``run`` says while and after it runs: the in-process monitor that writes the
metrics table, the tables printed at the end, the chart, and the last words of a worker
that ended without a summary."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TextIO

from ..landing_table import LandingTable
from ..model import METRICS_TABLE_NAME
from . import local, report, text_table
from .verify import describe

__all__ = [
    "finish_monitor", "print_tables", "record_result", "say_last_words", "stages_table",
    "start_monitor", "write_chart",
]  # fmt: skip


def say_last_words(workers: list[local.WorkerProc]) -> None:
    """For each worker that ended without a summary, what it said last that was not
    routine."""
    for wp in workers:
        if wp.summary is None:
            said = [x for x in wp.stderr_tail if " INFO " not in x] or ["(nothing)"]
            print(
                f"worker {wp.worker_id} {wp.exit_text()} without a summary; its last "
                "words:\n  " + "\n  ".join(said[-10:]),
                file=sys.stderr,
            )


def print_tables(
    out: TextIO,
    run_id: str,
    metrics: list[dict[str, Any]] | None,
    summaries: list[dict[str, Any]],
    totals: dict[str, Any],
    landed: dict[str, Any] | None,
    data_dir: Path,
) -> None:
    """The fleet windows as the metrics table holds them, the workers' summaries, and
    what landed (and how to query it)."""
    if metrics:
        print(f"fleet windows, as {METRICS_TABLE_NAME} holds them:", file=out)
        print(report.windows_table(metrics, totals) + "\n", file=out)
    print(report.summary_table(summaries, totals), file=out)
    if landed is not None:
        print("\n" + describe(landed), file=out)
        print(
            f"query it: elastic-channels emulator query --data-dir {data_dir} "
            f"\"SELECT * FROM {METRICS_TABLE_NAME} WHERE RUN_ID = '{run_id}' "
            'ORDER BY WINDOW_START"',
            file=out,
        )


def start_monitor(
    run_id: str,
    workers: int,
    emu: Any,
    profile: str | None,
    visible: bool,
    land: LandingTable | None = None,
    flags: dict[str, Any] | None = None,
) -> Any:
    """A monitor in this process writing the run's windows to the metrics table of the
    target (the emulator's database, or the account's, with the run's account ``flags``:
    database, schema, pipe), reading ingest-to-visible off ``land``'s table (None: resort
    sales'), or None with a note why not."""
    try:
        from ..monitor.in_run import RunMonitor

        return RunMonitor(
            run_id, workers, emulator=emu, profile=profile, visible=visible, landing=land,
            flags=flags,
        )  # fmt: skip
    except Exception as e:  # no SQL access to the account, a missing extra: run without
        print(f"monitor off: {e} (the run goes on; see --no-monitor)", file=sys.stderr)
        return None


def finish_monitor(mon: Any, visible_wait_s: float = 60) -> list[dict[str, Any]] | None:
    try:
        return list(mon.finish(visible_wait_s=visible_wait_s))
    except Exception as e:
        print(f"monitor: could not finish: {e}", file=sys.stderr)
        return None


def write_chart(
    path: Path,
    fleet: list[dict[str, Any]],
    run_id: str,
    totals: dict[str, Any],
    result: dict[str, Any] | None = None,
) -> str:
    """The run's chart at ``path`` (``result``: its outcome, kills and interrupt marked),
    or why there is none."""
    try:
        from .chart import write_chart
    except ImportError as e:
        return f"no chart: {e} (pip install '.[chart]' in a checkout)"
    if not fleet:
        return "no chart: no complete window was reported"
    write_chart(path, fleet, run_id, totals, result)
    return f"chart: {path}"


def record_result(
    result: dict[str, Any],
    home: Path,
    out: TextIO = sys.stderr,
    doc: dict[str, Any] | None = None,
) -> bool:
    """Print the run's figures per stage to ``out`` when its load shape has more than
    one stage; write the run's result file (``home/results``, docs/RESULTS.md) and say
    where, then each threshold of its scenario, held or not. Adds ``result_file`` to
    ``result``. False when a threshold did not hold (or could not be checked); a result
    file that cannot be written is said, and the run's outcome is its own. ``doc``: the
    result's document, when already made (``results.document(result)``)."""
    from .. import results

    doc = results.document(result) if doc is None else doc
    if len(doc["stages"]) > 1:
        print("per stage (warmup left out; as the result file holds them):", file=out)
        print(stages_table(doc["stages"], doc["figures"]) + "\n", file=out)
    try:
        path = results.write(doc, home)
        result["result_file"] = str(path)
        print(f"result: {path} (elastic-channels runs lists it; compare sets runs side by "
              "side)", file=sys.stderr)  # fmt: skip
    except (OSError, results.ResultError) as e:
        result["result_file"] = None
        print(f"no result file: {e}", file=sys.stderr)
    if doc["thresholds_error"]:
        print(f"thresholds cannot be checked: {doc['thresholds_error']}", file=sys.stderr)
    verdict = (doc.get("outcome") or {}).get("outcome")
    for outcome in doc["thresholds"]:
        if verdict in NOT_JUDGED:  # figures of a run that did not go as planned
            word = f"not judged ({verdict.replace('_', ' ')})"
        else:
            word = "held" if outcome["held"] else "NOT HELD"
        print(f"threshold {word}: {outcome['text']}", file=sys.stderr)
    result["thresholds_checked"] = doc["thresholds"]
    result["thresholds_held"] = doc["thresholds_held"]
    return doc["thresholds_held"] is not False


#: Outcomes under which a threshold is not judged: the run's figures are of a run that
#: did not go as planned, so no threshold "held" of them.
NOT_JUDGED = ("could_not_start", "interrupted", "workers_failed", "rows_lost")

STAGE_COLUMNS: list[text_table.Column] = [
    ("stage", "stage", "{}"),
    ("seconds", "seconds", "{:.1f}"),
    ("target MB/s", "target_mb_per_s", "{:.1f}"),
    ("MB/s", "mb_per_s", "{:.1f}"),
    ("acked MB/s", "acked_mb_per_s", "{:.1f}"),
    ("ack p50 ms", "ack_p50_ms", "{:.0f}"),
    ("ack p99 ms", "ack_p99_ms", "{:.0f}"),
    ("behind p99 ms", "behind_p99_ms", "{:.0f}"),
    ("errors", "errors", "{:,}"),
]


def stages_table(stages: list[dict[str, Any]], figures: dict[str, Any]) -> str:
    """A run's stages (``results.derive.stage_figures``: MB/s appended and acked over the
    stage's windows), and the run's own figures below them (acked over the sending
    window, the one throughput definition)."""
    total = {
        "stage": "run",
        "target_mb_per_s": figures.get("target_mb_per_s"),
        "acked_mb_per_s": figures.get("mb_per_s"),
        "ack_p50_ms": figures.get("ack_p50_ms"),
        "ack_p99_ms": figures.get("ack_p99_ms"),
        "behind_p99_ms": figures.get("behind_p99_ms"),
        "errors": figures.get("errors"),
    }
    return text_table.render(STAGE_COLUMNS, stages, total)
