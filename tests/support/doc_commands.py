"""The commands and snippets of README.md and docs/*.md, found the way a reader finds them.

A document is read as a list of steps, in its order: each line of a ```bash block
(continuations joined, ``a && b`` split, comments dropped), each ```python block, and
each command quoted in a markdown table (the README's results table says which command
reproduces each figure). ```console blocks (a cloud, an account) are never steps.

Every command the documents quote, in a block, a table or a sentence, can also be
checked without running it: its ``--long`` flags must appear in its own ``--help``.
"""

from __future__ import annotations

import functools
import itertools
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

#: A code span or table cell that is a command of this project (not a path or a flag).
COMMAND = re.compile(
    r"^(?:elastic-channels|python3? (?:benches/\S+\.py|-m elastic_channels[\w.]*)"
    r"|(?:bash )?(?:deploy|scripts)/[\w/]+\.sh|cargo bench)(?:\s|$)"
)
_FENCE = re.compile(r"^```(\w*)\s*$")
_SPAN = re.compile(r"(?<!`)`([^`]+)`(?!`)")
_FLAG = re.compile(r"(?<![\w-])--[A-Za-z0-9][\w-]*")


@dataclass(frozen=True)
class Step:
    doc: Path
    line: int  #: where it is in the document (1-based)
    kind: str  #: "command" or "python"
    text: str

    @property
    def id(self) -> str:
        return f"{self.doc.name}:{self.line}:{self.text.splitlines()[0][:40]}"


def _bash_lines(block: str, first_line: int) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    lines = block.splitlines()
    i = 0
    while i < len(lines):
        start, text = i, lines[i]
        while text.endswith("\\") and i + 1 < len(lines):  # a continued line
            i += 1
            text = text[:-1].rstrip() + " " + lines[i].strip()
        i += 1
        text = "" if text.lstrip().startswith("#") else text.split(" #")[0]
        out += [(first_line + start, p.strip()) for p in text.split("&&") if p.strip()]
    return out


def _without_fences(text: str) -> str:
    """The text with every fenced block blanked (line numbers kept)."""
    out, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            out.append("")
        else:
            out.append("" if fenced else line)
    return "\n".join(out)


def quoted_commands(doc: Path) -> list[tuple[int, str, bool]]:
    """Every command in a code span outside the blocks: (line, command, in a table)."""
    text = _without_fences(doc.read_text())
    lines = text.splitlines()
    found = []
    for m in _SPAN.finditer(text):
        span = " ".join(m.group(1).split())  # a span may wrap over lines
        if COMMAND.match(span):
            line = text.count("\n", 0, m.start()) + 1
            found.append((line, span, lines[line - 1].lstrip().startswith("|")))
    return found


def steps(doc: Path) -> list[Step]:
    """The document's runnable steps, in its order."""
    found: list[Step] = []
    lines = doc.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not _FENCE.match(lines[j]):
            j += 1
        body = "\n".join(lines[i + 1 : j]) + "\n"
        if m.group(1) == "bash":
            found += [Step(doc, n, "command", c) for n, c in _bash_lines(body, i + 2)]
        elif m.group(1) == "python":
            found.append(Step(doc, i + 2, "python", body))
        i = j + 1
    found += [Step(doc, n, "command", c) for n, c, in_table in quoted_commands(doc) if in_table]
    return sorted(found, key=lambda s: s.line)


def every_command(doc: Path) -> list[tuple[int, str]]:
    """Every command the document quotes: in blocks, tables and sentences."""
    blocks = [(s.line, s.text) for s in steps(doc) if s.kind == "command"]
    inline = [(n, c) for n, c, in_table in quoted_commands(doc) if not in_table]
    return sorted(blocks + inline)


def argv_here(command: str) -> list[str]:
    """The command's argv as this test runs it: this interpreter for ``python``, and
    the repository's scripts and benchmarks by their full path."""
    argv = shlex.split(command)
    if argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    if argv[0] == "bash" and len(argv) > 1:
        argv[1] = _in_repo(argv[1])
    argv[0] = _in_repo(argv[0])
    if argv[0] == sys.executable and len(argv) > 1:
        argv[1] = _in_repo(argv[1])
    return argv


def _in_repo(word: str) -> str:
    if word.startswith(("deploy/", "scripts/", "benches/")) and (REPO / word).is_file():
        return str(REPO / word)
    return word


@functools.cache
def _help(prefix: tuple[str, ...]) -> str | None:
    """``PREFIX --help``, or None if it does not answer with a text."""
    try:
        done = subprocess.run(
            [*prefix, "--help"], capture_output=True, text=True, timeout=120,
            stdin=subprocess.DEVNULL, cwd=REPO,
        )  # fmt: skip
    except OSError:
        return None
    text = done.stdout + done.stderr
    return text if done.returncode == 0 and text.strip() else None


#: The subcommands in a usage line: argparse writes them as ``{a,b,c} ...`` or ``METAVAR ...``
#: (``[X ...]`` and ``X [X ...]`` are repeated values, not subcommands).
_SUBPARSERS = re.compile(r"(?<![\[\w])(\{[\w,-]+\}|[A-Z][A-Z0-9_]*) \.\.\.")


def subcommands(text: str) -> set[str]:
    """The subcommands a ``--help`` text offers: from its ``{a,b,c} ...`` usage, or with a
    metavar (``COMMAND ...``) the names argparse lists 4 spaces in under 'positional
    arguments' (a positional with choices, ``{x,y}`` without ``...``, is no subcommand)."""
    m = _SUBPARSERS.search(text.split("\n\n", 1)[0])
    if m is None:
        return set()
    if m.group(1).startswith("{"):
        return set(m.group(1)[1:-1].split(","))
    positional = text.partition("positional arguments:")[2].split("\n\n", 1)[0]
    return set(re.findall(r"^    ([\w-]+)(?=\s|$)", positional, re.M))


def valued_flags(text: str) -> set[str]:
    """The flags of a ``--help`` text that take a value (``--data-dir DATA_DIR``)."""
    out = set()
    for line in text.splitlines():
        if line.startswith("  -"):
            invocation = re.split(r"\s{2,}", line.strip())[0]
            out |= {o.split()[0] for o in invocation.split(", ") if " " in o}
    return out


def _walk(argv: list[str]) -> tuple[list[str], str, list[tuple[str, str]]]:
    """(the deepest subcommand's prefix, its help, each ``--flag`` with the help of the
    level it is given at), argv read as argparse reads it: a word that is a subcommand of
    the current level descends, a flag is skipped with its value when it takes one, any
    other word (a run id, a query) is a positional."""
    if argv[0].endswith(".sh"):  # as `bash SCRIPT`: its help, even without the exec bit
        argv = ["bash", *argv]
    head = 3 if argv[0] == sys.executable and argv[1] == "-m" else 2 if argv[0] in (
        sys.executable, "bash") else 1  # fmt: skip
    prefix = list(argv[:head])
    text = _help(tuple(prefix))
    if text is None:
        raise AssertionError(f"`{shlex.join(prefix)} --help` gives no help")
    flags: list[tuple[str, str]] = []
    words = iter(argv[head:])
    for word in words:
        offered = subcommands(text)
        if word in offered:
            deeper = _help((*prefix, word))
            if deeper is None:
                raise AssertionError(f"`{shlex.join([*prefix, word])} --help` gives no help")
            prefix, text = [*prefix, word], deeper
            continue
        if not offered and not word.startswith("-"):
            # Not argparse's usage (``pip <command> [options]``): a word is a subcommand
            # when its own --help answers with another text (a positional repeats it).
            deeper = _help((*prefix, word))
            if deeper is not None and deeper != text:
                prefix, text = [*prefix, word], deeper
                continue
        flags += [(f, text) for f in _FLAG.findall(word.split("=")[0])]
        if word.startswith("-") and "=" not in word and word in valued_flags(text):
            next(words, None)  # its value
    return prefix, text, flags


def help_of(argv: list[str]) -> tuple[list[str], str]:
    """The help of the deepest subcommand ``argv`` names: (that prefix, its text); in
    ``emulator faults --data-dir X add rows delay --delay-seconds 1``, ``faults add``'s."""
    prefix, text, _ = _walk(argv)
    return prefix, text


def unknown_flags(command: str) -> list[str]:
    """The ``--flags`` of ``command`` the help of their own level does not list (a renamed
    or removed flag; ``faults --data-dir X add --count 1`` checks ``--data-dir`` against
    ``faults --help`` and ``--count`` against ``faults add --help``). ``cargo bench --bench
    NAME``: NAME must be a [[bench]] of Cargo.toml."""
    argv = argv_here(command)
    if argv[:2] == ["cargo", "bench"]:
        cargo_toml = (REPO / "Cargo.toml").read_text()
        names = re.findall(r'\[\[bench\]\]\s*\nname\s*=\s*"([^"]+)"', cargo_toml)
        pairs = itertools.pairwise(argv)
        return [f"--bench {b}" for a, b in pairs if a == "--bench" and b not in names]
    _, _, flags = _walk(argv)
    return [f for f, text in flags if f not in {"--help", *_FLAG.findall(text)}]
