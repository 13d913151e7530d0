"""A run's results: one self-describing JSON file per run in ``.elastic-channels/results``
(never overwritten), listed by ``elastic-channels runs`` and set side by side by
``elastic-channels compare``; a scenario's thresholds checked against its figures.

``record(result, home)`` writes ``run --json``'s result (with the scenario, versions,
machine, times and derived figures) and returns its path; ``document(result)`` is the
same document without writing it; ``thresholds.check(thresholds, figures)`` returns the
bounds that did not hold. docs/RESULTS.md describes the file.

``record`` and ``document`` are imported on first use: they need the scenario package
(its figure names), which ``runs`` and ``compare`` do not, nor their ``--help``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .store import DEFAULT_HOME, FORMAT, ResultError, find, load, results_dir, scan, write

if TYPE_CHECKING:
    from .result_file import document, record

__all__ = [
    "DEFAULT_HOME",
    "FORMAT",
    "ResultError",
    "document",
    "find",
    "load",
    "record",
    "results_dir",
    "scan",
    "write",
]


def __getattr__(name: str) -> Any:
    if name in ("document", "record"):
        from . import result_file

        return getattr(result_file, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
