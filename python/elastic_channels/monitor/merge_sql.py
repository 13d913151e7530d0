"""The MERGE statement the monitor upserts its rows with, into any of its tables."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["merge_head"]


def merge_head(
    table: str, columns: Sequence[tuple[str, str]], on: str, fixed: Sequence[str]
) -> str:
    """A MERGE of rows bound as ``VALUES {values}`` (the caller puts the placeholders in)
    into ``table``: ``columns`` (name, Snowflake type) cast from the bindings, matched
    ``on`` (``T.``: the table, ``S.``: the rows), the ``fixed`` columns never updated,
    UPDATED_AT set to the current time."""
    names = [n for n, _ in columns]
    source = ", ".join(
        f"PARSE_JSON(V.{n}) AS {n}" if t == "VARIANT"
        else f"CAST(V.{n} AS {t.split(' DEFAULT ')[0]}) AS {n}"
        for n, t in columns
    )  # fmt: skip
    updates = ", ".join(f"{n} = S.{n}" for n in names if n not in fixed)
    return (
        f"MERGE INTO {table} AS T USING (SELECT {source} FROM (VALUES {{values}}) "
        f"AS V({', '.join(names)})) AS S ON {on} "
        f"WHEN MATCHED THEN UPDATE SET {updates}, UPDATED_AT = CURRENT_TIMESTAMP() "
        f"WHEN NOT MATCHED THEN INSERT ({', '.join(names)}, UPDATED_AT) "
        f"VALUES ({', '.join('S.' + n for n in names)}, CURRENT_TIMESTAMP())"
    )
