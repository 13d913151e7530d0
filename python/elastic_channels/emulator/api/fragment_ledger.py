"""Which byte ranges of which staged objects were taken, and what each registration said.

A fragment is one byte range of one object on the stage. Its id names the object by its
canonical key (``stage/names.py``: ``<bucket>/<key>`` and the key relative to the stage
location are one object) and the registration's own account of the range:

    file:<key>@<start>+<length>:<etag>:<rows>

The id is the spool entry's request id and ``_EMULATOR_LANDED``'s ``REQUEST_ID``, so the
ledger is rebuilt from them at start (:meth:`FragmentLedger.from_ids`). A registration
the same as a taken one, field for field, is a retry: acked, not landed again. One that
overlaps a taken range (or another of its own call) and disagrees with it (another
start, length, etag or row count) is a conflict: refused with 409, never acked. Ids of
the form before this one (``file:<path as sent>@<start>:<etag>``) are read too: their
length and rows are unknown, so a registration at the same start with the same etag is
taken as their retry, as it was then.
"""

from __future__ import annotations

import re
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..http.errors import ApiError

__all__ = ["FragmentLedger", "Span", "fragment_id"]

_ID = re.compile(r"file:(?P<key>.+)@(?P<start>\d+)\+(?P<length>\d+):(?P<etag>[^:@]+):(?P<rows>\d+)")
_LEGACY_ID = re.compile(r"file:(?P<path>.+)@(?P<start>\d+):(?P<etag>[^:@]+)")


@dataclass(frozen=True)
class Span:
    """What a registration said of one byte range of one object (length and rows None:
    unknown, from an id of the older form)."""

    start: int
    length: int | None
    etag: str
    rows: int | None

    def overlaps(self, other: Span) -> bool:
        if self.length is None or other.length is None:
            return self.start == other.start
        return self.start < other.start + other.length and other.start < self.start + self.length

    def same(self, other: Span) -> bool:
        """Whether ``other`` is this registration again (an unknown field matches)."""
        return (
            self.start == other.start
            and self.etag == other.etag
            and _match(self.length, other.length)
            and _match(self.rows, other.rows)
        )

    def text(self) -> str:
        end = "?" if self.length is None else self.start + self.length
        rows = "?" if self.rows is None else f"{self.rows:,}"
        return f"bytes {self.start}..{end} (etag {self.etag}, {rows} rows)"


def _match(a: int | None, b: int | None) -> bool:
    return a is None or b is None or a == b


def fragment_id(key: str, span: Span) -> str:
    """The request id a fragment is spooled and landed under."""
    return f"file:{key}@{span.start}+{span.length}:{span.etag}:{span.rows}"


class FragmentLedger:
    """The spans taken per object; thread-safe."""

    def __init__(self) -> None:
        self._spans: dict[str, list[Span]] = defaultdict(list)
        self._lock = threading.Lock()

    @classmethod
    def from_ids(cls, ids: Iterable[str], key_for: Callable[[str], str]) -> FragmentLedger:
        """The ledger the request ids of fragments spooled or landed before describe;
        ``key_for`` names the object of an older id's path (an id it refuses is skipped:
        no registration could name that object now)."""
        ledger = cls()
        for request_id in ids:
            if m := _ID.fullmatch(request_id):
                span = Span(int(m["start"]), int(m["length"]), m["etag"], int(m["rows"]))
                ledger.add(m["key"], span)
            elif m := _LEGACY_ID.fullmatch(request_id):
                try:
                    key = key_for(m["path"])
                except ValueError:
                    continue
                ledger.add(key, Span(int(m["start"]), None, m["etag"], None))
        return ledger

    def add(self, key: str, span: Span) -> None:
        with self._lock:
            self._spans[key].append(span)

    def fresh(self, spans: list[tuple[str, Span]]) -> list[bool]:
        """For each (key, span) of one call: True if new, False if a retry of a taken
        one. ApiError 409 naming both if one disagrees with a taken span it overlaps or
        with another of the call."""
        out = []
        for i, (key, span) in enumerate(spans):
            for j, (other_key, other) in enumerate(spans[:i]):
                if other_key == key and span.overlaps(other):
                    raise _conflict(key, span, other, f"fragment {j} of this call")
            with self._lock:
                taken = list(self._spans.get(key, ()))
            overlapping = [t for t in taken if span.overlaps(t)]
            if any(span.same(t) for t in overlapping):
                out.append(False)
                continue
            if overlapping:
                raise _conflict(key, span, overlapping[0], "a registration taken before")
            out.append(True)
        return out


def _conflict(key: str, span: Span, other: Span, whose: str) -> ApiError:
    return ApiError(
        409,
        "ERR_FILE_FRAGMENT_CONFLICT",
        f"stage object {key!r}: this fragment says {span.text()}, but {whose} says "
        f"{other.text()} of the same object; a range is registered once, as it was first",
    )
