"""Snowflake's SQL API (``POST /api/v2/statements``) over the emulator's DuckDB database.

:func:`handle_statement` takes the request's JSON body and answers with the HTTP status
and the documented response: a ResultSet (``resultSetMetaData`` with ``rowType``,
``format: "jsonv2"``, ``partitionInfo``; ``data`` as rows of strings; ``code``
``090001``, ``statementHandle`` ...) or an error object (``code``, ``message``,
``sqlState``). The caller (the HTTP route) has authenticated the request (key-pair JWT,
as for the streaming endpoints); nothing here looks at headers.

The statement is Snowflake SQL, translated to DuckDB by ``sqlglot``:

- ``METADATA$ROW_LAST_COMMIT_TIME`` is the emulator's commit-time column
  (:data:`~.schema.COMMIT_TIME_COLUMN`): every emulated landing table has row
  timestamps, so ``ROW_TIMESTAMP = TRUE`` in a CREATE TABLE is accepted and
  ``ALTER TABLE ... SET ROW_TIMESTAMP = TRUE`` succeeds without changing anything.
- ``CREATE DATABASE``, ``CREATE SCHEMA`` and ``CREATE PIPE`` succeed without doing
  anything (the emulator serves one database, schema and pipe), so ``setup``'s SQL runs
  on both targets.
- ``VARIANT``/``OBJECT``/``ARRAY`` columns are DuckDB ``JSON``; ``db.schema.table``
  names lose their database and schema (the emulator has one of each; the request's
  ``database`` and ``schema`` fields are accepted and not needed).
- ``?`` bind variables take ``bindings`` (``{"1": {"type": "TEXT", "value": "..."}}``;
  types FIXED, REAL, TEXT, BOOLEAN, DATE and TIMESTAMP_* given as text).

Every statement passes the control plane's guard (``query_guard.py``) before it runs,
on DuckDB's own parse of the translated text. A query (SELECT, WITH, UNION, SHOW,
DESCRIBE) reads only the database's tables, views and CTEs, with no table function that
reads files or runs SQL (``read_csv``, ``glob``, ``FROM 'x.csv'`` ... are refused), and
runs on the read connection inside a read-only transaction. A write (INSERT, UPDATE,
DELETE, MERGE, CREATE TABLE, ALTER TABLE, DROP) runs on the write connection once every
SELECT in it passes the same guard and every other table it reads is a table; it may
not write the emulator's bookkeeping (``_EMULATOR_*``). Everything else is refused:
statements that would reach past the tables (COPY, ATTACH, EXPORT, INSTALL, LOAD, SET,
USE, PRAGMA, EXPLAIN ANALYZE ...), views (read later, past the checks), and statements
that span requests (BEGIN, COMMIT). One statement per request (Snowflake's default
``MULTI_STATEMENT_COUNT`` of 1); the result is returned in one partition.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
import time
import uuid
from collections.abc import Callable
from typing import Any

import sqlglot
from sqlglot import exp

from ..storage.schema import COMMIT_TIME_COLUMN

__all__ = ["SqlApiError", "handle_statement", "statements_route", "translate"]

ROW_TIMESTAMP_COLUMN = "METADATA$ROW_LAST_COMMIT_TIME"
_QUERIES = (exp.Query, exp.Show, exp.Describe)
#: Statements that would reach past the tables (files, extensions, other databases,
#: settings) or span requests (transactions): refused.
_REFUSED = (
    exp.Command, exp.Copy, exp.Pragma, exp.Set, exp.Attach, exp.Detach, exp.Install,
    exp.Export, exp.LoadData, exp.Use, exp.Transaction, exp.Commit, exp.Rollback, exp.Grant,
)  # fmt: skip
_JSON_TYPES = {exp.DataType.Type.VARIANT, exp.DataType.Type.OBJECT, exp.DataType.Type.ARRAY}
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_CREATE_PIPE = re.compile(r"\s*CREATE\s+(OR\s+REPLACE\s+)?PIPE\b", re.I)


class SqlApiError(Exception):
    """A request the API refuses: HTTP status, Snowflake error code, SQL state, message."""

    def __init__(self, status: int, code: str, sql_state: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.sql_state, self.message = status, code, sql_state, message


def _compile_error(message: str) -> SqlApiError:
    return SqlApiError(422, "001003", "42000", f"SQL compilation error: {message}")


# --- translation ---------------------------------------------------------------------


def _rewrite(node: exp.Expression) -> exp.Expression | None:
    if isinstance(node, exp.Column) and node.name.upper() == ROW_TIMESTAMP_COLUMN:
        return exp.column(COMMIT_TIME_COLUMN, table=node.table or None, quoted=True)
    if isinstance(node, exp.DataType) and node.this in _JSON_TYPES:
        return exp.DataType.build("JSON")
    if isinstance(node, exp.Table):
        if node.db.upper() == "INFORMATION_SCHEMA":
            node.set("catalog", None)  # DuckDB has one, as Snowflake has one per database
        else:
            node.set("db", None)
            node.set("catalog", None)
    if isinstance(node, exp.Property) and node.name.upper() == "ROW_TIMESTAMP":
        return None  # the emulator's landing tables always keep commit times
    return node


def _is_row_timestamp_alter(tree: exp.Expression) -> bool:
    if not isinstance(tree, exp.Alter):
        return False
    actions = tree.args.get("actions") or []
    props = [p for a in actions if isinstance(a, exp.AlterSet) for p in a.find_all(exp.Property)]
    return (
        bool(props)
        and len(props) == len(actions)
        and all(p.name.upper() == "ROW_TIMESTAMP" for p in props)
    )


def _is_namespace(tree: exp.Expression) -> bool:
    """CREATE DATABASE/SCHEMA: the emulator has its one database and schema."""
    kind = str(tree.args.get("kind", "")).upper() if isinstance(tree, exp.Create) else ""
    return kind in ("DATABASE", "SCHEMA")


def translate(statement: str) -> tuple[str | None, bool, int]:
    """``(DuckDB SQL or None for a no-op, is_query, bind variables)`` for one Snowflake
    statement."""
    if _CREATE_PIPE.match(statement):  # not parsed: sqlglot has no CREATE PIPE
        return None, False, 0
    try:
        trees = [t for t in sqlglot.parse(statement, read="snowflake") if t is not None]
    except sqlglot.errors.ParseError as e:
        raise _compile_error(str(e).splitlines()[0]) from None
    if not trees:
        raise _compile_error("empty SQL statement")
    if len(trees) > 1:
        raise SqlApiError(
            422, "000008", "0A000",
            f"Actual statement count {len(trees)} did not match the desired statement "
            "count 1.",
        )  # fmt: skip
    tree: exp.Expression = trees[0]  # type: ignore[assignment]
    if _is_row_timestamp_alter(tree) or _is_namespace(tree):
        return None, False, 0
    if isinstance(tree, _REFUSED):
        raise _compile_error(
            f"{type(tree).__name__.upper()} statements are not available through this API: "
            f"{statement.strip()[:80]!r}"
        )
    tree = tree.transform(_rewrite)  # type: ignore[assignment]
    n_params = sum(1 for _ in tree.find_all(exp.Placeholder))
    return tree.sql(dialect="duckdb"), isinstance(tree, _QUERIES), n_params


# --- bindings --------------------------------------------------------------------------


def _binding(key: str, b: Any) -> Any:
    if not isinstance(b, dict) or "type" not in b or "value" not in b:
        raise SqlApiError(
            400, "391903", "22000", f"binding {key!r} must be an object with 'type' and 'value'"
        )
    kind, value = str(b["type"]).upper(), b["value"]
    if value is None:
        return None
    if isinstance(value, list):
        raise SqlApiError(400, "391903", "22000", f"binding {key!r}: array binds are not supported")
    try:
        if kind == "FIXED":
            text = str(value)
            return int(text) if text.lstrip("-").isdigit() else decimal.Decimal(text)
        if kind == "REAL":
            return float(value)
        if kind == "BOOLEAN":
            return str(value).lower() in ("true", "1")
        if kind in ("TEXT", "DATE", "TIME") or kind.startswith("TIMESTAMP"):
            return str(value)
    except (ValueError, decimal.InvalidOperation):
        raise SqlApiError(
            400, "391903", "22000", f"binding {key!r}: {value!r} is not a valid {kind}"
        ) from None
    raise SqlApiError(400, "391903", "22000", f"binding {key!r}: unsupported type {kind!r}")


def _bindings(raw: Any, count: int) -> list[Any]:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise SqlApiError(400, "391903", "22000", "'bindings' must be an object")
    keys = sorted(raw, key=lambda k: int(k) if str(k).isdigit() else -1)
    if keys != [str(i) for i in range(1, len(keys) + 1)]:
        raise SqlApiError(400, "391903", "22000", "'bindings' keys must be '1', '2', ... in full")
    if len(keys) != count:
        raise SqlApiError(
            422, "002049", "42601",
            f"SQL compilation error: {count} bind variable(s) in the statement, "
            f"{len(keys)} binding(s) given",
        )  # fmt: skip
    return [_binding(k, raw[k]) for k in keys]


# --- results ---------------------------------------------------------------------------


def _column_type(name: str, duck_type: str) -> dict[str, Any]:
    t = duck_type.upper()
    col: dict[str, Any] = {"name": name, "nullable": True}
    if t.startswith("DECIMAL"):
        p, s = (int(x) for x in t[t.index("(") + 1 : -1].split(","))
        return {**col, "type": "FIXED", "precision": p, "scale": s}
    if t in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
             "UINTEGER", "UBIGINT"):  # fmt: skip
        return {**col, "type": "FIXED", "precision": 38, "scale": 0}
    if t in ("DOUBLE", "FLOAT", "REAL"):
        return {**col, "type": "REAL"}
    if t == "BOOLEAN":
        return {**col, "type": "BOOLEAN"}
    if t == "DATE":
        return {**col, "type": "DATE"}
    if t == "TIMESTAMP WITH TIME ZONE":
        return {**col, "type": "TIMESTAMP_TZ", "scale": 9}
    if t.startswith("TIMESTAMP"):
        return {**col, "type": "TIMESTAMP_NTZ", "scale": 9}
    if t == "JSON":
        return {**col, "type": "VARIANT"}
    return {**col, "type": "TEXT", "length": 16777216}


def _epoch_text(value: dt.datetime) -> str:
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    us = (value - _EPOCH) // dt.timedelta(microseconds=1)
    return f"{us // 1_000_000}.{us % 1_000_000:06d}000"


def _cell(value: Any, kind: str) -> str | None:
    """One value as the SQL API's jsonv2 writes it (always text, or null)."""
    if value is None:
        return None
    if kind == "BOOLEAN":
        return "true" if value else "false"
    if kind == "TIMESTAMP_TZ":  # seconds since the epoch, then the offset in minutes + 1440
        offset = value.utcoffset() or dt.timedelta(0)
        return f"{_epoch_text(value)} {int(offset.total_seconds() // 60) + 1440}"
    if kind == "TIMESTAMP_NTZ":
        return _epoch_text(value)
    if kind == "DATE":
        return str((value - dt.date(1970, 1, 1)).days)
    if kind == "REAL":
        return repr(float(value))
    return str(value)


def _result(columns: list[dict[str, Any]], rows: list[tuple[Any, ...]]) -> dict[str, Any]:
    kinds = [c["type"] for c in columns]
    data = [[_cell(row[i], k) for i, k in enumerate(kinds)] for row in rows]
    handle = str(uuid.uuid4())
    return {
        "resultSetMetaData": {
            "numRows": len(data),
            "format": "jsonv2",
            "partitionInfo": [{"rowCount": len(data), "uncompressedSize": len(str(data))}],
            "rowType": columns,
        },
        "data": data,
        "code": "090001",
        "statementStatusUrl": f"/api/v2/statements/{handle}",
        "requestId": str(uuid.uuid4()),
        "sqlState": "00000",
        "statementHandle": handle,
        "message": "Statement executed successfully.",
        "createdOn": int(time.time() * 1000),
    }


def _status_only() -> dict[str, Any]:
    return _result(
        [{"name": "status", "type": "TEXT", "nullable": True}],
        [("Statement executed successfully.",)],
    )


def _error(e: SqlApiError) -> tuple[int, dict[str, Any]]:
    return e.status, {
        "code": e.code,
        "message": e.message,
        "sqlState": e.sql_state,
        "statementHandle": str(uuid.uuid4()),
    }


# --- the handler -------------------------------------------------------------------------


def handle_statement(body: Any, write_con: Any, read_con: Any = None) -> tuple[int, dict]:
    """Run one ``POST /api/v2/statements`` request body on DuckDB connections.

    ``write_con`` is the emulator's read-write connection (writes run on a cursor of
    it); ``read_con`` the one for queries (default: a cursor of ``write_con``), in a
    read-only transaction either way. Returns ``(HTTP status, response body)``."""
    try:
        if not isinstance(body, dict):
            raise SqlApiError(400, "391900", "22000", "the request body must be a JSON object")
        statement = body.get("statement")
        if not isinstance(statement, str) or not statement.strip():
            raise SqlApiError(400, "391900", "22000", "'statement' (SQL text) is required")
        sql, _, n_params = translate(statement)
        if sql is None:
            return 200, _status_only()
        params = _bindings(body.get("bindings"), n_params)
        return 200, _execute(sql, params, write_con, read_con)
    except SqlApiError as e:
        return _error(e)


def _execute(sql: str, params: list[Any], write_con: Any, read_con: Any) -> dict:
    import duckdb

    from ..storage.store import ERRORS_TABLE, LANDED_TABLE
    from . import guard

    bookkeeping = frozenset({ERRORS_TABLE.lower(), LANDED_TABLE.lower()})  # never written
    cur = write_con.cursor()
    try:
        is_query = guard.is_query(cur, sql)
        if is_query and read_con is not None:
            cur.close()
            cur = read_con.cursor()
        if is_query:
            guard.check_query(cur, sql)
            cur.execute("BEGIN TRANSACTION READ ONLY")
        else:
            guard.check_write(cur, sql, bookkeeping)
        try:
            cur.execute(sql, params or None)
            description = cur.description
            rows = cur.fetchall() if description is not None else []
        finally:
            if is_query:
                cur.execute("ROLLBACK")
    except guard.UnknownRelation as e:
        raise SqlApiError(
            422, "002003", "42S02",
            f"SQL compilation error:\nObject '{e.name.upper()}' does not exist or not authorized.",
        ) from None  # fmt: skip
    except guard.QueryRefused as e:
        raise _compile_error(str(e)) from None
    except duckdb.CatalogException as e:
        raise SqlApiError(422, "002003", "42S02", f"SQL compilation error: {e}") from None
    except (duckdb.ParserException, duckdb.BinderException) as e:
        raise SqlApiError(422, "001003", "42000", f"SQL compilation error: {e}") from None
    except duckdb.Error as e:
        raise SqlApiError(422, "100038", "22000", f"{type(e).__name__}: {e}") from None
    finally:
        cur.close()
    if description is None:
        return _status_only()
    columns = [_column_type(d[0], str(d[1])) for d in description]
    if not is_query and [c["name"] for c in columns] == ["Count"]:
        if not rows:  # DDL
            return _status_only()
        columns = [{"name": "number of rows affected", "type": "FIXED", "precision": 38,
                    "scale": 0, "nullable": False}]  # fmt: skip
    return _result(columns, rows)


# --- the route ---------------------------------------------------------------------------


def statements_route(connection: Callable[[], Any]) -> Any:
    """The emulator's ``POST /api/v2/statements`` route (key-pair JWT, JSON body), on the
    DuckDB connection ``connection()`` returns when a request comes (the store's, once
    the emulator has started): ``EmulatorConfig(extra_routes=[statements_route(...)])``."""
    import json

    from ..http.access import Auth
    from ..http.errors import Reply
    from ..http.routes import Request, Route

    def statements(request: Request) -> Reply:
        try:
            body = json.loads(request.body or b"null")
        except ValueError as e:
            status, reply = _error(SqlApiError(400, "391900", "22000", f"malformed JSON: {e}"))
        else:
            status, reply = handle_statement(body, connection())
        reply.setdefault("requestId", request.request_id)
        return Reply(status, json.dumps(reply).encode())

    return Route(
        "POST", r"/api/v2/statements", "sql_statements", Auth.KEYPAIR, statements,
        content_types=("application/json",),
    )  # fmt: skip
