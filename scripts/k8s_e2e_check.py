"""The checks of scripts/k8s_e2e.sh, after a fleet run on the local cluster.

From each pod's log (its worker's JSON lines, captured with ``kubectl logs -f``), the
Job's status and the emulator's tables (read with ``elastic-channels emulator query``):

- every row landed once: no duplicates; a worker that printed its summary lost nothing;
  a worker that did not (the deleted pod, if it was killed before its summary) is
  accounted as a SIGKILLed local worker is (``verify_landed``'s killed bounds);
- the first fleet window of ELASTIC_K8S_METRICS (the monitor's, through the real API)
  counts every pod, and the monitor's per-worker rows add up to the pods' window lines;
- the Job: one pod per index, the deleted index failed (not retried) unless its worker
  ended cleanly in its grace period, every other index succeeded.

Prints one JSON object (the figures) and a line per check; exits 1 if any check failed.

    python3 scripts/k8s_e2e_check.py --data-dir EMU --run-id RUN --scenario FILE \\
        --pod-logs DIR --job-json FILE --created N --deleted-index I --deleted-at EPOCH
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from elastic_channels.fleet.verify import verify_landed
from elastic_channels.model import METRICS_TABLE_NAME
from elastic_channels.scenario import load_file

MB = 1_000_000


class EmulatorQueries:
    """What ``verify_landed`` asks of an emulator, through ``emulator query`` (the
    server runs in another process)."""

    def __init__(self, data_dir: str) -> None:
        self.data_dir = data_dir

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        out = subprocess.run(
            [sys.executable, "-m", "elastic_channels.emulator", "query", "--data-dir",
             self.data_dir, sql],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        if out.returncode != 0:
            raise SystemExit(f"k8s_e2e_check: query failed ({out.stderr.strip()}): {sql}")
        return [tuple(json.loads(line).values()) for line in out.stdout.splitlines() if line]

    def wait_landed(self, timeout_s: float = 120.0) -> bool:
        """Until the table's row count stops moving for 3 s (acked rows land shortly
        after their ack), at most ``timeout_s``."""
        deadline, last, still = time.monotonic() + timeout_s, -1, 0
        while time.monotonic() < deadline:
            n = self.query("SELECT count(*) FROM RESORT_SALES")[0][0]
            still = still + 1 if n == last else 0
            if still >= 3:
                return True
            last = n
            time.sleep(1)
        return False


def pod_lines(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The window lines and the summary (None if none) of one pod's log."""
    windows, summary = [], None
    for line in path.read_text(errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and rec.get("type") == "window":
            windows.append(rec)
        elif isinstance(rec, dict) and rec.get("type") == "summary":
            summary = rec
    return windows, summary


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", required=True)
    p.add_argument("--run-id", required=True)
    p.add_argument("--scenario", required=True, help="the scenario file the run used")
    p.add_argument("--pod-logs", required=True, help="a dir of INDEX.log files")
    p.add_argument("--job-json", required=True, help="kubectl get job -o json, at the end")
    p.add_argument("--created", type=int, required=True, help="pods the Job created")
    p.add_argument("--deleted-index", type=int, required=True)
    p.add_argument("--deleted-at", type=float, required=True, help="epoch s of the delete")
    p.add_argument("--started-at", type=float, required=True, help="epoch s of run_job")
    a = p.parse_args(argv)

    s = load_file(a.scenario)
    emu = EmulatorQueries(a.data_dir)
    checks: list[tuple[str, bool]] = []
    summaries, killed, lines = [], [], []
    for log in sorted(Path(a.pod_logs).glob("*.log"), key=lambda f: int(f.stem)):
        windows, summary = pod_lines(log)
        lines += windows
        if summary is not None:
            summaries.append(summary)
        else:
            killed.append({
                "worker_id": int(log.stem), "exit_code": None, "windows": windows,
                "started_at": a.started_at, "exited_at": a.deleted_at,
            })  # fmt: skip
    checks.append(
        (f"a log for each of the {s.workers} indexes", len(summaries) + len(killed) == s.workers)
    )
    pacing = {"target_bps": s.peak_mbps * MB, "batch_bytes": s.batch_bytes, "channels": s.channels}
    landed = verify_landed(emu, a.run_id, summaries, killed, pacing)
    checks.append(("no row landed twice", landed["duplicates"] == 0))
    if killed:
        least, most = landed["lost_at_least"], landed["lost_at_most"]
        gone = landed["killed_workers"]
        others_lost = least - sum(k["lost_at_least"] for k in gone)
        checks.append((
            "the killed worker's loss is within its bounds, the others lost nothing",
            least >= 0 and (most is None or least <= most) and others_lost == 0
            and [k["worker_id"] for k in killed] == [a.deleted_index],
        ))  # fmt: skip
    else:
        checks.append(
            ("every generated row landed (every worker had a summary)", landed["lost"] == 0)
        )

    # The monitor's windows (ELASTIC_K8S_METRICS), through the real API's pod logs.
    t = METRICS_TABLE_NAME
    fleet = emu.query(
        f"SELECT epoch(WINDOW_START), WORKERS_REPORTING, ROWS_APPENDED FROM {t} "
        f"WHERE RUN_ID = '{a.run_id}' AND IS_FLEET AND WORKERS_REPORTING > 0 ORDER BY 1"
    )
    per_worker = emu.query(
        f"SELECT sum(ROWS_APPENDED), count(*) FROM {t} "
        f"WHERE RUN_ID = '{a.run_id}' AND NOT IS_FLEET AND NOT IS_SUMMARY"
    )
    checks.append((f"the first fleet window counts every pod ({s.workers})",
                   bool(fleet) and int(fleet[0][1]) == s.workers))  # fmt: skip
    rows_in_lines = sum(int(w["rows"]) for w in lines)
    checks.append((
        "the monitor's worker rows are the pods' window lines",
        bool(per_worker) and int(per_worker[0][1]) == len(lines)
        and int(per_worker[0][0] or 0) == rows_in_lines,
    ))  # fmt: skip

    status = json.loads(Path(a.job_json).read_text()).get("status", {})
    failed_idx = status.get("failedIndexes") or ""
    done_idx = status.get("completedIndexes") or ""
    others = ",".join(str(i) for i in range(s.workers) if i != a.deleted_index)
    if killed:
        ok = failed_idx == str(a.deleted_index) and a.created == s.workers
        ok = ok and _covers(done_idx, others)
        checks.append((f"the Job: index {a.deleted_index} failed, not retried; the others "
                       f"completed ({done_idx or 'none'})", ok))  # fmt: skip
    else:
        # The worker drained in its grace period and printed its summary; whether the
        # Job counts the deleted pod as succeeded or failed is a race (seen both ways).
        ok = a.created == s.workers and _covers(done_idx, others)
        ok = ok and failed_idx in ("", str(a.deleted_index))
        ok = ok and (failed_idx != "" or _covers(done_idx, str(a.deleted_index)))
        how = "failed" if failed_idx else "completed"
        checks.append((f"the Job: one pod per index, the others completed; index "
                       f"{a.deleted_index} (deleted) {how}, not retried", ok))  # fmt: skip
    print(json.dumps({
        "landed": {k: v for k, v in landed.items() if k != "killed_workers"},
        "killed_workers": [
            {k: v for k, v in w.items() if k in ("worker_id", "rows_landed", "lost_at_least",
                                                  "lost_at_most", "rows_generated_at_least",
                                                  "rows_generated_at_most")}
            for w in landed.get("killed_workers", [])
        ],
        "fleet_windows": [{"window_start": w[0], "workers": w[1], "rows": w[2]} for w in fleet],
        "job_status": {k: status.get(k) for k in ("succeeded", "failed", "completedIndexes",
                                                  "failedIndexes")},
        "pods_created": a.created,
    }, default=str))  # fmt: skip
    for name, ok in checks:
        print(f"{'PASS' if ok else 'FAIL'}: {name}")
    return 0 if all(ok for _, ok in checks) else 1


def _covers(indexes: str, want: str) -> bool:
    """Whether the Job's index list ("0-1,3") holds every index of ``want`` ("0,1,3")."""
    have: set[int] = set()
    for part in filter(None, indexes.split(",")):
        lo, _, hi = part.partition("-")
        have.update(range(int(lo), int(hi or lo) + 1))
    return {int(i) for i in want.split(",") if i} <= have


if __name__ == "__main__":
    sys.exit(main())
