"""The argparse types of the emulator's commands: durations, counts, fractions and
rates that must be finite (``nan`` or ``inf`` would remove the bound a flag sets), a
served host, and a ``USER=PATH`` public key."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path

from .http.server import check_served_host

__all__ = ["finite_count", "finite_fraction", "finite_seconds", "mbps", "served_host", "user_key"]


def user_key(spec: str) -> tuple[str, Path]:
    user, sep, path = spec.partition("=")
    if not sep or not user or not path:
        raise argparse.ArgumentTypeError(f"expected USER=PATH, got {spec!r}")
    if not Path(path).is_file():
        raise argparse.ArgumentTypeError(f"public key file {path} does not exist")
    return user.upper(), Path(path)


def served_host(value: str) -> str:
    try:
        return check_served_host(value)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _number(text: str, of: str) -> float:
    """``text`` as a float, or the argparse error that says it is not a number ``of``."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number{of}") from None


def finite_seconds(
    *, positive: bool = False, at_most: float | None = None
) -> Callable[[str], float]:
    """An argparse type for a duration flag: a finite number of seconds (``nan`` and
    ``inf`` would remove the bound it sets), 0 or more (more than 0 if ``positive``)."""

    def seconds(text: str) -> float:
        value = _number(text, " of seconds")
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r}: a duration must be a finite number")
        if value < 0 or (positive and value == 0):
            raise argparse.ArgumentTypeError(
                f"{text!r}: a duration must be {'more than 0' if positive else '0 or more'}"
            )
        if at_most is not None and value > at_most:
            raise argparse.ArgumentTypeError(f"{text!r}: at most {at_most:g} seconds")
        return value

    return seconds


def finite_count(*, positive: bool = False) -> Callable[[str], int]:
    """An argparse type for a whole count (ms, seconds, connections): 0 or more."""

    def count(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < 0 or (positive and value == 0):
            raise argparse.ArgumentTypeError(
                f"{text!r}: must be {'more than 0' if positive else '0 or more'}"
            )
        return value

    return count


def finite_fraction(text: str) -> float:
    """An argparse type for a probability: a finite number from 0 to 1."""
    value = _number(text, "")
    if not (math.isfinite(value) and 0 <= value <= 1):
        raise argparse.ArgumentTypeError(f"{text!r}: must be a number from 0 to 1")
    return value


def mbps(text: str) -> float:
    """An argparse type for a rate in MB/s: a finite number in the range every rate of
    a scenario has (measures.MIN_MBPS to MAX_MBPS)."""
    from ..measures import MAX_MBPS, MIN_MBPS

    value = _number(text, " of MB/s")
    if not (math.isfinite(value) and MIN_MBPS <= value <= MAX_MBPS):
        raise argparse.ArgumentTypeError(
            f"{text!r}: a rate must be a number of MB/s from {MIN_MBPS:g} to {MAX_MBPS:g}"
        )
    return value
