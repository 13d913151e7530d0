"""Pick the row generator: the native one when it is there and not switched off.

``ELASTIC_FAST_JSON_ENCODE`` (default ``true``) turns the native fast path on; any of
``false``/``0``/``no``/``off`` turns it off. Without the native module the msgspec
path is used by itself. Either way one log line says which path is in use.
"""

from __future__ import annotations

import logging
import os
from typing import Literal, Protocol

from elastic_channels import resort_sales

log = logging.getLogger("elastic_channels.encoding")

ENV_VAR = "ELASTIC_FAST_JSON_ENCODE"
_FALSE = frozenset({"false", "0", "no", "off"})

Backend = Literal["native", "python"]


class RowGenerator(Protocol):
    """What both generators provide."""

    @property
    def seq(self) -> int: ...

    def next_batch(self, n: int, sale_time_us: int) -> bytes: ...


def fast_encode_requested(environ: dict[str, str] | None = None) -> bool:
    value = (os.environ if environ is None else environ).get(ENV_VAR, "true")
    return value.strip().lower() not in _FALSE


def native_module():
    """The native module, or None when it is not installed or built from another model."""
    try:
        import elastic_native
    except ImportError as e:
        log.debug("elastic_native not importable: %s", e)
        return None
    if elastic_native.TABLES_FINGERPRINT != resort_sales.table_fingerprint():
        log.warning(
            "elastic_native was built from another resort_sales model (fingerprint %s, "
            "model %s): not using it; rebuild with `pip install .`",
            elastic_native.TABLES_FINGERPRINT[:12],
            resort_sales.table_fingerprint()[:12],
        )
        return None
    return elastic_native


def select_backend(requested: Backend | None = None) -> Backend:
    """The backend to use: ``requested`` if given (native must then be available),
    else native unless switched off or missing. Logs one line with the choice."""
    if requested == "python":
        backend: Backend = "python"
        why = "requested"
    elif requested == "native":
        if native_module() is None:
            raise RuntimeError(
                "the native encoder was requested but elastic_native is not installed "
                "(or is stale); install it with `pip install .`"
            )
        backend, why = "native", "requested"
    elif not fast_encode_requested():
        backend, why = "python", f"{ENV_VAR} is off"
    elif native_module() is None:
        backend, why = "python", "elastic_native is not installed"
    else:
        backend, why = "native", "default"
    log.info("row encoding: %s path (%s)", backend, why)
    return backend


def make_generator(
    run_id: str, worker_id: int, *, start_seq: int = 0, backend: Backend
) -> RowGenerator:
    """A generator for ``backend``; both produce byte-identical batches."""
    if backend == "native":
        import elastic_native

        return elastic_native.ResortGenerator(run_id, worker_id, start_seq=start_seq)
    return resort_sales.ResortGenerator(run_id, worker_id, start_seq=start_seq)
