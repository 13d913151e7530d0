"""A run's results: one self-describing JSON file per run in ``.elastic-channels/results``
(never overwritten), listed by ``elastic-channels runs`` and set side by side by
``elastic-channels compare``; a scenario's thresholds checked against its figures.

``record(result, home)`` writes ``run --json``'s result (with the scenario, versions,
machine, times and derived figures) and returns its path; ``document(result)`` is the
same document without writing it; ``thresholds.check(thresholds, figures)`` returns the
bounds that did not hold. docs/RESULTS.md describes the file.
"""

from __future__ import annotations

from .document import document, record
from .store import DEFAULT_HOME, FORMAT, ResultError, find, load, results_dir, scan, write

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
