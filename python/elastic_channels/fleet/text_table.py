"""Plain-text tables for the commands' end-of-run summaries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: (header, key, format) per column.
Column = tuple[str, str, str]


def render(columns: Sequence[Column], rows: Sequence[dict[str, Any]], total: dict[str, Any]) -> str:
    """Right-aligned columns, one line per row, then a rule and the total line."""

    def cells(r: dict[str, Any]) -> list[str]:
        return [fmt.format(r[k]) if r.get(k) is not None else "-" for _, k, fmt in columns]

    body = [cells(r) for r in rows] + [cells(total)]
    header = [name for name, _, _ in columns]
    widths = [max(len(x) for x in col) for col in zip(header, *body, strict=True)]

    def line(c: list[str]) -> str:
        return "  ".join(x.rjust(w) for x, w in zip(c, widths, strict=True))

    rule = line(["-" * w for w in widths])
    return "\n".join([line(header), rule, *map(line, body[:-1]), rule, line(body[-1])])
