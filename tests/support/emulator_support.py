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

import pytest

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
        **emu.info()["client_env"],  # the CA (SSL_CERT_FILE), the stage's URL
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


# --- a real emulator process, and raw HTTPS to it ---------------------------------


def child_env(**extra: str) -> dict[str, str]:
    """The environment for a child that imports this checkout's package."""
    path = os.pathsep.join([str(PYTHON_DIR), os.environ.get("PYTHONPATH", "")])
    return dict(os.environ, PYTHONPATH=path, **extra)


class EmulatorProcess:
    """``python -m elastic_channels.emulator serve`` in a child process, on 127.0.0.1.

    Bounded: ``start`` waits at most ``timeout`` s for the info file, and the server is
    told ``--duration-seconds`` so it stops by itself even if the test dies.
    """

    def __init__(self, data_dir: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.info_file = self.data_dir.parent / f"{self.data_dir.name}-info.json"
        self.log_file = self.data_dir.parent / f"{self.data_dir.name}-stderr.log"
        self.args = ["--append-buffer-ms", "20", "--duration-seconds", "300", *args]
        self.env = child_env(**(env or {}))
        self.proc: subprocess.Popen | None = None
        self.info: dict[str, Any] = {}

    def start(self, timeout: float = 30) -> EmulatorProcess:
        self.info_file.unlink(missing_ok=True)
        cmd = [sys.executable, "-m", "elastic_channels.emulator", "serve",
               "--data-dir", str(self.data_dir), "--info-file", str(self.info_file),
               *self.args]  # fmt: skip
        with open(self.log_file, "ab") as log:
            self.proc = subprocess.Popen(cmd, env=self.env, stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + timeout
        while not self.info_file.exists():
            if self.proc.poll() is not None:
                raise AssertionError(f"serve exited {self.proc.returncode}: {self.stderr()}")
            if time.monotonic() > deadline:
                self.proc.kill()
                raise AssertionError("the emulator did not become ready")
            time.sleep(0.05)
        self.info = json.loads(self.info_file.read_text())
        return self

    def stderr(self) -> str:
        """The end of what the emulator wrote to stderr so far."""
        try:
            return self.log_file.read_text(errors="replace")[-4000:]
        except FileNotFoundError:
            return ""

    def wait_exit(self, timeout: float = 60) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout=timeout)

    def stop(self, timeout: float = 60) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        return self.proc.returncode

    @property
    def port(self) -> int:
        return int(self.info["properties"]["port"])

    @property
    def secret(self) -> str:
        return (self.data_dir / "control.secret").read_text().strip()

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 20,
    ) -> tuple[int, dict[str, str], bytes]:
        """One HTTPS request on a fresh connection: (status, headers, body)."""
        import http.client
        import ssl

        ctx = ssl.create_default_context(cafile=self.info["ssl_cert_file"])
        conn = http.client.HTTPSConnection("localhost", self.port, context=ctx, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
        finally:
            conn.close()

    def control(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {self.secret}", "Content-Type": "application/json"}
        status, _, out = self.request(method, f"/_emulator/{path}", data, headers, timeout=120)
        if status != 200:
            raise AssertionError(f"control {method} {path}: {status} {out[:300]!r}")
        return out

    def query(self, sql: str) -> list[dict[str, Any]]:
        out = self.control("POST", "query", {"sql": sql})
        return [json.loads(line) for line in out.splitlines() if line.strip()]

    def wait_landed(self, timeout: float = 60) -> bool:
        return json.loads(self.control("POST", "wait-landed", {"timeout_s": timeout}))["landed"]

    def keypair_jwt(self, lifetime_s: int = 3500) -> str:
        """A key-pair JWT for the default user, as the SDK makes one (claims in seconds)."""
        import jwt
        from cryptography.hazmat.primitives import serialization

        from elastic_channels.emulator.http.auth import public_key_fingerprint

        props = self.info["properties"]
        key = serialization.load_pem_private_key(Path(props["private_key_file"]).read_bytes(), None)
        fp = public_key_fingerprint(key.public_key())  # type: ignore[arg-type]
        who = f"{props['account']}.{props['user']}"
        now = int(time.time())
        claims = {"iss": f"{who}.{fp}", "sub": who, "iat": now, "exp": now + lifetime_s}
        return jwt.encode(claims, key, algorithm="RS256")  # type: ignore[arg-type]

    def scoped_token(self) -> str:
        headers = {
            "Authorization": f"Bearer {self.keypair_jwt()}",
            "X-Snowflake-Authorization-Token-Type": "KEYPAIR_JWT",
            "Content-Type": "application/x-www-form-urlencoded",
        }
        body = b"grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&scope=localhost"
        status, _, token = self.request("POST", "/oauth/token", body, headers)
        assert status == 200, token
        return token.decode()


ROWS_PATH = (
    "/v2/streaming/data/databases/EMULATOR_DB/schemas/PUBLIC/pipes/RESORT_SALES_PIPE"
    "/channels/ELASTIC/rows?requestId={rid}&retryCount=0"
)


def tls_socket(port: int, ca_file: str, timeout: float = 10) -> Any:
    """A TLS connection to 127.0.0.1:port (handshake done), for hand-made HTTP."""
    import socket
    import ssl

    ctx = ssl.create_default_context(cafile=ca_file)
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    return ctx.wrap_socket(raw, server_hostname="localhost")


def read_reply(sock: Any, timeout: float = 10) -> tuple[int, bytes]:
    """(status, body) of the next response on a hand-made connection; (0, b"") if it closed."""
    import http.client

    sock.settimeout(timeout)
    resp = http.client.HTTPResponse(sock)
    try:
        resp.begin()
    except (http.client.RemoteDisconnected, ConnectionError):
        return 0, b""
    return resp.status, resp.read()


def require_native_parse() -> None:
    """Skip (fail in CI, ``CI=true``) when the native row parser is not built."""
    from elastic_channels.emulator.landing.parse_backends import native_parse_available

    if native_parse_available():
        return
    why = "elastic_native.RowParser is not importable (maturin develop)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{why} (CI=true: the native module must be built)")
    pytest.skip(why)


def query_emulator(cwd: Path, sql: str) -> list[dict]:
    """``elastic-channels emulator query`` on the data dir a run in ``cwd`` left: its rows."""
    done = subprocess.run(
        [sys.executable, "-m", "elastic_channels", "emulator", "query",
         "--data-dir", ".elastic-channels/emulator", sql],
        capture_output=True, text=True, timeout=60, cwd=cwd,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [json.loads(x) for x in done.stdout.splitlines() if x.strip()]
