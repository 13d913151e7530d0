"""Billable bytes: what Snowflake bills the high-performance architecture for.

Its cost page ("Snowpipe Streaming High-Performance Architecture: Understanding your
costs", https://docs.snowflake.com/en/user-guide/snowpipe-streaming-high-performance-cost)
charges per uncompressed GB of the data *values* only, "not for the structural elements
like keys": billing "is based solely on the byte size of the values", measured as a CSV
file's cells would be. So a value counts as the text its cell would hold, read off the
value as JSON renders it (``src/billable.rs`` applies the same rule natively):

- a string (VARCHAR, and TIMESTAMP/DATE sent as ISO text): the UTF-8 bytes of its text,
  not its quotes or escapes (``"a\\"b"`` is 3 bytes);
- ``null``: 0 bytes (an empty cell);
- anything else (a number, ``true``/``false``, a VARIANT/OBJECT/ARRAY value): its JSON
  text as written (``5.94`` is 4 bytes).

A row's keys, braces, colons, commas and newline are not values and count 0.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

__all__ = ["body_billable_bytes", "body_counter", "rendered_value_bytes"]

_STR = msgspec.json.Decoder(str)
_ROW = msgspec.json.Decoder(dict[str, msgspec.Raw])


def rendered_value_bytes(rendered: bytes) -> int:
    """The billable bytes of one value given as its JSON text (see the module)."""
    if rendered[:1] == b'"':
        if b"\\" not in rendered:
            return len(rendered) - 2
        return len(_STR.decode(rendered).encode("utf-8", "surrogatepass"))
    if rendered == b"null":
        return 0
    return len(rendered)


def body_billable_bytes(body: bytes) -> int:
    """The billable bytes of an NDJSON body: the top-level values of every line that is
    a JSON object (a line that is not counts 0). A line at a time, in Python: the
    oracle ``elastic_native.billable_bytes`` is checked against, and its fallback."""
    total = 0
    for line in body.split(b"\n"):
        try:
            row = _ROW.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        total += sum(rendered_value_bytes(bytes(v)) for v in row.values())
    return total


def body_counter() -> Callable[[bytes], int]:
    """What counts a body's billable bytes here: ``elastic_native.billable_bytes`` (one
    pass in Rust, the GIL released) when it is built, else :func:`body_billable_bytes`."""
    try:
        from elastic_native import billable_bytes
    except ImportError:
        return body_billable_bytes
    return billable_bytes
