"""Control queries read the emulator's tables and nothing else.

:func:`check_query` passes ONE statement that DuckDB's own parser calls a SELECT (with
WITH, UNION, VALUES, DESCRIBE, SHOW and SUMMARIZE), or ``EXPLAIN`` of one, and refuses
everything else with a reason:

- any other statement (DELETE, CREATE, COPY, ATTACH, SET, INSTALL ...) and ``EXPLAIN
  ANALYZE``, which runs the statement it explains;
- table functions other than :data:`TABLE_FUNCTIONS` (``read_csv``, ``read_text``,
  ``glob``, ``query`` ...: they read files or run SQL given as text);
- a table name that is neither a table or view of the database nor a CTE in scope:
  DuckDB would scan a file of that name (``FROM 'x.csv'``) or a Python variable.

The tree is DuckDB's own (``json_serialize_sql``), so it is the statement that runs, not a
guess from another dialect. The caller runs the statement in a read-only transaction, on
a database whose file access is limited to the lander's work directory: three walls.

:func:`check_write` passes ONE write of the tables (the SQL API's: INSERT, UPDATE,
DELETE, MERGE, CREATE TABLE, ALTER TABLE, DROP TABLE/VIEW), typed by DuckDB's parser.
DuckDB cannot serialize a write's tree, so sqlglot's DuckDB reading of the same text
finds its parts: every SELECT in it passes :func:`check_query` (DuckDB's tree again),
every other table it reads (``USING``, ``FROM``, ``LIKE``) must be a table or view, and
the tables it writes must be neither a file nor one of the ``protected`` ones. A view is
refused: it would be read later, past these checks, and an unknown name in it would then
be scanned as a file.
"""

from __future__ import annotations

import json
import re
from typing import Any

import duckdb
import sqlglot
from sqlglot import exp

__all__ = [
    "TABLE_FUNCTIONS", "QueryRefused", "UnknownRelation", "check_query", "check_write",
    "is_query", "relations",
]  # fmt: skip

#: Table functions a control query may call: generators and the catalog's own views.
TABLE_FUNCTIONS = frozenset({"range", "generate_series", "unnest"})
_CATALOG_PREFIX = "duckdb_"
_EXPLAIN = re.compile(r"(?:\s+|--[^\n]*|/\*.*?\*/)*explain\s+(.*)", re.IGNORECASE | re.DOTALL)
_SELECT = duckdb.StatementType.SELECT


class QueryRefused(ValueError):
    """The statement is not a read-only query of the database; the message says why."""


class UnknownRelation(QueryRefused):
    """A name read that is neither a table or view of the database nor a CTE in scope."""

    def __init__(self, name: str) -> None:
        super().__init__(f"{name!r} is not a table or view of the emulator's database")
        self.name = name


def _one_statement(cur: duckdb.DuckDBPyConnection, sql: str) -> Any:
    statements = cur.extract_statements(sql)
    if len(statements) != 1:
        raise QueryRefused(f"send exactly one SQL statement, not {len(statements)}")
    return statements[0]


def _select_text(cur: duckdb.DuckDBPyConnection, sql: str) -> str:
    """The SELECT that ``sql`` runs (``sql`` itself, or what it EXPLAINs)."""
    statement = _one_statement(cur, sql)
    if statement.type == _SELECT:
        return statement.query
    if statement.type == duckdb.StatementType.EXPLAIN:
        m = _EXPLAIN.match(statement.query)
        try:
            inner = _one_statement(cur, m.group(1)) if m else None
        except duckdb.ParserException:
            inner = None
        if inner is None or inner.type != _SELECT:
            raise QueryRefused(
                "only EXPLAIN of a SELECT is allowed (EXPLAIN ANALYZE runs the statement)"
            )
        return inner.query
    raise QueryRefused(f"only SELECT queries are allowed here, not {statement.type.name}")


def relations(cur: duckdb.DuckDBPyConnection) -> set[str]:
    """Every table and view, by name, schema.name and database.schema.name (lower case)."""
    rows = cur.execute(
        "SELECT database_name, schema_name, table_name FROM duckdb_tables() "
        "UNION ALL SELECT database_name, schema_name, view_name FROM duckdb_views()"
    ).fetchall()
    known: set[str] = set()
    for db, schema, name in rows:
        known |= {name.lower(), f"{schema}.{name}".lower(), f"{db}.{schema}.{name}".lower()}
    return known


def _walk(node: Any, ctes: frozenset[str], known: set[str]) -> None:
    """Refuse a table function or table name in ``node`` that could reach past the tables."""
    if isinstance(node, list):
        for item in node:
            _walk(item, ctes, known)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    if kind == "TABLE_FUNCTION":
        name = str(node["function"].get("function_name", "")).lower()
        if name not in TABLE_FUNCTIONS and not name.startswith(_CATALOG_PREFIX):
            raise QueryRefused(
                f"table function {name}() is not allowed here (queries read only the "
                f"emulator's tables; allowed: {', '.join(sorted(TABLE_FUNCTIONS))}, duckdb_*)"
            )
    elif kind == "BASE_TABLE":
        parts = [str(node.get(k) or "") for k in ("catalog_name", "schema_name", "table_name")]
        name = ".".join(p for p in parts if p).lower()
        if name not in known and name not in ctes:
            raise UnknownRelation(name)
    entries = (node.get("cte_map") or {}).get("map") or []
    for i, entry in enumerate(entries):
        # A CTE sees itself (recursive) and the ones before it.
        seen = ctes | {str(e["key"]).lower() for e in entries[: i + 1]}
        _walk(entry["value"], seen, known)
    inner = ctes | {str(e["key"]).lower() for e in entries}
    for key, value in node.items():
        if key != "cte_map":
            _walk(value, inner, known)


def check_query(cur: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Raise :class:`QueryRefused` unless ``sql`` is one read-only query of the tables."""
    text = _select_text(cur, sql)
    (tree_json,) = cur.execute("SELECT json_serialize_sql(?)", [text]).fetchone()  # type: ignore[misc]
    tree = json.loads(tree_json)
    if tree.get("error"):
        raise QueryRefused(f"not a plain query: {tree.get('error_message')}")
    _walk(tree["statements"], frozenset(), relations(cur))


def is_query(cur: duckdb.DuckDBPyConnection, sql: str) -> bool:
    """Whether DuckDB's parser calls ``sql`` (one statement) a SELECT or an EXPLAIN."""
    return _one_statement(cur, sql).type in (_SELECT, duckdb.StatementType.EXPLAIN)


# --- writes ------------------------------------------------------------------------------

#: sqlglot's class of each write DuckDB's parser must agree on, and the kinds allowed.
_WRITES: dict[type[exp.Expression], tuple[str, tuple[str, ...]]] = {
    exp.Insert: ("INSERT", ()), exp.Update: ("UPDATE", ()), exp.Delete: ("DELETE", ()),
    exp.Merge: ("MERGE_INTO", ()), exp.Create: ("CREATE", ("TABLE",)),
    exp.Alter: ("ALTER", ("TABLE",)), exp.Drop: ("DROP", ("TABLE", "VIEW")),
}  # fmt: skip


def _table_name(node: exp.Table) -> str:
    return ".".join(p for p in (node.catalog, node.db, node.name) if p).lower()


def _write_parts(tree: exp.Expression) -> tuple[list[str], list[str], list[str]]:
    """``(SELECTs, tables read, tables written)`` of a write, as DuckDB SQL and names."""
    queries: list[str] = []
    reads: list[str] = []
    writes: list[str] = []
    this = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    targets = {id(t) for t in [this, *(tree.args.get("tables") or [])]}  # DROP a, b

    def visit(node: exp.Expression) -> None:
        for child in node.iter_expressions():
            if isinstance(child, exp.Query):
                while isinstance(child, exp.Subquery):
                    child = child.this
                queries.append(child.sql(dialect="duckdb"))
            elif isinstance(child, exp.Table):
                if isinstance(child.this, exp.Func):
                    name = child.this.sql(dialect="duckdb").split("(")[0].lower()
                    raise QueryRefused(f"table function {name}() is not allowed in a write")
                if not isinstance(child.this, exp.Identifier):  # FROM 'file.csv'
                    raise UnknownRelation(child.this.sql(dialect="duckdb"))
                written = id(child) in targets or isinstance(node, exp.AlterRename)
                (writes if written else reads).append(_table_name(child))
                visit(child)
            else:
                visit(child)

    visit(tree)
    return queries, reads, writes


def check_write(
    cur: duckdb.DuckDBPyConnection, sql: str, protected: frozenset[str] = frozenset()
) -> None:
    """Raise :class:`QueryRefused` unless ``sql`` is one write that reads only the tables
    and writes neither a file nor a ``protected`` table (lower-case names)."""
    kind = _one_statement(cur, sql).type.name
    try:
        parsed = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError:
        parsed = None
    tree = parsed if isinstance(parsed, exp.Expression) else None
    expected, kinds = _WRITES.get(type(tree), ("", ())) if tree else ("", ())
    what = f"{kind} {str(tree.args.get('kind') or '').upper()}".strip() if tree else kind
    if tree is None or expected != kind or (kinds and what.split()[-1] not in kinds):
        raise QueryRefused(
            f"{what} statements are not available here (writes: INSERT, UPDATE, DELETE, "
            "MERGE, CREATE TABLE, ALTER TABLE, DROP TABLE/VIEW)"
        )
    if tree.args.get("with"):
        raise QueryRefused("put the WITH inside the write's SELECT (INSERT INTO t WITH ...)")
    queries, reads, writes = _write_parts(tree)
    for query in queries:
        check_query(cur, query)
    known = relations(cur)
    for name in reads:
        if name not in known:
            raise UnknownRelation(name)
    for name in writes:
        if name.rsplit(".", 1)[-1] in protected:
            raise QueryRefused(f"{name!r} is the emulator's own bookkeeping: read it, not write it")
