"""What counting billable bytes costs (issue #32), side by side in one run.

    python benches/bench_billable.py [--workload wide-events] [--rounds 15] [--json]

Writer (worker side): ``elastic_native.WorkloadGenerator.next_batch`` over the same
workload's table made twice, with its values' bytes (``value_bytes=``: every batch then
counts its billable bytes as it is sized) and without (no count); the two write the same
bytes. The count is arithmetic on the plan (prefix sums, like the batch's length), so
the difference should be noise.

Emulator (server side): ``elastic_native.billable_bytes(body)`` (one pass over a landed
body) beside ``RowParser.parse(body)`` (the landing parse it runs after), per MB.

Rounds are interleaved so machine noise hits both sides alike; figures are medians.
MB is 10**6 bytes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import elastic_native
from elastic_channels.emulator.landing.batch_native import column_specs
from elastic_channels.measures import MB
from elastic_channels.workload import load_workload
from elastic_channels.workload.replay import WorkloadReplay

NOW_US = 1_764_470_646_123_456


def _rate(fn, nbytes: int, repeats: int) -> float:
    t0 = time.perf_counter()
    for _ in range(repeats):
        fn()
    return nbytes * repeats / (time.perf_counter() - t0) / MB


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", default="resort-sales")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--batch-rows", type=int, default=5_000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    replay = WorkloadReplay(load_workload(args.workload))
    t = replay.resolved().table
    counted = replay.native_table()
    bare = elastic_native.WorkloadTable(t.entries, t.stride, t.pieces, t.ids, t.template)
    gens = {
        "with_count": elastic_native.WorkloadGenerator(counted, "r", 1),
        "without": elastic_native.WorkloadGenerator(bare, "r", 1),
    }
    n = args.batch_rows
    body = gens["with_count"].next_batch(n, NOW_US)
    columns = [(c.name, c.type.sql) for c in replay.workload.columns]
    parser = elastic_native.RowParser(column_specs(columns), check_keys=True)
    sides: dict[str, list[float]] = {k: [] for k in ("with_count", "without", "count", "parse")}
    for r in range(args.rounds):
        order = list(gens.items()) if r % 2 else list(gens.items())[::-1]  # alternate
        for name, gen in order:
            sides[name].append(_rate(lambda g=gen: g.next_batch(n, NOW_US), len(body), 200))
        sides["count"].append(_rate(lambda: elastic_native.billable_bytes(body), len(body), 20))
        sides["parse"].append(_rate(lambda: parser.parse(body), len(body), 5))
    med = {k: round(statistics.median(v), 1) for k, v in sides.items()}
    gen = gens["with_count"]
    plan_us = {}
    for name, fn in (("billable_len", gen.billable_len), ("batch_len", gen.batch_len)):
        t0 = time.perf_counter()
        for _ in range(100_000):
            fn(n, NOW_US)
        plan_us[name] = round((time.perf_counter() - t0) * 10, 3)  # per call, µs
    out = {
        "workload": args.workload,
        "batch_bytes": len(body),
        "billable_share": round(elastic_native.billable_bytes(body) / len(body), 3),
        "writer_mb_per_s": {"with_count": med["with_count"], "without": med["without"]},
        "writer_cost_pct": round((med["without"] / med["with_count"] - 1) * 100, 2),
        "plan_us": plan_us,
        "emulator_mb_per_s": {"billable_bytes": med["count"], "row_parse": med["parse"]},
    }
    if args.json:
        print(json.dumps(out))
        return
    print(f"{args.workload}: batch {len(body):,} B, values {out['billable_share']:.1%} of it")
    print(f"  writer  with the count {med['with_count']:,.0f} MB/s, without {med['without']:,.0f}"
          f" MB/s ({out['writer_cost_pct']:+.2f}%)")  # fmt: skip
    print(f"  sizing a batch: billable_len {plan_us['billable_len']} µs, batch_len "
          f"{plan_us['batch_len']} µs (a call each, from Python)")  # fmt: skip
    print(f"  emulator billable_bytes {med['count']:,.0f} MB/s, row parse {med['parse']:,.0f} MB/s")


if __name__ == "__main__":
    main()
