"""Logging for the entry points: one level, one format, to stderr.

Every command that logs (``elastic-channels run``, ``monitor``, ``worker``, the
emulator's ``serve``, the dashboard) calls :func:`configure_logging` once, with the
level it was given (``LOG_LEVEL``, or a ``-v`` count turned into one), so their lines
read alike: ``2026-01-01 00:00:00,000 WARNING elastic_channels.monitor: ...``.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["FORMAT", "configure_logging"]

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def configure_logging(level: int | str) -> None:
    """Send log records of ``level`` and above (a ``logging`` number, or a name in any
    case: ``"info"``) to stderr in :data:`FORMAT`. A process's first call decides (as
    ``logging.basicConfig``). A name comes from ``LOG_LEVEL``: ValueError saying so when
    it is no level."""
    if isinstance(level, str):
        name = level.strip().upper()
        if name not in LEVELS:
            raise ValueError(
                f"LOG_LEVEL={level!r} is not a log level: use one of {', '.join(LEVELS)}"
            )
        level = getattr(logging, name)
    logging.basicConfig(level=level, format=FORMAT, stream=sys.stderr)
