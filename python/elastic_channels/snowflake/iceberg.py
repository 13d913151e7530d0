"""``RESORT_SALES`` as a Snowflake-managed Apache Iceberg table (``--table-format iceberg``).

``CREATE ICEBERG TABLE ... CATALOG = 'SNOWFLAKE' EXTERNAL_VOLUME = ... BASE_LOCATION =
...``: Snowflake is the table's Iceberg catalog, and writes the Parquet data files and the
Iceberg metadata under ``BASE_LOCATION`` on the external volume, where any Iceberg engine
can read them. The pipe is the same as for the native table.

Column types are the ones Snowflake supports for Iceberg tables (Snowflake docs, "Data
types for Apache Iceberg tables"), taken from :data:`elastic_channels.model.COLUMNS`:

* ``TIMESTAMP_TZ`` is not among them. ``SALE_TIME`` becomes ``TIMESTAMP_LTZ(6)``, written
  as Iceberg ``timestamptz``: an instant in UTC with microseconds, which is exactly what
  the generator sends (RFC 3339 instants, never finer than microseconds), and a value
  sent with another offset is converted to the same instant. ``TIMESTAMP_NTZ(6)``
  (Iceberg ``timestamp``) would not keep it: NTZ drops an offset without converting, so
  ``...T10:00:00+02:00`` would be stored as 10:00 rather than 08:00 UTC. Iceberg v2
  timestamps have microsecond precision, hence the ``(6)``.
* ``NUMBER(p,s)`` stays ``NUMBER(p,s)`` (Iceberg ``decimal(p,s)``, exact), ``VARCHAR``
  stays ``VARCHAR`` (Iceberg ``string``), ``FLOAT`` is Iceberg ``double``, ``BOOLEAN``
  and ``DATE`` stay (Iceberg ``boolean``, ``date``), ``TIMESTAMP_NTZ`` is
  ``TIMESTAMP_NTZ(6)`` (Iceberg ``timestamp``).
* ``VARCHAR(n)`` is ``VARCHAR``: Iceberg's ``string`` has no length, so a workload's
  limit is not kept in an Iceberg table (the native table keeps it).
* ``VARIANT`` stays ``VARIANT``, Iceberg v3's ``variant`` type, which Snowflake supports
  for Iceberg tables of format version 3 ("Apache Iceberg tables: Support for Apache
  Iceberg v3"; the default version is 2): a table with a VARIANT column is created with
  ``ICEBERG_VERSION = 3``, and one without keeps the default. ``OBJECT``, ``ARRAY``,
  ``GEOGRAPHY`` and ``GEOMETRY`` are refused (no workload declares them).

Row timestamps: Snowflake documents ``ROW_TIMESTAMP`` (``METADATA$ROW_LAST_COMMIT_TIME``)
for ``CREATE TABLE``/``ALTER TABLE`` and dynamic tables; ``CREATE ICEBERG TABLE`` lists
no such property, so the Iceberg DDL does not set it (an unsupported property would make
setup fail). Ingest-to-visible on an Iceberg table is then read off the table's
snapshots (commit times), not off a row column. The local emulator keeps a
``_COMMIT_TIME`` column in its Iceberg table for the same measure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["base_location_literal", "create_iceberg_table", "iceberg_column_type", "needs_v3"]

_VARCHAR_N = re.compile(r"VARCHAR\s*\(\s*\d+\s*\)$")
_TIMESTAMP = re.compile(r"(TIMESTAMP(?:_TZ|_LTZ|_NTZ)?|DATETIME)\s*(?:\(\s*\d+\s*\))?$")
#: A relative path on the external volume: no quotes, no ``..``, no leading slash.
_BASE_LOCATION = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./=-]{0,1023}")


class IcebergTypeError(ValueError):
    """A column type with no exact Iceberg equivalent in Snowflake."""


def iceberg_column_type(sf_type: str) -> str:
    """The Snowflake column type to declare in a Snowflake-managed Iceberg table."""
    t = " ".join(sf_type.upper().split())
    m = _TIMESTAMP.match(t)
    if m:
        kind = m.group(1)
        # TIMESTAMP_TZ (not supported for Iceberg) and LTZ are instants: timestamptz.
        if kind in ("TIMESTAMP_TZ", "TIMESTAMP_LTZ"):
            return "TIMESTAMP_LTZ(6)"
        return "TIMESTAMP_NTZ(6)"
    if t == "VARIANT":
        return t
    if t.startswith(("VARIANT", "OBJECT", "ARRAY", "GEOGRAPHY", "GEOMETRY")):
        raise IcebergTypeError(f"{sf_type!r} has no Iceberg column type in Snowflake")
    if _VARCHAR_N.match(t):
        return "VARCHAR"
    return t


def needs_v3(columns: Sequence[tuple[str, str]]) -> bool:
    """Whether the table needs Iceberg format version 3 (a VARIANT column)."""
    return any(iceberg_column_type(t) == "VARIANT" for _, t in columns)


def base_location_literal(base_location: str) -> str:
    """``base_location`` checked (a relative path) and quoted as a SQL string."""
    if (
        not _BASE_LOCATION.fullmatch(base_location)
        or ".." in base_location.split("/")
        or "//" in base_location
    ):
        raise ValueError(
            f"--base-location {base_location!r} must be a relative path on the external "
            "volume: letters, digits and _ . / = -, no '..', not starting with '/'"
        )
    return f"'{base_location}'"


def create_iceberg_table(
    qualified: str,
    columns: Sequence[tuple[str, str]],
    external_volume: str,
    base_location: str,
) -> str:
    """``CREATE ICEBERG TABLE IF NOT EXISTS`` with Snowflake as the catalog (format
    version 3 when a column is VARIANT)."""
    cols = ",\n".join(
        f'    "{n.replace(chr(34), chr(34) * 2)}" {iceberg_column_type(t)}' for n, t in columns
    )
    version = "\nICEBERG_VERSION = 3" if needs_v3(columns) else ""
    return (
        f"CREATE ICEBERG TABLE IF NOT EXISTS {qualified} (\n{cols}\n)\n"
        "CATALOG = 'SNOWFLAKE'\n"
        f"EXTERNAL_VOLUME = '{external_volume}'\n"
        f"BASE_LOCATION = {base_location_literal(base_location)}{version}"
    )
