"""File mode: ``POST .../channels/{channel}/filebuffer``, the registration of staged files.

For flushes over ~1 MiB the SDK uploads an encrypted file to the pipe's stage (``stage/``),
then registers its fragments here (SDK 1.9.1 calls it ``insert_file_fragments_elastic``).
Each fragment is checked (``fragments.py``: inflated in pieces, never held raw; each file
named is read once per call), then spooled exactly like an inline rows request (its zstd
frame is the body, its id the request id), and the call is acked only once every
fragment of it is durable: from there on it lands through the one landing path, with the
same exactly-once guarantee.

A fragment is one byte range of one stage object, however its ``file_path`` spells the
object (``fragment_ledger.py``). Registered again as it was (the SDK retrying a call whose
ack it lost, or after the emulator restarted: the ledger is rebuilt from the spool's
entries and ``_EMULATOR_LANDED`` at start) it is acked and not landed again; registered
again otherwise over a range already taken (another length, rows or etag) it is refused
with 409. A call with any bad fragment is refused whole (4xx) before any of its fragments
is spooled. Calls naming the same object are taken one at a time.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

from ..http.bodies import inflate
from ..http.errors import ApiError
from ..landing.crashpoints import crash_point
from ..stage.names import StageNames
from .fragment_ledger import FragmentLedger
from .fragments import Checked, Fragment, StagedFile, check_fragment, parse_fragments
from .json_body import BadJson, decode_json
from .pipe_keys import PipeKeyError, PipeKeys

if TYPE_CHECKING:
    from ..landing.lander import Lander
    from .drop_sink import DropSink
    from .stats import Stats

__all__ = ["FileRegistrations", "StagedFiles"]

log = logging.getLogger("elastic_channels.emulator")

Channel = tuple[str, str, str, str]


class StagedFiles(Protocol):
    """What registration needs of the stage the files were uploaded to."""

    @property
    def location(self) -> str: ...

    def read(self, file_path: str) -> bytes: ...

    def remove(self, file_path: str) -> object: ...

    def check_owner(self, file_path: str, user: str) -> None:
        """ValueError unless ``file_path`` is in a location issued to ``user``."""
        ...


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
        bucket, _, prefix = stage.location.partition("/")
        self._names = StageNames(bucket, prefix)
        self._ledger = FragmentLedger.from_ids(taken, self._names.key_for)
        self._busy: set[str] = set()
        self._cond = threading.Condition()

    def register(
        self,
        channel: Channel,
        request_id: str,
        body: bytes,
        admit: Callable[[int], None] | None = None,
        user: str = "",
    ) -> int:
        """Take one call's fragments; the number of rows newly taken. ApiError if any
        fragment is bad or disagrees with one taken (then none is taken). ``admit(n)``:
        called with the new fragments' uncompressed bytes once every check passed,
        before any is taken; its ApiError (the channel limit's 429) refuses the call
        whole too. ``user``: the registering client's, who must own every file named."""
        try:
            doc = decode_json(body)
        except BadJson as e:
            raise ApiError(400, "ERR_INVALID_BODY", str(e)) from None
        fragments = parse_fragments(doc, self._names.key_for)
        for frag in fragments:  # a client registers only files of its own locations
            try:
                self._stage.check_owner(frag.file_path, user)
            except ValueError as e:
                raise ApiError(403, "ERR_FILE_NOT_AUTHORIZED", str(e)) from None
        ids = [f.id for f in fragments]
        if len(set(ids)) != len(ids):
            raise ApiError(400, "ERR_INVALID_FILE_FRAGMENT", "a fragment is listed twice")
        objects = sorted({f.key for f in fragments})
        self._claim(objects)
        try:
            new = self._ledger.fresh([(f.key, f.span) for f in fragments])
            fresh = [f for f, is_new in zip(fragments, new, strict=True) if is_new]
            checked = self._check(fresh)  # every check before any spool
            if admit is not None and checked:
                admit(sum(c.raw_bytes for c in checked))
            crash_point("files:after-check")
            for c in checked:
                self._take(channel, c)
                self._ledger.add(c.fragment.key, c.fragment.span)
        finally:
            self._release(objects)
        for frag in fragments:  # a retried one's file too, left by a restart in between
            if _whole_file(frag):  # its rows are in the spool now
                self._stage.remove(frag.file_path)
        return sum(f.rows for f in fresh)

    def _claim(self, objects: list[str]) -> None:
        """Wait while another call (a retry, or the same object under another spelling)
        holds any of these objects."""
        with self._cond:
            deadline = time.monotonic() + 120
            while self._busy.intersection(objects):
                if not self._cond.wait(max(0.0, deadline - time.monotonic())):
                    raise ApiError(503, "ERR_BUSY", "the same files are being registered")
            self._busy.update(objects)

    def _release(self, objects: list[str]) -> None:
        with self._cond:
            self._busy.difference_update(objects)
            self._cond.notify_all()

    def _check(self, fragments: list[Fragment]) -> list[Checked]:
        """Every fragment checked, each staged file read once (one held at a time)."""
        by_object: dict[str, list[Fragment]] = {}
        for frag in fragments:
            by_object.setdefault(frag.key, []).append(frag)
        checked = []
        for frags in by_object.values():
            staged = self._read(frags[0])
            checked += [check_fragment(f, staged, self._key(f)) for f in frags]
        return checked

    def _key(self, frag: Fragment) -> bytes:
        try:
            return self._keys.key(frag.key_id)
        except PipeKeyError as e:
            raise ApiError(400, "ERR_INVALID_FILE_FRAGMENT", str(e)) from None

    def _read(self, frag: Fragment) -> StagedFile:
        self._key(frag)  # an unknown key is named before a missing file
        try:
            return StagedFile.of(self._stage.read(frag.file_path))
        except (OSError, ValueError) as e:
            raise ApiError(400, "ERR_FILE_NOT_FOUND", f"{frag.file_path}: {e}") from None

    def _take(self, channel: Channel, c: Checked) -> None:
        if self._sink is not None:
            started = time.perf_counter()
            raw = inflate(c.frame, "zstd", cap=c.raw_bytes)  # checked: one at a time
            self._sink.take(
                channel, raw, wire_bytes=len(c.frame), offset_token=None, started=started,
                inflate_s=time.perf_counter() - started,
            )  # fmt: skip
        else:
            self._lander.put(channel, c.fragment.id, c.frame, "zstd", c.raw_bytes)
        self._stats.file_fragment(len(c.frame), c.raw_bytes)
        log.debug(
            "file fragment %s taken: %d rows, %d bytes compressed, %d uncompressed",
            c.fragment.where, c.fragment.rows, len(c.frame), c.raw_bytes,
        )  # fmt: skip


def _whole_file(frag: Fragment) -> bool:
    """Whether this fragment is the whole file (then the staged file is done with)."""
    return frag.start == 0 and frag.length == frag.file_length


def taken_ids(spooled: Iterable[str], landed: Iterable[str]) -> set[str]:
    """Fragment ids already taken: request ids of file fragments among these."""
    return {i for i in (*spooled, *landed) if i.startswith("file:")}
