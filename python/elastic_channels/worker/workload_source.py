"""A workload's generators for one worker: resolved once, replayed by every batch.

The workload is loaded and resolved when the worker starts (deterministic: every
worker of a run gets the same table), once per process: its channels share one
``workload.WorkloadReplay``, which keeps only the native table when the native path
writes (``rows.make_generator(..., workload=replay)`` makes either backend's generator).
The native backend needs a module with the runtime generator; without one the msgspec
generator writes the same bytes.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, Protocol

from .. import rows
from ..landing_table import load_checked
from ..rows import Backend, native_module
from .config import ConfigError

__all__ = ["GeneratorSettings", "native_workload_module", "workload_generators"]

log = logging.getLogger("elastic_channels.worker")


class GeneratorSettings(Protocol):
    """What :func:`workload_generators` reads of its settings: a worker's
    :class:`.config.WorkerConfig`, or the bench's few settings (no connection, pipe or
    pacing to fill in the rest with)."""

    @property
    def run_id(self) -> str: ...
    @property
    def worker_id(self) -> int: ...
    @property
    def encoder(self) -> str | None: ...
    @property
    def workload(self) -> str: ...


@functools.lru_cache(maxsize=4)
def workload_replay(workload: str) -> Any:
    """The workload's replay, once per process (a worker's channels share it)."""
    from ..workload.replay import WorkloadReplay

    return WorkloadReplay(load_checked(workload))


def native_workload_module() -> Any:
    """The native module when it has the runtime workload generator, else None."""
    native = native_module()
    if native is None or not hasattr(native, "WorkloadGenerator"):
        return None
    return native


def workload_generators(
    cfg: GeneratorSettings, encoder: Backend
) -> tuple[Callable[[int], Any], Backend]:
    """(a function making this worker's generator from a sequence number, the backend it
    uses): ``encoder`` is the backend chosen for the run; native falls back to the
    msgspec path, with a log line, when the installed module has no runtime generator
    (``--encoder native`` then fails, naming why)."""
    backend: Backend = encoder
    if encoder == "native" and native_workload_module() is None:
        if cfg.encoder == "native":
            raise ConfigError(
                "--encoder native: the installed elastic_native has no WorkloadGenerator "
                "(built before runtime workloads); rebuild it with `pip install .`"
            )
        log.info("workload %s: msgspec path (the native module has no runtime generator)",
                 cfg.workload)  # fmt: skip
        backend = "python"
    try:
        replay = workload_replay(cfg.workload)
    except ValueError as e:
        raise ConfigError(str(e)) from None

    def make(start_seq: int) -> Any:
        return rows.make_generator(
            cfg.run_id, cfg.worker_id, start_seq=start_seq, backend=backend, workload=replay
        )

    return make, backend
