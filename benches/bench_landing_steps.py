"""Where the emulator's landing CPU goes, step by step, in one process: the same
generated NDJSON bodies (as the SDK sends them) through each step a landing does, and
both ways of storing the rows side by side (a DuckDB table insert + commit, as before;
one Parquet data file per batch, as now), and what merging those files into one costs
(the background compactor's work, once per level a row climbs).

    python benches/bench_landing_steps.py [--bodies 60] [--repeat 5]

Figures are process CPU seconds per GB of NDJSON (10^9 bytes), the median of
``--repeat`` runs of each step (every DuckDB-table run on a fresh database file);
docs/PERFORMANCE.md keeps them with the machine they came from.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import pyarrow as pa
import zstandard

from elastic_channels.emulator.landing.batch_native import NativeParse
from elastic_channels.emulator.landing.lines import clean_lines
from elastic_channels.emulator.storage.parquet_files import (
    repeating_columns,
    storage_schema,
    write_table,
)
from elastic_channels.emulator.storage.schema import (
    COMMIT_TIME_COLUMN,
    create_table_sql,
    quote_ident,
)
from elastic_channels.model import COLUMNS
from elastic_channels.rows import ResortGenerator

#: Rows per body: ~4.4 MB of NDJSON, the SDK's usual request at 20 MB/s.
ROWS_PER_BODY = 16_000
#: Bodies per landing batch (one file, or one DuckDB transaction): ~1 s at 20 MB/s.
BODIES_PER_BATCH = 5


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _median_cpu_s_per_gb(fn: Callable[[], object], gb: float, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        c0 = _cpu()
        fn()
        runs.append((_cpu() - c0) / gb)
    return round(statistics.median(runs), 3)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bodies", type=int, default=60, help="bodies of ~4.4 MB (default 60)")
    ap.add_argument("--repeat", type=int, default=5, help="runs of each step (default 5)")
    args = ap.parse_args(argv)

    gen = ResortGenerator("bench", 0)
    now_us = time.time_ns() // 1000
    bodies = [gen.next_batch(ROWS_PER_BODY, now_us + i * 10**6) for i in range(args.bodies)]
    gb = sum(map(len, bodies)) / 1e9
    cols = list(COLUMNS)
    wire = [zstandard.ZstdCompressor(level=3).compress(b) for b in bodies]
    parser = NativeParse(cols)
    schema = storage_schema(cols)
    data_schema = pa.schema(list(schema)[:-1])

    def parse() -> list[pa.Table]:
        out = []
        for i in range(0, len(bodies), BODIES_PER_BATCH):
            batches = [
                parser._batch(*parser._parser.parse(b)[:2])
                for b in bodies[i : i + BODIES_PER_BATCH]
            ]
            out.append(pa.Table.from_batches(batches).cast(data_schema))
        return out

    tables = parse()
    stamp_field = schema.field(COMMIT_TIME_COLUMN)
    stamped = [
        t.append_column(stamp_field, pa.repeat(pa.scalar(now_us, stamp_field.type), t.num_rows))
        for t in tables
    ]
    dictionary = repeating_columns(stamped[0])
    tmp = Path(tempfile.mkdtemp(prefix="bench-landing-steps-"))
    names = ", ".join(quote_ident(n) for n, _ in cols)

    def parquet_files() -> None:
        for i, t in enumerate(stamped):
            write_table(t, tmp / f"{i}.parquet", fsync=True, dictionary=dictionary)

    def duckdb_table() -> None:
        db = tmp / f"t{time.monotonic_ns()}.duckdb"
        con = duckdb.connect(str(db), config={"threads": 2, "preserve_insertion_order": False})
        con.execute("SET disabled_compression_methods = 'fsst'")  # as the old store did
        con.execute(create_table_sql("T", cols))
        for t in tables:
            con.execute("BEGIN")
            con.register("rows_in", t)
            con.execute(f"INSERT INTO T SELECT {names}, now() FROM rows_in")
            con.unregister("rows_in")
            con.execute("COMMIT")
        con.execute("CHECKPOINT")
        con.close()
        db.unlink()

    def merge_files() -> None:
        # the compactor's merge of the batches' files (parquet_compact.Compactor._merge)
        from types import SimpleNamespace

        from elastic_channels.emulator.storage.parquet_compact import Compactor

        store = SimpleNamespace(schema=schema, dictionary=dictionary, fsync=True)
        sources = [tmp / f"{i}.parquet" for i in range(len(stamped))]
        Compactor(store)._merge(sources, tmp / "merged.parquet")  # type: ignore[arg-type]

    steps = {
        "zstd inflate": lambda: [zstandard.ZstdDecompressor().decompress(w) for w in wire],
        "line check (clean_lines)": lambda: [clean_lines(b) for b in bodies],
        "native parse (RowParser) + Arrow": parse,
        "store: DuckDB table insert + commit + checkpoint (before)": duckdb_table,
        "store: one Parquet file per batch, fsynced (now)": parquet_files,
        "merge: those files streamed into one (a compaction, per level)": merge_files,
    }
    out = {
        "gb": round(gb, 3),
        "rows": sum(t.num_rows for t in tables),
        "cpu_s_per_gb": {k: _median_cpu_s_per_gb(f, gb, args.repeat) for k, f in steps.items()},
        "dictionary_columns": dictionary,
        "cpus": os.cpu_count(),
        "loadavg_1m": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
