"""The bench's rows: a workload (``--workload NAME|FILE``), made the way a worker makes it.

The parent checks the workload in full before it spawns anything (:func:`checked`: a
bad name or file is a :class:`~..landing_table.WorkloadArgError` naming the flag, the
file, line, column and key). Each bench process then makes its generator as the
worker's ``BatchSource`` does (:func:`make_generator`): resort sales by its name through
the compiled generator, any other workload through
:func:`..worker.workload_source.workload_generators`, with the same backend choice and
the same fallback from native to msgspec.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from .. import rows
from ..landing_table import DEFAULT_WORKLOAD, load_checked, workload_arg
from ..rows import Backend
from ..worker.settings import BY_NAME
from ..worker.workload_source import workload_generators

__all__ = ["WORKLOAD_SETTING", "checked", "make_generator"]

#: The worker's ``--workload`` (same flag, variable and default), with the bench's help.
WORKLOAD_SETTING = dataclasses.replace(
    BY_NAME["workload"],
    help="the rows to generate and encode: a shipped workload by name (resort-sales, "
    "iot-telemetry, clickstream, wide-events) or a workload file (YAML, docs/WORKLOADS.md), "
    "made as a worker makes them; the summary names it and its mean row bytes",
)


def checked(given: str | None, environ: Mapping[str, str]) -> tuple[str, str]:
    """(the workload as given, as the bench processes are handed it: a file as an
    absolute path), checked in full; ``WorkloadArgError`` names the flag (or the
    variable) and what is wrong."""
    value = WORKLOAD_SETTING.value(given, environ)
    text = (value or "").strip() or DEFAULT_WORKLOAD
    where = "--workload" if given else "WORKLOAD"
    if text != DEFAULT_WORKLOAD:
        load_checked(text, where)
    return text, workload_arg(text)


@dataclasses.dataclass(frozen=True)
class _GeneratorSettings:
    """The bench's :class:`..worker.workload_source.GeneratorSettings`."""

    run_id: str
    worker_id: int
    encoder: str | None
    workload: str


def make_generator(
    run_id: str, worker_id: int, encoder: str | None, workload: str
) -> tuple[Any, Backend]:
    """(this bench process's generator of ``workload``, the backend it uses)."""
    backend = rows.select_backend(encoder)  # type: ignore[arg-type]
    if workload == DEFAULT_WORKLOAD:
        return rows.make_generator(run_id, worker_id, backend=backend), backend
    cfg = _GeneratorSettings(run_id, worker_id, encoder, workload)
    make, backend = workload_generators(cfg, backend)
    return make(0), backend
