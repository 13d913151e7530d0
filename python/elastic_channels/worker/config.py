"""The worker's configuration: command-line flags over environment over defaults.

The connection (account, user, key, the account URL's host, database, schema, pipe)
is the account settings' one resolution (:func:`..account.account_settings`); the
SDK's own properties (a profile's, ``SNOWPIPE_SDK_PROPERTIES``, ``--sdk-property``)
go to the SDK as given, with no target-dependent additions or removals.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..account import AccountSettings, account_settings
from ..landing_table import DEFAULT_WORKLOAD, WorkloadArgError, landing_table, pipe_named
from ..measures import MAX_MBPS, MAX_RUN_SECONDS, MB
from ..rows import check_generator_args
from ..sdk.properties import DEFAULT_RETRY_BACKOFF_S
from .schedule import Schedule, Stage, parse_stages
from .settings import (
    ACK_TIMEOUT_MARGIN_S,
    WORKER_ACCOUNT_SETTINGS,
    ConfigError,
    add_settings,
    resolve,
)

__all__ = ["ConfigError", "WorkerConfig", "build_parser", "load_config", "worker_id_from_env"]

DESCRIPTION = (
    "One worker: generate a workload's rows (resort sales by default) at a target rate "
    "for a fixed time (or along --stages, after --warmup-seconds) and stream them "
    "into Snowflake through one Snowpipe Streaming elastic channel. Prints one JSON line "
    "per window and a summary line; exits 0 only if every row was acked. Flags win over "
    "environment variables (named in brackets)."
)


@dataclass
class WorkerConfig:
    """A worker's settings, resolved. Every value comes from ``load_config``: the
    defaults live once, in :data:`elastic_channels.worker.settings.SETTINGS`."""

    run_id: str
    worker_id: int
    target_bps: float
    duration_s: float
    batch_bytes: int
    database: str
    schema: str
    pipe: str
    properties: dict[str, Any]
    profile_path: str | None
    window_s: float
    max_inflight_bytes: int
    sleep_quantum_s: float
    drain_timeout_s: float
    connect_timeout_s: float
    retry_backoff_s: int
    #: A batch unacked this long means its ack was lost: reopen and resend.
    ack_timeout_s: float
    encoder: str | None
    append_mode: str | None
    #: The emulator's CA certificate, when the profile is an emulator's info file.
    ssl_cert_file: str | None
    #: Elastic channels this worker drives (``--channels``); a channel's own config
    #: (``multi.channel_config``) has its share of the rate and its first sequence number.
    channels: int
    channel_index: int = 0
    first_seq: int = 0
    #: Epoch seconds to start sending at (``--start-at``), or None: at once.
    start_at: float | None = None
    #: Take the start from this ConfigMap (``NAMESPACE/NAME``), once ready; see
    #: :mod:`.start_barrier`. ``ready_file``: written once the channel is open.
    start_configmap: str | None = None
    ready_file: str | None = None
    start_timeout_s: float = 900.0
    #: The load shape (``--stages``), or None: one stage of ``target_bps`` for
    #: ``duration_s``. :meth:`schedule` is the one to follow.
    stages: tuple[Stage, ...] | None = None
    #: Warmup before the first stage (``--warmup-seconds``), before rounding to windows.
    warmup_s: float = 0.0
    scenario_name: str | None = None
    scenario_hash: str | None = None
    #: The workload (``--workload``): a shipped name, or a workload file's path.
    workload: str = DEFAULT_WORKLOAD
    #: Read the SDK's own metrics once a window (``--sdk-metrics``, on by default).
    sdk_metrics: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    def schedule(self) -> Schedule:
        """What to send when, from the start: warmup, then ``stages`` (or one stage of
        ``target_bps`` for ``duration_s``)."""
        stages = self.stages or (Stage(self.duration_s, self.target_bps, self.target_bps),)
        return Schedule(stages, self.warmup_s)

    def scenario_ids(self) -> dict[str, str | None]:
        """The scenario's name and hash, as every window and summary line carries them."""
        return {"scenario": self.scenario_name, "scenario_hash": self.scenario_hash}


#: A scenario's name, as a scenario file allows it.
SCENARIO_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
#: A scenario's hash: hex digits.
SCENARIO_HASH = re.compile(r"[0-9a-fA-F]{1,128}")


def default_run_id() -> str:
    return time.strftime("run-%Y%m%d-%H%M%S", time.gmtime())


def worker_id_from_env(environ: Mapping[str, str]) -> int | None:
    """WORKER_ID, else JOB_COMPLETION_INDEX, else the ordinal of a pod name like web-3."""
    for var in ("WORKER_ID", "JOB_COMPLETION_INDEX"):
        value = environ.get(var)
        if value not in (None, ""):
            try:
                return int(value)  # type: ignore[arg-type]
            except ValueError:
                raise ConfigError(f"{var} must be an integer, got {value!r}") from None
    host = environ.get("HOSTNAME") or socket.gethostname()
    m = re.search(r"-(\d+)$", host)
    return int(m.group(1)) if m else None


def build_parser(prog: str = "elastic-channels worker") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=DESCRIPTION)
    configure_parser(p)
    return p


def configure_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--worker-id",
        type=int,
        help="this worker's id [WORKER_ID, else JOB_COMPLETION_INDEX, else the pod ordinal]",
    )
    add_settings(p)
    p.add_argument(
        "--no-sdk-metrics",
        dest="sdk_metrics",
        action="store_const",
        const="off",
        help="the same as --sdk-metrics off",
    )
    p.add_argument(
        "--sdk-property",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra SDK client property, repeatable [SNOWPIPE_SDK_PROPERTIES as a JSON object]",
    )


def _account(a: argparse.Namespace, env: Mapping[str, str]) -> AccountSettings:
    """The connection, as every command resolves it; a worker needs an account (or a
    profile naming one) and a database."""
    flags = {s.name: getattr(a, s.name, None) for s in WORKER_ACCOUNT_SETTINGS}
    return account_settings(flags, env).check("account", "database")


def _properties(a: argparse.Namespace, env: Mapping[str, str], acct: AccountSettings) -> dict:
    """The SDK client's properties: the connection's, then SNOWPIPE_SDK_PROPERTIES, then
    each --sdk-property, then --retry-backoff-seconds."""
    props = acct.sdk_properties()
    extra_json = env.get("SNOWPIPE_SDK_PROPERTIES", "").strip()
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
    if a.retry_backoff_seconds is not None:  # the flag wins over profile and environment
        props["data_retry_total_backoff_seconds"] = a.retry_backoff_seconds
    props.setdefault("data_retry_total_backoff_seconds", DEFAULT_RETRY_BACKOFF_S)
    return props


def load_config(
    argv: list[str] | None = None, environ: Mapping[str, str] | None = None
) -> WorkerConfig:
    env = dict(os.environ if environ is None else environ)
    a = build_parser().parse_args(argv)
    acct = _account(a, env)
    props = _properties(a, env, acct)
    try:
        retry_backoff_s = int(props["data_retry_total_backoff_seconds"])
    except (TypeError, ValueError):
        raise ConfigError(
            "data_retry_total_backoff_seconds must be an integer, got "
            f"{props['data_retry_total_backoff_seconds']!r}"
        ) from None

    def get(name: str) -> Any:
        return resolve(name, getattr(a, name), env)

    worker_id = a.worker_id if a.worker_id is not None else worker_id_from_env(env)
    ack_timeout = get("ack_timeout_seconds")
    workload = get("workload") or DEFAULT_WORKLOAD
    try:  # checked in full now: a bad file is named before any channel opens
        land = landing_table(workload, "--workload" if a.workload else "WORKLOAD")
    except WorkloadArgError as e:
        raise ConfigError(str(e)) from None
    cfg = WorkerConfig(
        run_id=get("run_id") or default_run_id(),
        worker_id=0 if worker_id is None else worker_id,
        target_bps=get("target_bps"),
        duration_s=get("duration_seconds"),
        start_at=get("start_at"),
        start_configmap=get("start_configmap"),
        ready_file=get("ready_file"),
        start_timeout_s=get("start_timeout_seconds"),
        batch_bytes=get("batch_bytes"),
        database=str(acct.database),
        schema=acct.schema,
        pipe=acct.pipe if pipe_named(a.pipe, env, acct.profile) else land.pipe,
        properties=props,
        profile_path=acct.profile.path if acct.profile else None,
        window_s=get("window_seconds"),
        max_inflight_bytes=get("max_inflight_bytes"),
        sleep_quantum_s=get("sleep_quantum_ms") / 1000,
        drain_timeout_s=get("drain_timeout_seconds"),
        connect_timeout_s=get("connect_timeout_seconds"),
        retry_backoff_s=retry_backoff_s,
        ack_timeout_s=(
            ack_timeout if ack_timeout is not None else retry_backoff_s + ACK_TIMEOUT_MARGIN_S
        ),
        encoder=get("encoder"),
        append_mode=get("append_mode"),
        ssl_cert_file=acct.ssl_cert_file,
        channels=get("channels"),
        warmup_s=get("warmup_seconds"),
        scenario_name=get("scenario_name"),
        scenario_hash=get("scenario_hash"),
        workload=workload,
    )
    sdk_metrics = get("sdk_metrics")
    if sdk_metrics not in ("on", "off"):
        raise ConfigError(f"--sdk-metrics (SDK_METRICS) must be on or off, got {sdk_metrics!r}")
    cfg.sdk_metrics = sdk_metrics == "on"
    stages = get("stages")
    cfg.stages = None if stages is None else parse_stages(stages)
    _validate(cfg)
    return cfg


def _validate(cfg: WorkerConfig) -> None:
    checks = [
        (
            math.isfinite(cfg.target_bps) and cfg.target_bps > 0,
            f"--target-bps (TARGET_BPS) must be a finite number > 0, got {cfg.target_bps}",
        ),
        (
            cfg.target_bps <= MAX_MBPS * MB,
            f"--target-bps (TARGET_BPS) must be at most {MAX_MBPS * MB:g}, got {cfg.target_bps:g}",
        ),
        (
            math.isfinite(cfg.duration_s) and cfg.duration_s > 0,
            "--duration-seconds (DURATION_SECONDS) must be a finite number > 0, got "
            f"{cfg.duration_s}",
        ),
        (
            cfg.duration_s <= MAX_RUN_SECONDS,
            f"--duration-seconds (DURATION_SECONDS) must be at most {MAX_RUN_SECONDS} (30 "
            f"days), got {cfg.duration_s:g}",
        ),
        (
            cfg.batch_bytes >= 1000,
            f"--batch-bytes (BATCH_BYTES) must be >= 1000, got {cfg.batch_bytes}",
        ),
        (
            math.isfinite(cfg.window_s) and cfg.window_s > 0,
            f"--window-seconds must be a finite number > 0, got {cfg.window_s}",
        ),
        (
            math.isfinite(cfg.connect_timeout_s) and cfg.connect_timeout_s > 0,
            f"--connect-timeout-seconds must be a finite number > 0, got {cfg.connect_timeout_s}",
        ),
        (
            math.isfinite(cfg.drain_timeout_s) and cfg.drain_timeout_s >= 0,
            f"--drain-timeout-seconds must be a finite number >= 0, got {cfg.drain_timeout_s}",
        ),
        (
            cfg.start_at is None or (math.isfinite(cfg.start_at) and cfg.start_at > 0),
            f"--start-at (START_AT) must be seconds since the epoch, got {cfg.start_at}",
        ),
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
        (1 <= cfg.channels <= 64, f"--channels (CHANNELS) must be 1..64, got {cfg.channels}"),
        (cfg.retry_backoff_s > 0, "--retry-backoff-seconds must be > 0"),
        (cfg.ack_timeout_s > 0, f"--ack-timeout-seconds must be > 0, got {cfg.ack_timeout_s:g}"),
        (
            math.isfinite(cfg.warmup_s) and 0 <= cfg.warmup_s <= 86_400,
            f"--warmup-seconds (WARMUP_SECONDS) must be 0 to 86400, got {cfg.warmup_s:g}",
        ),
        (
            cfg.scenario_name is None or SCENARIO_NAME.fullmatch(cfg.scenario_name) is not None,
            "--scenario-name (SCENARIO_NAME) must be 1 to 64 letters, digits, _ . or -, got "
            f"{cfg.scenario_name!r}",
        ),
        (
            cfg.scenario_hash is None or SCENARIO_HASH.fullmatch(cfg.scenario_hash) is not None,
            "--scenario-hash (SCENARIO_HASH) must be 1 to 128 hex digits, got "
            f"{cfg.scenario_hash!r}",
        ),
    ]
    for ok, message in checks:
        if not ok:
            raise ConfigError(message)
    try:  # the generator's own limits (run id length and text, worker id range)
        check_generator_args(cfg.run_id, cfg.worker_id)
    except (TypeError, ValueError) as e:  # UnicodeEncodeError is a ValueError
        names = {"run_id": "--run-id (RUN_ID)", "worker_id": "--worker-id (WORKER_ID)"}
        text = str(e)
        for arg, flag in names.items():
            text = text.replace(arg, flag, 1) if arg in text else text
        raise ConfigError(text) from None
