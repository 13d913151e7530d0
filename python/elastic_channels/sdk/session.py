"""One SDK client and its elastic channel, opened without blocking the caller."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger("elastic_channels.sdk")


class ConnectError(RuntimeError):
    """No channel could be opened."""


def prepare_sdk_environment(
    ssl_cert_file: str | None, environ: Any = None, client_env: Mapping[str, str] | None = None
) -> None:
    """SDK settings read at import: quiet logs on stderr, and the emulator's CA if given.

    An emulator info file names the one CA its server's certificate chains to, so it
    replaces any SSL_CERT_FILE (this process talks to that server only), and its
    ``client_env``: the stage's URL as ``AWS_ENDPOINT_URL`` (the SDK's S3 client, the AWS
    SDK for Rust, honours it), where file mode uploads as it would to the pipe's stage in
    cloud storage on an account. Only an emulator's info file carries it.
    """
    env = os.environ if environ is None else environ
    env.setdefault("SS_LOG_LEVEL", "warn")
    env.setdefault("SS_LOG_TARGET", "stderr")  # stdout carries our JSON lines
    env.update(client_env or {})
    if ssl_cert_file:
        env["SSL_CERT_FILE"] = ssl_cert_file


def emulator_client_env(profile_path: str | None) -> dict[str, str]:
    """The ``client_env`` of an emulator's info file (empty for any other profile)."""
    if not profile_path:
        return {}
    try:
        doc = json.loads(Path(profile_path).read_text())
    except (OSError, ValueError):
        return {}  # the worker's settings already refused an unreadable profile
    env = doc.get("client_env") if isinstance(doc, dict) else None
    if not isinstance(env, dict):
        return {}
    return {str(k): str(v) for k, v in env.items() if str(k).startswith(("AWS_", "SSL_"))}


def is_back_pressure(error: BaseException) -> bool:
    """The SDK's refusal to take more while too much is in flight (ReceiverSaturated)."""
    return "ReceiverSaturated" in str(error)


class Session:
    """One SDK client and its elastic channel, with an ``ElasticAppender`` on it."""

    def __init__(
        self,
        client_name: str,
        database: str,
        schema: str,
        pipe: str,
        properties: dict[str, Any],
        append_mode: str | None,
    ) -> None:
        from snowflake.ingest.streaming import StreamingIngestClient

        from .fast_append import ElasticAppender

        self.client = StreamingIngestClient(
            client_name, database, schema, pipe, properties=properties
        )
        self.appender = ElasticAppender(self.client.get_elastic_channel(), append_mode)  # type: ignore[arg-type]

    def close(self, timeout_s: int) -> None:
        try:
            self.client.close(wait_for_flush=timeout_s > 0, timeout_seconds=timeout_s)
        except Exception as e:  # a dead channel's client may refuse to close cleanly
            log.debug("closing a client: %s", e)


def open_in_thread(
    connect: Callable[[], Any], give_up_at: float, should_stop: Callable[[], bool]
) -> Any:
    """``connect()`` on a thread, while this one stays responsive: the SDK's client
    constructor retries an unreachable server for minutes and cannot be interrupted.

    Raises ``ConnectError`` when ``connect`` fails, when ``give_up_at`` (monotonic)
    passes, or when ``should_stop()`` turns true; the thread is then left behind (a
    daemon), and ``ConnectError.stuck`` is True.
    """
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["session"] = connect()
        except BaseException as e:
            box["error"] = e

    thread = threading.Thread(target=run, name="sdk-connect", daemon=True)
    started = time.monotonic()
    thread.start()
    while thread.is_alive():
        stop = should_stop()
        if stop or time.monotonic() > give_up_at:
            why = "stopped" if stop else f"no answer in {give_up_at - started:.3g} s"
            error = ConnectError(f"connecting to Snowflake: {why}")
            error.stuck = True  # type: ignore[attr-defined]
            raise error
        thread.join(0.1)
    if "error" in box:
        raise ConnectError(f"connecting to Snowflake: {box['error']}") from box["error"]
    return box["session"]
