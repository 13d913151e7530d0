"""The emulator package's layout as issue #21 asks it: no import cycle between its
modules (module-level imports; a package's ``__init__`` re-exporting its own children
does not count) and no class over 200 lines. Read from the source with ``ast``."""

from __future__ import annotations

import ast
from pathlib import Path

import elastic_channels.emulator as emulator

ROOT = Path(emulator.__file__).parent
PACKAGE = "elastic_channels.emulator"
MAX_CLASS_LINES = 200


def _modules() -> dict[str, Path]:
    out = {}
    for f in ROOT.rglob("*.py"):
        parts = f.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join((PACKAGE, *parts))] = f
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules ``name`` imports at module level."""
    base = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.parse(path.read_text()).body:
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            parts = base.split(".")
            stem = ".".join(parts[: len(parts) - (node.level - 1)])
            target = f"{stem}.{node.module}" if node.module else stem
        else:
            target = node.module or ""
        for candidate in (target, *(f"{target}.{a.name}" for a in node.names)):
            if candidate in modules and candidate != name:
                found.add(candidate)
    return found


def _cycle(graph: dict[str, set[str]], modules: dict[str, Path]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(u: str) -> list[str] | None:
        state[u] = 1
        stack.append(u)
        for v in sorted(graph[u]):
            if modules[v].name == "__init__.py" and u.startswith(v + "."):
                continue  # a package's module importing what its package re-exports
            if state.get(v) == 1:
                return [*stack[stack.index(v) :], v]
            if not state.get(v) and (found := visit(v)):
                return found
        stack.pop()
        state[u] = 2
        return None

    for m in sorted(graph):
        if not state.get(m) and (found := visit(m)):
            return found
    return None


def test_no_import_cycle_between_the_emulators_modules() -> None:
    modules = _modules()
    assert len(modules) > 20  # the package was found, subpackages included
    graph = {m: _imports(m, f, modules) for m, f in modules.items()}
    assert _cycle(graph, modules) is None


def test_the_cycle_check_finds_a_cycle() -> None:
    modules = {"p.a": Path("a.py"), "p.b": Path("b.py")}
    assert _cycle({"p.a": {"p.b"}, "p.b": {"p.a"}}, modules) == ["p.a", "p.b", "p.a"]


def test_no_class_of_the_emulator_over_200_lines() -> None:
    big = [
        (name, node.name, node.end_lineno - node.lineno + 1)
        for name, path in _modules().items()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef)
        and (node.end_lineno or node.lineno) - node.lineno + 1 > MAX_CLASS_LINES
    ]
    assert big == []
