"""What starting the CLI costs: ``elastic-channels --help`` (wall time and max RSS), and
the peak RSS of a worker sending under ``elastic-channels worker`` vs under
``python -m elastic_channels.k8s_worker`` (the fleet image's name for it) at the same
flags. Issue #22's goals: ``--help`` under 0.5 s, and the CLI's worker within 10% of
``k8s_worker``'s RSS.

Each command runs ``--repeats`` times under ``/usr/bin/time -f %M`` (GNU time: the max
RSS of that command alone, not of this script); wall time is this script's clock around
it. The workers alternate, one of each per repeat, against one
``python -m elastic_channels.emulator serve --sink drop`` on 127.0.0.1 (``--sink land``
to land the rows in its table instead), each at ``--target-bps`` for
``--worker-seconds`` and checked to exit 0 (every row acked). ``elastic-channels`` is
the console script beside this Python (not a pyenv shim). Prints the median and the
range (min-max) of each figure, and the load average before and after.

    python benches/bench_cli_start.py                      # 5 repeats of each
    python benches/bench_cli_start.py --repeats 1 --worker-seconds 1 --json
    python benches/bench_cli_start.py --help-only          # only elastic-channels --help

MB is 10**6 bytes (GNU time's %M is in KiB, converted).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TIME = "/usr/bin/time"
PYTHON = sys.executable


def cli_entry() -> list[str]:
    """The ``elastic-channels`` console script of this Python, else ``python -m``."""
    script = Path(PYTHON).parent / "elastic-channels"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [PYTHON, "-m", "elastic_channels"]


def timed(cmd: list[str], env: dict[str, str], timeout: float) -> dict[str, Any]:
    """Run ``cmd`` under ``/usr/bin/time``: its wall seconds, max RSS (MB) and output."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        t0 = time.perf_counter()
        proc = subprocess.run(
            [TIME, "-f", "%M", "-o", out.name, *cmd],
            capture_output=True, text=True, env=env, timeout=timeout, check=False,
        )  # fmt: skip
        wall = time.perf_counter() - t0
        lines = out.read().split()
    if proc.returncode != 0:
        raise SystemExit(
            f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-3000:]}{proc.stdout[-1000:]}"
        )
    return {"wall_s": wall, "max_rss_mb": int(lines[-1]) * 1024 / 1e6, "stdout": proc.stdout}


def spread(values: list[float], digits: int) -> dict[str, Any]:
    return {
        "median": round(statistics.median(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
        "n": len(values),
    }


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def bench_help(entry: list[str], repeats: int, env: dict[str, str]) -> dict[str, Any]:
    runs = [timed([*entry, "--help"], env, 60) for _ in range(repeats)]
    return {
        "command": " ".join([*entry, "--help"]),
        "wall_s": spread([r["wall_s"] for r in runs], 3),
        "max_rss_mb": spread([r["max_rss_mb"] for r in runs], 1),
    }


def start_emulator(root: Path, args: argparse.Namespace, env: dict[str, str]) -> tuple[Any, Path]:
    info = root / "info.json"
    life = (args.worker_seconds + 120) * 2 * args.repeats + 60  # it stops by itself
    serve = [PYTHON, "-m", "elastic_channels.emulator", "serve", "--data-dir", str(root / "data"),
             "--info-file", str(info), "--sink", args.sink,
             "--duration-seconds", str(life)]  # fmt: skip
    emu = subprocess.Popen(serve, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 60
    while not info.exists():  # written once the server is ready
        if emu.poll() is not None:
            raise SystemExit(f"the emulator exited {emu.returncode}: {emu.stderr.read()[-2000:]!r}")
        if time.monotonic() > deadline:
            emu.kill()
            raise SystemExit("the emulator did not become ready within 60 s")
        time.sleep(0.05)
    return emu, info


def bench_workers(
    entry: list[str], args: argparse.Namespace, env: dict[str, str]
) -> dict[str, Any]:
    names = {
        "elastic-channels worker": [*entry, "worker"],
        "python -m elastic_channels.k8s_worker": [PYTHON, "-m", "elastic_channels.k8s_worker"],
    }
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory(prefix="bench-cli-start-") as tmp:
        emu, info = start_emulator(Path(tmp), args, env)
        try:
            for n in range(args.repeats):
                for name, cmd in names.items():
                    flags = ["--profile", str(info), "--run-id", f"cli-start-{n}",
                             "--worker-id", str(len(runs[name]) + 10 * list(names).index(name)),
                             "--target-bps", repr(float(args.target_bps)),
                             "--duration-seconds", repr(float(args.worker_seconds))]  # fmt: skip
                    runs[name].append(timed([*cmd, *flags], env, args.worker_seconds + 300))
        finally:
            emu.terminate()
            try:
                emu.wait(60)
            except subprocess.TimeoutExpired:
                emu.kill()
                emu.wait(10)
    out: dict[str, Any] = {
        "flags": f"--profile info.json --target-bps {args.target_bps / 1e6:g}e6 "
        f"--duration-seconds {args.worker_seconds:g}",
        "sink": args.sink,
    }
    for name, rs in runs.items():
        out[name] = {
            "max_rss_mb": spread([r["max_rss_mb"] for r in rs], 1),
            "wall_s": spread([r["wall_s"] for r in rs], 2),
        }
    cli, k8s = (out[name]["max_rss_mb"]["median"] for name in names)
    out["rss_ratio"] = round(cli / k8s, 3)
    return out


def fmt(s: dict[str, Any], unit: str) -> str:
    return f"{s['median']:g} {unit} (range {s['min']:g}-{s['max']:g}, n={s['n']})"


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--repeats", type=int, default=5, help="runs of each command (default 5)")
    p.add_argument("--help-only", action="store_true", help="only time --help, no workers")
    p.add_argument(
        "--worker-seconds", type=float, default=4.0, help="each worker's send time (default 4)"
    )
    p.add_argument("--target-bps", type=float, default=10e6, help="worker rate (default 10e6)")
    p.add_argument("--sink", choices=("drop", "land"), default="drop", help="emulator sink")
    p.add_argument("--json", action="store_true", help="print one JSON document alone on stdout")
    args = p.parse_args()
    if args.repeats < 1 or args.worker_seconds <= 0 or args.target_bps <= 0:
        p.error("--repeats must be >= 1, --worker-seconds and --target-bps > 0")
    if not Path(TIME).is_file():
        raise SystemExit(f"{TIME} (GNU time) is needed to read a command's max RSS")
    env = {**os.environ, "SS_LOG_LEVEL": "warn"}
    entry = cli_entry()
    out = sys.stderr if args.json else sys.stdout
    result: dict[str, Any] = {"load_before": load(), "cpus": os.cpu_count()}
    result["help"] = bench_help(entry, args.repeats, env)
    h = result["help"]
    print(f"{h['command']}: wall {fmt(h['wall_s'], 's')}", file=out)
    print(f"{h['command']}: max RSS {fmt(h['max_rss_mb'], 'MB')}", file=out)
    if not args.help_only:
        w = result["worker"] = bench_workers(entry, args, env)
        print(f"workers ({w['flags']}, emulator --sink {w['sink']}):", file=out)
        for name in ("elastic-channels worker", "python -m elastic_channels.k8s_worker"):
            print(f"  {name}: max RSS {fmt(w[name]['max_rss_mb'], 'MB')}", file=out)
            print(f"  {name}: wall {fmt(w[name]['wall_s'], 's')}", file=out)
        print(f"  max RSS ratio worker / k8s_worker (medians): {w['rss_ratio']:.3f}", file=out)
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
