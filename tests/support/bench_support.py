"""Shared by the client bench's tests (``tests/bench``)."""

from __future__ import annotations

import os

import pytest


def native_available() -> bool:
    """Whether ``elastic_native`` imports here."""
    try:
        import elastic_native  # noqa: F401
    except ImportError:
        return False
    return True


#: The bench's encoders, as test parameters: native is skipped when it is not built,
#: but not in CI (CI=true), where it must be.
ENCODERS = [
    pytest.param(
        "native",
        marks=pytest.mark.skipif(
            not native_available() and os.environ.get("CI") != "true",
            reason="elastic_native is not built",
        ),
    ),
    "python",
]
