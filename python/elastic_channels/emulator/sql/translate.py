"""Snowflake SQL to DuckDB SQL, by ``sqlglot``: one statement, its bind variables counted.

- ``METADATA$ROW_LAST_COMMIT_TIME`` is the emulator's commit-time column
  (:data:`~..storage.schema.COMMIT_TIME_COLUMN`): every emulated landing table has row
  timestamps, so ``ROW_TIMESTAMP = TRUE`` in a CREATE TABLE is accepted and
  ``ALTER TABLE ... SET ROW_TIMESTAMP = TRUE`` succeeds without changing anything.
- ``CREATE DATABASE``, ``CREATE SCHEMA`` and ``CREATE PIPE`` succeed without doing
  anything (the emulator serves one database, schema and pipe), so ``setup``'s SQL runs
  on both targets.
- ``VARIANT``/``OBJECT``/``ARRAY`` columns are DuckDB ``JSON``; ``db.schema.table``
  names lose their database and schema (the emulator has one of each).
- A VARIANT path (``CONTEXT:page.url``, ``CONTEXT:page:url``) is DuckDB's JSON path
  (``CONTEXT -> '$.page.url'``), a JSON value as Snowflake's is a VARIANT; cast to text
  (``::string``, ``::varchar``) or compared with a string literal, it is the value's text
  (``->>``), as Snowflake's cast of a string VARIANT is its text, not its JSON; compared
  with a number, it is a DOUBLE.
  ``v[0]`` and ``v['key']`` are paths too (0-based, as Snowflake's), ``ARRAY_SIZE(v)``
  is ``json_array_length``; in arithmetic, ``SUM`` and ``AVG`` a path is a DOUBLE.

What cannot be read is refused before anything runs: a syntax error is a 422 (a
compilation error, as on Snowflake); a statement that would change one of the
emulator's own relations (``bookkeeping.py``) is a 422 that names it; a statement that
reaches past the tables (COPY, ATTACH, SET ...) is a 422; one sqlglot cannot translate
(``UNDROP``, ``IDENTIFIER('/etc/passwd')``, expressions nested past what its recursive
parser takes) is a 400 with a plain reason, never a 500 with sqlglot's internals.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp

from ..storage.schema import COMMIT_TIME_COLUMN
from .bookkeeping import OwnRelations
from .errors import SqlApiError, compile_error
from .guard import OwnRelationWrite, check_not_own

__all__ = ["ROW_TIMESTAMP_COLUMN", "translate", "variant_paths_to_duckdb"]

ROW_TIMESTAMP_COLUMN = "METADATA$ROW_LAST_COMMIT_TIME"
_QUERIES = (exp.Query, exp.Show, exp.Describe)
#: Statements that would reach past the tables (files, extensions, other databases,
#: settings) or span requests (transactions): refused.
_REFUSED = (
    exp.Command, exp.Copy, exp.Pragma, exp.Set, exp.Attach, exp.Detach, exp.Install,
    exp.Export, exp.LoadData, exp.Use, exp.Transaction, exp.Commit, exp.Rollback, exp.Grant,
)  # fmt: skip
_JSON_TYPES = {exp.DataType.Type.VARIANT, exp.DataType.Type.OBJECT, exp.DataType.Type.ARRAY}
_TEXT_TYPES = {
    exp.DataType.Type.VARCHAR, exp.DataType.Type.TEXT, exp.DataType.Type.CHAR,
    exp.DataType.Type.NVARCHAR, exp.DataType.Type.NCHAR,
}  # fmt: skip
#: Comparisons where a VARIANT path beside a string literal is read as text.
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like, exp.ILike)
#: Arithmetic, where a VARIANT path is read as a number.
_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div)
_CREATE_PIPE = re.compile(r"\s*CREATE\s+(OR\s+REPLACE\s+)?PIPE\b", re.I)
_CLASS_REPR = re.compile(r"<class '(?:[\w.]+\.)?(\w+)'>")
_UNSUPPORTED = re.compile(r"Unsupported expression type (\w+)")


def _untranslatable(reason: str) -> SqlApiError:
    return SqlApiError(400, "001003", "42000", f"SQL compilation error: {reason}")


def _plain(error: Exception) -> str:
    """sqlglot's message without its class names and terminal colours, first line."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(error)).strip().splitlines()
    return _CLASS_REPR.sub(r"\1", text[0] if text else type(error).__name__)


def _text(path: exp.Expression) -> exp.Expression:
    """A VARIANT path read as text (DuckDB's ``->>``), or ``path`` if it is not one."""
    if isinstance(path, exp.JSONExtract):
        return exp.JSONExtractScalar(this=path.this, expression=path.expression)
    return path


def _subscript(node: exp.Bracket) -> exp.Expression:
    """``v[0]``, ``v['key']``: a VARIANT's element or field (the emulator's only values
    with subscripts are VARIANT/ARRAY/OBJECT, DuckDB JSON), as a JSON path, 0-based as
    Snowflake's (DuckDB's list subscript, which sqlglot makes of it, counts from 1)."""
    (key,) = node.expressions
    part: exp.Expression
    if key.is_string:
        part = exp.JSONPathKey(this=key.name)
    elif key.is_int:
        part = exp.JSONPathSubscript(this=int(key.name))
    else:
        return node
    path = exp.JSONPath(expressions=[exp.JSONPathRoot(), part])
    return exp.JSONExtract(this=node.this, expression=path)


def _subscripts(tree: exp.Expression) -> exp.Expression:
    """Every ``v[...]`` as a JSON path, innermost first (so ``v['a']['b']`` nests)."""
    for node in reversed(list(tree.find_all(exp.Bracket, bfs=False))):
        if len(node.expressions) == 1:
            replaced = _subscript(node)
            if replaced is not node:
                if node is tree:
                    return replaced
                node.replace(replaced)
    return tree


def _number(path: exp.Expression) -> exp.Expression:
    """A VARIANT path where a number is wanted, as a DOUBLE (Snowflake casts it)."""
    if isinstance(path, exp.JSONExtract):
        return exp.cast(path, exp.DataType.build("DOUBLE"))
    return path


def _rewrite(node: exp.Expression) -> exp.Expression | None:
    if isinstance(node, _ARITHMETIC):
        node.set("this", _number(node.this))
        node.set("expression", _number(node.expression))
    if isinstance(node, (exp.Sum, exp.Avg)):
        node.set("this", _number(node.this))
    if isinstance(node, exp.ArraySize):  # of a VARIANT array
        return exp.Anonymous(this="JSON_ARRAY_LENGTH", expressions=[node.this])
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.JSONExtract):
        if node.to.this in _TEXT_TYPES:
            return _text(node.this)
    if isinstance(node, _COMPARISONS):
        for side, other in (("this", node.expression), ("expression", node.this)):
            if isinstance(other, exp.Literal):  # beside text, text; beside a number, one
                read = _text if other.is_string else _number
                node.set(side, read(node.args[side]))
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


def _parse(statement: str) -> exp.Expression:
    try:
        trees = [t for t in sqlglot.parse(statement, read="snowflake") if t is not None]
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError) as e:
        raise compile_error(_plain(e)) from None
    if not trees:
        raise compile_error("empty SQL statement")
    if len(trees) > 1:
        raise SqlApiError(
            422, "000008", "0A000",
            f"Actual statement count {len(trees)} did not match the desired statement "
            "count 1.",
        )  # fmt: skip
    return trees[0]  # type: ignore[return-value]


def _translate(statement: str, own: OwnRelations) -> tuple[str | None, bool, int]:
    tree = _parse(statement)
    if tree.find(exp.DynamicIdentifier):
        raise _untranslatable(
            "IDENTIFIER(...) is not available through this API: name the object itself"
        )
    if _is_row_timestamp_alter(tree) or _is_namespace(tree):
        return None, False, 0
    try:
        check_not_own(tree, own)
    except OwnRelationWrite as e:
        raise compile_error(str(e)) from None
    if isinstance(tree, _REFUSED):
        raise compile_error(
            f"{type(tree).__name__.upper()} statements are not available through this API: "
            f"{statement.strip()[:80]!r}"
        )
    tree = _subscripts(tree).transform(_rewrite)  # type: ignore[assignment]
    n_params = sum(1 for _ in tree.find_all(exp.Placeholder))
    return tree.sql(dialect="duckdb"), isinstance(tree, _QUERIES), n_params


def translate(statement: str, own: OwnRelations | None = None) -> tuple[str | None, bool, int]:
    """``(DuckDB SQL or None for a no-op, is_query, bind variables)`` for one Snowflake
    statement; :class:`~.errors.SqlApiError` (4xx) saying why not. ``own``: the
    database's own relations, besides every ``_EMULATOR_*`` name."""
    if _CREATE_PIPE.match(statement):  # not parsed: sqlglot has no CREATE PIPE
        return None, False, 0
    try:
        return _translate(statement, own or OwnRelations())
    except RecursionError:
        raise _untranslatable(
            "the statement nests expressions too deeply for the emulator to read"
        ) from None
    except (sqlglot.errors.SqlglotError, ValueError, TypeError, AttributeError) as e:
        unsupported = _UNSUPPORTED.search(str(e))
        if unsupported:
            what = unsupported.group(1).upper()
            raise _untranslatable(f"{what} statements are not available through this API") from None
        raise _untranslatable(
            f"the emulator cannot translate this statement to DuckDB ({_plain(e)})"
        ) from None


def variant_paths_to_duckdb(sql: str) -> str:
    """``sql`` (DuckDB's, as ``emulator query`` takes it) with Snowflake's VARIANT paths
    (``col:a.b``, which DuckDB would read as an alias) made DuckDB's: a statement that
    has one is read as Snowflake SQL and translated as the SQL API translates it; any
    other is returned as it is."""
    try:
        tree = sqlglot.parse_one(sql, read="snowflake")
    except (sqlglot.errors.SqlglotError, RecursionError, ValueError):
        return sql
    if not any(n.args.get("variant_extract") for n in tree.find_all(exp.JSONExtract)):
        return sql
    try:
        duck, _, _ = translate(sql)
    except SqlApiError:
        return sql
    return duck or sql
