"""Windows the monitor no longer holds in full, so its memory does not grow with a run.

Each window holds one line per worker (with its histograms: kilobytes each), so the
monitor keeps in full only windows that may still change. Once a window's fleet row is
written, its ingest-to-visible read is final (or off), none of its lines wait to be
written, and ``prune_after_s`` (the grace period plus a margin for late lines) has
passed since its end, its lines are dropped (:meth:`WindowArchive.drop`). What stays is a
:class:`Pruned` stub: the window's length and ingest-to-visible figures, and for each
line of it, its worker id and an 8-byte digest of the line written (about 12 bytes a
worker; two pods that claimed one worker id have an entry each).

A line seen again for a pruned window (a log stream that reconnected and replays) matches
its digest and changes nothing, without a query. A line that differs, or a worker's
first line of that window, is late: :meth:`WindowArchive.restore` reads the window's
worker lines back from the metrics table (their RAW) and holds the window in full again,
and the late line then updates its rows (upserted on their key: never a second row).
The final flush re-reads ingest-to-visible of pruned windows too, on their fleet rows
read back (:meth:`WindowArchive.for_final`).
"""

from __future__ import annotations

import bisect
import hashlib
import json
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .sink import MetricsSink
    from .windows import Window

__all__ = ["Pruned", "WindowArchive", "line_digest"]

#: Added to the grace period before a written window is pruned: lines this late (a
#: stream that reconnects, a slow node) are still taken without a read-back.
LATE_MARGIN_S = 60.0
_VISIBLE_KEYS = ("visible_rows", "visible_p50_ms", "visible_p99_ms", "visible_avg_ms")


def _canonical(value: Any) -> Any:
    """``value`` with integral floats as ints: a line read back from a VARIANT may hold
    ``3`` where the worker printed ``3.0`` (equal lines, equal digests)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def line_digest(line: dict[str, Any]) -> bytes:
    """8 bytes that differ (but for a 2^-64 chance) between lines that differ."""
    text = json.dumps(_canonical(line), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.blake2b(text.encode(), digest_size=8).digest()


@dataclass(eq=False)
class Pruned:
    """A written window without its lines: who reported it, and a digest of each line."""

    __slots__ = ("digests", "visible", "window_seconds", "worker_ids")
    window_seconds: float
    visible: dict[str, Any]
    #: Sorted worker ids (one per line: an id claimed by two pods is there twice), and
    #: their lines' digests in the same order (8 bytes each).
    worker_ids: array
    digests: bytes

    def holds(self, worker_id: int, line: dict[str, Any]) -> bool:
        """Whether ``line`` is one written for ``worker_id``."""
        i = bisect.bisect_left(self.worker_ids, worker_id)
        digest = None
        while i < len(self.worker_ids) and self.worker_ids[i] == worker_id:
            digest = digest or line_digest(line)
            if self.digests[8 * i : 8 * i + 8] == digest:
                return True
            i += 1
        return False


class WindowArchive:
    """The pruned windows of a run, by window start."""

    def __init__(self) -> None:
        self.stubs: dict[float, Pruned] = {}

    def __contains__(self, window_start: object) -> bool:
        return window_start in self.stubs

    def __len__(self) -> int:
        return len(self.stubs)

    def drop(self, w: Window) -> None:
        """Keep only the stub of ``w`` (a written window no line will change)."""
        from .windows import reporter_order

        who = sorted(w.lines, key=reporter_order)
        self.stubs[w.window_start] = Pruned(
            w.window_seconds, dict(w.visible), array("q", [r[0] for r in who]),
            b"".join(line_digest(w.lines[r]) for r in who),
        )  # fmt: skip

    def holds(self, line: dict[str, Any]) -> bool:
        """Whether ``line`` belongs to a pruned window and is the one written for it."""
        stub = self.stubs.get(round(float(line["window_start"]), 6))
        return stub is not None and stub.holds(int(line["worker_id"]), line)

    def changes(self, line: dict[str, Any]) -> bool:
        """Whether ``line`` is late: it belongs to a pruned window and differs from (or is
        not among) the lines written for it."""
        ws = round(float(line["window_start"]), 6)
        return ws in self.stubs and not self.holds(line)

    def restore(self, sink: MetricsSink, run_id: str, starts: Iterable[float]) -> list[Window]:
        """The pruned windows at ``starts`` in full again, their worker lines read back
        from the metrics table (SqlError if it cannot be read: nothing changes)."""
        from .records import LineError, parse
        from .windows import reporter

        out = []
        for ws in sorted(set(starts) & self.stubs.keys()):
            lines = {}
            for r in sink.read_rows(run_id, fleet=False, window_start=ws):
                try:
                    line = parse(r["RAW"], held=True) if isinstance(r["RAW"], dict) else None
                except LineError:
                    line = None  # not a line this monitor wrote: not taken
                if line is not None:
                    lines[reporter(line)] = line
            out.append(self._window(ws, lines=lines))
        for w in out:
            del self.stubs[w.window_start]
        return out

    def for_final(self, sink: MetricsSink, run_id: str) -> list[Window]:
        """Every pruned window with its fleet figures read back (its fleet row's RAW),
        for the final flush to write it again with ingest-to-visible read again; the
        stubs stay (a line after it is still recognised)."""
        if not self.stubs:
            return []
        out = []
        for row in sink.read_rows(run_id, fleet=True):
            raw, start = row.get("RAW"), row.get("WINDOW_START")
            ws = None if start is None else round(start.timestamp(), 6)
            if ws in self.stubs and isinstance(raw, dict):
                fleet = {k: v for k, v in raw.items() if k not in _VISIBLE_KEYS}
                out.append(self._window(ws, held_fleet=fleet))
        return out

    def _window(self, ws: float, **kwargs: Any) -> Window:
        from .windows import Window  # windows.py holds an archive: imported late

        stub = self.stubs[ws]
        return Window(
            ws, stub.window_seconds, fleet_written=True, visible_final=True,
            visible=dict(stub.visible), **kwargs,
        )  # fmt: skip
