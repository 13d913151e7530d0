"""One file fragment the SDK registers in file mode: its fields checked, its bytes checked.

What SDK 1.9.1 sends to ``.../channels/ELASTIC/filebuffer`` (observed; docs/EMULATOR.md):
a JSON list of fragments, each naming a file it uploaded to the pipe's stage
(``file_path`` = the stage location + a name), the file's MD5 ``file_etag`` and length,
the fragment's byte range, row count and uncompressed length, and how it is encrypted
(``encryption_version`` ``AES-CTR-128.1``: AES-CTR under the pipe key ``master_key_id``,
the counter starting at ``iv_base64``). The plaintext is one zstd frame of NDJSON.

Checked, in order, each with the reason Snowflake's REST errors use (``ERR_...``): the
fields and their types, the range inside the file, what the call declares (below); the
key; the file present, its length and etag; the IV; that the bytes decrypt to a zstd
frame no larger than declared; that its non-blank lines number ``fragment_row_count``.
A fragment failing any check is refused whole: nothing of it lands.

The fragment is inflated in pieces of :data:`STEP` bytes, its rows and bytes counted as
they come: nothing holds its raw NDJSON (the lander inflates the frame again when it
lands it). What a call may cost is bounded by what it declares, before anything is read:
each fragment and the call at most :data:`MAX_UNCOMPRESSED_BYTES` uncompressed (the
SDK's largest file, ~68 MB at 92 MB/s, is well under it: docs/EMULATOR.md), and the
staged files it names at most :data:`MAX_CALL_FILE_BYTES` together (each read once, then
only the fragments' compressed frames are kept until they are spooled).

``fragment_length_uncompressed_bytes`` is the SDK's own count: each appended chunk's bytes
plus one per ROW, while the file holds each chunk followed by ONE newline. So it exceeds
the plaintext by (rows - chunks) bytes: between 0 and rows - 1. That is what is checked.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from ..http.bodies import BadBody, BodyTooLarge, inflate_pieces
from ..http.errors import ApiError
from .fragment_ledger import Span, fragment_id

__all__ = [
    "ENCRYPTION_VERSION", "Checked", "Fragment", "LineCounter", "StagedFile", "check_fragment",
    "parse_fragments",
]  # fmt: skip

ENCRYPTION_VERSION = "AES-CTR-128.1"
CONTENT_TYPE = "application/x-ndjson"
#: Fragments per registration call.
MAX_FRAGMENTS = 1024
#: The most uncompressed bytes one fragment, and one call, may declare: the work a
#: registration may cost (a bomb bound), far above what the SDK makes.
MAX_UNCOMPRESSED_BYTES = 1 << 30
#: The most bytes of staged files one call may name (each file counted once): what it
#: holds in memory at most. One object of the stage's largest (256 MiB).
MAX_CALL_FILE_BYTES = 256 << 20
#: A fragment is inflated and counted in pieces of this many bytes.
STEP = 1 << 20

_INTS = (
    "file_length_bytes", "fragment_length_bytes", "fragment_length_uncompressed_bytes",
    "fragment_row_count", "fragment_start_byte_offset",
)  # fmt: skip
_STRS = ("file_path", "content_type", "file_etag", "iv_base64", "encryption_version")


@dataclass(frozen=True)
class Fragment:
    file_path: str
    #: The object's key on the stage, however ``file_path`` spells it.
    key: str
    file_etag: str
    file_length: int
    start: int
    length: int
    uncompressed: int
    rows: int
    key_id: str
    iv: bytes
    min_append_ms: int | None

    @property
    def span(self) -> Span:
        return Span(self.start, self.length, self.file_etag, self.rows)

    @property
    def id(self) -> str:
        """What a registration is: the object however spelt, its range, the file's etag
        and the rows; the SDK's retry has the same (``fragment_ledger.py``)."""
        return fragment_id(self.key, self.span)

    @property
    def where(self) -> str:
        return f"{self.file_path}@{self.start}"


def _bad(message: str) -> ApiError:
    return ApiError(400, "ERR_INVALID_FILE_FRAGMENT", message)


def parse_fragments(doc: Any, key_for: Callable[[str], str]) -> list[Fragment]:
    """The fragments of one registration call, each field checked, and what the call
    declares within bounds; ApiError 400 if not. ``key_for``: the stage object a
    ``file_path`` names (ValueError if none)."""
    if not isinstance(doc, list) or not doc:
        raise _bad("the body must be a non-empty JSON list of file fragments")
    if len(doc) > MAX_FRAGMENTS:
        raise _bad(f"{len(doc)} fragments in one call; at most {MAX_FRAGMENTS}")
    fragments = [_fragment(i, item, key_for) for i, item in enumerate(doc)]
    declared = sum(f.uncompressed for f in fragments)
    if declared > MAX_UNCOMPRESSED_BYTES:
        raise _bad(f"the call's fragments declare {declared} bytes uncompressed; at most "
                   f"{MAX_UNCOMPRESSED_BYTES} in one call")  # fmt: skip
    files: dict[str, int] = {}
    for f in fragments:
        files[f.key] = max(files.get(f.key, 0), f.file_length)
    if sum(files.values()) > MAX_CALL_FILE_BYTES:
        raise _bad(f"the call names {sum(files.values())} bytes of staged files; at most "
                   f"{MAX_CALL_FILE_BYTES} in one call")  # fmt: skip
    return fragments


def _fragment(i: int, item: Any, key_for: Callable[[str], str]) -> Fragment:
    if not isinstance(item, dict):
        raise _bad(f"fragment {i} is not a JSON object")
    for name in _INTS:
        value = item.get(name)
        if type(value) is not int or not 0 <= value < 1 << 53:
            raise _bad(f"fragment {i}: {name} must be a non-negative integer, got {value!r}")
    for name in _STRS:
        if not isinstance(item.get(name), str) or not item[name]:
            raise _bad(f"fragment {i}: {name} must be a non-empty string")
    if item["encryption_version"] != ENCRYPTION_VERSION:
        raise _bad(f"fragment {i}: encryption_version {item['encryption_version']!r} is not "
                   f"{ENCRYPTION_VERSION}")  # fmt: skip
    if item["content_type"] != CONTENT_TYPE:
        raise _bad(f"fragment {i}: content_type {item['content_type']!r} is not {CONTENT_TYPE}")
    key_id = item.get("master_key_id")
    if not isinstance(key_id, (str, int)) or isinstance(key_id, bool):
        raise _bad(f"fragment {i}: master_key_id must be a string or an integer")
    try:
        iv = base64.b64decode(item["iv_base64"], validate=True)
    except (binascii.Error, ValueError):
        iv = b""
    if len(iv) != 16:
        raise _bad(f"fragment {i}: iv_base64 is not 16 bytes of base64")
    start, length, total = (
        item["fragment_start_byte_offset"], item["fragment_length_bytes"],
        item["file_length_bytes"],
    )  # fmt: skip
    if length == 0 or start + length > total:
        raise _bad(f"fragment {i}: bytes {start}..{start + length} are not inside the file's "
                   f"{total}")  # fmt: skip
    if item["fragment_length_uncompressed_bytes"] > MAX_UNCOMPRESSED_BYTES:
        raise _bad(f"fragment {i}: declares {item['fragment_length_uncompressed_bytes']} bytes "
                   f"uncompressed; at most {MAX_UNCOMPRESSED_BYTES} a fragment")  # fmt: skip
    try:
        key = key_for(item["file_path"])
    except ValueError as e:
        raise _bad(f"fragment {i}: {e}") from None
    min_ms = item.get("min_append_timestamp_ms")
    return Fragment(
        item["file_path"], key, item["file_etag"].strip('"').lower(), total, start, length,
        item["fragment_length_uncompressed_bytes"], item["fragment_row_count"], str(key_id),
        iv, min_ms if type(min_ms) is int else None,
    )  # fmt: skip


@dataclass(frozen=True)
class StagedFile:
    """A staged file's bytes as read once for a call, and their MD5."""

    data: bytes
    md5: str

    @classmethod
    def of(cls, data: bytes) -> StagedFile:
        return cls(data, hashlib.md5(data, usedforsecurity=False).hexdigest())


@dataclass(frozen=True)
class Checked:
    """A fragment that passed every check: its zstd frame (decrypted) and the bytes it
    inflates to."""

    fragment: Fragment
    frame: bytes
    raw_bytes: int


def check_fragment(frag: Fragment, staged: StagedFile, key: bytes) -> Checked:
    """The fragment's zstd frame, checked by inflating it in pieces; ApiError 400 if the
    file or the fragment is not what the registration says."""
    if len(staged.data) != frag.file_length:
        raise _bad(f"{frag.file_path}: the staged file has {len(staged.data)} bytes, the "
                   f"registration says {frag.file_length}")  # fmt: skip
    if staged.md5 != frag.file_etag:
        raise _bad(f"{frag.file_path}: file_etag {frag.file_etag} is not the staged file's")
    sealed = memoryview(staged.data)[frag.start : frag.start + frag.length]
    frame = Cipher(algorithms.AES(key), modes.CTR(frag.iv)).decryptor().update(sealed)
    lines, size = LineCounter(), 0
    try:
        for piece in inflate_pieces(frame, "zstd", cap=frag.uncompressed, step=STEP):
            lines.feed(piece)
            size += len(piece)
    except BodyTooLarge:
        raise _bad(f"{frag.where}: fragment_length_uncompressed_bytes is {frag.uncompressed}, "
                   "the fragment inflates to more") from None  # fmt: skip
    except BadBody as e:
        raise _bad(f"{frag.where}: does not decrypt to NDJSON in zstd with key "
                   f"{frag.key_id} ({e})") from None  # fmt: skip
    if not 0 <= frag.uncompressed - size <= max(frag.rows - 1, 0):
        raise _bad(f"{frag.where}: fragment_length_uncompressed_bytes is {frag.uncompressed}, "
                   f"the fragment inflates to {size} bytes for {frag.rows} rows")  # fmt: skip
    rows = lines.rows()
    if rows != frag.rows:
        raise _bad(f"{frag.where}: fragment_row_count is {frag.rows}, the fragment holds "
                   f"{rows} rows")  # fmt: skip
    return Checked(frag, frame, size)


class LineCounter:
    """Non-blank lines of NDJSON fed in pieces (the SDK separates appended chunks with an
    extra newline; a line may span pieces)."""

    def __init__(self) -> None:
        self._rows = 0
        self._open = False  # the line not yet ended holds a non-blank byte

    def feed(self, piece: bytes) -> None:
        lines = piece.split(b"\n")
        if len(lines) == 1:
            self._open = self._open or _filled(piece)
            return
        self._rows += (self._open or _filled(lines[0])) + sum(map(_filled, lines[1:-1]))
        self._open = _filled(lines[-1])

    def rows(self) -> int:
        """The lines counted so far, the one not yet ended too."""
        return self._rows + self._open


def _filled(line: bytes) -> bool:
    """Whether ``line`` holds anything but ASCII whitespace (``bytes.strip``'s set)."""
    return bool(line) and not line.isspace()
