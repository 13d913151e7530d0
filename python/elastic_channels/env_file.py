"""Settings from a ``.env`` file in the working directory, read by every entry point.

``elastic-channels``, ``python -m elastic_channels.setup``, ``python -m
elastic_channels.k8s_worker`` and ``python -m elastic_channels.worker`` call
:func:`load_settings_file` first, so a setting in ``.env`` means the same whichever
way a job is started. Variables already in the environment win; an empty value is
unset on either side (``cp .env.example .env`` gives a file of empty values, each
meaning its default), as ``deploy/lib/common.sh`` reads the file too.

The rule both readers keep, so that ``setup`` (here) and the pods (``deploy/``) can
never take different values from one file: each key is given once (a key given twice
is an error naming both lines, never the first or the last silently), a line is
``KEY=VALUE`` (or a comment, or blank), the file holds no NUL byte, is at most
:data:`MAX_ENV_BYTES` and is a regular file. A file that breaks it stops the command
with one line.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

from .bounded_read import FileRefused, read_text
from .setting import SettingError

__all__ = ["MAX_ENV_BYTES", "load_settings_file", "read_settings_file"]

#: The largest ``.env`` read (deploy/lib/common.sh keeps the same bound).
MAX_ENV_BYTES = 1 << 20


def read_settings_file(path: Path) -> dict[str, str | None]:
    """The ``KEY=VALUE`` settings of the file at ``path`` (a bare ``KEY`` is None), as
    python-dotenv reads them; a :class:`SettingError` naming the file and the line when
    it breaks the rule above."""
    from dotenv.parser import parse_stream

    try:
        text = read_text(path, MAX_ENV_BYTES)
    except FileRefused as e:
        raise SettingError(f"{path}: {e}") from None
    found: dict[str, str | None] = {}
    first: dict[str, int] = {}
    for binding in parse_stream(io.StringIO(text)):
        original = binding.original.string
        lead = original[: len(original) - len(original.lstrip())]
        line = binding.original.line + lead.count("\n")
        if binding.error:
            got = original.strip().splitlines()[0] if original.strip() else original
            raise SettingError(f"{path} line {line}: expected KEY=VALUE, got {got!r}")
        key = binding.key
        if key is None:
            continue  # a comment or a blank line
        if key in first:
            raise SettingError(
                f"{path} line {line}: {key} is given twice (first on line {first[key]}): "
                "give each setting once"
            )
        first[key] = line
        found[key] = binding.value
    return found


def load_settings_file(path: Path = Path(".env")) -> bool:
    """Read account and run settings from ``path`` (``KEY=VALUE`` lines; the reference
    harness's convention; ``.env.example`` names them all) into the environment: each
    value that is not empty, for a variable the environment leaves unset or empty.
    True if a file was read. A file that breaks the rule (see the module) ends the
    process with one error line and exit status 2."""
    if not path.exists():
        return False
    try:
        if not path.is_file():
            raise SettingError(f"{path}: not a regular file")
        values = read_settings_file(path)
    except SettingError as e:
        print(f"elastic-channels: error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    for key, value in values.items():
        if value is None or not value.strip():
            continue  # `KEY=` or a bare `KEY`: unset, the default applies
        if not os.environ.get(key, "").strip():
            os.environ[key] = value
    return True
