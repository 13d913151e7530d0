"""Talking to a running emulator from another process, and reading its data dir offline."""

from __future__ import annotations

import http.client
import json
import os
import ssl
import threading
import urllib.parse
from pathlib import Path
from typing import Any

from ..model import COLUMNS, TABLE_NAME
from .emulator import DB_FILE, SERVER_FILE, rows_as_json_lines
from .http.access import CONTROL_SECRET_FILE
from .sql.bookkeeping import LANDING_COMMENT
from .storage.store import Store

__all__ = [
    "ControlClient",
    "ControlError",
    "control_secret",
    "query_offline",
    "running_server",
    "stats_offline",
]


#: Idle connections a :class:`ControlClient` keeps open for its next calls.
KEPT_CONNECTIONS = 4


#: Control calls that change nothing: sent again when a kept connection was closed.
_READS = {("POST", "query"), ("POST", "wait-landed")}


def _repeatable(method: str, path: str) -> bool:
    return method == "GET" or (method, path) in _READS


class ControlError(Exception):
    """The control call failed; the message is what the emulator (or the socket) said."""


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def running_server(data_dir: Path) -> dict[str, Any] | None:
    """``server.json`` of the emulator serving ``data_dir``, or None if none is running."""
    path = Path(data_dir) / SERVER_FILE
    try:
        info = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return info if _pid_alive(int(info.get("pid", 0))) else None


def control_secret(data_dir: Path) -> str | None:
    """The control secret the emulator wrote into ``data_dir`` (None if there is none)."""
    try:
        return (Path(data_dir) / CONTROL_SECRET_FILE).read_text().strip()
    except FileNotFoundError:
        return None
    except PermissionError:
        raise ControlError(
            f"cannot read {Path(data_dir) / CONTROL_SECRET_FILE}: run this as the user who "
            "started the emulator"
        ) from None


class ControlClient:
    """Calls ``/_emulator/...`` on the server running for a data dir (TLS via its CA,
    authenticated with the control secret in the data dir).

    Connections are kept open (keep-alive, up to :data:`KEPT_CONNECTIONS` idle) and
    reused by the next calls, from any thread: a dashboard page that reads a dozen
    queries every few seconds pays a TLS handshake, on both sides, once, not per query.
    A call that only reads (a query, stats, waiting) on a kept connection the server has
    closed meanwhile is sent again once on a new one; one that changes something
    (adding faults) is not repeated: its error says the connection was lost."""

    def __init__(self, data_dir: Path, timeout_s: float = 60.0) -> None:
        info = running_server(data_dir)
        if info is None:
            raise ControlError(f"no emulator is running for data dir {data_dir}")
        host = str(info.get("url", "")).rsplit(":", 1)[0] or "https://127.0.0.1"
        self.base = f"{host}:{info['port']}/_emulator/"
        self._host = urllib.parse.urlsplit(host).hostname or "127.0.0.1"
        self._port = int(info["port"])
        self._ctx = ssl.create_default_context(cafile=str(Path(data_dir) / "tls" / "ca.pem"))
        self._timeout = timeout_s
        self._secret = control_secret(data_dir)
        self._lock = threading.Lock()
        self._idle: list[http.client.HTTPSConnection] = []

    def _take(self) -> tuple[http.client.HTTPSConnection, bool]:
        """An idle kept connection (True: used before, the server may have closed it
        since) or a new one."""
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        conn = http.client.HTTPSConnection(
            self._host, self._port, context=self._ctx, timeout=self._timeout
        )
        return conn, False

    def _give_back(self, conn: http.client.HTTPSConnection) -> None:
        with self._lock:
            if len(self._idle) < KEPT_CONNECTIONS:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        """Close the kept connections (a later call opens another)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def _exchange(self, method: str, path: str, data: bytes | None) -> tuple[int, bytes]:
        headers = {"Content-Type": "application/json"} if data is not None else {}
        if self._secret:
            headers["Authorization"] = f"Bearer {self._secret}"
        url = urllib.parse.urlsplit(self.base + path).path
        while True:
            conn, reused = self._take()
            try:
                conn.request(method, url, body=data, headers=headers)
                resp = conn.getresponse()
                body = resp.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                conn.close()
                if reused and _repeatable(method, path):  # closed while kept: once more
                    continue
                raise
            except (OSError, http.client.HTTPException):
                conn.close()
                raise
            if resp.will_close:
                conn.close()
            else:
                self._give_back(conn)
            return resp.status, body

    def call(self, method: str, path: str, body: Any = None) -> bytes:
        data = None if body is None else json.dumps(body).encode()
        try:
            status, got = self._exchange(method, path, data)
        except (OSError, http.client.HTTPException) as e:
            raise ControlError(f"cannot reach the emulator at {self.base}: {e}") from None
        if status >= 400:
            detail = got.decode("utf-8", "replace")
            try:
                detail = json.loads(detail)["message"]
            except (ValueError, KeyError, TypeError):
                pass
            raise ControlError(f"HTTP {status}: {detail}")
        return got

    def json(self, method: str, path: str, body: Any = None) -> Any:
        return json.loads(self.call(method, path, body))


def query_offline(data_dir: Path, sql: str, table: str = TABLE_NAME) -> list[bytes]:
    """Run one SELECT on the DuckDB file of a stopped emulator (read-only, no file access)."""
    db = Path(data_dir) / DB_FILE
    if not db.exists():
        raise ControlError(
            f"no emulator database at {db}: run `elastic-channels run` here first, or "
            "name the data dir of one with --data-dir"
        )
    store = Store(db, table, COLUMNS, read_only=True, threads=1)
    try:
        return rows_as_json_lines(*store.query(sql))
    finally:
        store.close()


def landing_table_of(data_dir: Path) -> str:
    """The landing table a stopped emulator's data dir holds (a data dir holds one: the
    resort sales' or a workload's); ``RESORT_SALES`` when it holds none yet."""
    rows = query_offline(
        data_dir,
        "SELECT view_name AS name FROM duckdb_views() WHERE NOT internal "
        "UNION ALL SELECT table_name FROM duckdb_tables() WHERE comment = "
        f"'{LANDING_COMMENT}' ORDER BY 1",
    )
    names = [json.loads(r)["name"] for r in rows]
    return names[0] if names else TABLE_NAME


def stats_offline(data_dir: Path, table: str | None = None) -> dict[str, Any]:
    """What a stopped emulator's database holds (the live counters died with the server):
    rows in its landing table (``table``, else the one it holds), the last commit, errors
    kept, requests spooled but not landed."""
    table = table or landing_table_of(data_dir)
    rows = query_offline(
        data_dir,
        f"SELECT (SELECT count(*) FROM {table}) AS rows_landed, "
        f"(SELECT max(_COMMIT_TIME) FROM {table}) AS last_commit_time, "
        "(SELECT count(*) FROM _EMULATOR_ERRORS) AS errors_kept",
        table,
    )
    spool = Path(data_dir) / "spool"
    pending = len(list(spool.glob("*.meta.json"))) if spool.exists() else 0
    found = {"running": False, "table": table, **json.loads(rows[0])}
    return {**found, "spooled_not_landed": pending}
