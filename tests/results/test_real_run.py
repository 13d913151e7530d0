"""A real run's result recorded, listed and compared with itself (one short run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from emulator_support import sdk_available

from elastic_channels import results
from elastic_channels.results.thresholds import FIGURE_NAMES

HEAVY = ("duckdb", "pyarrow", "uvicorn", "streamlit", "matplotlib", "numpy", "moto")


def cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "elastic_channels.cli", *args],
        capture_output=True, text=True, timeout=timeout, cwd=cwd, check=False,
    )  # fmt: skip


@pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")
def test_a_real_run_recorded_and_compared_with_itself(tmp_path: Path) -> None:
    proc = cli(
        "run", "--workers", "1", "--target-bps", "2e6", "--duration-seconds", "3",
        "--window-seconds", "1", "--run-id", "results-e2e", "--json", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    # run wrote its result file itself, and says where in --json
    path = tmp_path / result["result_file"]
    assert path.parent == tmp_path / ".elastic-channels" / "results"
    doc = results.load(path)
    added = ("result_file", "thresholds_checked", "thresholds_held")
    assert doc["run"] == {k: v for k, v in result.items() if k not in added}
    assert result["thresholds_held"] is None and result["thresholds_checked"] == []
    figures = doc["figures"]
    assert set(FIGURE_NAMES) <= set(figures)
    totals = result["totals"]
    # the one throughput definition: what run's own totals say
    assert (figures["mb_per_s"], figures["rows_per_s"]) == (
        totals["mb_per_s"],
        totals["rows_per_s"],
    )
    # no warmup: the windows' merged acks are every ack of the run, as the summary's
    assert figures["ack_p99_ms"] == totals["ack_p99_ms"] is not None
    assert figures["visible_p99_ms"] == result["landed"]["visible_p99_ms"] is not None
    assert (figures["lost"], figures["duplicates"]) == (0, 0)
    assert doc["peak_rss_mib_per_worker"] == {"0": totals["peak_rss_mib"]}
    assert doc["versions"]["snowpipe_streaming"] is not None
    assert doc["started_at"] <= result["windows"][0]["start"]

    listed = cli("runs", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert [x["run_id"] for x in json.loads(listed.stdout)] == ["results-e2e"]

    chart = tmp_path / "same.png"
    comp = cli("compare", "latest", "results-e2e", "--chart", str(chart), "--json", cwd=tmp_path)
    assert comp.returncode == 0, comp.stderr
    lines = json.loads(comp.stdout)["figures"]
    assert all(line["change"][1] in (0, None) for line in lines)
    assert {line["figure"]: line["values"][0] for line in lines}["mb_per_s"] == totals["mb_per_s"]
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and chart.stat().st_size > 1000


@pytest.mark.parametrize("command", ["runs", "compare"])
def test_help_imports_nothing_heavy(command: str, tmp_path: Path) -> None:
    """Like every command's --help (tests/cli/test_lazy_imports.py): no matplotlib."""
    probe = (
        "import sys\n"
        "from elastic_channels.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe, command, "--help"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "[]"
    assert f"usage: elastic-channels {command}" in proc.stdout
