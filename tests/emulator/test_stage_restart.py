"""The stage across restarts (issue #30 item 3): a worker is told the stage's address once,
in its environment (``AWS_ENDPOINT_URL``), so ``emulator serve`` restarted on the same data
dir must bring its stage back at that address, honouring the credentials handed out before.

Bounded: the worker sends 8 s at 3 MB/s (files of ~3 MB with the SDK's ~1 s flushes) and is
killed at 120 s; each emulator stops by itself (``--duration-seconds``).
"""

from __future__ import annotations

import json
import socket

import pytest
from emulator_support import EmulatorProcess, sdk_available
from stage_support import DATA, granted, make_stage, make_tls
from worker_checks import landed
from worker_support import WorkerRun, worker_args, worker_env

from elastic_channels.emulator.stage import PortTaken


class _Tuples:
    """``query``/``wait_landed`` of an in-process emulator, over an emulator process."""

    def __init__(self, proc: EmulatorProcess) -> None:
        self.proc = proc

    def wait_landed(self, timeout_s: float) -> bool:
        return self.proc.wait_landed(timeout_s)

    def query(self, sql: str) -> list[tuple]:
        return [tuple(row.values()) for row in self.proc.query(sql)]


def _serve(data, *args: str) -> EmulatorProcess:
    """``serve`` with the SDK's own flush interval (no --append-buffer-ms): file mode."""
    emu = EmulatorProcess(data)
    emu.args = ["--duration-seconds", "150", *args]
    return emu.start()


def _stats(emu: EmulatorProcess) -> dict:
    return json.loads(emu.control("GET", "stats"))


@pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")
def test_a_worker_goes_on_after_serve_is_killed_and_restarted(tmp_path):
    data = tmp_path / "emu"
    first = _serve(data)
    port, stage_url = first.port, first.info["client_env"]["AWS_ENDPOINT_URL"]
    run_id = "stage-restart"
    args = worker_args(first.info_file, run_id, target_bps=3e6, duration_s=8, retry_backoff_s=60)
    second = None
    try:
        with WorkerRun(args, worker_env(), tmp_path / "worker.stderr") as run:
            # files staged and registered: file mode is under way
            run.wait_for(lambda r: r.get("type") == "window" and r["acks"] > 0, timeout_s=60)
            assert _stats(first)["stage"]["uploads"] > 0, "no file went by the stage"
            first.proc.kill()  # SIGKILL: nothing is stopped cleanly
            first.wait_exit(10)
            second = _serve(data, "--port", str(port))
            assert second.info["client_env"]["AWS_ENDPOINT_URL"] == stage_url
            result = run.finish(100)
        assert result.returncode == 0, str(result)
        s = result.summary
        assert s["unacked_rows"] == 0 and s["rows_acked"] == s["rows_sent"], s
        stats = _stats(second)
        assert stats["stage"]["uploads"] > 0, "no file was uploaded after the restart"
        assert stats["responses"].get("filebuffer:200", 0) > 0, stats["responses"]
        got = landed(_Tuples(second), run_id, 0, s)
        assert not got.lost(), f"{len(got.lost())} rows lost, first {got.lost()[:5]}"
        assert got.duplicates == 0, f"{got.duplicates} rows landed twice"
        assert got.rows == s["next_seq"] - s["first_seq"]
    finally:
        for emu in (first, second):
            if emu is not None:
                emu.stop()


def test_the_stage_comes_back_on_its_port_with_its_credentials(tmp_path):
    tls = make_tls(tmp_path)
    with make_stage(tmp_path / "stage", tls) as stage:
        url = stage.url
        client = granted(stage, tls)
        client.put("before.ndjson")
    with make_stage(tmp_path / "stage", tls) as again:
        assert again.url == url
        client.put("after.ndjson", DATA)  # the same client, the same credentials
        assert again.read(client.grant.location + "after.ndjson") == DATA


def test_a_taken_port_is_a_clear_error_naming_the_file(tmp_path):
    tls = make_tls(tmp_path)
    with make_stage(tmp_path / "stage", tls) as stage:
        port = int(stage.url.rsplit(":", 1)[1])
    squatter = socket.socket()
    try:
        squatter.bind(("127.0.0.1", port))
        squatter.listen(1)
        with pytest.raises(PortTaken, match=rf"port {port} .*in use.*stage/PORT"):
            make_stage(tmp_path / "stage", tls).start()
    finally:
        squatter.close()
    with make_stage(tmp_path / "stage", tls) as again:  # free again: the same port
        assert again.url.endswith(f":{port}")
