"""The landing table a run writes, as its workload declares it: the one answer to
"which table, which pipe, which columns, and which of them say whose row it is".

``setup``, the emulator, the worker, ``run``, the lost/duplicate check and the monitor
all ask :func:`landing_table` (``--workload NAME|FILE``, env ``WORKLOAD``). The default,
``resort-sales``, is read off the resort model itself (``model.COLUMNS``, the names of
its objects: no file is read), which the shipped ``resort-sales`` workload file declares
column for column; any other name is a shipped workload, and a path is a workload file
(``docs/WORKLOADS.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .model import COLUMNS, PIPE_NAME, TABLE_NAME

if TYPE_CHECKING:
    from .workload import CheckedWorkload

__all__ = [
    "DEFAULT_WORKLOAD",
    "WORKLOAD_HELP",
    "LandingTable",
    "WorkloadArgError",
    "landing_table",
    "load_checked",
    "pipe_named",
    "workload_arg",
]

#: The workload of a run that names none: the reference benchmark's resort sales.
DEFAULT_WORKLOAD = "resort-sales"
WORKLOAD_HELP = (
    "the rows to send: a shipped workload by name (resort-sales, iot-telemetry, "
    "clickstream, wide-events) or a workload file (YAML, docs/WORKLOADS.md); it names the "
    "landing table, its pipe and its columns"
)


class WorkloadArgError(ValueError):
    """A workload that cannot be used; the message names where it was given and why."""


@dataclass(frozen=True)
class LandingTable:
    """The table one workload's rows land in, and the columns that identify them.

    ``unique_id`` holds ``<run_id>-<worker_id>-<seq>`` (None: rows cannot be told apart,
    so loss and duplicates cannot be counted); ``run_id`` and ``worker_id`` hold the run's
    id and the worker's index (None when the workload has no such column); ``send_time``
    is the TIMESTAMP_TZ column stamped with the batch's send time (None: none, and
    ingest-to-visible latency cannot be read off the rows)."""

    workload: str
    name: str
    pipe: str
    columns: tuple[tuple[str, str], ...]
    unique_id: str | None
    run_id: str | None
    worker_id: str | None
    send_time: str | None

    @property
    def is_default(self) -> bool:
        """Whether this is the resort-sales workload by its name (today's compiled path)."""
        return self.workload == DEFAULT_WORKLOAD


_RESORT = LandingTable(
    DEFAULT_WORKLOAD, TABLE_NAME, PIPE_NAME, tuple(COLUMNS), "TXID", "RUN_ID", "WORKER_ID",
    "SALE_TIME",
)  # fmt: skip


def workload_arg(value: str | None) -> str:
    """The workload as a worker is handed it: the default for None or empty, a shipped
    name as it is, a file as an absolute path (a worker may start elsewhere)."""
    from .workload import is_path

    text = (value or "").strip() or DEFAULT_WORKLOAD
    return str(Path(text).resolve()) if is_path(text) else text


def load_checked(value: str | None, where: str = "--workload") -> CheckedWorkload:
    """The workload ``value`` names, checked in full; :class:`WorkloadArgError` naming
    ``where`` (the flag, the variable or the scenario key) and what is wrong."""
    from .workload import WorkloadError, load_workload

    try:
        return load_workload((value or "").strip() or DEFAULT_WORKLOAD)
    except WorkloadError as e:
        raise WorkloadArgError(f"{where}: {e}") from None


def landing_table(value: str | None = None, where: str = "--workload") -> LandingTable:
    """The landing table of workload ``value`` (None or empty: resort-sales)."""
    text = (value or "").strip() or DEFAULT_WORKLOAD
    if text == DEFAULT_WORKLOAD:
        return _RESORT
    w = load_checked(text, where)

    def first(source: str) -> str | None:
        found = w.columns_with(source)
        return found[0].name if found else None

    send_time = [c.name for c in w.columns_with("send_time") if c.type.kind == "TIMESTAMP_TZ"]
    return LandingTable(
        text, w.table, w.pipe, w.sql_columns, w.unique_id_column, first("run_id"),
        first("worker_id"), send_time[0] if send_time else None,
    )  # fmt: skip


def pipe_named(flag: str | None, environ: Mapping[str, str], profile: Any) -> bool:
    """Whether a pipe was named (``--pipe``, ``SNOWFLAKE_PIPE``, or the profile's
    ``pipe``, as an emulator's info file has it), rather than left to the workload."""
    named = (flag or "").strip() or environ.get("SNOWFLAKE_PIPE", "").strip()
    return bool(named or (profile is not None and profile.get("pipe")))
