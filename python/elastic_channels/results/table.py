"""Plain-text tables for ``runs`` and ``compare``: a header, a rule, one line a row."""

from __future__ import annotations

from collections.abc import Sequence


def render(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> str:
    """Columns two spaces apart; the first ``left`` columns aligned left (names), the
    rest right (numbers)."""
    widths = [max(len(x) for x in col) for col in zip(header, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        out = [
            c.ljust(w) if i < left else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(out).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, rows)])
