"""Running one translated statement on the emulator's DuckDB connections, under the
guard and within its time.

A query (SELECT, WITH, UNION, SHOW, DESCRIBE) passes :func:`~.guard.check_query` and
runs on the read connection in a read-only transaction; a write (INSERT, UPDATE,
DELETE, MERGE, CREATE TABLE, ALTER TABLE, DROP) passes :func:`~.guard.check_write` and
runs on the write connection. A statement still running at its deadline is
interrupted (DuckDB's ``interrupt``, which rolls a write back) and answered 408, as
Snowflake answers a statement past its ``timeout``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import duckdb

from . import guard
from .errors import SqlApiError, compile_error
from .results import Answer, ResultText, column_type, count_column

__all__ = ["Deadline", "execute"]


@dataclass(frozen=True)
class Deadline:
    """When a statement must be done: ``seconds`` after ``start`` (``time.monotonic``)."""

    seconds: float
    start: float

    @property
    def left(self) -> float:
        return self.start + self.seconds - time.monotonic()

    def timed_out(self) -> SqlApiError:
        return SqlApiError(
            408, "000630", "57014",
            f"Statement reached its statement or warehouse timeout of {self.seconds:g} "
            "second(s) and was canceled.",
        )  # fmt: skip


#: How often a statement past its deadline is interrupted again, until it has stopped.
INTERRUPT_EVERY_S = 0.05


@contextmanager
def _interrupted_at(cur: duckdb.DuckDBPyConnection, deadline: Deadline | None) -> Iterator[None]:
    """Interrupt what ``cur`` runs once ``deadline`` passes, and again every
    :data:`INTERRUPT_EVERY_S` until the block is over: DuckDB drops an interrupt that
    comes before its query starts, so one interrupt at the deadline left a statement
    that started just after it (taken from the pool's queue late) to run unbounded."""
    if deadline is None:
        yield
        return
    if deadline.left <= 0:
        raise deadline.timed_out()
    done = threading.Event()
    lock = threading.Lock()  # no interrupt once the block is over: the cursor may be closed

    def interrupt() -> None:
        if done.wait(max(0.0, deadline.left)):
            return
        while True:
            with lock:
                if done.is_set():
                    return
                try:
                    cur.interrupt()
                except duckdb.Error:
                    pass
            if done.wait(INTERRUPT_EVERY_S):
                return

    timer = threading.Thread(target=interrupt, name="emulator-sql-deadline", daemon=True)
    timer.start()
    try:
        yield
    finally:
        with lock:
            done.set()


def execute(
    sql: str,
    params: list[Any],
    write_con: Any,
    read_con: Any = None,
    deadline: Deadline | None = None,
    checked: str | None = None,
) -> Answer:
    """Run ``sql`` (DuckDB SQL, one statement) with ``params``; its answer. ``checked``:
    the text the guard reads instead (``sql`` with one row of a ``VALUES`` run of bind
    variables, see ``values_rows.py``)."""
    cur = write_con.cursor()
    is_query = False
    try:
        is_query = guard.is_query(cur, checked or sql)
        if is_query and read_con is not None:
            cur.close()
            cur = read_con.cursor()
        if is_query:
            guard.check_query(cur, checked or sql)
            cur.execute("BEGIN TRANSACTION READ ONLY")
        else:
            guard.check_write(cur, checked or sql)
        try:
            with _interrupted_at(cur, deadline):
                cur.execute(sql, params or None)
                description = cur.description
                rows = None
                if description is not None:
                    columns = [column_type(d[0], str(d[1])) for d in description]
                    rows = ResultText(columns)
                    rows.fetch(cur)
        finally:
            if is_query:
                try:
                    cur.execute("ROLLBACK")
                except duckdb.Error:
                    pass  # interrupted: the transaction ends with the cursor
    except duckdb.InterruptException:
        if deadline is not None and deadline.left <= 0:
            raise deadline.timed_out() from None
        raise SqlApiError(422, "000604", "57014", "SQL execution canceled") from None
    except guard.UnknownRelation as e:
        raise SqlApiError(
            422, "002003", "42S02",
            f"SQL compilation error:\nObject '{e.name.upper()}' does not exist or not authorized.",
        ) from None  # fmt: skip
    except guard.QueryRefused as e:
        raise compile_error(str(e)) from None
    except duckdb.CatalogException as e:
        raise SqlApiError(422, "002003", "42S02", f"SQL compilation error: {e}") from None
    except (duckdb.ParserException, duckdb.BinderException) as e:
        raise compile_error(str(e)) from None
    except duckdb.Error as e:
        raise SqlApiError(422, "100038", "22000", f"{type(e).__name__}: {e}") from None
    except RecursionError:
        raise SqlApiError(
            400, "001003", "42000",
            "SQL compilation error: the statement nests expressions too deeply for the "
            "emulator to read",
        ) from None  # fmt: skip
    finally:
        cur.close()
    if rows is None:
        return Answer.status_only()
    if not is_query and [c["name"] for c in rows.columns] == ["Count"]:
        if not rows.rows:  # DDL
            return Answer.status_only()
        rows.columns = [count_column()]  # the same text: DuckDB's counts are integers
    return Answer.result(rows)
