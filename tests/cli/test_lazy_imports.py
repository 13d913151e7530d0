"""The CLI imports only what the chosen command needs (issue #22 item 2): a worker pod
runs `elastic-channels worker`, and `--help` is asked for often, so neither may pull in
the emulator's, the dashboard's or the charts' dependencies (DuckDB, pyarrow, uvicorn,
Streamlit, matplotlib). Timings are benchmarks (docs/PERFORMANCE.md), not asserted."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("duckdb", "pyarrow", "uvicorn", "streamlit", "matplotlib", "numpy", "moto")

PROBE = """
import json, sys
from elastic_channels.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as e:
    code = e.code
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(HEAVY)))
sys.stderr.write("\\nLOADED " + json.dumps(heavy) + "\\n")
"""


def _loaded(*argv: str) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.replace("json.loads(HEAVY)", repr(list(HEAVY))), *argv],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    line = next(x for x in proc.stderr.splitlines() if x.startswith("LOADED "))
    return json.loads(line.removeprefix("LOADED "))


@pytest.mark.parametrize(
    "argv",
    [["--help"], [], ["--version"], ["worker", "--help"], ["plan", "--help"]],
    ids=["help", "bare", "version", "worker-help", "plan-help"],
)
def test_light_paths_import_nothing_heavy(argv):
    assert _loaded(*argv) == []


def test_a_command_still_imports_what_it_needs():
    # the emulator's parser is built from its module: DuckDB comes with it
    assert "duckdb" in _loaded("emulator", "--help")
