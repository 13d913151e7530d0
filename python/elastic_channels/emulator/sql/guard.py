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
no table it writes may be a file. A view is refused: it would be read later, past these
checks, and an unknown name in it would then be scanned as a file.

Neither check lets a statement write the emulator's own relations (``bookkeeping.py``):
:func:`check_not_own` finds every relation a statement would change (its targets, a
rename's new name, a foreign key's table: any it does not only read) and refuses with
:class:`OwnRelationWrite`, which names the relation, before anything else is said of it.
"""

from __future__ import annotations

import json
import re
from typing import Any, NoReturn

import duckdb
import sqlglot
from sqlglot import exp

from .bookkeeping import OwnRelations, own_relations

__all__ = [
    "TABLE_FUNCTIONS", "OwnRelationWrite", "QueryRefused", "UnknownRelation",
    "affected_tables", "check_not_own", "check_query", "check_write", "is_query",
    "relations",
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


class OwnRelationWrite(QueryRefused):
    """A statement that would write one of the emulator's own relations (``name``)."""

    def __init__(self, name: str, why: str) -> None:
        super().__init__(why)
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
            explained = re.sub(r"(?is)^\s*analyze\s+", "", m.group(1)) if m else ""
            _refuse(
                cur, explained,
                "only EXPLAIN of a SELECT is allowed (EXPLAIN ANALYZE runs the statement)",
            )  # fmt: skip
        return inner.query
    _refuse(cur, sql, f"only SELECT queries are allowed here, not {statement.type.name}")


def _refuse(cur: duckdb.DuckDBPyConnection, sql: str, reason: str) -> NoReturn:
    """Refuse a statement that is no query, naming the emulator relation it would write
    (if any) before ``reason``."""
    try:
        check_not_own(_duckdb_tree(sql), own_relations(cur))
    except OwnRelationWrite as e:
        raise OwnRelationWrite(e.name, f"{e}; {reason}") from None
    raise QueryRefused(reason)


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


# --- the emulator's own relations ---------------------------------------------------------


def _duckdb_tree(sql: str) -> exp.Expression | None:
    """sqlglot's DuckDB reading of ``sql`` (one statement), or None if it has none."""
    try:
        parsed = sqlglot.parse_one(sql, read="duckdb")
    except (sqlglot.errors.SqlglotError, RecursionError, ValueError):
        return None
    return parsed if isinstance(parsed, exp.Expression) else None


def _only_read(table: exp.Table) -> bool:
    """Whether ``table`` is in a place a statement only reads from: a query, a FROM or
    JOIN, DELETE ... USING, MERGE ... USING, CREATE TABLE ... LIKE, COPY ... TO."""
    node = table
    while node.parent is not None:
        parent: Any = node.parent
        if isinstance(parent, (exp.Query, exp.From, exp.Join, exp.LikeProperty, exp.Describe)):
            return True
        if node.arg_key == "using" and isinstance(parent, (exp.Delete, exp.Merge)):
            return True
        if isinstance(parent, exp.Copy) and (node.arg_key == "files" or not parent.args["kind"]):
            return True  # COPY t TO ... reads t; COPY INTO t FROM f reads f
        node = parent
    return False


_EXPLAINED = re.compile(r"^\s*ANALYZE\s+", re.IGNORECASE)


def affected_tables(tree: exp.Expression) -> list[str]:
    """The relations a statement would change (or hold, by a foreign key): every table it
    names outside the places it only reads from; for ``EXPLAIN [ANALYZE]``, what the
    statement it explains would change."""
    if isinstance(tree, exp.Command):
        if str(tree.this).upper() != "EXPLAIN" or not isinstance(tree.expression, exp.Literal):
            return []
        explained = _EXPLAINED.sub("", tree.expression.name)
        try:
            inner = sqlglot.parse_one(explained, read="snowflake")
        except (sqlglot.errors.SqlglotError, RecursionError, ValueError):
            return []
        return affected_tables(inner) if isinstance(inner, exp.Expression) else []
    if isinstance(tree, exp.Show):
        return []
    return [_table_name(t) for t in tree.find_all(exp.Table) if not _only_read(t)]


def _created_if_absent(tree: exp.Expression) -> str | None:
    """The relation a ``CREATE ... IF NOT EXISTS`` makes (a no-op when it is there)."""
    if not isinstance(tree, exp.Create) or not tree.args.get("exists"):
        return None
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    return _table_name(target) if isinstance(target, exp.Table) else None


def check_not_own(tree: exp.Expression | None, own: OwnRelations) -> None:
    """Raise :class:`OwnRelationWrite` if ``tree`` would change an emulator relation.
    ``CREATE ... IF NOT EXISTS`` of one that is there changes nothing (``setup``'s SQL
    creates the landing table so on both targets)."""
    if tree is None:
        return
    unchanged = _created_if_absent(tree)
    for name in affected_tables(tree):
        if name == unchanged and own.exists(name):
            continue
        why = own.why(name)
        if why is not None:
            raise OwnRelationWrite(name.rsplit(".", 1)[-1].upper(), why)


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


def check_write(cur: duckdb.DuckDBPyConnection, sql: str, own: OwnRelations | None = None) -> None:
    """Raise :class:`QueryRefused` unless ``sql`` is one write that reads only the tables
    and writes neither a file nor one of the emulator's own relations (``own``, by
    default read from the database)."""
    kind = _one_statement(cur, sql).type.name
    tree = _duckdb_tree(sql)
    check_not_own(tree, own if own is not None else own_relations(cur))
    expected, kinds = _WRITES.get(type(tree), ("", ())) if tree else ("", ())
    what = f"{kind} {str(tree.args.get('kind') or '').upper()}".strip() if tree else kind
    if tree is None or expected != kind or (kinds and what.split()[-1] not in kinds):
        raise QueryRefused(
            f"{what} statements are not available here (writes: INSERT, UPDATE, DELETE, "
            "MERGE, CREATE TABLE, ALTER TABLE, DROP TABLE/VIEW)"
        )
    if tree.args.get("with"):
        raise QueryRefused("put the WITH inside the write's SELECT (INSERT INTO t WITH ...)")
    queries, reads, _ = _write_parts(tree)
    for query in queries:
        check_query(cur, query)
    known = relations(cur)
    for name in reads:
        if name not in known:
            raise UnknownRelation(name)
