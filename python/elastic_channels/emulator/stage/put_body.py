"""The object bytes of a PutObject request: its body read whole, unframed, checksum checked.

The AWS SDKs send a streamed PutObject as ``content-encoding: aws-chunked``: chunks of
``<hex size>[;chunk-signature=...]\\r\\n<data>\\r\\n``, a zero-size chunk, then trailer lines
such as ``x-amz-checksum-crc32:<base64>`` (https://docs.aws.amazon.com/AmazonS3/latest/API/
sigv4-streaming.html). moto decodes the chunks but ignores the trailer: it copies the
checksum into its reply without comparing it with the data, and reads chunk sizes with
``int(x, 16)`` (which takes ``+fa0`` and ``f_a0``). Real S3 refuses a mismatch (400), so
the stage unframes the body itself first, strictly (a size is 1 to 16 hex digits, else 400
``IncompleteBody``), and checks the checksum before moto stores anything: a CRC32 (the one
the SDKs send by default) from the trailer or from an ``x-amz-checksum-crc32`` header.
Other algorithms pass unchecked. The body is read only once the request's credentials and
key have passed (``app.py``), within a deadline.
"""

from __future__ import annotations

import base64
import re
import zlib
from typing import Any

from .deadline import cut_off_after
from .errors import S3Error

__all__ = [
    "MAX_OBJECT_BYTES",
    "check_crc32",
    "decode_aws_chunked",
    "object_bytes",
    "read_body",
]

#: The largest object the stage takes (it holds one in memory); SDK files are a few MB.
MAX_OBJECT_BYTES = 256 << 20

#: ``x-amz-content-sha256`` values whose aws-chunked bodies moto decodes.
STREAMING_MODES = frozenset(
    {
        "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
        "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
        "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER",
    }
)


#: A chunk size: hex digits only (``int(x, 16)`` would also take ``+fa0``, `` fa0``, ``f_a0``).
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")


def _malformed(why: str) -> S3Error:
    return S3Error(400, "IncompleteBody", f"malformed aws-chunked body: {why}")


def decode_aws_chunked(raw: bytes) -> tuple[bytes, dict[str, str]]:
    """(object bytes, trailers by lower-case name) of an aws-chunked body."""
    out = bytearray()
    pos = 0
    while True:
        eol = raw.find(b"\r\n", pos)
        if eol < 0:
            raise _malformed("a chunk header has no CRLF")
        size_text = raw[pos:eol].split(b";", 1)[0]
        if not _CHUNK_SIZE.fullmatch(size_text):
            raise _malformed(f"chunk size {size_text[:20]!r} is not 1 to 16 hex digits")
        size = int(size_text, 16)
        pos = eol + 2
        if size == 0:
            break
        if raw[pos + size : pos + size + 2] != b"\r\n":
            raise _malformed("a chunk is shorter than its size or lacks its CRLF")
        out += raw[pos : pos + size]
        pos += size + 2
    trailers = {}
    for line in raw[pos:].split(b"\r\n"):
        name, sep, value = line.partition(b":")
        if sep:
            trailers[name.strip().lower().decode("latin-1")] = value.strip().decode("latin-1")
    return bytes(out), trailers


def check_crc32(data: bytes, declared: str | None) -> None:
    """Raise 400 BadDigest unless the CRC32 the client declared (if any) matches ``data``."""
    if declared is None:
        return
    actual = base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()
    if declared != actual:
        raise S3Error(
            400,
            "BadDigest",
            f"the CRC32 you specified ({declared}) does not match the data ({actual})",
        )


def read_body(environ: dict[str, Any], deadline_s: float, most: int = MAX_OBJECT_BYTES) -> bytes:
    """The whole request body (by Content-Length, or a chunked transfer), at most ``most``
    bytes (and the cap), in at most ``deadline_s`` seconds: past it the connection is shut
    down (a body trickled in to hold a thread is cut off) and the request refused."""
    stream = environ["wsgi.input"]
    length = environ.get("CONTENT_LENGTH")
    most = min(most, MAX_OBJECT_BYTES)
    if length:
        if not length.isdigit() or len(length) > 20:
            raise S3Error(400, "InvalidRequest", f"bad Content-Length {length[:20]!r}")
        want = int(length)
    elif environ.get("wsgi.input_terminated"):  # chunked transfer: read to its end
        want = most + 1
    else:
        return b""
    if want > MAX_OBJECT_BYTES and length:
        raise S3Error(400, "EntityTooLarge", f"the stage takes objects up to {MAX_OBJECT_BYTES}")
    watchdog, expired = cut_off_after(environ, deadline_s)
    parts = []
    try:
        while want > 0 and not expired.is_set() and (part := stream.read(min(want, 1 << 20))):
            parts.append(part)
            want -= len(part)
    except (OSError, ValueError):  # the connection broke, or was cut off
        if not expired.is_set():
            raise S3Error(400, "IncompleteBody", "the connection closed mid-body") from None
    finally:
        watchdog.cancel()
    if expired.is_set():
        raise S3Error(400, "RequestTimeout", f"the body was not received within {deadline_s:g} s")
    body = b"".join(parts)
    if len(body) > most:
        raise S3Error(400, "EntityTooLarge", f"the body is over the {most} bytes its headers give")
    if length and want > 0:
        raise S3Error(400, "IncompleteBody", "the body is shorter than its Content-Length")
    return body


def object_bytes(raw: bytes, environ: dict[str, Any]) -> bytes:
    """The object bytes of a PUT body, its framing and CRC32 checked (S3Error if bad)."""
    mode = environ.get("HTTP_X_AMZ_CONTENT_SHA256", "")
    chunked = "aws-chunked" in environ.get("HTTP_CONTENT_ENCODING", "")
    if mode.startswith("STREAMING-") and mode not in STREAMING_MODES:
        raise S3Error(501, "NotImplemented", f"payload mode {mode!r} is not supported")
    if chunked and mode not in STREAMING_MODES:
        raise S3Error(400, "InvalidRequest", "aws-chunked needs a STREAMING- payload mode")
    data, trailers = decode_aws_chunked(raw) if mode in STREAMING_MODES else (raw, {})
    declared = environ.get("HTTP_X_AMZ_DECODED_CONTENT_LENGTH")
    if declared is not None and declared != str(len(data)):
        raise S3Error(400, "IncompleteBody", f"decoded {len(data)} bytes, declared {declared}")
    check_crc32(
        data, trailers.get("x-amz-checksum-crc32") or environ.get("HTTP_X_AMZ_CHECKSUM_CRC32")
    )
    return data
