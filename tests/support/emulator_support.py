"""Fixtures and the SDK driver shared by the emulator tests.

The real SDK runs in a child process (``python tests/emulator_support.py SCENARIO``):
importing it starts threads (no fork afterwards), it reads ``SSL_CERT_FILE`` and
``SS_LOG_LEVEL`` at start-up, and a stuck client must not hang the test run, so the
child is bounded by a subprocess timeout and every wait inside it is bounded too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PYTHON_DIR = HERE.parent / "python"

#: Client properties for tests: no telemetry, quick acks, short bounded retries.
FAST_CLIENT_PROPERTIES = {
    "enable_telemetry_reporting": "false",
    "data_retry_total_backoff_seconds": 20,
    "data_retry_initial_backoff_seconds": 1,
    "data_retry_max_backoff_seconds": 2,
    "non_scoped_auth_failure_retry_total_backoff_seconds": 2,
    "mgmt_retry_total_backoff_seconds": 10,
    "mgmt_retry_initial_backoff_seconds": 1,
    "mgmt_retry_max_backoff_seconds": 2,
}
SALE_TIME_US = 1_700_000_000_123_456


def sdk_available() -> bool:
    try:
        import importlib.util

        return importlib.util.find_spec("snowflake.ingest.streaming") is not None
    except ModuleNotFoundError:
        return False


def make_emulator(tmp_path: Path, **overrides: Any) -> Any:
    """A started emulator in ``tmp_path/emu`` with fast acks (stop it, or use ``with``)."""
    from elastic_channels.emulator import Emulator, EmulatorConfig

    cfg = EmulatorConfig(data_dir=tmp_path / "emu", append_buffer_ms=20, **overrides)
    return Emulator(cfg).start()


def run_sdk(emu: Any, tmp_path: Path, scenario: dict[str, Any], timeout_s: float = 90) -> dict:
    """Run one SDK scenario against ``emu`` in a child process; its result dict."""
    info_file = tmp_path / "info.json"
    info_file.write_text(json.dumps(emu.info()))
    result_file = tmp_path / f"result-{time.monotonic_ns()}.json"
    scenario = {"info_file": str(info_file), "result_file": str(result_file), **scenario}
    env = dict(
        os.environ,
        SSL_CERT_FILE=emu.info()["ssl_cert_file"],
        SS_LOG_LEVEL="error",
        SS_LOG_TARGET="stderr",
        PYTHONPATH=os.pathsep.join([str(PYTHON_DIR), os.environ.get("PYTHONPATH", "")]),
    )
    proc = subprocess.run(
        [sys.executable, str(Path(__file__)), json.dumps(scenario)],
        env=env,
        capture_output=True,
        timeout=timeout_s,
    )
    if not result_file.exists():
        raise AssertionError(
            f"SDK child exited {proc.returncode} without a result\n"
            f"stderr:\n{proc.stderr.decode(errors='replace')[-4000:]}"
        )
    return json.loads(result_file.read_text())


# --- the child side ---------------------------------------------------------------


def _rows(run_id: str, n: int) -> list[dict[str, Any]]:
    from elastic_channels.rows import ResortGenerator

    rows = ResortGenerator(run_id, 0).next_rows(n, SALE_TIME_US)
    return [{f: getattr(r, f) for f in r.__struct_fields__} for r in rows]


def _child(scenario: dict[str, Any]) -> dict[str, Any]:
    from snowflake.ingest.streaming import StreamingIngestClient

    info = json.loads(Path(scenario["info_file"]).read_text())
    props = {**info["properties"], **FAST_CLIENT_PROPERTIES, **scenario.get("properties", {})}
    out: dict[str, Any] = {"futures": [], "handler_errors": []}
    try:
        client = StreamingIngestClient(
            "test-client", info["database"], info["schema"], info["pipe"], properties=props
        )
    except Exception as e:
        out["construct_error"] = f"{type(e).__name__}: {e}"
        return out
    try:
        channel = client.get_elastic_channel()
        channel.set_error_handler(lambda d: out["handler_errors"].append(str(d)))
        rows = _rows(scenario.get("run_id", "run"), scenario.get("rows", 0))
        rows += scenario.get("extra_rows", [])
        chunk = scenario.get("chunk", 1000)
        futures = [
            channel.append_rows_with_wait(rows[i : i + chunk], i)
            for i in range(0, len(rows), chunk)
        ]
        for f in futures:
            try:
                f.result(timeout=scenario.get("future_timeout_s", 45))
                out["futures"].append("ok")
            except Exception as e:
                out["futures"].append(f"{type(e).__name__}: {e}")
        try:
            channel.wait_for_flush(10)
        except Exception as e:
            out["flush_error"] = f"{type(e).__name__}: {e}"
    finally:
        client.close(wait_for_flush=False, timeout_seconds=5)
    return out


if __name__ == "__main__":
    _scenario = json.loads(sys.argv[1])
    _result = _child(_scenario)
    Path(_scenario["result_file"]).write_text(json.dumps(_result))
