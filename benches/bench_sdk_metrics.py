"""What reading the SDK's own metrics costs a worker: CPU-s per GB with and without.

    python benches/bench_sdk_metrics.py [--repeats 5] [--duration-seconds 10]
        [--target-bps 30e6] [--window-seconds 5] [--json]

One emulator (--no-fsync --no-key-check: its landing is not what is measured), then one
worker at a time through the real SDK in file mode (the SDK's defaults), alternating
``--sdk-metrics on`` and ``off`` so drift on a shared box falls on both alike. Reported
per setting: the median of the workers' own ``cpu_s_per_gb`` (the whole process: ours,
the SDK's threads, the scrape), the median MB/s, and with the metrics on, the median CPU
of one scrape (``sdk_scrape_cpu_s`` over the windows). MB is 10**6 bytes.
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


def start_emulator(data_dir: Path) -> tuple[subprocess.Popen, Path]:
    info = data_dir / "info.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "elastic_channels.emulator", "serve", "--data-dir",
         str(data_dir), "--info-file", str(info), "--no-fsync", "--no-key-check"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    for _ in range(300):
        if info.exists():
            return proc, info
        if proc.poll() is not None:
            raise SystemExit("the emulator exited at start")
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("the emulator did not start within 30 s")


def run_worker(info: Path, metrics: str, args: argparse.Namespace, n: int) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SS_METRICS", "SDK_METRICS"))}
    done = subprocess.run(
        [sys.executable, "-m", "elastic_channels.worker", "--profile", str(info),
         "--run-id", f"bench-sdk-{metrics}-{n}", "--target-bps", str(args.target_bps),
         "--duration-seconds", str(args.duration_seconds),
         "--window-seconds", str(args.window_seconds), "--sdk-metrics", metrics],
        capture_output=True, text=True, timeout=args.duration_seconds + 120, env=env,
        check=False,
    )  # fmt: skip
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    if done.returncode != 0 or not lines or lines[-1].get("type") != "summary":
        raise SystemExit(f"worker failed ({done.returncode}): {done.stderr[-2000:]}")
    summary = lines[-1]
    windows = [x for x in lines if x.get("type") == "window"]
    out = {
        "cpu_s_per_gb": summary["cpu_s_per_gb"],
        "mb_per_s": summary["mb_per_s"],
        "windows": len(windows),
    }
    if metrics == "on":
        out["scrape_ms"] = 1e3 * summary["sdk_scrape_cpu_s"] / max(len(windows), 1)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--duration-seconds", type=float, default=10.0)
    p.add_argument("--target-bps", type=float, default=30e6)
    p.add_argument("--window-seconds", type=float, default=5.0)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    runs: dict[str, list[dict[str, Any]]] = {"on": [], "off": []}
    with tempfile.TemporaryDirectory(prefix="bench-sdk-metrics-") as tmp:
        emu, info = start_emulator(Path(tmp))
        try:
            for n in range(args.repeats):
                for metrics in ("on", "off") if n % 2 == 0 else ("off", "on"):
                    runs[metrics].append(run_worker(info, metrics, args, n))
        finally:
            emu.terminate()
            emu.wait(30)
    table = {
        metrics: {
            "cpu_s_per_gb": round(statistics.median(r["cpu_s_per_gb"] for r in rs), 3),
            "mb_per_s": round(statistics.median(r["mb_per_s"] for r in rs), 1),
            **(
                {"scrape_cpu_ms": round(statistics.median(r["scrape_ms"] for r in rs), 1)}
                if metrics == "on"
                else {}
            ),
            "runs": rs,
        }
        for metrics, rs in runs.items()
    }
    if args.json:
        print(json.dumps(table))
        return 0
    print(f"{'sdk metrics':>11}  {'MB/s':>6}  {'CPU-s/GB':>8}  {'scrape CPU ms':>13}")
    for metrics, row in table.items():
        scrape = row.get("scrape_cpu_ms")
        print(
            f"{metrics:>11}  {row['mb_per_s']:6.1f}  {row['cpu_s_per_gb']:8.3f}  "
            f"{'-' if scrape is None else f'{scrape:.1f}':>13}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
