"""Workloads: a table's rows described as data, resolved in Python, replayed natively.

A workload file (YAML; ``docs/WORKLOADS.md`` documents the format) names the table and
declares each column's Snowflake type and where its values come from. The calls:

- ``load_workload(name_or_path)``: a shipped workload by name, or a file, checked in
  full (a :class:`WorkloadError` names the file, line, column and key);
  ``shipped_names()`` lists the shipped ones; ``load_text``/``from_data`` take text or
  values.
- the result, a :class:`CheckedWorkload`: ``table``, ``pipe``, ``columns`` (each with
  ``name``, ``type`` (a :class:`SnowflakeType`, ``.sql`` its DDL spelling) and
  ``source``), ``sql_columns`` (``(name, type)`` pairs), ``unique_id_column`` (None when
  there is none: loss cannot be counted).
- ``WorkloadReplay(workload)``: what a process's generators of one workload share,
  made when first needed; pass it to ``rows.make_generator(..., workload=replay)`` for
  either backend. ``resolve(workload)`` resolves eagerly into a
  :class:`ResolvedWorkload` (its ``table`` is what the native side takes).
"""

from .errors import WorkloadError
from .load import from_data, is_path, load_file, load_text, load_workload, shipped_names
from .model import CheckedColumn, CheckedWorkload, Workload
from .replay import ReplayTable, ResolvedWorkload, WorkloadReplay, resolve
from .types import SnowflakeType, parse_type

__all__ = [
    "CheckedColumn",
    "CheckedWorkload",
    "ReplayTable",
    "ResolvedWorkload",
    "SnowflakeType",
    "Workload",
    "WorkloadError",
    "WorkloadReplay",
    "from_data",
    "is_path",
    "load_file",
    "load_text",
    "load_workload",
    "parse_type",
    "resolve",
    "shipped_names",
]
