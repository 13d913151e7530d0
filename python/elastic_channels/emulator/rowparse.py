"""The one typed parse path: every line of every request, cast by one rule per column type.

:func:`parse_sql` builds one DuckDB query over the lines of a batch of requests (a
relation, :data:`SOURCE`, of ``filename`` and ``_SRC`` = one line). Each non-blank line
becomes one row of the result with its file (``_FILE``), its text (``_SRC``), its typed
column values and ``_ERR``: NULL when the row lands, else why it does not.
Whether a row lands depends on that line alone. The rules (docs/EMULATOR.md has them as
a table) follow Snowflake's documented conversions for JSON into typed columns:

* A row is one JSON object whose keys are exactly the table's columns (any order; a key
  twice, an unknown key or a missing one is an error unless ``check_keys`` is off, when
  unknown and duplicated keys are ignored). ``null`` is refused: every column is NOT NULL.
* NUMBER(p,s): a JSON number, or a string holding a numeric literal (blanks around it
  allowed), rounded half away from zero to ``s`` decimals; it must then fit ``p`` digits.
  ``true``/``false``, objects and arrays are refused.
* VARCHAR(n): a string as is; a number or ``true``/``false`` as its JSON text (Snowflake
  converts them); at most ``n`` characters. Objects and arrays are refused.
* TIMESTAMP_TZ / TIMESTAMP_NTZ / TIMESTAMP_LTZ: an ISO-8601 string (date, optional time
  with up to 9 fractional digits, optional ``Z`` or ``+hh:mm`` offset; no offset is UTC),
  or an integer (a number or a string of digits) counted from the epoch in seconds,
  milliseconds, microseconds or nanoseconds by its magnitude, as Snowflake reads
  integer-stored timestamps.
* BOOLEAN: ``true``/``false``; a number (0 is false); a string ``true/t/yes/y/on/1`` or
  ``false/f/no/n/off/0`` in any case.
* FLOAT/DOUBLE: a number or a numeric string. DATE: an ISO date string.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from .schema import column_type, quote_ident

__all__ = ["SOURCE", "parse_sql"]

#: Where :func:`parse_sql` reads lines from: a relation with ``filename`` and ``_SRC``.
SOURCE = "__SOURCE__"

_NUMERIC_START = "('-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9')"
_TRUE = "('true', 't', 'yes', 'y', 'on', '1')"
_FALSE = "('false', 'f', 'no', 'n', 'off', '0')"
# Integer-stored timestamps: the magnitude says the unit (Snowflake's AUTO rule).
_EPOCH = (
    "CASE WHEN abs({n}) < 31536000000 THEN make_timestamp({n} * 1000000) "
    "WHEN abs({n}) < 31536000000000 THEN make_timestamp({n} * 1000) "
    "WHEN abs({n}) < 31536000000000000 THEN make_timestamp({n}) "
    "ELSE make_timestamp({n} // 1000) END"
)


def _lit(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _value(frag: str, sf_type: str) -> tuple[str, str]:
    """(typed value expression, what the type accepts, for messages) for one column."""
    ct = column_type(sf_type)
    first = f"left({frag}, 1)"
    text = f"json_extract_string({frag}, '$')"
    is_str = f"{first} = '\"'"
    is_num = f"{first} IN {_NUMERIC_START}"
    duck = ct.duckdb
    if ct.precision is not None:
        p, s = ct.precision, ct.scale or 0
        dec = f"DECIMAL({p},{s})"
        expr = (
            f"CASE WHEN {is_num} THEN TRY_CAST({frag} AS {dec}) "
            f"WHEN {is_str} THEN TRY_CAST(trim({text}) AS {dec}) END"
        )
        return expr, f"a number or numeric string for NUMBER({p},{s})"
    if duck == "VARCHAR":
        expr = (
            f"CASE WHEN {is_str} THEN {text} "
            f"WHEN {is_num} OR {frag} IN ('true', 'false') THEN {frag} END"
        )
        if ct.length is not None:
            expr = f"CASE WHEN length(({expr})) <= {ct.length} THEN ({expr}) END"
            return expr, f"a string of at most {ct.length} characters"
        return expr, "a string, number or boolean"
    if duck in ("TIMESTAMPTZ", "TIMESTAMP"):
        digits = f"CASE WHEN {is_str} THEN trim({text}) ELSE {frag} END"
        as_int = (
            f"CASE WHEN regexp_full_match({digits}, '-?[0-9]+') "
            f"THEN TRY_CAST({digits} AS BIGINT) END"
        )
        epoch = _EPOCH.format(n=as_int)
        expr = (
            f"CASE WHEN {is_str} THEN coalesce(TRY_CAST({text} AS {duck}), ({epoch})::{duck}) "
            f"WHEN {is_num} THEN ({epoch})::{duck} END"
        )
        return expr, "an ISO-8601 timestamp string or an integer epoch"
    if duck == "BOOLEAN":
        low = f"lower(trim({text}))"
        expr = (
            f"CASE WHEN {frag} = 'true' THEN true WHEN {frag} = 'false' THEN false "
            f"WHEN {is_num} THEN TRY_CAST({frag} AS DOUBLE) <> 0 "
            f"WHEN {is_str} AND {low} IN {_TRUE} THEN true "
            f"WHEN {is_str} AND {low} IN {_FALSE} THEN false END"
        )
        return expr, "true/false, a number or a boolean string"
    if duck == "DOUBLE":
        expr = (
            f"CASE WHEN {is_num} THEN TRY_CAST({frag} AS DOUBLE) "
            f"WHEN {is_str} THEN TRY_CAST(trim({text}) AS DOUBLE) END"
        )
        return expr, "a number or numeric string"
    if duck == "DATE":
        return f"CASE WHEN {is_str} THEN TRY_CAST({text} AS DATE) END", "an ISO date string"
    raise ValueError(f"no parse rule for column type {sf_type!r}")


def _error(name: str, sf_type: str, frag: str, accepts: str) -> str:
    """Why column ``name`` of a row did not cast (evaluated only for rows that fail)."""
    where = f" - at `$.{name}`"
    ct = column_type(sf_type)
    got = f"{_lit(f'Expected {accepts}, got ')} || left({frag}, 80) || {_lit(where)}"
    if ct.precision is None:
        return got
    # A number that does not fit: say so, as Snowflake does, rather than "expected".
    numeric = (
        f"TRY_CAST(CASE WHEN left({frag}, 1) = '\"' THEN trim(json_extract_string({frag}, '$')) "
        f"ELSE {frag} END AS DOUBLE)"
    )
    spec = f"NUMBER({ct.precision},{ct.scale or 0})"
    out_of_range = (
        f"'value ' || left({frag}, 80) || {_lit(f' out of range for {spec} column {name}{where}')}"
    )
    return (
        f"CASE WHEN left({frag}, 1) NOT IN ('t', 'f', '{{', '[') AND isfinite({numeric}) "
        f"THEN {out_of_range} ELSE {got} END"
    )


def parse_sql(columns: Sequence[tuple[str, str]], *, check_keys: bool = True) -> str:
    """The query that parses every line of :data:`SOURCE` into typed values or an error."""
    names = [n for n, _ in columns]
    keys_sorted = "[" + ", ".join(_lit(n) for n in sorted(names)) + "]"
    structure = _lit(json.dumps({n: "JSON" for n in names}))
    frag = {n: f"_v.{quote_ident(n)}::VARCHAR" for n in names}
    values, checks = [], []
    for name, sf_type in columns:
        expr, accepts = _value(frag[name], sf_type)
        col = quote_ident(name)
        values.append(f"{expr} AS {col}")
        null = f"Expected {accepts}, got `null` - at `$.{name}`"
        checks.append(
            f"WHEN NOT list_contains(_keys, {_lit(name)}) "
            f"THEN {_lit(f'Object missing required field `{name}`')} "
            f"WHEN {frag[name]} IS NULL THEN {_lit(null)} "
            f"WHEN {col} IS NULL THEN {_error(name, sf_type, frag[name], accepts)}"
        )
    key_checks = ""
    if check_keys:
        unknown = f"list_filter(_keys, lambda k: NOT list_contains({keys_sorted}, k))"
        duplicated = "list_filter(_keys, lambda k, i: list_position(_keys, k) < i)"
        key_checks = (
            f"WHEN list_sort(_keys) <> {keys_sorted} AND len({unknown}) > 0 "
            f"THEN 'Object contains unknown field `' || {unknown}[1] || '`' "
            "WHEN len(_keys) <> len(list_distinct(_keys)) "
            f"THEN 'Object contains duplicated field `' || {duplicated}[1] || '`' "
        )
    return f"""
WITH _lines AS (
  SELECT filename AS _FILE, _SRC FROM {SOURCE}
), _parsed AS (
  SELECT _FILE, _SRC, try(json_transform(_SRC, {structure})) AS _v,
         CASE WHEN _v IS NOT NULL THEN json_keys(_SRC) END AS _keys
  FROM _lines WHERE _SRC IS NOT NULL AND trim(_SRC) <> ''
), _typed AS (
  SELECT _FILE, _SRC, _v, _keys, {", ".join(values)} FROM _parsed
)
SELECT _FILE, _SRC, {", ".join(quote_ident(n) for n in names)},
  CASE
    WHEN _v IS NULL THEN 'DecodeError: malformed JSON'
    WHEN NOT starts_with(ltrim(_SRC), '{{') THEN 'Expected `object`, got `' ||
         lower(json_type(_SRC)) || '`'
    {key_checks}
    {" ".join(checks)}
  END AS _ERR,
  left(_SRC, 200) AS _EXCERPT
FROM _typed
"""
