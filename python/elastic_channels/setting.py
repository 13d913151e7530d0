"""One setting of a command: name, flag, environment variable, default, help.

Tables of these (the worker's in ``worker/settings.py``, the account's in
``account/settings.py``) make the parsers, their help and the resolution order: the
flag if given, else the environment variable, else the default. An empty value is
unset wherever it comes from (``cp .env.example .env`` leaves every value empty).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Setting", "SettingError", "add_flags", "seconds_between", "show_number", "whole_number"]


class SettingError(ValueError):
    """A setting is missing or has a bad value; the message names its flag or variable."""


@dataclass(frozen=True)
class Setting:
    name: str  #: attribute name, and the flag's dest
    #: None: only an environment variable (a key's PEM text, a passphrase).
    flag: str | None
    help: str
    kind: Callable[[str], Any] = str
    default: Any = None
    env: str | None = None
    group: str = "what to send"
    choices: tuple[str, ...] | None = None
    #: Shown instead of the default when it depends on other settings.
    default_text: str | None = None

    def help_text(self) -> str:
        text = self.help
        if self.env:
            text += f" [{self.env}]"
        if self.default_text:
            text += f" (default: {self.default_text})"
        elif self.default is not None:
            text += f" (default: {show_number(self.default)})"
        return text

    @property
    def where(self) -> str:
        """How a person gives it, for messages: ``--schema or SNOWFLAKE_SCHEMA``."""
        return " or ".join(x for x in (self.flag, self.env) if x)

    def from_env(self, environ: Mapping[str, str]) -> Any:
        """The environment's value, converted and checked; None when unset or empty."""
        raw = environ.get(self.env) if self.env else None
        if raw is None or not raw.strip():
            return None
        try:
            return self.kind(raw.strip())  # type: ignore[arg-type]
        except ValueError:
            raise SettingError(f"{self.env} must be {_kind_name(self.kind)}, got {raw!r}") from None

    def value(self, given: Any, environ: Mapping[str, str]) -> Any:
        """The flag if given (an empty string is not), else the environment variable,
        else the default."""
        if given is not None and given != "":
            return given
        found = self.from_env(environ)
        return self.default if found is None else found


def show_number(value: Any) -> str:
    """A default as a person writes it: ``92e6`` for 92000000.0, ``60`` for 60.0."""
    if not isinstance(value, float) or not value.is_integer():
        return str(value)
    digits = str(int(value))
    zeros = len(digits) - len(digits.rstrip("0"))
    exp = zeros - zeros % 3  # engineering notation, as rates are written here
    return f"{int(value) // 10**exp}e{exp}" if exp >= 6 else digits


def whole_number(text: str) -> int:
    """A count written as rates are (``96e6``, ``1e6``) or as digits; ValueError for a
    fraction, NaN or infinity."""
    try:
        return int(text)
    except ValueError:
        value = float(text)  # ValueError for what is no number at all
    if not (math.isfinite(value) and value.is_integer()):
        raise ValueError(f"not a whole number: {text!r}")
    return int(value)


whole_number.__name__ = "whole number"  # argparse: "invalid whole number value: '1.5'"


def seconds_between(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a finite number of seconds from ``low`` to ``high`` (NaN and
    infinity refused: either would remove the bound the flag sets)."""

    def seconds(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and low <= value <= high):
            raise argparse.ArgumentTypeError(f"give {low:g} to {high:g} seconds, got {text!r}")
        return value

    return seconds


def _kind_name(kind: Callable[[str], Any]) -> str:
    names = {int: "an int", float: "a number", str: "a string", whole_number: "a whole number"}
    return names.get(kind, "valid")  # type: ignore[call-overload]


def add_flags(
    parser: argparse.ArgumentParser, settings: Iterable[Setting], group: str | None = None
) -> None:
    """Add the flags of ``settings`` to ``parser``, in their groups, or all in ``group``
    (settings with no flag are environment-only and left out).

    Each flag's parsed default is None, so a flag that was given can be told from one
    that was not, and the environment, then the default, fill in."""
    groups: dict[str, Any] = {}
    for s in settings:
        if s.flag is None:
            continue
        title = group or s.group
        found = groups.get(title) or groups.setdefault(title, parser.add_argument_group(title))
        found.add_argument(
            s.flag, dest=s.name, type=s.kind, choices=s.choices, default=None,
            help=s.help_text(),
        )  # fmt: skip
