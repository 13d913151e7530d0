"""Native table (Parquet files) vs Apache Iceberg table: the same worker rate into both
formats, in one run, on this machine (the local counterpart of the reference's FDN vs
Iceberg runs).

For each format in turn (``--rounds`` times, alternating) it starts
``python -m elastic_channels.emulator serve --table-format FORMAT`` on a fresh data dir
and one real worker (``python -m elastic_channels.worker``: the SDK, one elastic channel,
the native fast path) at ``--target-bps`` for ``--duration-seconds``, waits until every
acked row is committed, stops the emulator (which deletes merged-away files), then reads
back:

  landing_cost_cpu_s_per_gb   ALL the emulator process's CPU from just before the worker
                              starts until the last row is committed (HTTPS, inflate,
                              spool, parse, Parquet write + commit, compaction),
                              per GB of NDJSON landed (GB = 10**9 bytes, uncompressed)
  visible_p50_ms / p99_ms     ingest-to-visible: _COMMIT_TIME - SALE_TIME of the run's rows
  files_written               Parquet data files written: flushes + compaction outputs
                              (Iceberg: its snapshots' added data files; native: one per
                              landing commit, counted as the distinct LANDED_AT of the
                              requests that inserted rows, plus one per merge)
  data_files_at_end           the ``*.parquet`` files on disk at the end (native:
                              DATA_DIR/files/, Iceberg: DATA_DIR/iceberg/)
  compactions                 merges done (native: the store's, Iceberg: its compactor's)
  bytes_on_disk               those Parquet files' bytes
  other_bytes                 everything else the data dir keeps: the DuckDB file (native:
                              the file registry and landed-request records; both: the
                              errors table), its WAL, Iceberg's metadata and manifests,
                              what is left in the spool

    python benches/bench_iceberg.py --target-bps 20e6 --duration-seconds 30
    python benches/bench_iceberg.py --target-bps 20e6 --duration-seconds 30 --rounds 2 --json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
FORMATS = ("native", "iceberg")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wait_for(path: Path, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None:
            raise SystemExit(f"the emulator exited {proc.returncode} before it was ready")
        if time.monotonic() > deadline:
            proc.kill()
            raise SystemExit("the emulator did not become ready")
        time.sleep(0.05)


def _summary(stdout: str) -> dict[str, Any]:
    for line in reversed(stdout.splitlines()):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if record.get("type") == "summary":
            return record
    raise SystemExit("the worker printed no summary line")


def _tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def bench_one(args: argparse.Namespace, fmt: str, root: Path, n: int) -> dict[str, Any]:
    from elastic_channels.emulator.control import ControlClient
    from elastic_channels.emulator.storage.store import FILES_DIR, ICEBERG_DIR, LANDED_TABLE

    data = root / f"{fmt}-{n}"
    info = root / f"{fmt}-{n}.json"
    env = {**os.environ, "SS_LOG_LEVEL": "warn"}
    serve = [sys.executable, "-m", "elastic_channels.emulator", "serve", "--data-dir", str(data),
             "--info-file", str(info), "--table-format", fmt,
             "--duration-seconds", str(args.duration_seconds + 900)]  # fmt: skip
    emu = subprocess.Popen(serve, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        _wait_for(info, emu, 60)
        control = ControlClient(data, timeout_s=700)
        run_id = f"bench-{fmt}-{n}"
        c0 = _cpu_seconds(emu.pid)
        worker = subprocess.run(
            [sys.executable, "-m", "elastic_channels.worker", "--worker-id", "0",
             "--profile", str(info), "--run-id", run_id,
             "--target-bps", repr(float(args.target_bps)),
             "--duration-seconds", repr(float(args.duration_seconds))],
            capture_output=True, text=True, env=env, timeout=args.duration_seconds + 600,
            check=False,
        )  # fmt: skip
        if worker.returncode != 0:
            raise SystemExit(f"the worker failed: {worker.stderr[-2000:]}")
        w = _summary(worker.stdout)
        if not control.json("POST", "wait-landed", {"timeout_s": 600})["landed"]:
            raise SystemExit("the emulator did not land everything within 600 s")
        cpu = _cpu_seconds(emu.pid) - c0
        stats = control.json("GET", "stats")
        lines = control.call("POST", "query", {"sql": (
            "SELECT count(*) AS n, quantile_cont(ms, 0.5) AS p50, quantile_cont(ms, 0.99) AS p99 "
            "FROM (SELECT epoch_ms(_COMMIT_TIME) - epoch_ms(SALE_TIME) AS ms FROM RESORT_SALES "
            f"WHERE RUN_ID = '{run_id}')")})  # fmt: skip
        lat = json.loads(lines.splitlines()[0])
        commits = None
        if fmt == "native":  # one data file per landing commit; its requests share LANDED_AT
            found = control.call("POST", "query", {"sql": (
                f"SELECT count(DISTINCT LANDED_AT) AS n FROM {LANDED_TABLE} "
                "WHERE ROWS_INSERTED > 0")})  # fmt: skip
            commits = int(json.loads(found.splitlines()[0])["n"])
    finally:
        emu.terminate()
        emu.wait(120)
    gb = stats["bytes_landed"] / 1e9
    out: dict[str, Any] = {
        "format": fmt,
        "round": n,
        "worker_mb_per_s": w.get("mb_per_s"),
        "rows_landed": stats["rows_landed"],
        "rows_acked": w.get("rows_acked"),
        "gb_landed": round(gb, 3),
        "landing_cost_cpu_s_per_gb": round(cpu / gb, 2) if gb else None,
        "visible_p50_ms": round(lat["p50"], 1) if lat["p50"] is not None else None,
        "visible_p99_ms": round(lat["p99"], 1) if lat["p99"] is not None else None,
    }
    parquet = sorted((data / (ICEBERG_DIR if fmt == "iceberg" else FILES_DIR)).rglob("*.parquet"))
    data_bytes = sum(p.stat().st_size for p in parquet)
    if fmt == "iceberg":
        ice = stats["iceberg"]
        written, compactions = ice["files_written"], ice["compactions"]
    else:
        compactions = stats["data_files"]["compactions"]
        written = (commits or 0) + compactions
    out.update(
        files_written=written,
        data_files_at_end=len(parquet),
        compactions=compactions,
        bytes_on_disk=data_bytes,
        other_bytes=_tree_bytes(data) - data_bytes,
    )
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--target-bps", type=float, default=20e6, help="worker rate (default 20e6)")
    p.add_argument("--duration-seconds", type=float, default=30.0, help="per format (default 30)")
    p.add_argument("--rounds", type=int, default=1, help="native+iceberg pairs (default 1)")
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON line with every result, alone on stdout (the table goes to stderr)",
    )
    args = p.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-iceberg-") as tmp:
        for n in range(args.rounds):
            for fmt in FORMATS:
                r = bench_one(args, fmt, Path(tmp), n)
                results.append(r)
                print(json.dumps(r), file=sys.stderr, flush=True)
    keys = ["worker_mb_per_s", "rows_landed", "landing_cost_cpu_s_per_gb", "visible_p50_ms",
            "visible_p99_ms", "files_written", "data_files_at_end", "compactions",
            "bytes_on_disk", "other_bytes"]  # fmt: skip
    out = sys.stderr if args.json else sys.stdout  # --json: stdout holds the JSON alone
    heads = [f"{r['format']} #{r['round']}" for r in results]
    print(f"{'':28}" + "".join(f"{h:>16}" for h in heads), file=out)
    for k in keys:
        print(f"{k:28}" + "".join(f"{r[k]!s:>16}" for r in results), file=out)
    print(
        f"target {args.target_bps / 1e6:g} MB/s for {args.duration_seconds:g} s; "
        f"cpus {os.cpu_count()}",
        file=out,
    )
    if args.json:
        print(json.dumps({"args": vars(args), "results": results}))


if __name__ == "__main__":
    main()
