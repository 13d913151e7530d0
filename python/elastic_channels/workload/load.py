"""Loading a workload: a shipped one by name, a YAML file, its text, or plain values.

YAML is read as the scenario files are (``scenario.yaml_source``, imported only when a
file or text is read: YAML 1.2 scalars, so ``yes``/``on`` and dates stay text, and a key
given twice is an error). Every error is
a :class:`WorkloadError` naming the file, the line, the column and the key:
``iot.yaml:14: columns[3] (TEMP): range.min: must be at most max (50 > 40)``.
"""

from __future__ import annotations

import importlib.resources
import re
from pathlib import Path
from typing import Any

import msgspec

from .check import check
from .errors import WorkloadError
from .model import CheckedWorkload, Field, Weighted, Workload

SHIPPED_SUFFIX = ".yaml"
_AT = re.compile(r"^(?P<message>.*?)(?: - at `\$(?P<path>.*)`)?$", re.S)
_TOKEN = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")
#: The types of the file's mappings whose keys are the user's (msgspec names no key).
_KEYED = {"cases": Weighted, "object": Field}
_WORDS = {"`object`": "a mapping", "`array`": "a list", "`str`": "a string", "`int`": "an integer"}
_WORDS.update({"`null`": "null", "`float`": "a number", "`bool`": "true or false"})


def _tokens(path: str) -> list[str | int]:
    return [int(i) if i and i.isdigit() else (i or name) for name, i in _TOKEN.findall(path)]


def _explain(err: msgspec.ValidationError, data: Any) -> tuple[str, list[str | int]]:
    """msgspec's message and key path, with the keys it leaves out (``[...]``) found by
    converting each entry of that mapping on its own."""
    m = _AT.match(str(err))
    assert m is not None
    message, path = m["message"], _tokens(m["path"] or "")
    unknown = re.match(r"Object contains unknown field `(.*)`$", message)
    if unknown:
        message, path = "not a key this mapping takes", [*path, unknown[1]]
    missing = re.match(r"Object missing required field `(.*)`$", message)
    if missing:
        message = f"the key {missing[1]} is missing"
    message = message.replace("Expected ", "expected ")
    for word, plain in _WORDS.items():
        message = message.replace(word, plain)
    if "..." not in path:
        return message, path
    i = path.index("...")
    node = data
    for token in path[:i]:
        node = node[token]
    kind = _KEYED.get(str(path[i - 1]), Field)
    for key, value in node.items() if isinstance(node, dict) else ():
        try:
            msgspec.convert(value, kind)
        except msgspec.ValidationError as inner:
            sub_message, sub = _explain(inner, value)
            return sub_message, [*path[:i], key, *sub]
    return message, path[:i]


def _column_name(data: Any, path: list[str | int]) -> str | None:
    if len(path) >= 2 and path[0] == "columns" and isinstance(data, dict):
        columns = data.get("columns")
        if isinstance(columns, list) and isinstance(path[1], int) and path[1] < len(columns):
            item = columns[path[1]]
            name = item.get("name") if isinstance(item, dict) else None
            return name if isinstance(name, str) else None
    return None


def from_data(data: Any, origin: str, root: Any = None) -> CheckedWorkload:
    """The workload plain values describe (a mapping as a YAML file loads), checked in
    full; ``origin`` names it in errors, ``root`` (the YAML node tree) gives lines."""

    def line(path: tuple[str | int, ...]) -> int | None:
        if root is None:
            return None
        from ..scenario.yaml_source import line_of  # YAML only when there is a file

        return line_of(root, tuple(p if isinstance(p, int) else str(p) for p in path))

    if not isinstance(data, dict):
        raise WorkloadError("a workload is a mapping (name, description, table, columns)").located(
            origin, line(())
        )
    try:
        spec = msgspec.convert(data, Workload)
    except msgspec.ValidationError as e:
        message, path = _explain(e, data)
        err = WorkloadError(message, path=path, column=_column_name(data, path))
        raise err.located(origin, line(err.path)) from None
    try:
        return check(spec, origin)
    except WorkloadError as e:
        raise e.located(origin, line(e.path)) from None


def load_text(text: str, origin: str = "<workload>") -> CheckedWorkload:
    """The workload a YAML text describes; ``origin`` names it in errors."""
    from ..scenario.yaml_source import parse

    data, root, problems = parse(text)
    if problems:
        p = problems[0]
        raise WorkloadError(p.message, path=p.path, origin=origin, line=p.line)
    return from_data(data, origin, root)


def load_file(path: str | Path) -> CheckedWorkload:
    """The workload in a YAML file; errors name the file as it was given."""
    from ..bounded_read import FileRefused
    from ..scenario.yaml_source import read_yaml_text

    origin = str(path)
    try:
        text = read_yaml_text(Path(path))
    except FileRefused as e:
        raise WorkloadError(str(e), origin=origin) from None
    return load_text(text, origin)


def _shipped_dir() -> Any:
    return importlib.resources.files("elastic_channels.workload") / "shipped"


def shipped_names() -> tuple[str, ...]:
    """The workloads shipped in the package, by name (``resort-sales`` first)."""
    names = sorted(
        p.name[: -len(SHIPPED_SUFFIX)]
        for p in _shipped_dir().iterdir()
        if p.name.endswith(SHIPPED_SUFFIX)
    )
    return tuple(sorted(names, key=lambda n: n != "resort-sales"))


def shipped_text(name: str) -> str:
    """The YAML text of shipped workload ``name``."""
    if name not in shipped_names():
        raise WorkloadError(
            f"no shipped workload {name!r}: choose one of {', '.join(shipped_names())}, "
            "or give a file path (ending .yaml or .yml)"
        )
    return (_shipped_dir() / f"{name}{SHIPPED_SUFFIX}").read_text(encoding="utf-8")


def is_path(name_or_path: str) -> bool:
    """Whether ``load_workload`` reads ``name_or_path`` as a file (it has a directory
    separator or a YAML suffix) rather than a shipped workload's name."""
    return "/" in name_or_path or "\\" in name_or_path or name_or_path.endswith((".yaml", ".yml"))


def load_workload(name_or_path: str | Path) -> CheckedWorkload:
    """A shipped workload by name (``iot-telemetry``), or the file at a path."""
    if isinstance(name_or_path, Path) or is_path(name_or_path):
        return load_file(name_or_path)
    return load_text(shipped_text(name_or_path), f"{name_or_path} (shipped)")
