"""The one error a workload raises: what is wrong, at which key, on which line."""

from __future__ import annotations

from collections.abc import Sequence

Path = tuple[str | int, ...]


def format_path(path: Sequence[str | int], column: str | None = None) -> str:
    """``("columns", 3, "choice", "weights", 2)`` as ``columns[3] (NAME): choice.weights[2]``
    (the column's name in brackets when known)."""
    out = ""
    rest = list(path)
    if len(rest) >= 2 and rest[0] == "columns" and isinstance(rest[1], int):
        out = f"columns[{rest[1]}]" + (f" ({column})" if column else "")
        rest = rest[2:]
        if rest:
            out += ": "
    key = ""
    for part in rest:
        if isinstance(part, int):
            key += f"[{part}]"
        else:
            key += ("." if key else "") + str(part)
    return out + key


class WorkloadError(ValueError):
    """A workload that cannot be used, and why.

    ``path`` is the key at fault (``("columns", 3, "range", "min")``), ``column`` the
    name of the column it belongs to, ``origin`` the file and ``line`` its line (1-based)
    when the workload came from a file. ``str()`` gives all of it on one line:
    ``iot.yaml:14: columns[3] (TEMP): range.min: must be at most range.max (50 > 40)``.
    """

    def __init__(
        self,
        message: str,
        *,
        path: Sequence[str | int] = (),
        column: str | None = None,
        origin: str | None = None,
        line: int | None = None,
    ) -> None:
        self.message = message
        self.path: Path = tuple(path)
        self.column = column
        self.origin = origin
        self.line = line
        super().__init__(str(self))

    def located(self, origin: str, line: int | None) -> WorkloadError:
        """This error, placed in ``origin`` at ``line``."""
        return WorkloadError(
            self.message, path=self.path, column=self.column, origin=origin, line=line
        )

    def __str__(self) -> str:
        where = ""
        if self.origin is not None:
            where = self.origin + (f":{self.line}" if self.line is not None else "") + ": "
        key = format_path(self.path, self.column)
        return f"{where}{key}: {self.message}" if key else f"{where}{self.message}"
