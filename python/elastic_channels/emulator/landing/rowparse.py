"""The one typed parse path: every line of every request, cast by one rule per column type.

:func:`parse_sql` builds one DuckDB query over the lines of a batch of requests (a
relation, :data:`SOURCE`, of ``filename`` and ``_SRC`` = one line). Each non-blank line
becomes one row of the result with its file (``_FILE``), its typed column values and
``_ERR``: NULL when the row lands, else why it does not (and then ``_EXCERPT``, the start
of the line, and ``_MD5``, its md5, by which the lander finds its line number).
Whether a row lands depends on that line alone. The rules (docs/EMULATOR.md has them as
a table) follow Snowflake's documented conversions for JSON into typed columns:

* A row is one JSON object whose keys are exactly the table's columns (any order; a key
  twice, an unknown key or a missing one is an error unless ``check_keys`` is off, when
  unknown and duplicated keys are ignored). ``null`` is refused: every column is NOT NULL.
* NUMBER(p,s): a JSON number, or a string holding a numeric literal (Snowflake's
  ``[+-][digits][.digits][e[+-]digits]``, spaces around it allowed), rounded half away
  from zero to ``s`` decimals; it must then fit ``p`` digits. ``true``/``false``,
  objects, arrays and other strings (``"1_000"``, ``"inf"``, ``"NaN"``) are refused.
* VARCHAR(n): a string as is; a number or ``true``/``false`` as its JSON text (Snowflake
  converts them); at most ``n`` characters. Objects and arrays are refused.
* TIMESTAMP_TZ / TIMESTAMP_NTZ / TIMESTAMP_LTZ: an ISO-8601 string, ``YYYY-MM-DD``
  (year 0001 to 9999), then optionally ``T`` or a space, ``hh:mm`` (00:00 to 23:59),
  ``:ss`` and 1 to 9 fractional digits (kept to the microsecond), then ``Z`` or an
  offset ``+hh``, ``+hhmm`` or ``+hh:mm`` (at most 15:59; no offset is UTC); or a
  64-bit integer (a number or a string of digits, spaces around it allowed) counted from
  the epoch in seconds, milliseconds, microseconds or nanoseconds by its magnitude, as
  Snowflake reads integer-stored timestamps. Nothing else: no zone names, no 24:00.
* BOOLEAN: ``true``/``false``; a number (0 is false); a string ``true/t/yes/y/on/1`` or
  ``false/f/no/n/off/0`` in any case.
* FLOAT/DOUBLE: a finite number, or a string holding a numeric literal as for NUMBER.
  DATE: an ISO date string, exactly ``YYYY-MM-DD`` (year 0001 to 9999).
* VARIANT (OBJECT, ARRAY): any JSON value but ``null`` (every column is NOT NULL), kept
  as DuckDB's JSON text of it (no blanks; numbers as DuckDB writes them), so that
  ``col:a.b`` paths query it as Snowflake's do (through the SQL API's translation).

DuckDB's own casts read more than these rules (``1_000``, ``inf``, ``nan``, zone names,
``24:00``, any offset, ``epoch``, ``(BC)``, blanks of every kind); each value is matched
against its rule's form (:data:`NUMERIC_LITERAL`, :data:`ISO_DATE`, :data:`ISO_TIMESTAMP`)
before DuckDB casts it, so they land only what the rules say.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..storage.schema import column_type, quote_ident

__all__ = ["ISO_DATE", "ISO_TIMESTAMP", "NOT_BLANK", "NUMERIC_LITERAL", "SOURCE", "parse_sql"]

#: Where :func:`parse_sql` reads lines from: a relation with ``filename`` and ``_SRC``.
SOURCE = "__SOURCE__"
#: The lines that are rows (blank and whitespace-only lines are not).
NOT_BLANK = "_SRC IS NOT NULL AND NOT regexp_full_match(_SRC, '[ \\t\\r]*')"

#: JSON's whitespace (a line's leading whitespace is not its first character).
_JSON_BLANKS = "' ' || chr(9) || chr(10) || chr(13)"
_NUMERIC_START = "('-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9')"
_TRUE = "('true', 't', 'yes', 'y', 'on', '1')"
_FALSE = "('false', 'f', 'no', 'n', 'off', '0')"
# Integer-stored timestamps: the magnitude says the unit (Snowflake's AUTO rule).
# The smallest BIGINT has no magnitude (abs would overflow and fail the whole query).
_EPOCH = (
    "CASE WHEN {n} = -9223372036854775808 THEN NULL "
    "WHEN abs({n}) < 31536000000 THEN make_timestamp({n} * 1000000) "
    "WHEN abs({n}) < 31536000000000 THEN make_timestamp({n} * 1000) "
    "WHEN abs({n}) < 31536000000000000 THEN make_timestamp({n}) "
    "ELSE make_timestamp({n} // 1000) END"
)

#: A numeric literal as Snowflake documents its numeric constants, with spaces around it
#: (RE2, matched against the whole text): ``[+-][digits][.digits][e[+-]digits]``.
NUMERIC_LITERAL = r" *[+-]?([0-9]+(\.[0-9]+)?|\.[0-9]+)([eE][+-]?[0-9]+)? *"
#: An ISO date, ``YYYY-MM-DD`` (the calendar check is DuckDB's cast; year 0000 is refused
#: apart, by :func:`_iso`).
ISO_DATE = "[0-9]{4}-[0-9]{2}-[0-9]{2}"
#: An ISO-8601 timestamp: the date, then optionally ``T`` or a space, ``hh:mm`` (00:00 to
#: 23:59), ``:ss`` (00 to 59) and 1 to 9 fractional digits (Snowflake's FF9), then ``Z``
#: or an offset ``+hh``, ``+hhmm``, ``+hh:mm`` of at most 15:59 (the native path's, and
#: PostgreSQL's, limit; every offset in use is within -12:00 to +14:00).
ISO_TIMESTAMP = (
    ISO_DATE + r"([T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,9})?)?"
    r"(Z|[+-](0[0-9]|1[0-5])(:?[0-5][0-9])?)?)?"
)
_TIMESTAMP_ACCEPTS = (
    "an ISO-8601 timestamp string (at most 9 fractional digits) or an integer epoch"
)


def _lit(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _is(text: str, form: str) -> str:
    """Whether all of ``text`` has the ``form`` (an RE2 pattern)."""
    return f"regexp_full_match({text}, {_lit(form)})"


def _iso(text: str, form: str) -> str:
    """Whether ``text`` is an ISO date or timestamp of ``form``, year 0001 or later."""
    return f"({_is(text, form)} AND NOT starts_with({text}, '0000'))"


def _value(ref: str, sf_type: str, path: str = "'$'") -> tuple[str, str, str]:
    """(how json_transform reads the value: VARCHAR or JSON, the typed value expression
    over ``ref`` = what it read, what the type accepts, for messages) for one column.

    Read as VARCHAR, a JSON string is its text, a number its digits, true/false their
    names and an object or array its JSON text: enough for strings, and for numbers,
    dates and timestamps, matched against their rule's form before DuckDB casts them
    (its casts alone read more than the rules). BOOLEAN columns need to know
    a string from a number, so they read the JSON text of the value.
    ``path`` is the column's JSON path in ``_SRC``.
    """
    ct = column_type(sf_type)
    duck = ct.duckdb
    if duck == "JSON":  # read as JSON: its text, DuckDB's way; null is refused before
        return "JSON", ref, "any JSON value but null"
    if ct.precision is not None:
        p, s = ct.precision, ct.scale or 0
        cast = f"TRY_CAST(trim({ref}) AS DECIMAL({p},{s}))"
        expr = f"CASE WHEN {_is(ref, NUMERIC_LITERAL)} THEN {cast} END"
        return "VARCHAR", expr, f"a number or numeric string for NUMBER({p},{s})"
    if duck in ("TIMESTAMPTZ", "TIMESTAMP"):
        as_int = (
            f"CASE WHEN regexp_full_match(trim({ref}), '-?[0-9]+') "
            f"THEN TRY_CAST(trim({ref}) AS BIGINT) END"
        )
        expr = (
            f"CASE WHEN {_iso(ref, ISO_TIMESTAMP)} THEN TRY_CAST({ref} AS {duck}) "
            f"ELSE ({_EPOCH.format(n=as_int)})::{duck} END"
        )
        return "VARCHAR", expr, _TIMESTAMP_ACCEPTS
    if duck == "DOUBLE":
        x = f"TRY_CAST(trim({ref}) AS DOUBLE)"
        expr = f"CASE WHEN {_is(ref, NUMERIC_LITERAL)} AND isfinite({x}) THEN {x} END"
        return "VARCHAR", expr, "a number or numeric string"
    if duck == "DATE":
        expr = f"CASE WHEN {_iso(ref, ISO_DATE)} THEN TRY_CAST({ref} AS DATE) END"
        return "VARCHAR", expr, "an ISO date string"
    first = f"left({ref}, 1)"
    # A JSON string without escapes is its text between the quotes; others are unescaped.
    text = (
        f"CASE WHEN contains({ref}, '\\') THEN json_extract_string({ref}, '$') ELSE {ref}[2:-2] END"
    )
    if duck == "VARCHAR":
        # Read as VARCHAR; only a value that looks like an object or array is looked up
        # again to tell a JSON object from a string that starts with a brace.
        expr = (
            f"CASE WHEN {first} IN ('{{', '[') AND json_type(_SRC, {path}) IN ('OBJECT', "
            f"'ARRAY') THEN NULL ELSE {ref} END"
        )
        if ct.length is not None:
            expr = f"CASE WHEN length(({expr})) <= {ct.length} THEN ({expr}) END"
            return "VARCHAR", expr, f"a string of at most {ct.length} characters"
        return "VARCHAR", expr, "a string, number or boolean"
    if duck == "BOOLEAN":
        low = f"lower(trim({text}))"
        expr = (
            f"CASE WHEN {ref} = 'true' THEN true WHEN {ref} = 'false' THEN false "
            f"WHEN {first} IN {_NUMERIC_START} THEN TRY_CAST({ref} AS DOUBLE) <> 0 "
            f"WHEN {first} = '\"' AND {low} IN {_TRUE} THEN true "
            f"WHEN {first} = '\"' AND {low} IN {_FALSE} THEN false END"
        )
        return "JSON", expr, "true/false, a number or a boolean string"
    raise ValueError(f"no parse rule for column type {sf_type!r}")


def _error(name: str, sf_type: str, frag: str, accepts: str) -> str:
    """Why column ``name`` of a row did not cast (evaluated only for rows that fail)."""
    where = f" - at `$.{name}`"
    ct = column_type(sf_type)
    got = f"{_lit(f'Expected {accepts}, got ')} || left({frag}, 80) || {_lit(where)}"
    if ct.precision is None:
        return got
    # A number that does not fit: say so, as Snowflake does, rather than "expected".
    text = f"CASE WHEN left({frag}, 1) = '\"' THEN json_extract_string({frag}, '$') ELSE {frag} END"
    numeric = f"TRY_CAST(trim({text}) AS DOUBLE)"
    spec = f"NUMBER({ct.precision},{ct.scale or 0})"
    out_of_range = (
        f"'value ' || left({frag}, 80) || {_lit(f' out of range for {spec} column {name}{where}')}"
    )
    return (
        f"CASE WHEN {_is(f'({text})', NUMERIC_LITERAL)} AND isfinite({numeric}) "
        f"THEN {out_of_range} ELSE {got} END"
    )


def parse_sql(columns: Sequence[tuple[str, str]], *, check_keys: bool = True) -> str:
    """The query that parses every line of :data:`SOURCE` into typed values or an error."""
    names = [n for n, _ in columns]
    keys_sorted = "[" + ", ".join(_lit(n) for n in sorted(names)) + "]"
    reads = {n: _value("x", t)[0] for n, t in columns}
    structure = _lit(json.dumps(reads))
    values, checks = [], []
    for name, sf_type in columns:
        ref = f"(_v.{quote_ident(name)}::VARCHAR)"
        path = _lit("$." + json.dumps(name))
        _, expr, accepts = _value(ref, sf_type, path)
        # Messages quote the value as sent: its JSON text, looked up again (errors only).
        frag = f"(json_extract(_SRC, {_lit('$.' + json.dumps(name))})::VARCHAR)"
        col = quote_ident(name)
        values.append(f"{expr} AS {col}")
        null = f"Expected {accepts}, got `null` - at `$.{name}`"
        checks.append(
            f"WHEN NOT list_contains(json_keys(_SRC), {_lit(name)}) "
            f"THEN {_lit(f'Object missing required field `{name}`')} "
            f"WHEN {frag} = 'null' OR {frag} IS NULL THEN {_lit(null)} "
            f"WHEN {col} IS NULL THEN {_error(name, sf_type, frag, accepts)}"
        )
    ordered = "[" + ", ".join(_lit(n) for n in names) + "]"
    keys = "json_keys(_SRC)"
    # A row that casts cleanly skips the explanations below (they cost; errors are rare).
    ok = ["_v IS NOT NULL", *(f"{quote_ident(n)} IS NOT NULL" for n in names)]
    key_checks = ""
    if check_keys:
        # (CASE, not OR: only a row whose keys are out of order pays for sorting them)
        ok.insert(
            1, f"CASE WHEN {keys} = {ordered} THEN true ELSE list_sort({keys}) = {keys_sorted} END"
        )
        unknown = f"list_filter({keys}, lambda k: NOT list_contains({keys_sorted}, k))"
        duplicated = f"list_filter({keys}, lambda k, i: list_position({keys}, k) < i)"
        key_checks = (
            f"WHEN len({unknown}) > 0 "
            f"THEN 'Object contains unknown field `' || {unknown}[1] || '`' "
            f"WHEN len({keys}) <> len(list_distinct({keys})) "
            f"THEN 'Object contains duplicated field `' || {duplicated}[1] || '`' "
        )
    return f"""
WITH _lines AS (
  SELECT filename AS _FILE, _SRC FROM {SOURCE}
), _parsed AS (
  SELECT _FILE, _SRC, try(json_transform(_SRC, {structure})) AS _v
  FROM _lines WHERE {NOT_BLANK}
), _typed AS (
  SELECT _FILE, _SRC, _v, {", ".join(values)} FROM _parsed
)
SELECT _FILE, {", ".join(quote_ident(n) for n in names)},
  CASE WHEN {" AND ".join(ok)} THEN NULL ELSE CASE
    WHEN _v IS NULL THEN 'DecodeError: malformed JSON'
    WHEN NOT starts_with(ltrim(_SRC, {_JSON_BLANKS}), '{{') THEN 'Expected `object`, got `' ||
         lower(json_type(_SRC)) || '`'
    {key_checks}
    {" ".join(checks)}
  END END AS _ERR,
  CASE WHEN _ERR IS NOT NULL THEN left(_SRC, 200) END AS _EXCERPT,
  CASE WHEN _ERR IS NOT NULL THEN md5(_SRC) END AS _MD5
FROM _typed
"""
