"""The emulator's own relations: SQL may read them, never write them.

A restart lands every acked row exactly once because of what these hold, and a query
sees the rows because of how the landing table is made, so no statement of the SQL API
or the control endpoint may insert, update, delete, create, alter, drop, truncate,
rename, comment on or hold (a foreign key) any of them:

- every relation whose name starts with ``_EMULATOR_`` (:data:`PREFIX`): the files
  registry, what landed, the kept errors, and any added later;
- every view: the landing table of the Parquet-files and Iceberg stores is a view over
  its files (``RESORT_SALES``), and no statement may make a view;
- the landing table kept as a DuckDB table by an older data dir, which its store marks
  with :data:`LANDING_COMMENT` when it opens it.

PostgreSQL answers alike for its system catalogs ("permission denied").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["LANDING_COMMENT", "PREFIX", "OwnRelations", "own_relations"]

#: Every relation named so is the emulator's bookkeeping.
PREFIX = "_EMULATOR_"
#: The comment a store puts on a landing table kept as a DuckDB table.
LANDING_COMMENT = "elastic_channels emulator: the landing table (rows come from Snowpipe Streaming)"


@dataclass(frozen=True)
class OwnRelations:
    """The emulator's relations of one database, by lower-case name."""

    views: frozenset[str] = frozenset()
    landing_tables: frozenset[str] = frozenset()
    #: Every ``_EMULATOR_*`` relation there is (lower case).
    bookkeeping: frozenset[str] = frozenset()

    def exists(self, name: str) -> bool:
        """Whether ``name`` is one of the emulator's relations and is there."""
        last = name.rsplit(".", 1)[-1].strip('"').lower()
        return last in self.views or last in self.landing_tables or last in self.bookkeeping

    def why(self, name: str) -> str | None:
        """Why ``name`` (``table``, ``schema.table`` ...) may not be written, or None."""
        last = name.rsplit(".", 1)[-1].strip('"')
        shown = last.upper()
        if last.upper().startswith(PREFIX):
            return f"{shown} is the emulator's own bookkeeping: read it, not write it"
        if last.lower() in self.views or last.lower() in self.landing_tables:
            return (
                f"{shown} is the emulator's landing table: its rows come from Snowpipe "
                "Streaming and its definition from the emulator; read it, not write it"
            )
        return None


def own_relations(cur: Any) -> OwnRelations:
    """The views and marked landing tables of the database ``cur`` is connected to."""
    views = cur.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()
    tables = cur.execute("SELECT table_name, comment FROM duckdb_tables()").fetchall()
    return OwnRelations(
        frozenset(str(r[0]).lower() for r in views),
        frozenset(str(name).lower() for name, comment in tables if comment == LANDING_COMMENT),
        frozenset(str(name).lower() for name, _ in tables if str(name).upper().startswith(PREFIX)),
    )
