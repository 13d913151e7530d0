"""Rows: the row-generator protocol, the backend choice, the pure-Python generators
(resort sales from the compiled model; any workload from its resolved table).

Both backends (``elastic_native``'s Rust generator and ``python_generator``'s msgspec
path) satisfy ``RowGenerator`` and write byte-identical NDJSON. ``select_backend`` is
the one place that decides which is used.
"""

from .backend import (
    ENV_VAR,
    choose_backend,
    fast_encode_requested,
    make_generator,
    native_module,
    rows_per_batch,
    select_backend,
)
from .protocol import Backend, RowGenerator, RowObjectGenerator
from .python_generator import ResortGenerator, check_generator_args
from .workload_generator import WorkloadGenerator

__all__ = [
    "ENV_VAR",
    "Backend",
    "ResortGenerator",
    "RowGenerator",
    "RowObjectGenerator",
    "WorkloadGenerator",
    "check_generator_args",
    "choose_backend",
    "fast_encode_requested",
    "make_generator",
    "native_module",
    "rows_per_batch",
    "select_backend",
]
