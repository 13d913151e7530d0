"""The worker's configuration: command-line flags over environment over defaults."""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import re
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elastic_channels.cli_help import DefaultsHelpFormatter

#: Client properties that keep the SDK's flushes inline (rowset mode). Only ever
#: given to a loopback emulator: a real account chooses for itself.
EMULATOR_ONLY_PROPERTIES = {
    "max_buffered_kb_for_rowset_mode": 1048576,
    "max_rowset_payload_size_mb": 16,
}


class ConfigError(ValueError):
    """The worker was configured wrongly; the message names the flag or variable."""


@dataclass
class WorkerConfig:
    run_id: str
    worker_id: int
    target_bps: float
    duration_s: float
    batch_bytes: int
    database: str
    schema: str
    pipe: str
    properties: dict[str, Any]
    profile_path: str | None = None
    window_s: float = 5.0
    max_inflight_bytes: int = 96_000_000
    sleep_quantum_s: float = 0.25
    drain_timeout_s: float = 60.0
    connect_timeout_s: float = 120.0
    retry_backoff_s: int = 30
    #: A batch unacked this long means its ack was lost: reopen and resend.
    ack_timeout_s: float = 90.0
    encoder: str | None = None
    append_mode: str | None = None
    ssl_cert_file: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def is_loopback(self) -> bool:
        host = str(self.properties.get("host", "")).strip("[]")
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:  # a DNS name other than localhost
            return False


def default_run_id() -> str:
    return time.strftime("run-%Y%m%d-%H%M%S", time.gmtime())


def worker_id_from_env(environ: dict[str, str]) -> int | None:
    """WORKER_ID, else JOB_COMPLETION_INDEX, else the ordinal of a pod name like web-3."""
    for var in ("WORKER_ID", "JOB_COMPLETION_INDEX"):
        value = environ.get(var)
        if value not in (None, ""):
            try:
                return int(value)
            except ValueError:
                raise ConfigError(f"{var} must be an integer, got {value!r}") from None
    host = environ.get("HOSTNAME") or socket.gethostname()
    m = re.search(r"-(\d+)$", host)
    return int(m.group(1)) if m else None


def _env(environ: dict[str, str], name: str) -> str | None:
    value = environ.get(name)
    return value if value not in (None, "") else None


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m elastic_channels.k8s_worker",
        description=(
            "One worker: generate resort sales at a target rate for a fixed time and stream "
            "them into Snowflake through one Snowpipe Streaming elastic channel. Prints one "
            "JSON line per window and a summary line; exits 0 only if every row was acked. "
            "Flags win over environment variables (named in brackets)."
        ),
        formatter_class=DefaultsHelpFormatter,
    )
    g = p.add_argument_group("what to send")
    g.add_argument("--run-id", help="RUN_ID stamped on every row [RUN_ID]; default: run-<UTC time>")
    g.add_argument(
        "--worker-id",
        type=int,
        help="this worker's id [WORKER_ID, else JOB_COMPLETION_INDEX, else the pod ordinal]",
    )
    g.add_argument(
        "--target-bps", type=float, help="target bytes/s of NDJSON [TARGET_BPS]; default 92e6"
    )
    g.add_argument(
        "--duration-seconds", type=float, help="how long to send [DURATION_SECONDS]; default 60"
    )
    g.add_argument(
        "--batch-bytes", type=int, help="approximate bytes per append [BATCH_BYTES]; default 1e6"
    )
    g.add_argument("--encoder", choices=["native", "python"], help="force a row encoder")
    g.add_argument(
        "--append-mode",
        choices=["ffi", "raw", "rows"],
        help="ffi: preserialized bytes to the SDK core; raw: msgspec.Raw rows via the public "
        "API; rows: row objects via the public API (default: ffi when available, rows when "
        "ELASTIC_FAST_JSON_ENCODE is off)",
    )
    g.add_argument("--window-seconds", type=float, default=5.0, help="metrics window")
    g.add_argument(
        "--max-inflight-bytes",
        type=int,
        default=96_000_000,
        help="unacked bytes held at most; appends wait beyond this",
    )
    g.add_argument(
        "--sleep-quantum-ms",
        type=float,
        default=250.0,
        help="sleep only once this far ahead of the pacing schedule, so batches go in "
        "short bursts between sleeps (each wake-up costs ~0.2 ms of CPU on cold caches); "
        "0 sleeps after every batch; the long-run rate is the same either way, longer "
        "quanta trade burstier sends and slower acks for less CPU",
    )
    g.add_argument(
        "--drain-timeout-seconds",
        type=float,
        default=60.0,
        help="at the end (or on SIGTERM), how long to wait for outstanding acks",
    )
    g.add_argument(
        "--connect-timeout-seconds",
        type=float,
        default=120.0,
        help="give up opening a client + channel after this long",
    )
    c = p.add_argument_group("where to send it")
    c.add_argument(
        "--profile",
        help="SDK profile JSON of connection properties, or an emulator --info-file "
        "[SNOWFLAKE_PROFILE]",
    )
    c.add_argument("--account", help="[SNOWFLAKE_ACCOUNT]")
    c.add_argument("--user", help="[SNOWFLAKE_USER]")
    c.add_argument("--role", help="[SNOWFLAKE_ROLE]")
    c.add_argument(
        "--private-key-file", help="PKCS#8 PEM key [SNOWFLAKE_PRIVATE_KEY_FILE or the PEM text "
        "in SNOWFLAKE_PRIVATE_KEY]"
    )  # fmt: skip
    c.add_argument("--host", help="account host, if not the default [SNOWFLAKE_HOST]")
    c.add_argument("--port", type=int, help="[SNOWFLAKE_PORT]")
    c.add_argument("--database", help="[SNOWFLAKE_DATABASE]")
    c.add_argument("--schema", help="[SNOWFLAKE_SCHEMA]")
    c.add_argument("--pipe", help="[SNOWFLAKE_PIPE]; default RESORT_SALES_PIPE")
    c.add_argument(
        "--sdk-property",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra SDK client property, repeatable [SNOWPIPE_SDK_PROPERTIES as a JSON object]",
    )
    c.add_argument(
        "--retry-backoff-seconds",
        type=int,
        default=None,
        help="SDK data_retry_total_backoff_seconds: how long the SDK retries a failing "
        "request before the worker reopens the channel and resends (default 30, unless the "
        "profile or SNOWPIPE_SDK_PROPERTIES sets it)",
    )
    c.add_argument(
        "--ack-timeout-seconds",
        type=float,
        default=None,
        help="a batch still unacked after this long is taken as lost by the SDK: the "
        "worker reopens the channel and resends (default: the retry backoff + 60)",
    )
    return p


def _load_profile(path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(properties, target) from an SDK profile or an emulator info file."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as e:
        raise ConfigError(f"--profile {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ConfigError(f"--profile {path}: not JSON ({e})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"--profile {path}: expected a JSON object")
    if "properties" in data and isinstance(data["properties"], dict):  # emulator info file
        target = {k: data[k] for k in ("database", "schema", "pipe", "ssl_cert_file") if k in data}
        return dict(data["properties"]), target
    return data, {}


def load_config(
    argv: list[str] | None = None, environ: dict[str, str] | None = None
) -> WorkerConfig:
    env = dict(os.environ if environ is None else environ)
    parser = build_parser()
    a = parser.parse_args(argv)

    props: dict[str, Any] = {}
    target: dict[str, Any] = {}
    profile = a.profile or _env(env, "SNOWFLAKE_PROFILE")
    if profile:
        props, target = _load_profile(profile)
    for key, flag, var in (
        ("account", a.account, "SNOWFLAKE_ACCOUNT"),
        ("user", a.user, "SNOWFLAKE_USER"),
        ("role", a.role, "SNOWFLAKE_ROLE"),
        ("private_key_file", a.private_key_file, "SNOWFLAKE_PRIVATE_KEY_FILE"),
        ("private_key", None, "SNOWFLAKE_PRIVATE_KEY"),
        ("host", a.host, "SNOWFLAKE_HOST"),
        ("port", a.port, "SNOWFLAKE_PORT"),
    ):
        value = flag if flag is not None else _env(env, var)
        if value is not None:
            props[key] = value
    extra_json = _env(env, "SNOWPIPE_SDK_PROPERTIES")
    if extra_json:
        try:
            extra = json.loads(extra_json)
        except json.JSONDecodeError as e:
            raise ConfigError(f"SNOWPIPE_SDK_PROPERTIES is not JSON: {e}") from None
        if not isinstance(extra, dict):
            raise ConfigError("SNOWPIPE_SDK_PROPERTIES must be a JSON object")
        props.update(extra)
    for item in a.sdk_property:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--sdk-property expects KEY=VALUE, got {item!r}")
        props[key] = value
    if "account" not in props:
        raise ConfigError(
            "no Snowflake connection: give --profile, or --account/--user/--private-key-file "
            "(or SNOWFLAKE_ACCOUNT, SNOWFLAKE_USER, SNOWFLAKE_PRIVATE_KEY_FILE)"
        )
    if "private_key_file" in props and "private_key" not in props:
        key_path = Path(str(props.pop("private_key_file")))
        try:
            props["private_key"] = key_path.read_text()
        except OSError as e:
            raise ConfigError(f"private key file {key_path}: {e.strerror}") from None
    if a.retry_backoff_seconds is not None:  # the flag wins over profile and environment
        props["data_retry_total_backoff_seconds"] = a.retry_backoff_seconds
    props.setdefault("data_retry_total_backoff_seconds", 30)
    try:
        retry_backoff_s = int(props["data_retry_total_backoff_seconds"])
    except (TypeError, ValueError):
        raise ConfigError(
            "data_retry_total_backoff_seconds must be an integer, got "
            f"{props['data_retry_total_backoff_seconds']!r}"
        ) from None

    def pick(flag: Any, var: str, default: Any, kind: type) -> Any:
        if flag is not None:
            return flag
        raw = _env(env, var)
        if raw is None:
            return default
        try:
            return kind(raw)
        except ValueError:
            raise ConfigError(f"{var} must be a {kind.__name__}, got {raw!r}") from None

    worker_id = a.worker_id if a.worker_id is not None else worker_id_from_env(env)
    cfg = WorkerConfig(
        run_id=a.run_id or _env(env, "RUN_ID") or default_run_id(),
        worker_id=0 if worker_id is None else worker_id,
        target_bps=pick(a.target_bps, "TARGET_BPS", 92e6, float),
        duration_s=pick(a.duration_seconds, "DURATION_SECONDS", 60.0, float),
        batch_bytes=pick(a.batch_bytes, "BATCH_BYTES", 1_000_000, int),
        database=a.database or _env(env, "SNOWFLAKE_DATABASE") or target.get("database", ""),
        schema=a.schema or _env(env, "SNOWFLAKE_SCHEMA") or target.get("schema", ""),
        pipe=a.pipe or _env(env, "SNOWFLAKE_PIPE") or target.get("pipe", "RESORT_SALES_PIPE"),
        properties=props,
        profile_path=profile,
        window_s=a.window_seconds,
        max_inflight_bytes=a.max_inflight_bytes,
        sleep_quantum_s=a.sleep_quantum_ms / 1000,
        drain_timeout_s=a.drain_timeout_seconds,
        connect_timeout_s=a.connect_timeout_seconds,
        retry_backoff_s=retry_backoff_s,
        ack_timeout_s=(
            a.ack_timeout_seconds if a.ack_timeout_seconds is not None else retry_backoff_s + 60
        ),
        encoder=a.encoder,
        append_mode=a.append_mode,
        ssl_cert_file=target.get("ssl_cert_file"),
    )
    _validate(cfg)
    if not cfg.is_loopback:
        for key in EMULATOR_ONLY_PROPERTIES:
            cfg.properties.pop(key, None)
    return cfg


def _validate(cfg: WorkerConfig) -> None:
    checks = [
        (cfg.target_bps > 0, f"--target-bps (TARGET_BPS) must be > 0, got {cfg.target_bps}"),
        (
            cfg.duration_s > 0,
            f"--duration-seconds (DURATION_SECONDS) must be > 0, got {cfg.duration_s}",
        ),
        (
            cfg.batch_bytes >= 1000,
            f"--batch-bytes (BATCH_BYTES) must be >= 1000, got {cfg.batch_bytes}",
        ),
        (cfg.window_s > 0, f"--window-seconds must be > 0, got {cfg.window_s}"),
        (
            0 <= cfg.sleep_quantum_s <= 1,
            f"--sleep-quantum-ms must be between 0 and 1000, got {cfg.sleep_quantum_s * 1000:g}",
        ),
        (
            cfg.max_inflight_bytes >= cfg.batch_bytes,
            f"--max-inflight-bytes ({cfg.max_inflight_bytes}) must be >= --batch-bytes "
            f"({cfg.batch_bytes})",
        ),
        (cfg.worker_id >= 0, f"--worker-id (WORKER_ID) must be >= 0, got {cfg.worker_id}"),
        (bool(cfg.database), "no database: give --database or SNOWFLAKE_DATABASE"),
        (bool(cfg.schema), "no schema: give --schema or SNOWFLAKE_SCHEMA"),
        (cfg.retry_backoff_s > 0, "--retry-backoff-seconds must be > 0"),
        (cfg.ack_timeout_s > 0, f"--ack-timeout-seconds must be > 0, got {cfg.ack_timeout_s:g}"),
    ]
    for ok, message in checks:
        if not ok:
            raise ConfigError(message)
    # The generator's own limits (run id length and text, worker id range).
    from elastic_channels.resort_sales import ResortGenerator

    try:
        ResortGenerator(cfg.run_id, cfg.worker_id)
    except (TypeError, ValueError) as e:  # UnicodeEncodeError is a ValueError
        names = {"run_id": "--run-id (RUN_ID)", "worker_id": "--worker-id (WORKER_ID)"}
        text = str(e)
        for arg, flag in names.items():
            text = text.replace(arg, flag, 1) if arg in text else text
        raise ConfigError(text) from None
