"""Side-by-side: what one batch of rows costs on each path, in one run.

    python benches/bench_encoders.py [--repeats 15] [--paths native,python,orjson] [--json]
    python benches/bench_encoders.py --workload iot-telemetry [--workload ...] [--json]

Paths, all producing the same rows:
  native   elastic_native.ResortGenerator.next_batch (generate + write in Rust)
  python   rows.ResortGenerator.next_batch (msgspec Structs + encode_lines)
  orjson   the same rows as dicts, each orjson.dumps'd, joined with newlines; opt-in
           (--paths ...,orjson): orjson is not a dependency of the project

With --workload NAME (a shipped workload, or a file; repeatable, or `all` for every
shipped one), each workload's rows instead, resolved at runtime:
  native   elastic_native.WorkloadGenerator.next_batch (the runtime table, in Rust)
  python   rows.WorkloadGenerator.next_batch (msgspec Structs + encode_lines)
  compiled elastic_native.ResortGenerator.next_batch: for resort-sales only, the
           compiled table beside the runtime one (the same bytes)
and batch sizes default to about 0.3, 1 and 3 MB of that workload's rows.

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


WORKLOAD_PATHS = ("native", "python", "compiled")
WORKLOAD_MB = (0.3, 1.0, 3.0)


def workload_paths(name: str, paths: list[str]) -> tuple[dict, list[int]]:
    """``name``'s path makers (those of ``paths`` that apply) and its default sizes."""
    import elastic_native
    from elastic_channels.workload import WorkloadReplay, load_workload

    replay = WorkloadReplay(load_workload(name))
    resolved = replay.resolved()

    def native(n: int):
        gen = elastic_native.WorkloadGenerator(
            replay.native_table(), RUN_ID, 17, start_seq=1_000_000
        )
        return lambda: gen.next_batch(n, SALE_TIME_US)

    def python(n: int):
        gen = rows.WorkloadGenerator(resolved, RUN_ID, 17, start_seq=1_000_000)
        return lambda: gen.next_batch(n, SALE_TIME_US)

    makers = {"native": native, "python": python}
    if resolved.workload.name == "resort-sales":
        makers["compiled"] = native_path
    per_row = rows.WorkloadGenerator(resolved, RUN_ID, 17).batch_len(1000, SALE_TIME_US) / 1000
    sizes = [max(1, round(mb * MB / per_row)) for mb in WORKLOAD_MB]
    return {p: makers[p] for p in paths if p in makers}, sizes


def measure(
    sizes: list[int], repeats: int, paths: list[str], makers: dict | None = None
) -> list[dict]:
    makers = makers or PATHS
    results = []
    for n in sizes:
        fns = {name: makers[name](n) for name in paths if name in makers}
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
        default=None,
        help="paths to run, comma-separated: native, python, orjson (default: native,python); "
        "with --workload: native, python, compiled (default: all three)",
    )
    p.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    p.add_argument(
        "--workload",
        action="append",
        metavar="NAME",
        help="a workload's rows (shipped name or file; repeatable; `all`: every shipped one); "
        "paths native, python and, for resort-sales, compiled",
    )
    args = p.parse_args(argv)
    if args.workload:
        return main_workloads(p, args)
    sizes = [int(s) for s in args.sizes.split(",")]
    paths = (args.paths or "native,python").split(",")
    problems = missing(paths)
    if problems:
        p.error("; ".join(problems))
    results = measure(sizes, args.repeats, paths)
    show(results, args.json)
    return 0


def main_workloads(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``--workload``: each workload's paths side by side, workload after workload."""
    from elastic_channels.workload import WorkloadError, shipped_names

    names = [n for w in args.workload for n in (shipped_names() if w == "all" else [w])]
    paths = args.paths.split(",") if args.paths else list(WORKLOAD_PATHS)
    unknown = [x for x in paths if x not in WORKLOAD_PATHS]
    if unknown:
        known = ", ".join(WORKLOAD_PATHS)
        p.error(f"with --workload the paths are {known}, not {', '.join(unknown)}")
    problems = missing(["native"])
    if problems:
        p.error("; ".join(problems))
    results = []
    for name in names:
        try:
            makers, sizes = workload_paths(name, paths)
        except WorkloadError as e:
            p.error(str(e))
        if args.sizes != p.get_default("sizes"):
            sizes = [int(s) for s in args.sizes.split(",")]
        for r in measure(sizes, args.repeats, list(makers), makers):
            results.append({"workload": name, **r})
    show(results, args.json)
    return 0


def show(results: list[dict], as_json: bool) -> None:
    if as_json:
        for r in results:
            print(json.dumps(r))
        return
    workloads = any("workload" in r for r in results)
    head = f"{'workload':>14} " if workloads else ""
    print(
        f"{head}{'rows':>7} {'path':>8} {'batch MB':>9} {'median ms':>10} {'MB/s':>9} "
        f"{'rows/s':>13} {'x python':>9}"
    )
    for r in results:
        lead = f"{r['workload']:>14} " if workloads else ""
        print(
            f"{lead}{r['rows']:>7} {r['path']:>8} {r['batch_bytes'] / MB:>9.2f} "
            f"{r['median_ms']:>10.3f} {r['mb_per_s']:>9.1f} {r['rows_per_s']:>13,} "
            f"{r['x_python'] or '':>9}"
        )


if __name__ == "__main__":
    sys.exit(main())
