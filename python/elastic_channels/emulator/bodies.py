"""Request bodies: every decompression is streamed under one cap.

``inflate(body, encoding)`` returns the raw bytes of a ``zstd`` (every frame of a
multi-frame body), ``gzip`` (every member), ``deflate`` (zlib-wrapped, RFC 9110) or
``identity`` body. It never holds more than :data:`MAX_RAW_BYTES` plus one step of
output: past the cap it raises :class:`BodyTooLarge` (HTTP 413), and a damaged or cut-off
body raises :class:`BadBody` (HTTP 400). Both the rows handler (to prove a body is whole
before acking it) and the lander (to read it) use this one function.
"""

from __future__ import annotations

import zlib

import zstandard

__all__ = [
    "ENCODINGS",
    "MAX_BODY_BYTES",
    "MAX_RAW_BYTES",
    "BadBody",
    "BodyTooLarge",
    "inflate",
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


def _zstd(body: bytes, cap: int) -> bytes:
    out: list[bytes] = []
    total = 0
    rest = memoryview(body)
    dctx = zstandard.ZstdDecompressor()
    while len(rest):
        obj = dctx.decompressobj()
        pos = 0
        while not obj.eof:
            if pos >= len(rest):
                raise BadBody("zstd body: truncated frame")
            chunk = rest[pos : pos + _STEP]
            pos += len(chunk)
            try:
                piece = obj.decompress(chunk)
            except zstandard.ZstdError as e:
                raise BadBody(f"zstd body: {e}") from None
            total += len(piece)
            if total > cap:
                raise _too_large(cap)
            out.append(piece)
        # What the frame did not use starts the next frame.
        rest = memoryview(obj.unused_data + bytes(rest[pos:]))
    return b"".join(out)


def _zlib(body: bytes, cap: int, wbits: int, name: str) -> bytes:
    out: list[bytes] = []
    total = 0
    data = body
    while data:
        obj = zlib.decompressobj(wbits)
        buf = data
        while True:
            try:
                # max_length bounds what one call may produce: nothing inflates unchecked.
                piece = obj.decompress(buf, _STEP)
            except zlib.error as e:
                raise BadBody(f"{name} body: {e}") from None
            total += len(piece)
            if total > cap:
                raise _too_large(cap)
            out.append(piece)
            if obj.eof:
                break
            buf = obj.unconsumed_tail
            if not buf and not piece:
                raise BadBody(f"{name} body: truncated stream")
        data = obj.unused_data
        if name == "deflate" and data:
            raise BadBody("deflate body: data after the end of the stream")
    return b"".join(out)


def inflate(body: bytes, encoding: str, cap: int = MAX_RAW_BYTES) -> bytes:
    """The raw bytes of a body sent with Content-Encoding ``encoding``."""
    if encoding == "identity":
        if len(body) > cap:
            raise _too_large(cap)
        return body
    if not body:
        raise BadBody(f"{encoding} body is empty")
    if encoding == "zstd":
        return _zstd(body, cap)
    if encoding == "gzip":
        return _zlib(body, cap, 16 + zlib.MAX_WBITS, "gzip")
    if encoding == "deflate":
        return _zlib(body, cap, zlib.MAX_WBITS, "deflate")
    raise BadBody(f"content-encoding {encoding!r} is not one of {', '.join(ENCODINGS)}")
