"""Pick the row generator, once: the native one when it is there and not switched off.

``ELASTIC_FAST_JSON_ENCODE`` (default ``true``) turns the native fast path on; any of
``false``/``0``/``no``/``off`` turns it off. Without the native module, or with one
built from another model, the msgspec path is used by itself. ``select_backend`` says
which path is in use and why, in its return value and in one log line.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from ..model.table import table_fingerprint
from .protocol import Backend, RowGenerator
from .python_generator import ResortGenerator as PythonResortGenerator
from .workload_generator import WorkloadGenerator as PythonWorkloadGenerator

if TYPE_CHECKING:
    from ..workload.replay import WorkloadReplay

log = logging.getLogger("elastic_channels.rows")

ENV_VAR = "ELASTIC_FAST_JSON_ENCODE"
_FALSE = frozenset({"false", "0", "no", "off"})


def fast_encode_requested(environ: dict[str, str] | None = None) -> bool:
    value = (os.environ if environ is None else environ).get(ENV_VAR, "true")
    return value.strip().lower() not in _FALSE


def native_module() -> Any:
    """The native module, or None when it is not installed or built from another model."""
    try:
        import elastic_native
    except ImportError as e:
        log.debug("elastic_native not importable: %s", e)
        return None
    if elastic_native.TABLES_FINGERPRINT != table_fingerprint():
        log.warning(
            "elastic_native was built from another model (fingerprint %s, model %s): "
            "not using it; rebuild with `pip install .`",
            elastic_native.TABLES_FINGERPRINT[:12],
            table_fingerprint()[:12],
        )
        return None
    return elastic_native


def choose_backend(requested: Backend | None = None) -> tuple[Backend, str]:
    """(backend, why): ``requested`` if given (native must then be available), else
    native unless switched off or missing."""
    if requested == "python":
        return "python", "requested"
    if requested == "native":
        if native_module() is None:
            raise RuntimeError(
                "the native encoder was requested but elastic_native is not installed "
                "(or is stale); install it with `pip install .`"
            )
        return "native", "requested"
    if requested is not None:
        raise ValueError(f"backend must be 'native' or 'python', got {requested!r}")
    if not fast_encode_requested():
        return "python", f"{ENV_VAR} is off"
    if native_module() is None:
        return "python", "elastic_native is not installed"
    return "native", "default"


def select_backend(requested: Backend | None = None) -> Backend:
    """``choose_backend``, with one log line saying which path is in use and why."""
    backend, why = choose_backend(requested)
    log.info("row encoding: %s path (%s)", backend, why)
    return backend


def make_generator(
    run_id: str,
    worker_id: int,
    *,
    start_seq: int = 0,
    backend: Backend,
    workload: WorkloadReplay | None = None,
) -> RowGenerator:
    """A generator for ``backend``; both produce byte-identical batches.

    Without ``workload``: resort sales, from the compiled table. With one (a
    ``workload.WorkloadReplay``, one per process and workload, shared by its
    generators): that workload's rows, from its table resolved at runtime.
    """
    if workload is not None:
        if backend == "native":
            import elastic_native

            table = workload.native_table()
            return elastic_native.WorkloadGenerator(table, run_id, worker_id, start_seq=start_seq)
        resolved = workload.resolved()
        return PythonWorkloadGenerator(resolved, run_id, worker_id, start_seq=start_seq)
    if backend == "native":
        import elastic_native

        return elastic_native.ResortGenerator(run_id, worker_id, start_seq=start_seq)
    return PythonResortGenerator(run_id, worker_id, start_seq=start_seq)


def rows_per_batch(gen: RowGenerator, batch_bytes: int, sale_time_us: int) -> int:
    """How many rows of ``gen`` make about ``batch_bytes`` of NDJSON, from the exact
    length of its next 1000 rows stamped ``sale_time_us`` (consumes nothing)."""
    per_row = gen.batch_len(1000, sale_time_us) / 1000
    return max(1, int(batch_bytes / per_row))
