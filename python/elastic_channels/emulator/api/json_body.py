"""A request's JSON body, decoded the one way every endpoint that takes JSON does it.

A hostile body is refused with a plain reason, never an internal error: text that is not
JSON, and JSON nested deeper than the decoder goes (``[[[[...]]]]`` 100,000 deep makes
every JSON decoder in Python raise ``RecursionError``, which is not a ``ValueError`` and
escaped as a 500 "maximum recursion depth exceeded"). Each endpoint turns
:class:`BadJson` into its own 400.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

__all__ = ["NESTED_TOO_DEEP", "BadJson", "decode_json"]

NESTED_TOO_DEEP = (
    "the JSON body is nested too deep (arrays or objects within each other past what the "
    "emulator reads); send it flatter"
)


class BadJson(ValueError):
    """A body that is not JSON the emulator reads; the message says why."""


def decode_json(raw: bytes, decode: Callable[[bytes], Any] = msgspec.json.decode) -> Any:
    """``raw`` decoded by ``decode`` (default msgspec's); :class:`BadJson` if it is not
    JSON or is nested too deep to decode."""
    try:
        return decode(raw)
    except RecursionError:
        raise BadJson(NESTED_TOO_DEEP) from None
    except (msgspec.DecodeError, ValueError) as e:
        raise BadJson(f"body is not JSON: {e}") from None
