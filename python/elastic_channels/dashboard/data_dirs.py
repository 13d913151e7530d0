"""Which emulator data dir to read when none is given: the one ``run`` wrote last.

``run`` keeps the embedded emulator's data under ``.elastic-channels``: ``emulator``
for resort sales, ``emulator-iceberg`` with ``--table-format iceberg``, and
``emulator-<table>`` (``-iceberg``) for another workload's table (a data dir holds one
landing table; ``fleet/run_target.default_data_dir``). Without ``--data-dir`` the
dashboard reads, of the workload's candidates that exist, the one an emulator serves
now, else the one whose data changed last, and says which (:class:`Found`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..emulator.control import running_server
from ..emulator.emulator import DB_FILE
from ..model import TABLE_NAME

__all__ = ["Found", "candidates", "find", "last_change"]


@dataclass(frozen=True)
class Found:
    """The data dir picked, and why (said in the page's caption)."""

    data_dir: Path
    why: str


def _slug(table: str) -> str:
    return re.sub(r"[^a-z0-9_-]+", "_", table.lower()).strip("_") or "table"


def candidates(home: Path, table: str) -> list[Path]:
    """The data dirs ``run`` may have written ``table``'s rows to under ``home``, the
    native one first."""
    names = [f"emulator-{_slug(table)}"]
    if table == TABLE_NAME:  # resort sales: ``emulator`` (a file of it: by its table)
        names.insert(0, "emulator")
    return [home / f"{n}{suffix}" for suffix in ("", "-iceberg") for n in names]


def last_change(data_dir: Path) -> float:
    """When the data in ``data_dir`` last changed (ns since the epoch): the newest time
    of its entries and of theirs one level down (a file landed, the database written);
    0 when there is nothing."""
    newest = 0
    try:
        top = list(os.scandir(data_dir))
    except OSError:
        return 0
    for entry in top:
        try:
            newest = max(newest, entry.stat(follow_symlinks=False).st_mtime_ns)
            if entry.is_dir(follow_symlinks=False):
                for inner in os.scandir(entry.path):
                    newest = max(newest, inner.stat(follow_symlinks=False).st_mtime_ns)
        except OSError:  # removed meanwhile
            continue
    return newest


def find(home: Path, table: str) -> Found:
    """The data dir to read ``table`` from under ``home`` (see the module)."""
    options = candidates(home, table)
    present = [d for d in options if (d / DB_FILE).exists()]
    if not present:
        return Found(
            options[0],
            f"no data dir under {home} holds {table} yet ({options[0].name} is where 'run' "
            "writes it)",
        )
    served = [d for d in present if running_server(d) is not None]
    if served:
        return Found(served[0], f"{served[0].name}: an emulator serves it now")
    newest = max(present, key=last_change)
    if len(present) == 1:
        return Found(newest, f"{newest.name}: the only data dir under {home} holding {table}")
    others = ", ".join(d.name for d in present if d != newest)
    return Found(newest, f"{newest.name}: its data is newer than {others}'s")
