"""Side-by-side: what one batch of rows costs on each path, in one run.

    python benches/bench_encoders.py [--repeats 15] [--paths native,python,orjson] [--json]

Paths, all producing the same rows:
  native   elastic_native.ResortGenerator.next_batch (generate + write in Rust)
  python   rows.ResortGenerator.next_batch (msgspec Structs + encode_lines)
  orjson   the same rows as dicts, each orjson.dumps'd, joined with newlines; opt-in
           (--paths ...,orjson): orjson is not a dependency of the project

The paths run interleaved, round after round, so machine noise hits them alike; the
figures are medians over rounds. MB is 10**6 bytes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import time

from elastic_channels import model, rows
from elastic_channels.measures import MB

RUN_ID = "run-20261130-024406"
SALE_TIME_US = 1_764_470_646_123_456


def python_path(n: int):
    gen = rows.ResortGenerator(RUN_ID, 17, start_seq=1_000_000)
    return lambda: gen.next_batch(n, SALE_TIME_US)


def native_path(n: int):
    import elastic_native

    gen = elastic_native.ResortGenerator(RUN_ID, 17, start_seq=1_000_000)
    return lambda: gen.next_batch(n, SALE_TIME_US)


def orjson_path(n: int):
    import orjson

    fields = model.ResortSale.__struct_fields__
    gen = rows.ResortGenerator(RUN_ID, 17, start_seq=1_000_000)
    offset = 17 * model.WORKER_STRIDE
    t = dt.datetime.fromtimestamp(SALE_TIME_US / 1_000_000, dt.timezone.utc)
    dumps, opt = orjson.dumps, orjson.OPT_UTC_Z
    table, length = model.ROW_FIELDS, model.TABLE_LENGTH

    def batch() -> bytes:
        start = gen._seq  # the same rows the other paths make
        rows = [
            dict(
                zip(
                    fields,
                    (
                        f"{RUN_ID}-17-{s}",
                        *table[(offset + s) % length],
                        t,
                        RUN_ID,
                        17,
                    ),
                    strict=True,
                )
            )
            for s in range(start, start + n)
        ]
        gen._seq = start + n
        return b"\n".join([dumps(r, option=opt) for r in rows]) + b"\n"

    return batch


PATHS = {"native": native_path, "python": python_path, "orjson": orjson_path}
#: What each path needs beyond the project's own dependencies: (module, how to get it).
NEEDS = {
    "native": ("elastic_native", "build the native module: pip install . in a checkout"),
    "orjson": ("orjson", "pip install orjson (the project's test extra has it)"),
}


def missing(paths: list[str]) -> list[str]:
    """Why each path of ``paths`` cannot run here (unknown, or its module is missing)."""
    problems = []
    for name in paths:
        if name not in PATHS:
            problems.append(f"unknown path {name!r} (choose from {', '.join(PATHS)})")
        elif name in NEEDS:
            module, how = NEEDS[name]
            try:
                __import__(module)
            except ImportError:
                problems.append(f"path {name!r} needs the {module} module: {how}")
    return problems


def measure(sizes: list[int], repeats: int, paths: list[str]) -> list[dict]:
    results = []
    for n in sizes:
        fns = {name: PATHS[name](n) for name in paths}
        nbytes = {name: len(fn()) for name, fn in fns.items()}  # warm up
        times: dict[str, list[float]] = {name: [] for name in fns}
        for _ in range(repeats):
            for name, fn in fns.items():
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
        base = statistics.median(times["python"]) if "python" in times else None
        for name in fns:
            med = statistics.median(times[name])
            results.append(
                {
                    "rows": n,
                    "path": name,
                    "batch_bytes": nbytes[name],
                    "median_ms": round(med * 1e3, 3),
                    "mb_per_s": round(nbytes[name] / med / MB, 1),
                    "rows_per_s": round(n / med),
                    "x_python": round(base / med, 1) if base else None,
                }
            )
    return results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--sizes", default="1000,3400,10000,100000", help="rows per batch, comma-separated"
    )
    p.add_argument("--repeats", type=int, default=15, help="interleaved rounds per size")
    p.add_argument(
        "--paths",
        default="native,python",
        help="paths to run, comma-separated: native, python, orjson (default: native,python)",
    )
    p.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    args = p.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    paths = args.paths.split(",")
    problems = missing(paths)
    if problems:
        p.error("; ".join(problems))
    results = measure(sizes, args.repeats, paths)
    if args.json:
        for r in results:
            print(json.dumps(r))
        return 0
    print(
        f"{'rows':>7} {'path':>7} {'batch MB':>9} {'median ms':>10} {'MB/s':>9} "
        f"{'rows/s':>13} {'x python':>9}"
    )
    for r in results:
        print(
            f"{r['rows']:>7} {r['path']:>7} {r['batch_bytes'] / MB:>9.2f} {r['median_ms']:>10.3f} "
            f"{r['mb_per_s']:>9.1f} {r['rows_per_s']:>13,} {r['x_python'] or '':>9}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
