"""A workload's landing table written straight into an emulator-like data dir: the rows
its msgspec generator (``rows/workload_generator.py``) makes, in a DuckDB table typed as
the emulator types a workload's columns (VARIANT as JSON), with ``_COMMIT_TIME``."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import msgspec

from elastic_channels.workload import CheckedWorkload
from elastic_channels.workload.replay import resolve

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def duck_type(t: Any) -> str:
    """A workload column's DuckDB type, as the emulator's schema maps it."""
    kind = t.kind
    if kind == "NUMBER":
        return f"DECIMAL({t.precision},{t.scale})"
    return {
        "VARCHAR": "VARCHAR", "FLOAT": "DOUBLE", "BOOLEAN": "BOOLEAN", "DATE": "DATE",
        "TIMESTAMP_TZ": "TIMESTAMPTZ", "TIMESTAMP_NTZ": "TIMESTAMP", "VARIANT": "JSON",
    }[kind]  # fmt: skip


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class Batch:
    """``rows`` rows of ``run_id`` from ``worker``, sent at ``sent`` and committed
    ``delay_ms`` later (each row one more ms, so delays differ); from sequence number
    ``start_seq`` (None: after the worker's previous batch; an earlier one lands rows
    again, as duplicates)."""

    run_id: str
    worker: int
    rows: int
    sent: dt.datetime
    delay_ms: int = 800
    start_seq: int | None = None


def write_rows(data_dir: Path, w: CheckedWorkload, batches: list[Batch]) -> list[dict[str, Any]]:
    """Create ``w``'s table in ``data_dir/emulator.duckdb`` (if absent) and insert the
    generator's rows of ``batches``; returns the rows as inserted (``_COMMIT_TIME`` too)."""
    from elastic_channels.rows.workload_generator import WorkloadGenerator

    data_dir.mkdir(parents=True, exist_ok=True)
    resolved = resolve(w)
    names = [c.name for c in w.columns]
    kinds = {c.name: c.type.kind for c in w.columns}
    con = duckdb.connect(str(data_dir / "emulator.duckdb"))
    out: list[dict[str, Any]] = []
    try:
        con.execute("SET TimeZone = 'UTC'")
        body = ", ".join(f"{quote(c.name)} {duck_type(c.type)} NOT NULL" for c in w.columns)
        commit_col = "_COMMIT_TIME TIMESTAMPTZ NOT NULL"
        con.execute(f"CREATE TABLE IF NOT EXISTS {quote(w.table)} ({body}, {commit_col})")
        seqs: dict[tuple[str, int], int] = {}
        for b in batches:
            start = b.start_seq if b.start_seq is not None else seqs.get((b.run_id, b.worker), 0)
            gen = WorkloadGenerator(resolved, b.run_id, b.worker, start_seq=start)
            us = int((b.sent - EPOCH).total_seconds() * 1_000_000)
            lines = gen.next_batch(b.rows, us).splitlines()
            seqs[(b.run_id, b.worker)] = max(gen.seq, seqs.get((b.run_id, b.worker), 0))
            params = []
            for i, line in enumerate(lines):
                row = msgspec.json.decode(line)
                values = [json.dumps(row[n]) if kinds[n] == "VARIANT" else row[n] for n in names]
                commit = b.sent + dt.timedelta(milliseconds=b.delay_ms + i)
                params.append([*values, commit])
                out.append({**row, "_COMMIT_TIME": commit})
            marks = ", ".join("?" for _ in range(len(names) + 1))
            con.executemany(f"INSERT INTO {quote(w.table)} VALUES ({marks})", params)
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return out
