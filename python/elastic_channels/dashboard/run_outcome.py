"""The run's one outcome on the Run page, as ``run`` decided it (results/outcome.py):
read from its result file, when one was recorded where this dashboard can see it (the
``results`` folder beside the emulator's data dir, or under ``.elastic-channels`` in the
working directory). The metrics table alone cannot say it: an interrupt or a failed
threshold is known only once ``run`` has ended."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from ..results import store
from ..results.outcome import WORDS, outcome_of

__all__ = ["recorded_outcome", "show_outcome"]


def _homes(src: Any) -> list[Path]:
    homes = [store.DEFAULT_HOME]
    data_dir = getattr(src, "data_dir", None)
    if isinstance(data_dir, Path):
        homes.insert(0, data_dir.parent)
    return list(dict.fromkeys(h.resolve() for h in homes))


def recorded_outcome(src: Any, run_id: str) -> dict[str, Any] | None:
    """The outcome of ``run_id``'s result file (``{outcome, exit_code, reasons}``), or
    None when no single result of it is found."""
    for home in _homes(src):
        try:
            entry = store.find(run_id, home)
        except store.ResultError:
            continue
        return outcome_of(entry.doc)
    return None


def show_outcome(src: Any, run_id: str) -> None:
    """A banner with the run's outcome, when its result file is found."""
    got = recorded_outcome(src, run_id)
    if got is None or got["outcome"] == "unknown":
        return
    word = WORDS[got["outcome"]]
    why = "; ".join(got["reasons"])
    text = f"Outcome: {word} (exit {got['exit_code']})" + (f": {why}" if why else "")
    if got["outcome"] == "passed":
        st.success(text)
    else:
        st.error(text)
