"""What the native writer costs where the worker calls it: right after a sleep.

    python benches/bench_cold_writer.py [--sleep-ms 10] [--batches 400] [SITE ...]

A worker makes one ~1 MB batch, hands it to the SDK, then sleeps out its pacing slot
while the SDK compresses on other threads; the next batch starts with cold caches.
This measures one batch's thread CPU time back to back ("warm") and after each sleep
("after sleep"). Given SITE directories (each a `pip install --target SITE .` of some
build), it loads every build's extension into this one process and alternates
batches between them, so machine noise hits them alike: an A/B of builds. Without
SITE it measures the installed `elastic_native`. Figures are medians (p25-p75).
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import time
from types import ModuleType

ROWS = 3_810  # ~1 MB, the worker's default batch
SALE_TIME_US = 1_764_470_646_123_456


def load(site: str) -> ModuleType:
    found = glob.glob(f"{site}/elastic_native/_elastic_native*.so")
    if not found:
        raise SystemExit(f"{site}: no elastic_native/_elastic_native*.so there")
    spec = importlib.util.spec_from_file_location("_elastic_native", found[0])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def quartiles(ns: list[int]) -> str:
    ns = sorted(ns)
    q = [ns[len(ns) * k // 4] / 1e3 for k in (1, 2, 3)]
    return f"{q[1]:7.1f} us ({q[0]:.0f}-{q[2]:.0f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sites", nargs="*", help="pip --target directories of builds to compare")
    parser.add_argument("--sleep-ms", type=float, default=10.0, help="sleep before each batch")
    parser.add_argument("--batches", type=int, default=400, help="batches per build and mode")
    parser.add_argument("--rows", type=int, default=ROWS, help="rows per batch")
    args = parser.parse_args()
    if args.sites:
        builds = {site: load(site) for site in args.sites}
    else:
        import elastic_native

        builds = {"installed": elastic_native}
    gens = {name: m.ResortGenerator("bench-cold", 3) for name, m in builds.items()}
    size = len(next(iter(gens.values())).next_batch(args.rows, SALE_TIME_US))
    print(f"{args.rows} rows = {size / 1e6:.2f} MB per batch; sleep {args.sleep_ms} ms")
    for mode in ("warm", "after sleep"):
        times: dict[str, list[int]] = {name: [] for name in gens}
        for _ in range(args.batches):
            for name, gen in gens.items():
                if mode != "warm":
                    time.sleep(args.sleep_ms / 1e3)
                t0 = time.thread_time_ns()
                batch = gen.next_batch(args.rows, SALE_TIME_US)
                times[name].append(time.thread_time_ns() - t0)
                del batch
        for name, ns in times.items():
            per_gb = sorted(ns)[len(ns) // 2] / 1e9 / (size / 1e9)
            print(f"{mode:12s} {name:30s} {quartiles(ns)}  = {per_gb:.3f} CPU-s/GB")


if __name__ == "__main__":
    main()
