"""A workload's generators for one worker: resolved once, replayed by every batch.

The workload is resolved into its replay table when the worker starts (deterministic:
every worker of a run gets the same table). The native backend's generator is
``elastic_native.WorkloadGenerator`` over one ``WorkloadTable`` made of it, when the
installed module has them; otherwise (or with the Python backend, or ``rows`` append
mode) the msgspec ``WorkloadGenerator``, which writes the same bytes.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from ..landing_table import load_checked
from ..rows import Backend, native_module
from .config import ConfigError, WorkerConfig

__all__ = ["native_workload_module", "workload_generators"]

log = logging.getLogger("elastic_channels.worker")


def _resolve(workload: str) -> Any:
    from ..workload.replay import resolve

    return resolve(load_checked(workload))


#: Once per process (a worker's channels share them): the msgspec side's resolved
#: workload, or the native table alone (the resolution's Python values then freed).
_resolved = functools.lru_cache(maxsize=4)(_resolve)


@functools.lru_cache(maxsize=4)
def _native_table(workload: str) -> Any:
    t = _resolve(workload).table
    native = native_workload_module()
    return native.WorkloadTable(t.entries, t.stride, t.pieces, t.ids, t.template)


def native_workload_module() -> Any:
    """The native module when it has the runtime workload generator, else None."""
    native = native_module()
    if native is None or not hasattr(native, "WorkloadGenerator"):
        return None
    return native


def workload_generators(
    cfg: WorkerConfig, encoder: Backend
) -> tuple[Callable[[int], Any], Backend]:
    """(a function making this worker's generator from a sequence number, the backend it
    uses): ``encoder`` is the backend chosen for the run; native falls back to the
    msgspec path, with a log line, when the installed module has no runtime generator
    (``--encoder native`` then fails, naming why)."""
    from ..rows.workload_generator import WorkloadGenerator

    native = native_workload_module() if encoder == "native" else None
    if encoder == "native" and native is None:
        if cfg.encoder == "native":
            raise ConfigError(
                "--encoder native: the installed elastic_native has no WorkloadGenerator "
                "(built before runtime workloads); rebuild it with `pip install .`"
            )
        log.info("workload %s: msgspec path (the native module has no runtime generator)",
                 cfg.workload)  # fmt: skip
    try:
        made = _native_table(cfg.workload) if native is not None else _resolved(cfg.workload)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    if native is None:

        def python_gen(start_seq: int) -> Any:
            return WorkloadGenerator(made, cfg.run_id, cfg.worker_id, start_seq=start_seq)

        return python_gen, "python"
    table = made

    def native_gen(start_seq: int) -> Any:
        return native.WorkloadGenerator(table, cfg.run_id, cfg.worker_id, start_seq=start_seq)

    return native_gen, "native"
