"""The data-access layer: SQL in, a pandas DataFrame out, for one target.

:class:`EmulatorSource` reads an emulator's data dir the way ``elastic-channels emulator
query`` does: through the running server's authenticated control query API while an
emulator serves that dir (only its process may open the DuckDB file then), and
read-only on the file once it stopped. A run starting or stopping between the check and
the query is retried once on the other path. Values are bound (``?``) on the files;
the control query API takes SQL text only, so for it they are written in by DuckDB's
complete rules (:func:`~.statement.duckdb_text`).

Offline, the concurrent readers of one file share one read-only connection
(:class:`_SharedStore`), opened by the first and closed by the last: opening the file
once per query (``query_offline``) cannot run in parallel in one process, since a second
open of the same file joins the first's DuckDB instance, whose configuration the emulator's
store locks; and a page's queries on one connection also share its cache of the file's
blocks. A page holds it for its whole render with :meth:`DataSource.session`.
:class:`~.account.AccountSource` is the same interface over a Snowflake account.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import pandas as pd

from ..emulator.control import ControlClient, ControlError, running_server
from ..emulator.emulator import DB_FILE, rows_as_json_lines
from ..emulator.sql.guard import QueryRefused, check_query
from ..emulator.storage.store import Store
from ..model import COLUMNS, TABLE_NAME
from .dialect import DUCKDB, Dialect
from .statement import Statement, duckdb_text

__all__ = ["DataSource", "EmulatorSource", "NoData", "QueryError", "frame", "statement"]


class QueryError(Exception):
    """A query failed on the target; the message says where and why."""


class NoData(QueryError):
    """The target holds no such data yet (no database, no table)."""


_DECODE = msgspec.json.Decoder()
#: DuckDB threads of the shared offline connection (its pool serves every reader).
OFFLINE_THREADS = 2
_MISSING_TABLE_HINTS = (
    "does not exist",
    "not found",
    "no emulator database",
    "is not a table or view",  # the emulator's query guard, on a table not made yet
)


def frame(
    rows: Sequence[dict[str, Any]], columns: Sequence[str] = (), times: Sequence[str] = ()
) -> pd.DataFrame:
    """Rows as a DataFrame; ``times`` columns parsed as UTC timestamps."""
    df = pd.DataFrame(list(rows))
    if df.empty and columns:
        df = pd.DataFrame(columns=list(columns))
    for c in times:
        if c in df.columns:
            df[c] = pd.to_datetime(df[c], utc=True, format="ISO8601")
    return df


def statement(query: Statement | str) -> Statement:
    """A query as a :class:`Statement` (plain SQL text binds nothing)."""
    return query if isinstance(query, Statement) else Statement(str(query))


class DataSource:
    """One target the dashboard reads: ``query(statement)`` returns a DataFrame."""

    dialect: Dialect
    #: Shown under the page title: what is being read.
    _description: str = ""
    #: How the target was picked when none was named (said in the page's caption).
    found: str = ""

    @property
    def description(self) -> str:
        return self._description

    def rows(self, query: Statement | str) -> list[dict[str, Any]]:
        """The rows of ``query``, its values bound by the target."""
        raise NotImplementedError

    def query(self, query: Statement | str, times: Sequence[str] = ()) -> pd.DataFrame:
        return frame(self.rows(query), times=times)

    def is_live(self) -> bool:
        """True while data may still be arriving (a server runs / an account)."""
        return True

    def version(self) -> str | None:
        """A token that changes whenever the data may have (None: it may change any time)."""
        return None

    def change_token(self) -> str | None:
        """A token that changes when new data may have come, found without a query
        (None: there is no such cheap sign; only a query tells)."""
        return None

    def generation(self) -> str | None:
        """Names what serves the data now: it changes when another server takes over
        (whatever was read from the previous one is read again)."""
        return None

    @contextmanager
    def session(self) -> Iterator[None]:
        """Around one render's queries: whatever they can share stays open meanwhile."""
        yield


class _SharedStore:
    """One read-only :class:`Store` per database file for every reader in this process:
    the first :meth:`acquire` opens it, the last :meth:`release` closes it (so the file
    is free again for an emulator to open between renders)."""

    _guard: ClassVar[threading.Lock] = threading.Lock()
    _open: ClassVar[dict[Path, tuple[Store, int]]] = {}

    @classmethod
    def acquire(cls, db: Path) -> Store:
        with cls._guard:
            store, users = cls._open.get(db, (None, 0))
            if store is None:
                if not db.exists():
                    raise ControlError(f"no emulator database at {db}")
                store = Store(db, TABLE_NAME, COLUMNS, read_only=True, threads=OFFLINE_THREADS)
            cls._open[db] = (store, users + 1)
            return store

    @classmethod
    def release(cls, db: Path) -> None:
        with cls._guard:
            store, users = cls._open[db]
            if users > 1:
                cls._open[db] = (store, users - 1)
                return
            del cls._open[db]
            store.close()  # under the guard: no open of the same file meanwhile

    @classmethod
    @contextmanager
    def held(cls, db: Path) -> Iterator[Store]:
        store = cls.acquire(db)
        try:
            yield store
        finally:
            cls.release(db)


class EmulatorSource(DataSource):
    """The embedded emulator's data dir, live or offline."""

    dialect = DUCKDB

    def __init__(self, data_dir: Path, timeout_s: float = 30.0, found: str = "") -> None:
        self.data_dir = Path(data_dir)
        self.timeout_s = timeout_s
        self.found = found
        #: The serving emulator's client (its connections kept open between renders),
        #: under the generation it talks to: a new server gets a new client.
        self._client: tuple[str, ControlClient] | None = None
        self._client_lock = threading.Lock()

    @property
    def description(self) -> str:
        state = "live: emulator running" if self.is_live() else "offline: no emulator running"
        return f"emulator data dir {self.data_dir} ({state})"

    def is_live(self) -> bool:
        return running_server(self.data_dir) is not None

    def version(self) -> str | None:
        """While no emulator runs, the database files' sizes and times: results stay
        valid until a run (or anything else) writes to them."""
        if self.is_live():
            return None
        return self._file_stamps()

    def _file_stamps(self) -> str:
        parts = []
        for name in (DB_FILE, DB_FILE + ".wal"):
            try:
                st = (self.data_dir / name).stat()
            except OSError:
                parts.append(f"{name}:-")
                continue
            parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
        return ";".join(parts)

    def generation(self) -> str | None:
        """The serving emulator's process and port (None while none serves the dir)."""
        info = running_server(self.data_dir)
        return None if info is None else f"{info.get('pid')}:{info.get('port')}"

    def change_token(self) -> str:
        """Whether a server serves the dir, and the database files' sizes and times."""
        return f"live:{self.is_live()};{self._file_stamps()}"

    def _control(self) -> ControlClient:
        """The client of the emulator serving the dir now (kept while it serves)."""
        generation = self.generation() or ""
        with self._client_lock:
            if self._client is None or self._client[0] != generation:
                if self._client is not None:
                    self._client[1].close()
                self._client = (generation, ControlClient(self.data_dir, self.timeout_s))
            return self._client[1]

    def _live(self, stmt: Statement) -> bytes:
        # The control query API binds nothing: the values go in as DuckDB literals.
        return self._control().call("POST", "query", {"sql": duckdb_text(stmt)})

    @property
    def _db(self) -> Path:
        return (self.data_dir / DB_FILE).resolve()

    def _offline(self, stmt: Statement) -> bytes:
        with _SharedStore.held(self._db) as store:
            return b"".join(rows_as_json_lines(*_bound_query(store, stmt)))

    @contextmanager
    def session(self) -> Iterator[None]:
        """Offline, the file stays open (read-only) until the render's last query."""
        held = False
        if not self.is_live() and self._db.exists():
            try:
                _SharedStore.acquire(self._db)
                held = True
            except Exception:  # each query says why (or finds a server started since)
                pass
        try:
            yield
        finally:
            if held:
                _SharedStore.release(self._db)

    def _once(self, stmt: Statement) -> bytes:
        if self.is_live():
            return self._live(stmt)
        return self._offline(stmt)

    def rows(self, query: Statement | str) -> list[dict[str, Any]]:
        stmt = statement(query)
        try:
            try:
                body = self._once(stmt)
            except Exception:
                # A server may have started (the file is locked) or stopped (the port is
                # gone) since the check: one more try picks the path that fits now.
                body = self._once(stmt)
        except Exception as e:  # every failure is shown on the page, never a traceback
            message = f"{type(e).__name__}: {e}" if not isinstance(e, ControlError) else str(e)
            if any(h in message.lower() for h in _MISSING_TABLE_HINTS):
                raise NoData(message) from None
            raise QueryError(f"query on {self.data_dir} failed: {message}") from None
        return [_DECODE.decode(line) for line in body.splitlines() if line.strip()]


def _bound_query(store: Store, stmt: Statement) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Column names and rows of ``stmt`` on the store's read-only connection, its values
    bound: the same read-only query of the tables the emulator's own query path allows
    (its guard), in a read-only transaction."""
    cur = store.connection.cursor()
    try:
        check_query(cur, stmt.sql)
        cur.execute("BEGIN TRANSACTION READ ONLY")
        try:
            cur.execute(stmt.sql, list(stmt.params) if stmt.params else None)
            if cur.description is None:
                return [], []
            return [d[0] for d in cur.description], cur.fetchall()
        finally:
            cur.execute("ROLLBACK")
    except QueryRefused as e:
        raise ControlError(f"query refused: {e}") from None
    finally:
        cur.close()
