"""Side by side through the real SDK into the emulator: what each append path costs.

    python benches/bench_worker_paths.py [--duration-seconds 20] [--rates 92e6,max]
        [--modes file,rowset]

Paths (one worker process each, run one after another against one emulator process):
  a  native rows + fast append (preserialized bytes to the SDK's FFI append)
  b  native rows through the public API (one msgspec.Raw per row)
  c  the Python path (msgspec Structs built in Python + public append_rows)
each with the SDK's zstd compression on and off, at 92 MB/s and flat out ("max"), in
the SDK's two ways of sending: "file" (its defaults, as on an account at these rates:
each flush over ~1 MiB compressed, encrypted and uploaded to the pipe's stage, then
registered) and "rowset" (every flush inline in the request, kept so by
ROWSET_MODE_PROPERTIES). The emulator serves both.

With --pin the worker process, SDK threads included, is held to one CPU, as in a
1-vCPU pod, so "max" is what one worker does on one core. The emulator is not held:
landing costs it more CPU than sending costs the worker, and it shares the worker's
core too, so a pinned worker has less than a whole core. On a small box the emulator,
not the worker, then sets "max"; --light-emulator makes it ack before fsync and skip
its key pre-scan, which moves that limit up (docs/PERFORMANCE.md has the figures).
The "cores" column is the worker's CPU over wall time: what it used of its core.
"gen+append %" is the narrower count the issue names: generating and encoding rows
plus the append bookkeeping (the SDK's append calls excluded), without pacing, acks
and windows.

Reports per run: achieved MB/s, worker CPU-seconds per GB (all threads: ours, the
SDK's, Python's), the share of that CPU that is the worker's own (all its thread did
but the SDK's append calls: generating, encoding, append bookkeeping, pacing, acks,
windows), peak RSS, and ack latency. MB is 10**6 bytes.
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

from elastic_channels.sdk.properties import ROWSET_MODE_PROPERTIES

PATHS = {
    "a": (["--append-mode", "ffi", "--encoder", "native"], {}),
    "b": (["--append-mode", "raw", "--encoder", "native"], {}),
    "c": ([], {"ELASTIC_FAST_JSON_ENCODE": "false"}),
}


def worker_cpus(pin: bool) -> set[int] | None:
    """The one CPU to hold the worker to (the last one), or None to leave it free."""
    return {max(os.sched_getaffinity(0))} if pin else None


def start_emulator(data_dir: Path, light: bool) -> tuple[subprocess.Popen, Path]:
    info = data_dir / "info.json"
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "elastic_channels.emulator", "serve",
            "--data-dir", str(data_dir), "--info-file", str(info),
            *(["--no-fsync", "--no-key-check"] if light else []),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    for _ in range(300):
        if info.exists():
            return proc, info
        if proc.poll() is not None:
            raise SystemExit("the emulator exited at start")
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("the emulator did not start within 30 s")


def run_worker(
    info: Path,
    path: str,
    rate: str,
    zstd: bool,
    seconds: float,
    wid: int,
    cpus: set[int] | None,
    mode: str = "file",
) -> dict:
    args, env_extra = PATHS[path]
    if mode == "rowset":
        args = [*args, *(f"--sdk-property={k}={v}" for k, v in ROWSET_MODE_PROPERTIES.items())]
    target = "4e9" if rate == "max" else rate
    cmd = [
        sys.executable, "-m", "elastic_channels.k8s_worker", "--profile", str(info),
        "--run-id", "bench-paths", "--worker-id", str(wid), "--target-bps", target,
        "--duration-seconds", str(seconds), "--window-seconds", str(seconds), *args,
    ]  # fmt: skip
    if not zstd:
        cmd += ["--sdk-property", "enable_rowset_compression=false"]
    proc = subprocess.Popen(
        cmd,
        env={**os.environ, **env_extra},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    if cpus:  # before the SDK starts its threads: they inherit the mask
        os.sched_setaffinity(proc.pid, cpus)
    try:
        stdout, stderr = proc.communicate(timeout=seconds + 180)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
    lines = [json.loads(x) for x in stdout.splitlines() if x.startswith("{")]
    summary = next((x for x in lines if x.get("type") == "summary"), None)
    if summary is None:
        raise SystemExit(f"worker {path}/{rate} gave no summary:\n{stderr[-2000:]}")
    cpu = summary["cpu_s"]
    # Ours: all the worker thread did (generating, encoding, append bookkeeping, pacing,
    # acks, windows) but the SDK's append calls; the SDK's threads are all the SDK's.
    own = summary["own_cpu_s"]
    wall = summary["seconds"] + summary["drain_seconds"]  # CPU runs to the last ack
    # The narrower count: generating + encoding rows and the append bookkeeping.
    gen_append = summary["gen_cpu_s"] + summary["append_own_cpu_s"]
    return {
        "path": path,
        "mode": mode,
        "rate": rate,
        "zstd": zstd,
        "mb_per_s": summary["mb_per_s"],
        "cpu_s_per_gb": summary["cpu_s_per_gb"],
        "cores": round(cpu / wall, 2) if wall else None,
        "own_cpu_share_pct": round(100 * own / cpu, 1) if cpu else None,
        "gen_append_share_pct": round(100 * gen_append / cpu, 1) if cpu else None,
        "peak_rss_mib": summary["peak_rss_mib"],
        "ack_p50_ms": summary["ack_p50_ms"],
        "ack_p99_ms": summary["ack_p99_ms"],
        "unacked_rows": summary["unacked_rows"],
        "exit": proc.returncode,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--duration-seconds", type=float, default=20.0, help="per run")
    p.add_argument("--rates", default="92e6,max", help="bytes/s targets; max = flat out")
    p.add_argument("--paths", default="a,b,c", help="which paths")
    p.add_argument("--zstd", default="on,off", help="compression settings to try")
    p.add_argument(
        "--modes", default="file,rowset", help="the SDK's ways of sending: file and/or rowset"
    )
    p.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    p.add_argument(
        "--pin",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="hold each worker process to one CPU (the emulator stays free)",
    )
    p.add_argument(
        "--light-emulator",
        action="store_true",
        help="run the emulator with --no-fsync --no-key-check, so it is less of a limit",
    )
    args = p.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-paths-") as tmp:
        cpus = worker_cpus(args.pin)
        if cpus:
            print(f"workers held to CPU {sorted(cpus)}", file=sys.stderr)
        emu, info = start_emulator(Path(tmp), args.light_emulator)
        try:
            wid = 0
            runs = [
                (rate, zstd, mode, path)
                for rate in args.rates.split(",")
                for zstd in args.zstd.split(",")
                for mode in args.modes.split(",")
                for path in args.paths.split(",")
            ]
            for rate, zstd, mode, path in runs:
                r = run_worker(
                    info, path, rate, zstd == "on", args.duration_seconds, wid, cpus, mode
                )
                wid += 1
                results.append(r)
                print(json.dumps(r), file=sys.stderr, flush=True)
        finally:
            emu.terminate()  # it may still be landing a backlog: give it time, then kill
            try:
                emu.wait(timeout=180)
            except subprocess.TimeoutExpired:
                emu.kill()
                emu.wait()
    if args.json:
        for r in results:
            print(json.dumps(r))
        return 0
    print(
        "| path | mode | target | zstd | MB/s | CPU-s/GB | cores | own CPU % | gen+append % "
        "| peak RSS MiB | ack p50/p99 ms |\n"
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|"
    )
    for r in results:
        target = "max" if r["rate"] == "max" else f"{float(r['rate']) / 1e6:g} MB/s"
        print(
            f"| {r['path']} | {r['mode']} | {target} | {'on' if r['zstd'] else 'off'} | "
            f"{r['mb_per_s']:.1f} | "
            f"{r['cpu_s_per_gb']:.2f} | {r['cores']} | {r['own_cpu_share_pct']} | "
            f"{r['gen_append_share_pct']} | "
            f"{r['peak_rss_mib']:.0f} | "
            f"{r['ack_p50_ms']}/{r['ack_p99_ms']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
