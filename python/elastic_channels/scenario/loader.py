"""Loading a scenario: from a YAML file or its text, or from values (flags, overrides)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..bounded_read import FileRefused
from .errors import Problem, ScenarioError
from .model import Scenario
from .validate import to_scenario
from .yaml_source import parse, read_yaml_text

__all__ = ["from_data", "load_file", "load_text"]


def load_text(text: str, where: str = "<scenario>") -> Scenario:
    """The scenario a YAML text describes; ``where`` names it in errors (a file name)."""
    data, root, problems = parse(text)
    if problems:
        raise ScenarioError(where, problems)
    return to_scenario(data, where, root)


def load_file(path: str | Path) -> Scenario:
    """The scenario in a YAML file; errors name the file as it was given, and the line."""
    where = str(path)
    try:
        text = read_yaml_text(Path(path))
    except FileRefused as e:
        raise ScenarioError(where, [Problem((), str(e))]) from None
    return load_text(text, where)


def from_data(data: Any, where: str) -> Scenario:
    """A scenario from plain values (a mapping as a YAML file would load), checked as a
    file is; ``where`` names the source in errors (``the command line``)."""
    return to_scenario(data, where)
