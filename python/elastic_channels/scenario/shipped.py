"""The scenarios shipped with the package (``shipped/*.yaml`` beside this module, and
``scenarios/`` at the top of a checkout, which is a link to it), found by name."""

from __future__ import annotations

from pathlib import Path

from .errors import Problem, ScenarioError

__all__ = ["SHIPPED_DIR", "find_scenario", "shipped_names"]

SHIPPED_DIR = Path(__file__).resolve().parent / "shipped"


def shipped_names() -> list[str]:
    return sorted(p.stem for p in SHIPPED_DIR.glob("*.yaml"))


def find_scenario(arg: str) -> Path:
    """The file ``arg`` names: a path to a file, else a shipped scenario's name
    (``step`` or ``step.yaml``); an error names what was looked for."""
    path = Path(arg)
    if path.is_file():
        return path
    if path.exists():
        raise ScenarioError(arg, [Problem((), "not a file")])
    if path.name == arg:  # a bare name: the shipped scenario of that name
        stem = path.name.removesuffix(".yaml")
        shipped = SHIPPED_DIR / f"{stem}.yaml"
        if shipped.is_file():
            return shipped
    raise ScenarioError(
        arg,
        [Problem((), "no such file, nor a shipped scenario of that name (shipped: "
                 + ", ".join(shipped_names()) + ")")],
    )  # fmt: skip
