"""One SQL client for both targets: Snowflake's SQL API (``POST /api/v2/statements``).

On an account it talks to ``https://<account>.snowflakecomputing.com`` with a key-pair
JWT; against the emulator, the same requests go to the emulator's URL (its CA trusted,
its user's key), also from a monitor in the emulator's own process (tests may call the
handler without a socket: :func:`local_transport`). Only the transport differs; the
request body, the result decoding, the errors are this code.

Results follow the documented ``jsonv2`` shape: ``resultSetMetaData.rowType`` names and
types each column, ``data`` holds every value as text (or null), a result larger than
one partition is fetched partition by partition, and a statement still running after
the server's wait (HTTP 202) is polled on its ``statementStatusUrl``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import ssl
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = [
    "Result",
    "SqlApiClient",
    "SqlClient",
    "SqlError",
    "SqlUnreachable",
    "TypedNull",
    "http_transport",
    "local_transport",
]

#: (method, path with query, JSON body or None) -> (HTTP status, JSON body)
Transport = Callable[[str, str, Any], "tuple[int, Any]"]


class SqlError(Exception):
    """A statement failed; the message has the server's code and words, ``status`` the
    HTTP status it was answered with (None: no answer, or none that says)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class SqlUnreachable(SqlError):
    """No answer at all: the server is down, the address wrong, the network cut. Not a
    statement's failure, so never read as one (a missing table, a refused role)."""


@dataclass
class Result:
    columns: list[str]
    rows: list[tuple[Any, ...]]

    def dicts(self) -> list[dict[str, Any]]:
        return [{c: r[i] for i, c in enumerate(self.columns)} for r in self.rows]


class SqlClient(Protocol):
    def execute(self, statement: str, params: Sequence[Any] = ()) -> Result: ...


# --- values --------------------------------------------------------------------------


@dataclass(frozen=True)
class TypedNull:
    """A NULL bound with a SQL API type (FIXED, REAL, BOOLEAN, TEXT), so every row of a
    multi-row VALUES list gives a column the same type."""

    kind: str = "TEXT"

    @classmethod
    def of(cls, sf_type: str) -> TypedNull:
        """The NULL of a column of Snowflake type ``sf_type`` (``NUMBER(19,0)``...)."""
        t = sf_type.upper()
        if t.startswith("NUMBER"):
            return cls("FIXED")
        return cls({"FLOAT": "REAL", "BOOLEAN": "BOOLEAN"}.get(t, "TEXT"))


def _binding(value: Any) -> dict[str, Any]:
    """A Python value as a SQL API binding (timestamps go as ISO text: CAST them)."""
    if value is None:
        return {"type": "TEXT", "value": None}
    if isinstance(value, TypedNull):
        return {"type": value.kind, "value": None}
    if isinstance(value, bool):
        return {"type": "BOOLEAN", "value": "true" if value else "false"}
    if isinstance(value, int):
        return {"type": "FIXED", "value": str(value)}
    if isinstance(value, float):
        return {"type": "REAL", "value": repr(value)}
    if isinstance(value, dt.datetime):
        return {"type": "TEXT", "value": value.isoformat()}
    if isinstance(value, str):
        return {"type": "TEXT", "value": value}
    raise TypeError(f"cannot bind a {type(value).__name__} ({value!r})")


def _epoch(text: str) -> dt.datetime:
    secs, _, frac = text.partition(".")
    us = int(secs) * 1_000_000 + (int(frac[:6].ljust(6, "0")) if frac else 0)
    return dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=us)


def decode_value(text: str | None, col: dict[str, Any]) -> Any:
    """One jsonv2 cell as a Python value, by its ``rowType`` entry."""
    if text is None:
        return None
    kind = str(col.get("type", "TEXT")).upper()
    if kind in ("FIXED", "NUMBER"):
        return int(text) if not col.get("scale") else decimal.Decimal(text)
    if kind == "REAL":
        return float(text)
    if kind == "BOOLEAN":
        return text.lower() == "true"
    if kind == "TIMESTAMP_TZ":
        stamp, _, offset = text.partition(" ")
        tz = dt.timezone(dt.timedelta(minutes=int(offset) - 1440)) if offset else dt.timezone.utc
        return _epoch(stamp).astimezone(tz)
    if kind in ("TIMESTAMP_LTZ", "TIMESTAMP_NTZ"):
        value = _epoch(text)
        return value if kind == "TIMESTAMP_LTZ" else value.replace(tzinfo=None)
    if kind == "DATE":
        return dt.date(1970, 1, 1) + dt.timedelta(days=int(text))
    if kind in ("VARIANT", "OBJECT", "ARRAY"):
        return json.loads(text)
    return text


# --- the client ------------------------------------------------------------------------


class SqlApiClient:
    """Runs statements through the SQL API on ``transport``; bind with ``?``."""

    def __init__(
        self,
        transport: Transport,
        *,
        database: str | None = None,
        schema: str | None = None,
        warehouse: str | None = None,
        role: str | None = None,
        timeout_s: int = 60,
        poll_s: float = 0.5,
    ) -> None:
        self._transport = transport
        self._context = {
            k: v
            for k, v in (
                ("database", database), ("schema", schema),
                ("warehouse", warehouse), ("role", role),
            )
            if v
        }  # fmt: skip
        self.timeout_s = timeout_s
        self._poll_s = poll_s

    def execute(self, statement: str, params: Sequence[Any] = ()) -> Result:
        body: dict[str, Any] = {"statement": statement, "timeout": self.timeout_s, **self._context}
        if params:
            body["bindings"] = {str(i): _binding(v) for i, v in enumerate(params, 1)}
        status, reply = self._transport(
            "POST", f"/api/v2/statements?requestId={uuid.uuid4()}", body
        )
        deadline = time.monotonic() + self.timeout_s + 30
        while status == 202:  # still running: poll its status URL
            if time.monotonic() > deadline:
                raise SqlError(
                    f"statement still running after {self.timeout_s} s: {statement[:80]}"
                )
            time.sleep(self._poll_s)
            status, reply = self._transport("GET", self._status_url(reply), None)
        if status != 200 or not isinstance(reply, dict) or "resultSetMetaData" not in reply:
            raise SqlError(_error_text(status, reply, statement), status)
        return self._result(reply)

    @staticmethod
    def _status_url(reply: Any) -> str:
        if isinstance(reply, dict) and reply.get("statementStatusUrl"):
            return str(reply["statementStatusUrl"])
        if isinstance(reply, dict) and reply.get("statementHandle"):
            return f"/api/v2/statements/{reply['statementHandle']}"
        raise SqlError(f"HTTP 202 without a statement handle: {str(reply)[:200]}")

    def _result(self, reply: dict[str, Any]) -> Result:
        meta = reply["resultSetMetaData"]
        row_type = meta.get("rowType") or []
        data = list(reply.get("data") or [])
        for i in range(1, len(meta.get("partitionInfo") or [])):
            url = f"/api/v2/statements/{reply['statementHandle']}?partition={i}"
            status, part = self._transport("GET", url, None)
            if status != 200 or not isinstance(part, dict):
                raise SqlError(_error_text(status, part, f"partition {i}"), status)
            data += part.get("data") or []
        rows = [tuple(decode_value(r[i], c) for i, c in enumerate(row_type)) for r in data]
        return Result([str(c.get("name")) for c in row_type], rows)


def _error_text(status: int, reply: Any, what: str) -> str:
    if isinstance(reply, dict) and "message" in reply:
        return f"HTTP {status} (code {reply.get('code')}): {reply['message']} [{what[:80]}]"
    return f"HTTP {status}: {str(reply)[:300]} [{what[:80]}]"


# --- transports ------------------------------------------------------------------------


def http_transport(
    base_url: str,
    token: Callable[[], str],
    *,
    cafile: str | None = None,
    timeout_s: float = 120.0,
) -> Transport:
    """HTTPS to ``base_url`` with a fresh key-pair JWT from ``token()`` per request."""
    ctx = ssl.create_default_context(cafile=cafile)
    base = base_url.rstrip("/")

    def send(method: str, path: str, body: Any) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(base + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        req.add_header("Accept", "application/json")
        req.add_header("User-Agent", "elastic-channels-monitor/0.1")
        req.add_header("Authorization", f"Bearer {token()}")
        req.add_header("X-Snowflake-Authorization-Token-Type", "KEYPAIR_JWT")
        try:
            with urllib.request.urlopen(req, context=ctx, timeout=timeout_s) as resp:
                return resp.status, _json(resp.read())
        except urllib.error.HTTPError as e:
            return e.code, _json(e.read())
        except (urllib.error.URLError, OSError) as e:
            raise SqlUnreachable(f"cannot reach {base}: {e}") from None

    return send


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return raw[:300].decode("utf-8", "replace")


def local_transport(write_con: Any, read_con: Any = None) -> Transport:
    """The emulator's handler on DuckDB connections: the same request bodies as over
    HTTP, without a socket or authentication. For tests of this client and the sink
    only; the monitor always goes through :func:`http_transport`."""
    from ..emulator.sql.api import handle_statement

    def send(method: str, path: str, body: Any) -> tuple[int, Any]:
        if method != "POST":
            raise SqlError(f"{method} {path}: the in-process API answers every POST at once")
        # Through JSON and back, as over the wire.
        return handle_statement(json.loads(json.dumps(body)), write_con, read_con)

    return send
