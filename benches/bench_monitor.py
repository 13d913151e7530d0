"""Does one monitor keep up with the fleet? The window lines of ``--workers`` synthetic
workers x ``--windows`` windows go through ``elastic-channels monitor --workers N FILE``
into a fresh ``python -m elastic_channels.emulator serve`` on 127.0.0.1 (issue #31 item
7: 455 workers x 24 windows took 157 s there, ~73 rows/s where the fleet makes ~91).

The lines are the worker's own (``worker/meter.py``'s ``Meter`` on fake clocks: a batch
sent and acked every second), one per worker per window, in window order as a merged
log reads. The monitor reads the whole file at once, so the figure is its throughput:
rows written per wall second (its start-up included) against the rows the fleet makes
per second, ``(workers + 1 fleet row) / window seconds``; it keeps up when the first is
at least the second. The monitor reaches the emulator through a TCP proxy in this
script that holds each connection ``--sql-latency-ms`` before passing it on (the
monitor opens one per SQL API request): an account's per-statement latency, modelled;
the proxy counts the requests (every statement: MERGEs, and the monitor's reads).
CPU-s are the monitor's own (``wait4``) and the emulator's during that run
(``/proc/PID/stat``, its idle upkeep included).

``--before-tree DIR`` runs each repeat a second time with the monitor and the emulator
imported from ``DIR`` (a ``python/`` directory of an older checkout, e.g.
``git archive <commit> python | tar -x -C /tmp/before`` then ``/tmp/before/python``),
alternating with this tree's, so before and after are measured side by side.

    python benches/bench_monitor.py                                # 1000 x 24, 3 repeats
    python benches/bench_monitor.py --sql-latency-ms 0,300 --json
    python benches/bench_monitor.py --workers 1000 --windows 4 --before-tree /tmp/before/python

Prints the median and range of each figure, and the load average before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

PYTHON = sys.executable
EPOCH0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z
WRITTEN = re.compile(r": (\d+) row\(s\) written")


# --- the lines ---------------------------------------------------------------------------


def synth_lines(workers: int, windows: int, window_s: float, run_id: str) -> list[str]:
    """One window line per worker per window, as the worker's Meter prints them, in
    window order (a merged log): each second one batch of 1-4k rows sent and acked."""
    from elastic_channels.worker.meter import Meter

    rng = random.Random(7)
    per_worker: list[list[str]] = []
    for wid in range(workers):
        now = [EPOCH0]
        clock = functools.partial(now.__getitem__, 0)
        meter = Meter(window_s, clock=clock, wall=clock, cpu=lambda: 0.0)
        ids = {"run_id": run_id, "worker_id": wid}
        lines: list[str] = []
        while len(lines) < windows:
            now[0] += 1.0
            n = rng.randint(1000, 4000)
            meter.record_sent(n, n * 292)
            meter.record_acked(n, n * 292, rng.lognormvariate(-1.0, 0.6))
            while meter.window_due() and len(lines) < windows:
                lines.append(json.dumps(meter.close_window(0, 0, **ids)))
        per_worker.append(lines)
    return [per_worker[w][i] for i in range(windows) for w in range(workers)]


# --- the latency proxy -------------------------------------------------------------------


class DelayProxy:
    """127.0.0.1 TCP proxy to ``port``: each connection held ``delay_s``, then piped both
    ways; counts connections (the monitor's SQL API requests: one each)."""

    def __init__(self, port: int, delay_s: float) -> None:
        self.upstream, self.delay_s = port, delay_s
        self.connections = 0
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(ready,), daemon=True)
        self.thread.start()
        if not ready.wait(10):
            raise SystemExit("the latency proxy did not start")

    def _serve(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(
            asyncio.start_server(self._handle, "127.0.0.1", 0)
        )
        self.port = self.server.sockets[0].getsockname()[1]
        ready.set()
        self.loop.run_forever()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await asyncio.sleep(self.delay_s)
            up_r, up_w = await asyncio.open_connection("127.0.0.1", self.upstream)
            await asyncio.gather(_pipe(reader, up_w), _pipe(up_r, writer))
        except OSError:
            writer.close()

    def stop(self) -> None:
        def close() -> None:
            self.server.close()
            self.loop.stop()

        self.loop.call_soon_threadsafe(close)
        self.thread.join(10)


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    try:
        while chunk := await src.read(65536):
            dst.write(chunk)
            await dst.drain()
    except OSError:
        pass
    finally:
        dst.close()


# --- one run -----------------------------------------------------------------------------


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_emulator(root: Path, env: dict[str, str], life_s: float) -> tuple[Any, dict[str, Any]]:
    info = root / "info.json"
    serve = [PYTHON, "-m", "elastic_channels.emulator", "serve", "--data-dir", str(root / "data"),
             "--info-file", str(info), "--duration-seconds", str(int(life_s))]  # fmt: skip
    emu = subprocess.Popen(
        serve, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=root
    )
    deadline = time.monotonic() + 60
    while not info.exists():  # written once the server is ready
        if emu.poll() is not None:
            raise SystemExit(
                f"the emulator exited {emu.returncode}: {emu.communicate()[1][-2000:]!r}"
            )
        if time.monotonic() > deadline:
            emu.kill()
            raise SystemExit("the emulator did not become ready within 60 s")
        time.sleep(0.05)
    time.sleep(0.2)  # the file is written, then flushed: read it whole
    return emu, json.loads(info.read_text())


def stop(proc: Any) -> None:
    proc.terminate()
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def one_run(
    lines_text: str, n: int, args: argparse.Namespace, latency_ms: float, tree: str | None
) -> dict[str, Any]:
    env = {**os.environ, "LOG_LEVEL": "WARNING", "SS_LOG_LEVEL": "warn"}
    if tree:
        env["PYTHONPATH"] = tree
    with tempfile.TemporaryDirectory(prefix="bench-monitor-") as tmp:
        root = Path(tmp)
        run_id = f"bench-monitor-{n}"
        lines = root / "lines.ndjson"
        lines.write_text(lines_text.replace("@RUN@", run_id))
        emu, info = start_emulator(root, env, args.timeout + 120)
        proxy = DelayProxy(int(info["url"].rsplit(":", 1)[1].split("/")[0]), latency_ms / 1e3)
        try:
            profile = root / "monitor-info.json"
            profile.write_text(json.dumps({**info, "url": f"https://127.0.0.1:{proxy.port}"}))
            cmd = [PYTHON, "-m", "elastic_channels", "monitor", "--workers", str(args.workers),
                   "--profile", str(profile), "--grace-seconds", "1", str(lines)]  # fmt: skip
            emu_cpu0, mon_cpu0 = cpu_s(emu.pid), children_cpu_s()
            t0 = time.perf_counter()
            mon = subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=root
            )
            timer = threading.Timer(args.timeout, mon.kill)
            timer.start()
            _, err = mon.communicate()
            wall = time.perf_counter() - t0
            timer.cancel()
            mon_cpu = children_cpu_s() - mon_cpu0
            emu_cpu = cpu_s(emu.pid) - emu_cpu0
        finally:
            proxy.stop()
            stop(emu)
        if mon.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} exited {mon.returncode}:\n{err[-3000:]}")
        written = WRITTEN.search(err)
        if written is None:
            raise SystemExit(f"the monitor did not say how many rows it wrote:\n{err[-2000:]}")
    rows = int(written.group(1))
    made = (args.workers + 1) / args.window_seconds
    return {
        "wall_s": wall,
        "monitor_cpu_s": mon_cpu,
        "emulator_cpu_s": emu_cpu,
        "statements": proxy.connections,
        "rows_written": rows,
        "rows_per_s": rows / wall,
        "fleet_rows_per_s": made,
        "headroom": rows / wall / made,
    }


def children_cpu_s() -> float:
    """CPU-s of this script's reaped children (the monitor's, once it is reaped; the
    emulator is reaped only after that reading)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# --- the report --------------------------------------------------------------------------


def spread(values: list[float], digits: int) -> dict[str, Any]:
    return {
        "median": round(statistics.median(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
        "n": len(values),
    }


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out = {
        key: spread([r[key] for r in runs], digits)
        for key, digits in (
            ("wall_s", 2), ("monitor_cpu_s", 2), ("emulator_cpu_s", 2), ("statements", 0),
            ("rows_written", 0), ("rows_per_s", 1), ("headroom", 2),
        )
    }  # fmt: skip
    out["fleet_rows_per_s"] = runs[0]["fleet_rows_per_s"]
    out["kept_up"] = out["headroom"]["median"] >= 1.0
    return out


def fmt(s: dict[str, Any], unit: str = "") -> str:
    return f"{s['median']:g}{unit} ({s['min']:g}-{s['max']:g})"


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--workers", type=int, default=1000, help="synthetic workers (default 1000)")
    p.add_argument("--windows", type=int, default=24, help="windows per worker (default 24)")
    p.add_argument("--window-seconds", type=float, default=5.0, help="window length (default 5)")
    p.add_argument("--repeats", type=int, default=3, help="runs of each case (default 3)")
    p.add_argument("--sql-latency-ms", default="0",
                   help="per-request latency added, ms; comma-separated for several cases "
                   "(default 0; an account: e.g. 300)")  # fmt: skip
    p.add_argument("--before-tree", default=None, metavar="DIR",
                   help="also run the monitor and emulator of this python/ directory")  # fmt: skip
    p.add_argument("--timeout", type=float, default=1800.0,
                   help="a monitor run longer than this is killed (default 1800 s)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print one JSON document alone on stdout")
    args = p.parse_args()
    try:
        latencies = [float(x) for x in str(args.sql_latency_ms).split(",")]
    except ValueError:
        p.error(f"--sql-latency-ms must be numbers, comma-separated; got {args.sql_latency_ms!r}")
    if not 1 <= args.workers <= 10_000 or args.windows < 1 or args.window_seconds <= 0:
        p.error("--workers must be 1-10000, --windows >= 1, --window-seconds > 0")
    if args.repeats < 1 or any(x < 0 for x in latencies):
        p.error("--repeats must be >= 1 and --sql-latency-ms >= 0")
    if args.before_tree and not (Path(args.before_tree) / "elastic_channels").is_dir():
        p.error(f"--before-tree {args.before_tree}: no elastic_channels package there")
    out = sys.stderr if args.json else sys.stdout
    result: dict[str, Any] = {
        "load_before": load(), "cpus": os.cpu_count(), "workers": args.workers,
        "windows": args.windows, "window_seconds": args.window_seconds, "cases": [],
    }  # fmt: skip
    text = "\n".join(synth_lines(args.workers, args.windows, args.window_seconds, "@RUN@")) + "\n"
    trees = [("before", args.before_tree), ("after", None)] if args.before_tree else [("", None)]
    runs: dict[tuple[str, float], list[dict[str, Any]]] = {}
    n = 0
    for _ in range(args.repeats):
        for latency in latencies:
            for name, tree in trees:
                n += 1
                runs.setdefault((name, latency), []).append(one_run(text, n, args, latency, tree))
    print(
        f"monitor --workers {args.workers}: {args.workers} workers x {args.windows} windows of "
        f"{args.window_seconds:g} s; the fleet makes {(args.workers + 1) / args.window_seconds:g} "
        "rows/s; medians (range) of "
        f"{args.repeats}",
        file=out,
    )
    for (name, latency), rs in runs.items():
        s = summarize(rs)
        result["cases"].append({"code": name or "this tree", "sql_latency_ms": latency, **s})
        label = f"{name + ', ' if name else ''}+{latency:g} ms/statement"
        print(
            f"  {label}: wall {fmt(s['wall_s'], ' s')}, {fmt(s['rows_per_s'])} rows/s "
            f"(x{s['headroom']['median']:g} the fleet's: "
            f"{'keeps up' if s['kept_up'] else 'falls behind'}), "
            f"{fmt(s['statements'])} statements, monitor {fmt(s['monitor_cpu_s'], ' CPU-s')}, "
            f"emulator {fmt(s['emulator_cpu_s'], ' CPU-s')}",
            file=out,
        )
    result["load_after"] = load()
    print(
        f"load average (1, 5, 15 min) before {result['load_before']}, after "
        f"{result['load_after']}; cpus {result['cpus']}",
        file=out,
    )
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
