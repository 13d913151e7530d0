"""What the monitor set aside, and why: bad worker lines, rows the target refused,
worker ids claimed by more than one pod (or host), and worker ids that sent two
different lines of one window at once (two workers nothing tells apart).

Each is counted per worker (``None``: a line whose worker could not be told, or a
fleet row) and logged with its reason as a warning, the first few of each worker one
by one and then only counted, so a worker that prints nothing but bad lines cannot
flood the log. :meth:`Tally.report` says it all at the end of a run.
"""

from __future__ import annotations

import logging
from collections import Counter

__all__ = ["LOGGED_PER_WORKER", "Tally"]

log = logging.getLogger("elastic_channels.monitor")

#: Bad lines (and refused rows) of one worker logged one by one; later ones are counted.
LOGGED_PER_WORKER = 5


def _who(worker_id: int | None) -> str:
    return "worker ?" if worker_id is None else f"worker {worker_id}"


def _counts(counter: Counter[int | None]) -> str:
    order = sorted(counter, key=lambda w: (w is None, w or 0))
    return ", ".join(f"{_who(w)}: {counter[w]}" for w in order)


class Tally:
    def __init__(self) -> None:
        self.bad_lines: Counter[int | None] = Counter()
        self.refused_rows: Counter[int | None] = Counter()
        #: Worker id -> the pods that claimed it, for ids claimed by more than one.
        self.clashes: dict[int, set[str | None]] = {}
        #: Worker id -> windows of which one reporter sent two different lines covering
        #: the same time (two workers of one id on a stream that cannot tell them apart).
        self.doubled: Counter[int] = Counter()
        #: Worker id -> the pods (or hosts; None: neither) of those lines.
        self.doubled_by: dict[int, set[str | None]] = {}
        self._doubled_at: set[tuple[int, str | None, float]] = set()

    def bad_line(self, worker_id: int | None, reason: str) -> None:
        self.bad_lines[worker_id] += 1
        n = self.bad_lines[worker_id]
        if n <= LOGGED_PER_WORKER:
            log.warning("monitor: skipped a bad line of %s: %s", _who(worker_id), reason)
        elif n == LOGGED_PER_WORKER + 1:
            log.warning("monitor: %s keeps sending bad lines: counting them, no longer "
                        "logging each", _who(worker_id))  # fmt: skip

    def refused_row(self, worker_id: int | None, what: str, reason: str) -> None:
        """A row (``what``: which) the target refused, set aside."""
        self.refused_rows[worker_id] += 1
        n = self.refused_rows[worker_id]
        whose = "a fleet row" if worker_id is None else f"a row of {_who(worker_id)}"
        if n <= LOGGED_PER_WORKER:
            log.warning("monitor: the target refused %s (%s), set aside: %s", whose, what,
                        reason)  # fmt: skip
        elif n == LOGGED_PER_WORKER + 1:
            log.warning("monitor: the target keeps refusing rows of %s: counting them, no "
                        "longer logging each", _who(worker_id))  # fmt: skip

    def claimed(self, worker_id: int, pods: set[str | None]) -> None:
        """``pods`` all claim ``worker_id`` (more than one: a clash, logged once per pod)."""
        if len(pods) < 2 or self.clashes.get(worker_id) == pods:
            return
        self.clashes[worker_id] = set(pods)
        log.warning(
            "monitor: %s is claimed by %d pods (%s): each kept, with rows of its own; the "
            "fleet row adds them up", _who(worker_id), len(pods), _pods(pods),
        )  # fmt: skip

    def doubled_line(self, worker_id: int, pod: str | None, window_start: float) -> None:
        """One reporter (``worker_id`` of ``pod``) sent a second, different line of the
        window at ``window_start`` that overlaps the one held in time: not a restart (its
        lines follow the ones before) but two workers of one id. The later line replaces
        the earlier: counted once a window (a stream read again changes nothing), and
        logged for the first few windows."""
        if (worker_id, pod, window_start) in self._doubled_at:
            return
        self._doubled_at.add((worker_id, pod, window_start))
        self.doubled[worker_id] += 1
        self.doubled_by.setdefault(worker_id, set()).add(pod)
        n = self.doubled[worker_id]
        if n <= LOGGED_PER_WORKER:
            log.warning(
                "monitor: %s (%s) sent two different lines for window %s at once: two "
                "workers with one worker id? The later line replaces the earlier",
                _who(worker_id), _pods({pod}), window_start,
            )  # fmt: skip
        elif n == LOGGED_PER_WORKER + 1:
            log.warning("monitor: %s keeps sending two different lines per window: "
                        "counting them, no longer logging each", _who(worker_id))  # fmt: skip

    def report(self) -> list[str]:
        """What was set aside, one sentence each (nothing: no line)."""
        out = []
        if self.bad_lines:
            out.append(f"{sum(self.bad_lines.values())} bad worker line(s) skipped "
                       f"({_counts(self.bad_lines)})")  # fmt: skip
        if self.refused_rows:
            out.append(f"{sum(self.refused_rows.values())} row(s) refused by the target, "
                       f"set aside ({_counts(self.refused_rows)})")  # fmt: skip
        for wid in sorted(self.clashes):
            pods = self.clashes[wid]
            out.append(f"{_who(wid)} is claimed by {len(pods)} pods ({_pods(pods)})")
        for wid in sorted(self.doubled):
            out.append(
                f"{_who(wid)} sent two different lines for {self.doubled[wid]} window(s) at "
                f"once ({_pods(self.doubled_by[wid])}): two workers with one worker id that "
                "nothing tells apart? The later line of each window was kept"
            )
        return out


def _pods(pods: set[str | None]) -> str:
    return ", ".join(sorted(p or "no pod or host name" for p in pods))
