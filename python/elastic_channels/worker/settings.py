"""The worker's settings, once: name, flag, environment variable, default, help.

The worker's parser, ``elastic-channels run``'s shared flags, their help and the
resolution order (flag, then environment variable, then default) all come from this
table, so a setting has one name, one unit and one default everywhere.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..model import PIPE_NAME
from ..sdk.properties import DEFAULT_RETRY_BACKOFF_S

#: With no --ack-timeout-seconds, a batch is taken as lost this long after the SDK's
#: retry backoff would have ended.
ACK_TIMEOUT_MARGIN_S = 60.0


class ConfigError(ValueError):
    """A setting has a bad value; the message names the flag or variable."""


@dataclass(frozen=True)
class Setting:
    name: str  #: attribute name, and the flag's dest
    flag: str
    help: str
    kind: Callable[[str], Any] = str
    default: Any = None
    env: str | None = None
    group: str = "what to send"
    choices: tuple[str, ...] | None = None
    #: Shown instead of the default when it depends on other settings.
    default_text: str | None = None

    def help_text(self) -> str:
        text = self.help
        if self.env:
            text += f" [{self.env}]"
        if self.default_text:
            text += f" (default: {self.default_text})"
        elif self.default is not None:
            text += f" (default: {show_number(self.default)})"
        return text


def show_number(value: Any) -> str:
    """A default as a person writes it: ``92e6`` for 92000000.0, ``60`` for 60.0."""
    if not isinstance(value, float) or not value.is_integer():
        return str(value)
    digits = str(int(value))
    zeros = len(digits) - len(digits.rstrip("0"))
    exp = zeros - zeros % 3  # engineering notation, as rates are written here
    return f"{int(value) // 10**exp}e{exp}" if exp >= 6 else digits


def _kind_name(kind: Callable[[str], Any]) -> str:
    return {int: "an int", float: "a number", str: "a string"}.get(kind, "valid")  # type: ignore[call-overload]


S = Setting
SETTINGS: tuple[Setting, ...] = (
    S("run_id", "--run-id", "RUN_ID stamped on every row", env="RUN_ID",
      default_text="run-<UTC time>"),
    S("target_bps", "--target-bps", "target bytes/s of NDJSON per worker (the reference "
      "benchmark's per-pod rate is the default)", float, 92e6, "TARGET_BPS"),
    S("duration_seconds", "--duration-seconds", "how long to send", float, 60.0,
      "DURATION_SECONDS"),
    S("batch_bytes", "--batch-bytes", "approximate bytes per append", int, 1_000_000,
      "BATCH_BYTES"),
    S("channels", "--channels", "elastic channels (one SDK client each) this worker "
      "drives, on threads of its one process; the rate and the in-flight bytes are split "
      "evenly", int, 1, "CHANNELS"),
    S("encoder", "--encoder", "force a row encoder (default: native when built and "
      "ELASTIC_FAST_JSON_ENCODE is not off, else python)", choices=("native", "python")),
    S("append_mode", "--append-mode", "ffi: preserialized bytes to the SDK core; raw: "
      "msgspec.Raw rows via the public API; rows: row objects via the public API "
      "(default: ffi when the SDK allows it, rows when ELASTIC_FAST_JSON_ENCODE is off)",
      choices=("ffi", "raw", "rows")),
    S("window_seconds", "--window-seconds", "metrics window; windows start on multiples "
      "of it since the epoch, so every worker's windows line up", float, 5.0),
    S("max_inflight_bytes", "--max-inflight-bytes", "unacked bytes held at most; "
      "appends wait beyond this", int, 96_000_000),
    S("sleep_quantum_ms", "--sleep-quantum-ms", "sleep only once this far ahead of the "
      "pacing schedule, so batches go in short bursts between sleeps; 0 sleeps after "
      "every batch; the long-run rate is the same either way, longer quanta trade "
      "burstier sends and slower acks for fewer wake-ups", float, 250.0),
    S("drain_timeout_seconds", "--drain-timeout-seconds", "at the end (or on SIGTERM), "
      "how long to wait for outstanding acks", float, 60.0),
    S("connect_timeout_seconds", "--connect-timeout-seconds", "give up opening a client "
      "+ channel after this long", float, 120.0),
    S("profile", "--profile", "SDK profile JSON of connection properties, or the info "
      "file an emulator writes", env="SNOWFLAKE_PROFILE", group="where to send it"),
    S("account", "--account", "Snowflake account identifier", env="SNOWFLAKE_ACCOUNT",
      group="where to send it"),
    S("user", "--user", "Snowflake user", env="SNOWFLAKE_USER", group="where to send it"),
    S("role", "--role", "Snowflake role", env="SNOWFLAKE_ROLE", group="where to send it"),
    S("private_key_file", "--private-key-file", "PKCS#8 PEM key file (or the PEM text "
      "in SNOWFLAKE_PRIVATE_KEY)", env="SNOWFLAKE_PRIVATE_KEY_FILE",
      group="where to send it"),
    S("host", "--host", "account host, if not the default", env="SNOWFLAKE_HOST",
      group="where to send it"),
    S("port", "--port", "account port", int, env="SNOWFLAKE_PORT", group="where to send it"),
    S("database", "--database", "target database", env="SNOWFLAKE_DATABASE",
      group="where to send it"),
    S("schema", "--schema", "target schema", env="SNOWFLAKE_SCHEMA", group="where to send it"),
    S("pipe", "--pipe", "target pipe", env="SNOWFLAKE_PIPE", group="where to send it",
      default_text=f"{PIPE_NAME}, or the emulator's"),
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
    groups: dict[str, Any] = {}
    for s in SETTINGS if names is None else (BY_NAME[n] for n in names):
        group = groups.get(s.group) or groups.setdefault(
            s.group, parser.add_argument_group(s.group)
        )
        group.add_argument(
            s.flag, dest=s.name, type=s.kind, choices=s.choices, default=None,
            help=s.help_text(),
        )  # fmt: skip


def resolve(name: str, given: Any, environ: Mapping[str, str]) -> Any:
    """A setting's value: the flag if given, else its environment variable (converted
    and checked), else its default."""
    s = BY_NAME[name]
    if given is not None:
        return given
    raw = environ.get(s.env) if s.env else None
    if raw in (None, ""):
        return s.default
    try:
        return s.kind(raw)  # type: ignore[arg-type]
    except ValueError:
        raise ConfigError(f"{s.env} must be {_kind_name(s.kind)}, got {raw!r}") from None


def flag_args(values: Mapping[str, Any]) -> list[str]:
    """Command-line flags for the given setting values (None values left out), as a
    parent process passes them on to its workers."""
    out: list[str] = []
    for name, value in values.items():
        if value is not None:
            out += [BY_NAME[name].flag, repr(value) if isinstance(value, float) else str(value)]
    return out
