"""One file fragment the SDK registers in file mode: its fields checked, its bytes opened.

What SDK 1.9.1 sends to ``.../channels/ELASTIC/filebuffer`` (observed; docs/EMULATOR.md):
a JSON list of fragments, each naming a file it uploaded to the pipe's stage
(``file_path`` = the stage location + a name), the file's MD5 ``file_etag`` and length,
the fragment's byte range, row count and uncompressed length, and how it is encrypted
(``encryption_version`` ``AES-CTR-128.1``: AES-CTR under the pipe key ``master_key_id``,
the counter starting at ``iv_base64``). The plaintext is one zstd frame of NDJSON.

Checked, in order, each with the reason Snowflake's REST errors use (``ERR_...``): the
fields and their types; the key; the file present, its length and etag; the range inside
the file; the IV; that the bytes decrypt to a zstd frame no larger than declared; that
its non-blank lines number ``fragment_row_count``. A fragment failing any check is
refused whole: nothing of it lands.

``fragment_length_uncompressed_bytes`` is the SDK's own count: each appended chunk's bytes
plus one per ROW, while the file holds each chunk followed by ONE newline. So it exceeds
the plaintext by (rows - chunks) bytes: between 0 and rows - 1. That is what is checked.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from ..http.bodies import MAX_RAW_BYTES, BadBody, BodyTooLarge, inflate
from ..http.errors import ApiError

__all__ = ["ENCRYPTION_VERSION", "Fragment", "open_fragment", "parse_fragments"]

ENCRYPTION_VERSION = "AES-CTR-128.1"
CONTENT_TYPE = "application/x-ndjson"
#: Fragments per registration call, and the largest fragment inflated (a bomb bound).
MAX_FRAGMENTS = 1024
MAX_UNCOMPRESSED_BYTES = MAX_RAW_BYTES

_INTS = (
    "file_length_bytes", "fragment_length_bytes", "fragment_length_uncompressed_bytes",
    "fragment_row_count", "fragment_start_byte_offset",
)  # fmt: skip
_STRS = ("file_path", "content_type", "file_etag", "iv_base64", "encryption_version")


@dataclass(frozen=True)
class Fragment:
    file_path: str
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
    def id(self) -> str:
        """What makes a registration the same one when the SDK retries it (the etag too:
        another file uploaded under the same name is another registration)."""
        return f"file:{self.file_path}@{self.start}:{self.file_etag}"


def _bad(message: str) -> ApiError:
    return ApiError(400, "ERR_INVALID_FILE_FRAGMENT", message)


def parse_fragments(doc: Any) -> list[Fragment]:
    """The fragments of one registration call, each field checked; ApiError 400 if not."""
    if not isinstance(doc, list) or not doc:
        raise _bad("the body must be a non-empty JSON list of file fragments")
    if len(doc) > MAX_FRAGMENTS:
        raise _bad(f"{len(doc)} fragments in one call; at most {MAX_FRAGMENTS}")
    return [_fragment(i, item) for i, item in enumerate(doc)]


def _fragment(i: int, item: Any) -> Fragment:
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
        raise _bad(f"fragment {i}: over {MAX_UNCOMPRESSED_BYTES} bytes uncompressed")
    min_ms = item.get("min_append_timestamp_ms")
    return Fragment(
        item["file_path"], item["file_etag"].strip('"').lower(), total, start, length,
        item["fragment_length_uncompressed_bytes"], item["fragment_row_count"], str(key_id),
        iv, min_ms if type(min_ms) is int else None,
    )  # fmt: skip


def open_fragment(frag: Fragment, file_bytes: bytes, key: bytes) -> tuple[bytes, bytes]:
    """The fragment's zstd frame (as decrypted) and its NDJSON; ApiError 400 if the file
    or the fragment is not what the registration says."""
    if len(file_bytes) != frag.file_length:
        raise _bad(f"{frag.file_path}: the staged file has {len(file_bytes)} bytes, the "
                   f"registration says {frag.file_length}")  # fmt: skip
    if hashlib.md5(file_bytes, usedforsecurity=False).hexdigest() != frag.file_etag:
        raise _bad(f"{frag.file_path}: file_etag {frag.file_etag} is not the staged file's")
    sealed = file_bytes[frag.start : frag.start + frag.length]
    frame = Cipher(algorithms.AES(key), modes.CTR(frag.iv)).decryptor().update(sealed)
    try:
        raw = inflate(frame, "zstd", cap=MAX_UNCOMPRESSED_BYTES)
    except (BadBody, BodyTooLarge) as e:
        raise _bad(f"{frag.file_path}@{frag.start}: does not decrypt to NDJSON in zstd with "
                   f"key {frag.key_id} ({e})") from None  # fmt: skip
    if not 0 <= frag.uncompressed - len(raw) <= max(frag.rows - 1, 0):
        raise _bad(f"{frag.file_path}@{frag.start}: fragment_length_uncompressed_bytes is "
                   f"{frag.uncompressed}, the fragment inflates to {len(raw)} bytes for "
                   f"{frag.rows} rows")  # fmt: skip
    rows = count_rows(raw)
    if rows != frag.rows:
        raise _bad(f"{frag.file_path}@{frag.start}: fragment_row_count is {frag.rows}, the "
                   f"fragment holds {rows} rows")  # fmt: skip
    return frame, raw


def count_rows(raw: bytes) -> int:
    """Non-blank lines (the SDK separates appended chunks with an extra newline)."""
    return sum(1 for line in raw.split(b"\n") if line.strip())
