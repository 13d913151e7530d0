"""A test hook: die at a named step of spooling or landing, as a SIGKILL would.

Set ``ELASTIC_EMULATOR_CRASH_AT`` to one of :data:`POINTS` in the emulator's environment
and the process exits at once (``os._exit``, no clean-up, no flush) when it gets there.
Tests use it to prove that an acked request lands exactly once whatever instant the
emulator dies at, and that an unacked one is never landed.
"""

from __future__ import annotations

import os
import sys

__all__ = ["CRASH_ENV", "CRASH_EXIT_CODE", "FILE_POINTS", "POINTS", "crash_point"]

CRASH_ENV = "ELASTIC_EMULATOR_CRASH_AT"
CRASH_EXIT_CODE = 86
POINTS = (
    "spool:after-data",  # the body is on disk, its meta file is not: never acked
    "spool:after-meta",  # spooled, about to be acked
    "land:before-commit",  # rows and landed-record inserted, not committed
    "land:after-commit",  # committed, spool files still there
)
#: File mode's own steps (the spool's and landing's points above apply to its fragments).
FILE_POINTS = (
    "stage:after-store",  # the upload is durable in the stage, its 200 not sent
    "files:after-check",  # a registration's fragments checked and opened, none spooled
)


def crash_point(name: str) -> None:
    """Exit the process now if ``ELASTIC_EMULATOR_CRASH_AT`` names this point."""
    if os.environ.get(CRASH_ENV) == name:
        sys.stderr.write(f"emulator: crashing at {name} ({CRASH_ENV})\n")
        sys.stderr.flush()
        os._exit(CRASH_EXIT_CODE)
