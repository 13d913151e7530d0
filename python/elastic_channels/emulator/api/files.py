"""File mode: ``POST .../channels/{channel}/filebuffer``, the registration of staged files.

For flushes over ~1 MiB the SDK uploads an encrypted file to the pipe's stage (``stage/``),
then registers its fragments here (SDK 1.9.1 calls it ``insert_file_fragments_elastic``).
Each fragment is checked and opened (``fragments.py``), then spooled exactly like an
inline rows request (its zstd frame is the body, ``file:<path>@<offset>`` its request id),
and the call is acked only once every fragment of it is durable: from there on it lands
through the one landing path, with the same exactly-once guarantee.

A fragment registered twice (the SDK retrying a call whose ack it lost, or after the
emulator restarted) is acked again and not landed again: the ids of fragments already
spooled or landed are known (the spool's entries and ``_EMULATOR_LANDED`` at start, then
every fragment taken). A call with any bad fragment is refused whole (400) before any of
its fragments is spooled.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

from ..http.errors import ApiError
from ..landing.crashpoints import crash_point
from .fragments import Fragment, open_fragment, parse_fragments
from .json_body import BadJson, decode_json
from .pipe_keys import PipeKeyError, PipeKeys

if TYPE_CHECKING:
    from ..landing.lander import Lander
    from .drop_sink import DropSink
    from .stats import Stats

__all__ = ["FileRegistrations", "StagedFiles"]

Channel = tuple[str, str, str, str]


class StagedFiles(Protocol):
    """What registration needs of the stage the files were uploaded to."""

    def read(self, file_path: str) -> bytes: ...

    def remove(self, file_path: str) -> object: ...


class FileRegistrations:
    """Takes fragment registrations; thread-safe."""

    def __init__(
        self,
        stage: StagedFiles,
        keys: PipeKeys,
        lander: Lander,
        stats: Stats,
        *,
        taken: Iterable[str] = (),
        sink: DropSink | None = None,
    ) -> None:
        """``taken``: ids of fragments spooled or landed before this start."""
        self._stage, self._keys, self._lander, self._stats = stage, keys, lander, stats
        self._sink = sink
        self._taken = set(taken)
        self._busy: set[str] = set()
        self._cond = threading.Condition()

    def register(
        self,
        channel: Channel,
        request_id: str,
        body: bytes,
        admit: Callable[[int], None] | None = None,
    ) -> int:
        """Take one call's fragments; the number of rows newly taken. ApiError if any
        fragment is bad (then none is taken). ``admit(n)``: called with the new
        fragments' uncompressed bytes once every check passed, before any is taken; its
        ApiError (the channel limit's 429) refuses the call whole too."""
        try:
            doc = decode_json(body)
        except BadJson as e:
            raise ApiError(400, "ERR_INVALID_BODY", str(e)) from None
        fragments = parse_fragments(doc)
        ids = [f.id for f in fragments]
        if len(set(ids)) != len(ids):
            raise ApiError(400, "ERR_INVALID_FILE_FRAGMENT", "a fragment is listed twice")
        self._claim(ids)
        try:
            fresh = [f for f in fragments if f.id not in self._taken]
            opened = [(f, *self._open(f)) for f in fresh]  # every check before any spool
            if admit is not None and opened:
                admit(sum(len(raw) for _, _, raw in opened))
            crash_point("files:after-check")
            for frag, frame, raw in opened:
                self._take(channel, frag, frame, raw)
                with self._cond:
                    self._taken.add(frag.id)
        finally:
            self._release(ids)
        for frag in fragments:  # a retried one's file too, left by a restart in between
            if _whole_file(frag):  # its rows are in the spool now
                self._stage.remove(frag.file_path)
        return sum(f.rows for f in fresh)

    def _claim(self, ids: list[str]) -> None:
        """Wait while another call (a retry of the same one) holds any of these ids."""
        with self._cond:
            deadline = time.monotonic() + 120
            while self._busy.intersection(ids):
                if not self._cond.wait(max(0.0, deadline - time.monotonic())):
                    raise ApiError(503, "ERR_BUSY", "the same fragments are being registered")
            self._busy.update(ids)

    def _release(self, ids: list[str]) -> None:
        with self._cond:
            self._busy.difference_update(ids)
            self._cond.notify_all()

    def _open(self, frag: Fragment) -> tuple[bytes, bytes]:
        try:
            key = self._keys.key(frag.key_id)
        except PipeKeyError as e:
            raise ApiError(400, "ERR_INVALID_FILE_FRAGMENT", str(e)) from None
        try:
            data = self._stage.read(frag.file_path)
        except (OSError, ValueError) as e:
            raise ApiError(400, "ERR_FILE_NOT_FOUND", f"{frag.file_path}: {e}") from None
        return open_fragment(frag, data, key)

    def _take(self, channel: Channel, frag: Fragment, frame: bytes, raw: bytes) -> None:
        if self._sink is not None:
            started = time.perf_counter()
            self._sink.take(
                channel, raw, wire_bytes=len(frame), offset_token=None, started=started,
                inflate_s=0.0,
            )  # fmt: skip
        else:
            self._lander.put(channel, frag.id, frame, "zstd", len(raw), raw=raw)
        self._stats.file_fragment(len(frame), len(raw))


def _whole_file(frag: Fragment) -> bool:
    """Whether this fragment is the whole file (then the staged file is done with)."""
    return frag.start == 0 and frag.length == frag.file_length


def taken_ids(spooled: Iterable[str], landed: Iterable[str]) -> set[str]:
    """Fragment ids already taken: request ids of file fragments among these."""
    return {i for i in (*spooled, *landed) if i.startswith("file:")}
