"""The worker's settings, once: name, flag, environment variable, default, help.

The worker's parser, ``elastic-channels run``'s shared flags, their help and the
resolution order (flag, then environment variable, then default) all come from this
table, so a setting has one name, one unit and one default everywhere. The account's
rows are the account table's (``account/settings.py``), which the worker resolves
with the profile through :func:`elastic_channels.account.account_settings`.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping
from typing import Any

from ..account.settings import ACCOUNT_SETTINGS
from ..sdk.properties import DEFAULT_RETRY_BACKOFF_S
from ..setting import Setting, SettingError, add_flags, show_number, whole_number
from .schedule import stages_json

__all__ = ["BY_NAME", "SETTINGS", "ConfigError", "add_settings", "flag_args", "resolve"]

#: With no --ack-timeout-seconds, a batch is taken as lost this long after the SDK's
#: retry backoff would have ended.
ACK_TIMEOUT_MARGIN_S = 60.0

#: A setting has a bad value; the message names the flag or variable.
ConfigError = SettingError

#: The account settings a worker takes (not the warehouse: it runs no SQL).
WORKER_ACCOUNT_SETTINGS = tuple(s for s in ACCOUNT_SETTINGS if s.name != "warehouse")

S = Setting
SETTINGS: tuple[Setting, ...] = (
    S("run_id", "--run-id", "RUN_ID stamped on every row", env="RUN_ID",
      default_text="run-<UTC time>"),
    S("target_bps", "--target-bps", "target bytes/s of NDJSON per worker (the reference "
      "benchmark's per-pod rate is the default)", float, 92e6, "TARGET_BPS"),
    S("duration_seconds", "--duration-seconds", "how long to send", float, 60.0,
      "DURATION_SECONDS"),
    S("start_at", "--start-at", "when to start sending, in seconds since the epoch, once "
      "the channel is open: the workers of a run given the same time send together and "
      "follow the same wall-clock schedule, so the run's throughput is theirs added up "
      "(run sets it a few seconds ahead, on a window boundary; a worker whose channel "
      "opens later joins the schedule where it stands)", float, None, "START_AT",
      default_text="as soon as the channel is open"),
    S("start_configmap", "--start-configmap", "NAMESPACE/NAME of a ConfigMap to take the "
      "run's start from (key start_at, epoch seconds): once its channel is open the worker "
      "says it is ready (--ready-file) and waits until the start is written there, so the "
      "pods of a Job all start together however long each took to be scheduled "
      "(deploy/run_job.sh writes it once every pod is ready); overrides --start-at",
      env="START_CONFIGMAP", default_text="none"),
    S("ready_file", "--ready-file", "a file written once the channel is open: a pod's "
      "readiness probe tests for it", env="READY_FILE", default_text="none"),
    S("start_timeout_seconds", "--start-timeout-seconds", "with --start-configmap, give up "
      "(exit 1) when no start was written after this long", float, 900.0,
      "START_TIMEOUT_SECONDS"),
    S("stages", "--stages", "the load shape, per worker: a JSON list of stages, each "
      '{"seconds": S, "from_bps": R0, "to_bps": R1} in bytes/s (R0 == R1: a constant '
      "rate; else a linear ramp from R0 to R1); the run lasts --warmup-seconds plus the "
      "stages' seconds, and --target-bps and --duration-seconds are not used", env="STAGES",
      default_text="one stage of --target-bps for --duration-seconds"),
    S("warmup_seconds", "--warmup-seconds", "send this long at the first stage's starting "
      "rate before the first stage; its windows are marked warmup and left out of the "
      "run's figures. Rounded up to end on a window boundary: from run's agreed start "
      "(a boundary) that is a whole number of --window-seconds", float, 0.0,
      "WARMUP_SECONDS"),
    S("scenario_name", "--scenario-name", "the scenario this run follows, stamped on every "
      "window and summary line (letters, digits, _ . -; at most 64)", env="SCENARIO_NAME"),
    S("scenario_hash", "--scenario-hash", "the scenario's hash (hex), stamped on every "
      "window and summary line", env="SCENARIO_HASH"),
    S("batch_bytes", "--batch-bytes", "approximate bytes per append (1000000 or 1e6)",
      whole_number, 1_000_000,
      "BATCH_BYTES"),
    S("channels", "--channels", "elastic channels (one SDK client each) this worker "
      "drives, on threads of its one process; the rate and the in-flight bytes are split "
      "evenly", int, 1, "CHANNELS"),
    S("workload", "--workload", "the rows to send: a shipped workload by name "
      "(resort-sales, iot-telemetry, clickstream, wide-events) or a workload file (YAML, "
      "docs/WORKLOADS.md); the pipe is the workload's unless --pipe (or the profile) names "
      "one", env="WORKLOAD", default_text="resort-sales"),
    S("encoder", "--encoder", "force a row encoder (default: native when built and "
      "ELASTIC_FAST_JSON_ENCODE is not off, else python)", choices=("native", "python")),
    S("append_mode", "--append-mode", "ffi: preserialized bytes to the SDK core; raw: "
      "msgspec.Raw rows via the public API; rows: row objects via the public API "
      "(default: ffi when the SDK allows it, rows when ELASTIC_FAST_JSON_ENCODE is off)",
      choices=("ffi", "raw", "rows")),
    S("sdk_metrics", "--sdk-metrics", "on: turn on the SDK's own Prometheus endpoint (a free "
      "loopback port of this process's own) and put its figures in every window line "
      "(`sdk`: files, API calls and latency, buffer delays, throttling; docs/WORKER.md); "
      "off: leave it off (--no-sdk-metrics)", choices=("on", "off"), default="on",
      env="SDK_METRICS"),
    S("window_seconds", "--window-seconds", "metrics window; windows start on multiples "
      "of it since the epoch, so every worker's windows line up", float, 5.0),
    S("max_inflight_bytes", "--max-inflight-bytes", "unacked bytes held at most; "
      "appends wait beyond this (96000000 or 96e6)", whole_number, 96_000_000),
    S("sleep_quantum_ms", "--sleep-quantum-ms", "sleep only once this far ahead of the "
      "pacing schedule, so batches go in short bursts between sleeps; 0 sleeps after "
      "every batch; the long-run rate is the same either way, longer quanta trade "
      "burstier sends and slower acks for fewer wake-ups", float, 250.0),
    S("drain_timeout_seconds", "--drain-timeout-seconds", "at the end (or on SIGTERM), "
      "how long to wait for outstanding acks", float, 60.0),
    S("connect_timeout_seconds", "--connect-timeout-seconds", "give up opening a client "
      "+ channel after this long", float, 120.0),
    *WORKER_ACCOUNT_SETTINGS,
    S("retry_backoff_seconds", "--retry-backoff-seconds", "SDK "
      "data_retry_total_backoff_seconds: how long the SDK retries a failing request "
      "before the worker reopens the channel and resends", int, group="where to send it",
      default_text=f"{DEFAULT_RETRY_BACKOFF_S}, unless the profile or "
      "SNOWPIPE_SDK_PROPERTIES sets it"),
    S("ack_timeout_seconds", "--ack-timeout-seconds", "a batch still unacked after this "
      "long is taken as lost by the SDK: the worker reopens the channel and resends",
      float, group="where to send it",
      default_text=f"the retry backoff + {show_number(ACK_TIMEOUT_MARGIN_S)}"),
)  # fmt: skip
BY_NAME = {s.name: s for s in SETTINGS}


def add_settings(parser: argparse.ArgumentParser, names: Iterable[str] | None = None) -> None:
    """Add the flags of ``names`` (default: every setting) to ``parser``, in groups.

    Each flag's parsed default is None, so ``resolve`` can tell a flag that was given
    from one that was not and fall back to the environment, then the default."""
    add_flags(parser, SETTINGS if names is None else (BY_NAME[n] for n in names))


def resolve(name: str, given: Any, environ: Mapping[str, str]) -> Any:
    """A setting's value: the flag if given, else its environment variable (converted
    and checked; empty is unset), else its default."""
    return BY_NAME[name].value(given, environ)


def flag_args(values: Mapping[str, Any]) -> list[str]:
    """Command-line flags for the given setting values (None values left out), as a
    parent process passes them on to its workers."""
    out: list[str] = []
    for name, value in values.items():
        flag = BY_NAME[name].flag
        if value is None or flag is None:
            continue
        if name == "stages" and not isinstance(value, str):
            value = stages_json(value)  # Stage objects or their dicts
        out += [flag, repr(value) if isinstance(value, float) else str(value)]
    return out
