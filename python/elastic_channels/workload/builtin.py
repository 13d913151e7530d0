"""Tables the package resolves itself, which a workload's columns may read (``builtin``).

``resort-sales`` is the resort point-of-sale model's resolved table
(``elastic_channels.model``): its eight middle fields, the same 8192 entries in the same
order, replayed with the same worker stride. So the ``resort-sales`` workload file writes
the bytes the compiled generator writes, while the model stays their one source.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import msgspec


class BuiltinTable(msgspec.Struct, frozen=True):
    """A resolved table: ``rows[i][j]`` is field ``fields[j]`` of entry ``i``."""

    fields: tuple[str, ...]
    rows: Sequence[tuple[Any, ...]]
    stride: int

    @property
    def length(self) -> int:
        return len(self.rows)

    def column(self, field: str) -> list[Any]:
        j = self.fields.index(field)
        return [row[j] for row in self.rows]


@functools.cache
def _resort_sales() -> BuiltinTable:
    from ..model import ROW_FIELDS, WORKER_STRIDE, ResortSale

    # ResortSale's fields: TXID, the eight the table resolves, SALE_TIME, RUN_ID, WORKER_ID.
    return BuiltinTable(ResortSale.__struct_fields__[1:9], ROW_FIELDS, WORKER_STRIDE)


_TABLES = {"resort-sales": _resort_sales}
NAMES = tuple(_TABLES)


def builtin_table(name: str) -> BuiltinTable | None:
    """The builtin table ``name``, or None when there is none of that name."""
    make = _TABLES.get(name)
    return None if make is None else make()
