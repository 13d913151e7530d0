"""Running setup's statements one by one, whichever way they reach the account.

A way in (:mod:`.sql_api`, the default, or :mod:`.connector`) opens a session that runs
one statement and raises :class:`StatementFailed` with the server's words when it fails;
:func:`execute` runs them in order, prints ``ok: <first line>`` for each, and stops at
the first failure with a :class:`~.ddl.SetupError` naming that statement (its label, e.g.
``file.sql statement 2 of 3 (line 5)``, and its first line) and the server's message.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from .ddl import SetupError

__all__ = ["RunOne", "StatementFailed", "execute"]


class StatementFailed(Exception):
    """One statement failed; the message is what the server (or the way to it) said."""


#: Runs one statement; raises :class:`StatementFailed` if it fails.
RunOne = Callable[[str], None]


def execute(
    stmts: Sequence[str],
    run_one: RunOne,
    labels: Sequence[str] | None = None,
    out: Any = None,
) -> None:
    """Run ``stmts`` in order through ``run_one``; ``labels[i]``, when given, says where
    statement ``i`` came from in an error. Progress goes to ``out`` (stdout)."""
    out = sys.stdout if out is None else out
    for i, stmt in enumerate(stmts):
        first_line = stmt.splitlines()[0]
        try:
            run_one(stmt)
        except StatementFailed as e:
            where = f"{labels[i]}: " if labels else ""
            raise SetupError(f"{where}{first_line}: {e}") from e
        print(f"ok: {first_line}", file=out, flush=True)
