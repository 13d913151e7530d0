"""Request bodies: every decompression is streamed under one cap.

``inflate(body, encoding)`` returns the raw bytes of a ``zstd`` (every frame of a
multi-frame body), ``gzip`` (every member), ``deflate`` (zlib-wrapped, RFC 9110) or
``identity`` body. It never holds more than its cap (:data:`MAX_RAW_BYTES` unless told)
plus one step of output: past the cap it raises :class:`BodyTooLarge` (HTTP 413), and a
damaged or cut-off body raises :class:`BadBody` (HTTP 400). Both the rows handler (to
prove a body is whole before acking it) and the lander (to read it) use this one
function. ``inflate_pieces`` yields the same bytes in bounded pieces, for a body checked
without being held raw (a file-mode fragment: ``api/fragments.py``).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

import zstandard

__all__ = [
    "ENCODINGS",
    "MAX_BODY_BYTES",
    "MAX_RAW_BYTES",
    "BadBody",
    "BodyTooLarge",
    "inflate",
    "inflate_pieces",
]

#: Largest body accepted on the wire, compressed or not (Snowflake documents 16 MB).
MAX_BODY_BYTES = 16 << 20
#: Largest body once decompressed.
MAX_RAW_BYTES = 64 << 20
#: Content-Encoding values the rows endpoint accepts.
ENCODINGS = ("zstd", "gzip", "deflate", "identity")
_STEP = 1 << 20


class BadBody(ValueError):
    """The body is damaged, cut off or mislabelled (HTTP 400)."""


class BodyTooLarge(ValueError):
    """The body inflates past the cap (HTTP 413)."""


def _too_large(cap: int) -> BodyTooLarge:
    return BodyTooLarge(f"body inflates past {cap} bytes (the limit per request)")


_ZSTD_MAGIC = 0xFD2FB528
#: Skippable frames have the 16 magics 0x184D2A50..0x184D2A5F.
_SKIPPABLE_MAGIC = 0x184D2A50
_UNKNOWN_SIZE = (1 << 64) - 1


def _zstd_declared_size(body: memoryview) -> int | None:
    """The raw size ``body``'s frame headers declare (None if one does not): every frame
    whole, and nothing but frames, or :class:`BadBody` (RFC 8878 section 3.1).

    The streaming decoder reads a cut-off last frame as a shorter body without an error,
    so the frame and block headers are walked here first: one step per block, nothing
    decoded.
    """
    pos, end = 0, len(body)
    declared: int | None = 0
    while pos < end:
        if end - pos < 8:  # the smallest frame of either kind is 8 bytes
            raise BadBody(f"zstd body: truncated frame at byte {pos}")
        magic = int.from_bytes(body[pos : pos + 4], "little")
        if magic & ~0xF == _SKIPPABLE_MAGIC:
            pos += 8 + int.from_bytes(body[pos + 4 : pos + 8], "little")
            continue
        if magic != _ZSTD_MAGIC:
            raise BadBody(f"zstd body: no frame starts at byte {pos}")
        try:
            params = zstandard.get_frame_parameters(body[pos : pos + 18])
            pos += zstandard.frame_header_size(body[pos : pos + 18])
        except zstandard.ZstdError as e:
            raise BadBody(f"zstd body: {e}") from None
        size = params.content_size
        declared = None if declared is None or size == _UNKNOWN_SIZE else declared + size
        last = 0
        while not last and pos + 3 <= end:
            head = int.from_bytes(body[pos : pos + 3], "little")
            last, kind = head & 1, (head >> 1) & 3
            if kind == 3:
                raise BadBody(f"zstd body: reserved block type at byte {pos}")
            pos += 3 + (1 if kind == 1 else head >> 3)  # an RLE block holds one byte
        if not last:
            raise BadBody("zstd body: truncated frame")
        pos += 4 if params.has_checksum else 0
    if pos > end:
        raise BadBody("zstd body: truncated frame")
    return declared


def _zstd_pieces(body: bytes, cap: int, step: int) -> Iterator[bytes]:
    declared = _zstd_declared_size(memoryview(body))
    if declared is not None and declared > cap:
        raise _too_large(cap)
    total = 0
    # Each read is bounded, across every frame: a frame of 2 GiB of zeros (64 KiB on the
    # wire) that does not declare its size stops at the cap like any other body. With
    # step 0, a body whose frames declare their sizes is read in one step, straight into
    # its buffer (three times faster than 1 MiB steps); the decoder refuses a frame that
    # lies.
    first = step or (_STEP if declared is None else declared + 1)
    reader = zstandard.ZstdDecompressor().stream_reader(body, read_across_frames=True)
    with reader:
        size = first
        while True:
            try:
                piece = reader.read(size)
            except zstandard.ZstdError as e:
                raise BadBody(f"zstd body: {e}") from None
            if not piece:
                return
            total += len(piece)
            if total > cap:
                raise _too_large(cap)
            yield piece
            size = step or _STEP


def _zlib_pieces(body: bytes, cap: int, step: int, wbits: int, name: str) -> Iterator[bytes]:
    total = 0
    data = body
    while data:
        obj = zlib.decompressobj(wbits)
        buf = data
        while True:
            try:
                # max_length bounds what one call may produce: nothing inflates unchecked.
                piece = obj.decompress(buf, step or _STEP)
            except zlib.error as e:
                raise BadBody(f"{name} body: {e}") from None
            total += len(piece)
            if total > cap:
                raise _too_large(cap)
            if piece:
                yield piece
            if obj.eof:
                break
            buf = obj.unconsumed_tail
            if not buf and not piece:
                raise BadBody(f"{name} body: truncated stream")
        data = obj.unused_data
        if name == "deflate" and data:
            raise BadBody("deflate body: data after the end of the stream")


def inflate_pieces(
    body: bytes, encoding: str, cap: int = MAX_RAW_BYTES, step: int = _STEP
) -> Iterator[bytes]:
    """The raw bytes of ``body`` in pieces of at most ``step`` bytes (0: as large as the
    body's frames declare), so a caller can check a body without holding it raw; raises
    as :func:`inflate` does, at the piece where the body goes wrong."""
    if encoding == "identity":
        if len(body) > cap:
            raise _too_large(cap)
        view = memoryview(body)
        for at in range(0, len(body), step or max(len(body), 1)):
            yield bytes(view[at : at + (step or len(body))])
        return
    if not body:
        raise BadBody(f"{encoding} body is empty")
    if encoding == "zstd":
        yield from _zstd_pieces(body, cap, step)
    elif encoding == "gzip":
        yield from _zlib_pieces(body, cap, step, 16 + zlib.MAX_WBITS, "gzip")
    elif encoding == "deflate":
        yield from _zlib_pieces(body, cap, step, zlib.MAX_WBITS, "deflate")
    else:
        raise BadBody(f"content-encoding {encoding!r} is not one of {', '.join(ENCODINGS)}")


def inflate(body: bytes, encoding: str, cap: int = MAX_RAW_BYTES) -> bytes:
    """The raw bytes of a body sent with Content-Encoding ``encoding``."""
    if encoding == "identity":
        if len(body) > cap:
            raise _too_large(cap)
        return body
    return b"".join(inflate_pieces(body, encoding, cap, step=0))
