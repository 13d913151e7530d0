"""Results side by side: each figure of each run, and its change against the first."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from . import store, table
from .outcome import outcome_of
from .runs_cli import scenario_label

__all__ = ["FIGURE_ROWS", "comparison", "delta", "letter", "render"]

#: (figure, label, number format) per line of the table, in its order.
FIGURE_ROWS = (
    ("workers", "workers", ",.0f"),
    ("target_mb_per_s", "target MB/s (fleet)", ",.2f"),
    ("mb_per_s", "MB/s (acked, sending window)", ",.3f"),
    ("rows_per_s", "rows/s", ",.0f"),
    ("seconds", "sending seconds", ",.1f"),
    ("ack_p50_ms", "ack p50 ms", ",.1f"),
    ("ack_p99_ms", "ack p99 ms", ",.1f"),
    ("behind_p99_ms", "behind schedule p99 ms", ",.1f"),
    ("visible_p99_ms", "ingest-to-visible p99 ms", ",.1f"),
    ("lost", "rows lost", ",.0f"),
    ("duplicates", "duplicate rows", ",.0f"),
    ("errors", "errors", ",.0f"),
    ("resent_batches", "batches resent", ",.0f"),
    ("sdk_retries", "SDK retries", ",.0f"),
    ("cpu_s_per_gb", "CPU-s per GB", ",.3f"),
    ("peak_rss_mib", "peak RSS MiB (worst worker)", ",.1f"),
    ("sdk_files", "SDK files uploaded", ",.0f"),
    ("sdk_compression_ratio", "SDK file compression (x)", ",.1f"),
    ("sdk_input_buffer_ms", "SDK input buffer ms (mean)", ",.0f"),
    ("sdk_upload_ms", "SDK upload ms (mean)", ",.0f"),
    ("sdk_register_ms", "SDK registration ms (mean)", ",.0f"),
    ("sdk_throttled_windows", "SDK throttled windows", ",.0f"),
    ("billable_gb", "billable GB (values, warmup incl.)", ",.3f"),
    ("ingest_credits", "ingest credits", ",.4f"),
    ("ingest_cost", "ingest cost $ (at the run's price)", ",.2f"),
)
#: Per-stage lines, when some run has more than one stage.
STAGE_ROWS = (
    ("target_mb_per_s", "target MB/s", ",.2f"),
    ("mb_per_s", "MB/s sent", ",.3f"),
    ("ack_p99_ms", "ack p99 ms", ",.1f"),
)


def delta(first: Any, value: Any) -> tuple[float | None, float | None]:
    """``value - first`` and that as a % of ``first``: None where either is unknown,
    and a % of 0 only when both are 0 (no % of a change from 0)."""
    if not (_is_num(first) and _is_num(value)):
        return None, None
    change = float(value) - float(first)
    if first == 0:
        return round(change, 6), (0.0 if change == 0 else None)
    return round(change, 6), round(change / abs(float(first)) * 100, 2)


def comparison(entries: Sequence[store.Entry]) -> dict[str, Any]:
    """The comparison of ``entries`` (the first is the baseline), as ``compare --json``
    prints it: the runs, and one item per figure with each run's value and change."""
    lines = []
    for key, label, fmt in _rows(entries):
        values = [_value(e.doc, key) for e in entries]
        changes = [delta(values[0], v) for v in values]
        lines.append({
            "figure": key,
            "label": label,
            "format": fmt,
            "values": values,
            "change": [c[0] for c in changes],
            "change_pct": [c[1] for c in changes],
        })  # fmt: skip
    runs = [
        {
            "path": str(e.path),
            "run_id": e.doc.get("run_id"),
            "started_at_utc": e.doc.get("started_at_utc"),
            # the resolved scenario is the result file's to hold, not the comparison's
            "scenario": _scenario_names(e.doc.get("scenario")),
            "thresholds_held": e.doc.get("thresholds_held"),
            "outcome": outcome_of(e.doc),
        }
        for e in entries
    ]
    return {"runs": runs, "figures": lines, "warnings": _warnings(runs)}


def _warnings(runs: list[dict[str, Any]]) -> list[str]:
    """One sentence per run that is not a clean pass: its figures are of a run that did
    not go as planned (an interrupted run's are of the part that ran)."""
    out = []
    for i, run in enumerate(runs):
        outcome = run["outcome"]
        if outcome["outcome"] == "passed":
            continue
        why = "; ".join(outcome["reasons"][:3])
        side = "the baseline" if i == 0 else "it"
        out.append(f"warning: {letter(i)} ({run['run_id']}) is not a clean pass: "
                   f"{outcome['outcome']}" + (f" ({why})" if why else "")
                   + f"; compare {side} with care")  # fmt: skip
    return out


def _scenario_names(scenario: Any) -> dict[str, Any] | None:
    if not isinstance(scenario, dict):
        return None
    return {k: scenario.get(k) for k in ("name", "hash", "file")}


def render(comp: dict[str, Any]) -> str:
    """The comparison as text: the runs by letter, then the table (for each run after
    the first, its value, the change and the change in %)."""
    letters = [letter(i) for i in range(len(comp["runs"]))]
    said = []
    for name, run in zip(letters, comp["runs"], strict=True):
        when = str(run["started_at_utc"] or "?").replace("T", " ")[:19]
        said.append(
            f"{name}: {run['run_id']}  scenario {scenario_label(run['scenario'])}  "
            f"started {when} UTC  {run['outcome']['outcome']}  {run['path']}"
        )
    header = ["figure", letters[0]]
    for name in letters[1:]:
        header += [name, f"{name}-{letters[0]}", "%"]
    rows = []
    for line in comp["figures"]:
        fmt = line["format"]
        cells = [line["label"], _show(line["values"][0], fmt)]
        for i in range(1, len(letters)):
            cells += [
                _show(line["values"][i], fmt),
                _show(line["change"][i], "+" + fmt),
                _percent(line["change_pct"][i]),
            ]
        rows.append(cells)
    warned = "".join(w + "\n" for w in comp.get("warnings") or [])
    return "\n".join(said) + "\n" + warned + "\n" + table.render(header, rows)


def _rows(entries: Sequence[store.Entry]) -> list[tuple[str, str, str]]:
    rows = list(FIGURE_ROWS)
    stages = sorted({s["stage"] for e in entries for s in _stages(e.doc)})
    if len(stages) > 1:
        for i in stages:
            rows += [
                (f"stages.{i}.{key}", f"stage {i} {label}", fmt) for key, label, fmt in STAGE_ROWS
            ]
    return rows


def _stages(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in doc.get("stages") or [] if isinstance(s, dict) and "stage" in s]


def _value(doc: dict[str, Any], key: str) -> Any:
    if key.startswith("stages."):
        _, index, name = key.split(".", 2)
        for s in _stages(doc):
            if str(s["stage"]) == index:
                return s.get(name)
        return None
    return (doc.get("figures") or {}).get(key)


def _percent(x: Any) -> str:
    return f"{x:+.1f}%" if _is_num(x) else "-"


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _show(x: Any, fmt: str) -> str:
    return format(x, fmt) if _is_num(x) else "-"


def letter(i: int) -> str:
    """A, B, ... Z, then R27, R28, ..."""
    return chr(ord("A") + i) if i < 26 else f"R{i + 1}"
