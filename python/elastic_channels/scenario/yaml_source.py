"""Reading a scenario's YAML: the values, and the node tree that says where each is.

The loader reads plain YAML 1.2 scalars, not PyYAML's YAML 1.1 ones: ``true``/``false``
are the only booleans (``on``, ``no`` and ``y`` stay text), ``010`` is ten (not octal
eight), dates stay text, and ``92e6`` is a number (PyYAML reads it as text). A number in
exponent form without a point that is whole is an integer, so ``batch_bytes: 1e6``
works. Infinities and NaN are not numbers here. A key given twice in one mapping is an
error (PyYAML keeps the last silently).

The one YAML reader of scenario and workload files, bounded as it reads: a file of at
most :data:`MAX_YAML_BYTES`, at most :data:`MAX_NODES` values (an alias counts as
everything it stands for, so an alias bomb is refused before it is expanded), nested at
most :data:`MAX_DEPTH` deep; an alias may not refer to the node it is in. Each is a
problem with its line, as a syntax error is, found in bounded time.
"""

from __future__ import annotations

import math
import re
from typing import Any, ClassVar

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..bounded_read import read_text, size_text
from .errors import Path, Problem

__all__ = [
    "MAX_DEPTH",
    "MAX_NODES",
    "MAX_YAML_BYTES",
    "Loader",
    "line_of",
    "parse",
    "read_yaml_text",
    "value_at",
]

#: The largest scenario or workload file read (the shipped ones are under 13 KB).
MAX_YAML_BYTES = 1 << 20
#: The most values (mappings, lists, keys and scalars) a file may hold, each alias
#: counted as the values it stands for.
MAX_NODES = 100_000
#: How deep mappings and lists may nest.
MAX_DEPTH = 64

_INT = re.compile(r"^[-+]?[0-9]+(?:_[0-9]+)*$")
_FLOAT = re.compile(r"^[-+]?(?:[0-9]+(?:_[0-9]+)*(?:\.[0-9_]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$")
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_REPLACED = {
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:timestamp",
}


class BoundError(yaml.MarkedYAMLError):
    """A file past one of the reader's bounds (its ``problem`` says which)."""


class Loader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2's core scalars, composing within the bounds
    (see the module's text)."""

    # PyYAML's own class attribute, replaced (add_implicit_resolver below extends it).
    yaml_implicit_resolvers: ClassVar[dict[Any, list[tuple[str, re.Pattern[str]]]]] = {
        first: [(tag, rx) for tag, rx in resolvers if tag not in _REPLACED]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._nodes = 0
        #: An anchor's node, as the count of values it stands for (its own included).
        self._sizes: dict[str, int] = {}

    def compose_node(self, parent: Node | None, index: Any) -> Node:  # type: ignore[override]
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            if event.anchor in self.anchors and event.anchor not in self._sizes:
                raise BoundError(
                    None, None, f"the alias *{event.anchor} is inside its own anchor",
                    event.start_mark,
                )  # fmt: skip
            self._count(self._sizes.get(str(event.anchor), 1), event)
            return super().compose_node(parent, index)  # type: ignore[no-any-return]
        if self._depth >= MAX_DEPTH:
            raise BoundError(None, None, f"nested deeper than {MAX_DEPTH} levels", event.start_mark)
        before = self._nodes
        self._count(1, event)
        self._depth += 1
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if event.anchor is not None:
            self._sizes[event.anchor] = self._nodes - before
        return node  # type: ignore[no-any-return]

    def _count(self, n: int, event: Any) -> None:
        self._nodes += n
        if self._nodes > MAX_NODES:
            raise BoundError(
                None, None,
                f"more than {MAX_NODES:,} values (aliases counted as what they stand for)",
                event.start_mark,
            )  # fmt: skip

    def construct_yaml_int(self, node: Node) -> int:  # type: ignore[override]
        text = str(self.construct_scalar(node))  # type: ignore[arg-type]
        try:
            return int(text.replace("_", ""))
        except ValueError:
            raise yaml.constructor.ConstructorError(
                None, None, f"{text!r} is not a whole number", node.start_mark
            ) from None

    def construct_yaml_float(self, node: Node) -> float | int:  # type: ignore[override]
        text = str(self.construct_scalar(node))  # type: ignore[arg-type]
        try:
            value = float(text.replace("_", ""))
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise yaml.constructor.ConstructorError(
                None, None, f"{text!r} is not a finite number", node.start_mark
            )
        if "." not in text and value.is_integer():
            return int(value)  # 92e6: a whole number, as an int-typed key wants it
        return value

    def construct_yaml_bool(self, node: Node) -> bool:  # type: ignore[override]
        return str(self.construct_scalar(node)).lower() == "true"  # type: ignore[arg-type]


Loader.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL, list("tTfF"))
Loader.add_implicit_resolver("tag:yaml.org,2002:int", _INT, list("-+0123456789"))
Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789."))
Loader.add_constructor("tag:yaml.org,2002:int", Loader.construct_yaml_int)
Loader.add_constructor("tag:yaml.org,2002:float", Loader.construct_yaml_float)
Loader.add_constructor("tag:yaml.org,2002:bool", Loader.construct_yaml_bool)


def read_yaml_text(path: str | Any) -> str:
    """The text of a scenario or workload file, at most :data:`MAX_YAML_BYTES` of UTF-8
    without a NUL byte; :class:`~..bounded_read.FileRefused` saying why not."""
    return read_text(path, MAX_YAML_BYTES)


def parse(text: str) -> tuple[Any, Node | None, list[Problem]]:
    """(the values, the node tree, problems): a syntax error, a bound passed or a key
    given twice is a problem with its line, and then the values are None."""
    if len(text) > MAX_YAML_BYTES:
        return None, None, [Problem((), f"over the {size_text(MAX_YAML_BYTES)} a file may hold")]
    loader = None
    try:
        loader = Loader(text)
        root = loader.get_single_node()
        duplicates = _duplicate_keys(root) if root is not None else []
        if duplicates:
            return None, root, duplicates
        data = loader.construct_document(root) if root is not None else None
    except BoundError as e:
        return None, None, [Problem((), str(e.problem), _line(e))]
    except yaml.MarkedYAMLError as e:
        what = " ".join(x for x in (e.context, e.problem) if x)
        return None, None, [Problem((), f"not valid YAML: {what}", _line(e))]
    except yaml.reader.ReaderError as e:
        line = text.count("\n", 0, e.position) + 1
        what = f"the character U+{e.character:04X} is not allowed"
        return None, None, [Problem((), f"not valid YAML: {what}", line)]
    except yaml.YAMLError as e:
        return None, None, [Problem((), f"not valid YAML: {e}")]
    finally:
        if loader is not None:
            loader.dispose()
    return data, root, []


def _line(e: yaml.MarkedYAMLError) -> int | None:
    mark = e.problem_mark or e.context_mark
    return mark.line + 1 if mark is not None else None


def _duplicate_keys(node: Node, path: Path = ()) -> list[Problem]:
    out: list[Problem] = []
    if isinstance(node, MappingNode):
        seen: dict[Any, int] = {}
        for key, value in node.value:
            line = key.start_mark.line + 1
            if isinstance(key, ScalarNode) and key.value != "<<":
                if key.value in seen:
                    out.append(
                        Problem(
                            (*path, key.value),
                            f"given twice (first on line {seen[key.value]})",
                            line,
                        )
                    )
                seen.setdefault(key.value, line)
            name = key.value if isinstance(key, ScalarNode) else str(line)
            out += _duplicate_keys(value, (*path, name))
    elif isinstance(node, SequenceNode):
        for i, item in enumerate(node.value):
            out += _duplicate_keys(item, (*path, i))
    return out


def line_of(root: Node | None, path: Path) -> int | None:
    """The line (1-based) of the key or item at ``path``; as far as the path goes in
    the tree (a missing key: the line of the mapping that lacks it)."""
    if root is None:
        return None
    node, line = root, root.start_mark.line + 1
    for token in path:
        if isinstance(node, MappingNode):
            for key, value in node.value:
                if isinstance(key, ScalarNode) and key.value == token:
                    node, line = value, key.start_mark.line + 1
                    break
            else:
                return line
        elif isinstance(node, SequenceNode) and isinstance(token, int):
            if not 0 <= token < len(node.value):
                return line
            node = node.value[token]
            line = node.start_mark.line + 1
        else:
            return line
    return line


_MISSING = object()


def value_at(data: Any, path: Path) -> Any:
    """The value at ``path`` in the loaded data (a private marker when it is absent)."""
    for token in path:
        if isinstance(data, dict) and token in data:
            data = data[token]
        elif isinstance(data, list) and isinstance(token, int) and 0 <= token < len(data):
            data = data[token]
        else:
            return _MISSING
    return data


def show(value: Any) -> str:
    """A value as messages quote it: ``"fast"``, ``-3``, ``null``, ``a list``."""
    if value is _MISSING:
        return "nothing"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, dict):
        return "a mapping" if value else "an empty mapping"
    if isinstance(value, list):
        return f"a list of {len(value)} item{'s' * (len(value) != 1)}" if value else "an empty list"
    return repr(value)
