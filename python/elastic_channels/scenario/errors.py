"""A scenario that cannot be used: every problem found, each with its key path and line."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Path", "Problem", "ScenarioError", "close_match", "format_path"]

#: A key path: mapping keys and list indexes from the top (``("stages", 2, "mbps")``).
Path = tuple[str | int, ...]


def format_path(path: Path) -> str:
    """``stages[2].mbps``, as messages name a key."""
    out = ""
    for token in path:
        out += f"[{token}]" if isinstance(token, int) else (f".{token}" if out else token)
    return out


@dataclass(frozen=True)
class Problem:
    path: Path
    message: str
    line: int | None = None  #: 1-based, in the file the scenario came from

    def text(self, where: str) -> str:
        at = f"{where}:{self.line}" if self.line is not None else where
        key = format_path(self.path)
        return f"{at}: {key}: {self.message}" if key else f"{at}: {self.message}"


class ScenarioError(ValueError):
    """What is wrong with a scenario, one line per problem:
    ``scenarios/step.yaml:12: stages[2].mbps: expected a number > 0, got "fast"``."""

    def __init__(self, where: str, problems: Sequence[Problem]) -> None:
        self.where = where
        self.problems = tuple(problems)
        super().__init__("\n".join(p.text(where) for p in self.problems))


def close_match(word: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` when a known word is close, else the known words."""
    known = list(known)
    near = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    if near:
        return f" (did you mean {near[0]!r}?)"
    return f" (known: {', '.join(known)})"
