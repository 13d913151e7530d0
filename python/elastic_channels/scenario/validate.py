"""From loaded YAML values to a :class:`Scenario`, every error named by key and line.

Three passes: unknown keys (all of them, each with a "did you mean" when one is close),
then msgspec's conversion (types and the bounds the model's annotations carry; it stops
at the first), then the rules across keys (:mod:`.checks`, all of them). A message says
what was expected in words taken from the model's own types, and what was found.
"""

from __future__ import annotations

import re
import types
import typing
from typing import Any

import msgspec
import msgspec.inspect as mi
from yaml.nodes import Node

from . import checks
from .errors import Path, Problem, ScenarioError, close_match
from .model import NAME_PATTERN, Scenario
from .yaml_source import line_of, show, value_at

__all__ = ["to_scenario"]

_PATTERN_TEXT = {NAME_PATTERN: "1 to 64 letters, digits, _ . or -"}
_ERROR = re.compile(r"^(?P<message>.*?)(?: - at `\$(?P<path>.*)`)?$", re.S)
_TOKEN = re.compile(r"\.([^.\[]+)|\[(\d+)\]|\[(\.\.\.)\]")
_DICT_KEY = "[...]"


def to_scenario(data: Any, where: str, root: Node | None = None) -> Scenario:
    """``data`` (the YAML's values; ``root`` its node tree, for lines) as a Scenario,
    or a :class:`ScenarioError` naming every problem found."""

    def fail(found: list[tuple[Path, str]]) -> typing.NoReturn:
        raise ScenarioError(where, [Problem(p, m, line_of(root, p)) for p, m in found])

    if data is None:
        fail([((), "the scenario is empty: it needs at least name and stages")])
    if not isinstance(data, dict):
        fail([((), f"expected a mapping of keys (name, stages, ...), got {show(data)}")])
    unknown = unknown_keys(data, Scenario)
    if unknown:
        fail(unknown)
    try:
        scenario = msgspec.convert(data, Scenario)
    except msgspec.ValidationError as e:
        fail([_conversion_problem(str(e), data)])
    found = checks.problems(scenario)
    if found:
        fail(found)
    return scenario


def _unwrap(tp: Any) -> Any:
    """The type inside Annotated, and the one member of a union a path can go into."""
    if typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        inner = [_unwrap(t) for t in typing.get_args(tp) if t is not type(None)]
        into = [t for t in inner if _is_struct(t) or typing.get_origin(t) in (list, dict)]
        return into[0] if len(into) == 1 else tp
    return tp


def _is_struct(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, msgspec.Struct)


def _fields(tp: Any) -> dict[str, Any]:
    return {f.encode_name: f.type for f in msgspec.structs.fields(tp)}


def unknown_keys(data: Any, tp: Any, path: Path = ()) -> list[tuple[Path, str]]:
    """Every key of ``data`` that its type has not, with the path it was found at."""
    tp = _unwrap(tp)
    out: list[tuple[Path, str]] = []
    if _is_struct(tp) and isinstance(data, dict):
        fields = _fields(tp)
        for key, value in data.items():
            if key not in fields:
                out.append(((*path, key), "unknown key" + close_match(str(key), fields)))
            else:
                out += unknown_keys(value, fields[key], (*path, key))
    elif typing.get_origin(tp) is dict and isinstance(data, dict):
        for key, value in data.items():
            out += unknown_keys(value, typing.get_args(tp)[1], (*path, key))
    elif typing.get_origin(tp) is list and isinstance(data, list):
        for i, item in enumerate(data):
            out += unknown_keys(item, typing.get_args(tp)[0], (*path, i))
    return out


def _type_at(path: Path, root: Any = Scenario) -> Any:
    tp: Any = root
    for token in path:
        tp = _unwrap(tp)
        if _is_struct(tp):
            tp = _fields(tp)[str(token)]
        elif typing.get_origin(tp) is dict:
            tp = typing.get_args(tp)[1]
        elif typing.get_origin(tp) is list:
            tp = typing.get_args(tp)[0]
    return tp


def _parse_path(text: str) -> list[str | int]:
    tokens: list[str | int] = []
    for name, index, _any_key in _TOKEN.findall(text):
        tokens.append(name if name else int(index) if index else _DICT_KEY)
    return tokens


def _conversion_problem(error: str, data: Any, root: Any = Scenario) -> tuple[Path, str]:
    """msgspec's first error converting ``data`` to ``root``, reworded, at the path
    of the key it names."""
    m = _ERROR.match(error)
    message, raw = (m.group("message"), m.group("path") or "") if m else (error, "")
    tokens = _parse_path(raw)
    if _DICT_KEY in tokens:  # msgspec does not say which key of a mapping: find it
        near: Path = tuple(t for t in tokens if t != _DICT_KEY)
        return _in_mapping(tokens, data, root) or (near, message)
    path: Path = tuple(tokens)
    field = re.match(r"Object missing required field `(.+)`", message)
    if field:
        return (*path, field.group(1)), "missing (it is required)"
    unknown = re.match(r"Object contains unknown field `(.+)`", message)
    if unknown:
        return (*path, unknown.group(1)), "unknown key"
    expected = describe(mi.type_info(_type_at(path, root)))
    return path, f"expected {expected}, got {show(value_at(data, path))}"


def _in_mapping(tokens: list[str | int], data: Any, root: Any) -> tuple[Path, str] | None:
    cut = tokens.index(_DICT_KEY)
    prefix: Path = tuple(tokens[:cut])
    mapping = value_at(data, prefix)
    value_type = _type_at((*prefix, _DICT_KEY), root)
    if not isinstance(mapping, dict):
        return None
    for key, value in mapping.items():
        try:
            msgspec.convert(value, value_type)
        except msgspec.ValidationError as e:
            path, message = _conversion_problem(str(e), value, value_type)
            return (*prefix, key, *path), message
    return None


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)


def _bounds(t: Any) -> str:
    if t.ge is not None and t.le is not None:
        return f" from {_number(t.ge)} to {_number(t.le)}"
    said = [f"{op} {_number(v)}" for op, v in ((">", t.gt), (">=", t.ge), ("<", t.lt), ("<=", t.le))
            if v is not None]  # fmt: skip
    return (" " + " and ".join(said)) if said else ""


def describe(t: mi.Type) -> str:
    """What a type accepts, in words: ``a number > 0 or null``."""
    if isinstance(t, mi.FloatType):
        return "a number" + _bounds(t)
    if isinstance(t, mi.IntType):
        return "a whole number" + _bounds(t)
    if isinstance(t, mi.StrType):
        return _PATTERN_TEXT.get(t.pattern or "", "a string")
    if isinstance(t, mi.BoolType):
        return "true or false"
    if isinstance(t, mi.NoneType):
        return "null"
    if isinstance(t, mi.LiteralType):
        return "one of " + ", ".join(str(v) for v in t.values)
    if isinstance(t, mi.ListType):
        size = ""
        if t.min_length and t.max_length:
            size = f" of {t.min_length} to {t.max_length} items"
        return "a list" + size
    if isinstance(t, mi.StructType):
        return "a mapping with keys " + ", ".join(f.encode_name for f in t.fields)
    if isinstance(t, mi.DictType):
        return "a mapping"
    if isinstance(t, mi.UnionType):
        kinds = [x for x in t.types if not isinstance(x, mi.NoneType)] or list(t.types)
        if any(isinstance(x, mi.FloatType) and not _bounds(x) for x in kinds):
            kinds = [x for x in kinds if not isinstance(x, mi.IntType)]  # a number says it
        words = [describe(x) for x in kinds]  # null (unset) goes unsaid
        return " or ".join(words) if len(words) < 3 else f"{', '.join(words[:-1])} or {words[-1]}"
    return "something else"
