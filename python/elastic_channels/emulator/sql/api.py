"""Snowflake's SQL API (``POST /api/v2/statements``) over the emulator's DuckDB database.

:func:`handle_statement` takes the request's JSON body and answers with the HTTP status
and the documented response: a ResultSet (``resultSetMetaData`` with ``rowType``,
``format: "jsonv2"``, ``partitionInfo``; ``data`` as rows of strings; ``code``
``090001``, ``statementHandle`` ...) or an error object (``code``, ``message``,
``sqlState``). The caller (the HTTP route) has authenticated the request (key-pair JWT,
as for the streaming endpoints); nothing here looks at headers.

The statement is Snowflake SQL, translated to DuckDB by ``sqlglot`` (``translate.py``);
``?`` bind variables take ``bindings`` (``bindings.py``). Every statement passes the
control plane's guard (``guard.py``) before it runs, on DuckDB's own parse of the
translated text. A query (SELECT, WITH, UNION, SHOW, DESCRIBE) reads only the
database's tables, views and CTEs, with no table function that reads files or runs SQL
(``read_csv``, ``glob``, ``FROM 'x.csv'`` ... are refused), and runs on the read
connection inside a read-only transaction. A write (INSERT, UPDATE, DELETE, MERGE,
CREATE TABLE, ALTER TABLE, DROP) runs on the write connection once every SELECT in it
passes the same guard and every other table it reads is a table. No statement may write
the emulator's own relations (``bookkeeping.py``: every ``_EMULATOR_*`` table and the
landing table or view); it is refused with a 422 that names the relation. Everything
else is refused: statements that would reach past the tables (COPY, ATTACH, EXPORT,
INSTALL, LOAD, SET, USE, PRAGMA, EXPLAIN ANALYZE ...), views (read later, past the
checks), and statements that span requests (BEGIN, COMMIT). One statement per request
(Snowflake's default ``MULTI_STATEMENT_COUNT`` of 1).

Under load it behaves as a warehouse does: statements run on their own few threads
(``pool.py``), never on those that answer appends; the request's ``timeout`` (seconds,
at most :data:`MAX_TIMEOUT_S`, which is also the default and what ``0`` means) bounds
the statement from its arrival, and one not done by then is canceled and answered 408,
as Snowflake answers. Every statement is answered in its POST: where Snowflake would
answer 202 after 45 s and go on, the emulator has canceled it (408), and ``async=true``
is refused (400). The result comes in one partition of at most
:data:`~.results.MAX_RESULT_BYTES` of jsonv2 text; a larger one is refused (422).
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Callable
from typing import Any

from ..api.json_body import BadJson, decode_json
from .bindings import bindings
from .bookkeeping import OwnRelations, own_relations
from .errors import SqlApiError, bad_request
from .execute import Deadline, execute
from .pool import StatementPool
from .results import Answer
from .translate import translate
from .values_rows import collapse, expand

__all__ = [
    "MAX_TIMEOUT_S",
    "SqlApiError",
    "answer_statement",
    "handle_statement",
    "statements_route",
    "translate",
]

#: The longest a statement may take, and how long one that names no ``timeout`` may:
#: Snowflake answers 202 at 45 s and the emulator answers every statement in its POST.
MAX_TIMEOUT_S = 45
#: How much longer than its deadline an answer may take before the route gives up on it
#: (a statement DuckDB does not interrupt at once).
_GRACE_S = 15.0


def _timeout(body: dict[str, Any]) -> int:
    value = body.get("timeout", 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise bad_request(f"'timeout' must be a whole number of seconds, 0 or more; got {value!r}")
    return MAX_TIMEOUT_S if value == 0 else min(value, MAX_TIMEOUT_S)


def answer_statement(
    body: Any, write_con: Any, read_con: Any = None, received_at: float | None = None
) -> Answer:
    """The answer to one ``POST /api/v2/statements`` body, run on DuckDB connections.

    ``write_con`` is the emulator's read-write connection (writes run on a cursor of
    it); ``read_con`` the one for queries (default: a cursor of ``write_con``), in a
    read-only transaction either way. The statement's ``timeout`` counts from
    ``received_at`` (``time.monotonic()``; default now)."""
    start = time.monotonic() if received_at is None else received_at
    try:
        if not isinstance(body, dict):
            raise bad_request("the request body must be a JSON object")
        statement = body.get("statement")
        if not isinstance(statement, str) or not statement.strip():
            raise bad_request("'statement' (SQL text) is required")
        deadline = Deadline(_timeout(body), start)
        if deadline.left <= 0:
            raise deadline.timed_out()
        cur = write_con.cursor()
        try:
            own = own_relations(cur)
        finally:
            cur.close()
        sql, checked, n_params = _translated(statement, own)
        if sql is None:
            return Answer.status_only()
        params = bindings(body.get("bindings"), n_params)
        return execute(sql, params, write_con, read_con, deadline, checked=checked)
    except SqlApiError as e:
        return Answer.error(e)


#: The longest one-row statement remembered (64 of them at most: a few MB held).
_REMEMBERED_CHARS = 64 << 10


@functools.lru_cache(maxsize=64)
def _translate_once(statement: str, own: OwnRelations) -> tuple[str | None, bool, int]:
    """:func:`translate`, remembered: a client writing rows in batches sends the same
    one-row statement every time (a translation depends on nothing else)."""
    return translate(statement, own)


def _translated(statement: str, own: OwnRelations) -> tuple[str | None, str | None, int]:
    """``(DuckDB SQL, the one-row SQL the guard reads or None, bind variables)``: a run
    of ``VALUES`` tuples of bind variables is read once (``values_rows.py``); any
    trouble on that path (an error, a tuple not found) takes the full one, so errors
    read as before."""
    cut = collapse(statement)
    if cut is not None:
        try:
            remembered = len(cut.statement) <= _REMEMBERED_CHARS
            one, _, n_one = (_translate_once if remembered else translate)(cut.statement, own)
        except SqlApiError:
            one = None
        expanded = expand(one, n_one, cut) if one is not None else None
        if expanded is not None:
            return expanded[0], one, expanded[1]
    sql, _, n_params = translate(statement, own)
    return sql, None, n_params


def handle_statement(body: Any, write_con: Any, read_con: Any = None) -> tuple[int, dict[str, Any]]:
    """:func:`answer_statement` as ``(HTTP status, response body)``, in this thread."""
    answer = answer_statement(body, write_con, read_con)
    return answer.status, answer.to_dict()


def _decoded(raw: bytes) -> Any:
    try:
        return decode_json(raw or b"null", json.loads)
    except BadJson as e:
        raise bad_request(str(e)) from None


def statements_route(connection: Callable[[], Any], pool: StatementPool | None = None) -> Any:
    """The emulator's ``POST /api/v2/statements`` route (key-pair JWT, JSON body), on the
    DuckDB connection ``connection()`` returns when a request comes (the store's, once
    the emulator has started): ``EmulatorConfig(extra_routes=[statements_route(...)])``.
    Statements run on ``pool`` (default: a :class:`~.pool.StatementPool` of the route's
    own)."""
    from ..http.access import Auth
    from ..http.errors import Reply
    from ..http.routes import Request, Route

    statements_pool = pool or StatementPool()

    def run(raw: bytes, received_at: float) -> Answer:
        try:
            body = _decoded(raw)
        except SqlApiError as e:
            return Answer.error(e)
        return answer_statement(body, connection(), received_at=received_at)

    async def statements(request: Request) -> Reply:
        received_at = time.monotonic()
        try:
            if request.query.get("async", "").lower() == "true":
                raise bad_request(
                    "async=true is not served: the emulator answers every statement in its "
                    f"POST, within its timeout (at most {MAX_TIMEOUT_S} s), or cancels it (408)"
                )
            future = statements_pool.submit(run, request.body, received_at)
            answer = await asyncio.wait_for(asyncio.wrap_future(future), MAX_TIMEOUT_S + _GRACE_S)
        except SqlApiError as e:
            answer = Answer.error(e)
        except asyncio.TimeoutError:
            answer = Answer.error(Deadline(MAX_TIMEOUT_S, received_at).timed_out())
        return Reply(answer.status, answer.to_bytes(request.request_id))

    return Route(
        "POST", r"/api/v2/statements", "sql_statements", Auth.KEYPAIR, statements,
        content_types=("application/json",),
    )  # fmt: skip
