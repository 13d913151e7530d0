"""The real SDK for tests/sdk, imported quietly (moved from test_fast_append.py)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="module")
def sdk():
    """The real SDK, imported quietly: its log settings are read at the first import
    only, so they are set for that moment and the environment is restored after."""
    with pytest.MonkeyPatch.context() as mp:
        for var, value in (("SS_LOG_LEVEL", "warn"), ("SS_LOG_TARGET", "stderr")):
            if var not in os.environ:
                mp.setenv(var, value)
        import snowflake.ingest.streaming as sdk

    return sdk
