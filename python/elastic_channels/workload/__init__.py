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
"""

from .errors import WorkloadError
from .load import from_data, is_path, load_file, load_text, load_workload, shipped_names
from .model import CheckedColumn, CheckedWorkload, Workload
from .types import SnowflakeType, parse_type

__all__ = [
    "CheckedColumn",
    "CheckedWorkload",
    "SnowflakeType",
    "Workload",
    "WorkloadError",
    "from_data",
    "is_path",
    "load_file",
    "load_text",
    "load_workload",
    "parse_type",
    "shipped_names",
]
