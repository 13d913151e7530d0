"""An emulator's configuration, checked when made: where its data lives, what it
serves on, what its account, table and landing look like."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..model import COLUMNS, PIPE_NAME, TABLE_NAME
from .api.channel_limit import ChannelLimit
from .api.drop_sink import SINKS
from .http.routes import Route
from .http.server import HttpLimits, check_loopback, check_served_host

__all__ = ["TABLE_FORMATS", "EmulatorConfig"]

TABLE_FORMATS = ("native", "iceberg")
_DNS_NAME = re.compile(r"(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*"
                       r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?")  # fmt: skip


@dataclass
class EmulatorConfig:
    data_dir: Path
    host: str = "127.0.0.1"
    port: int = 0
    account: str = "EMULATOR"
    user: str = "EMULATOR_USER"
    role: str = "ACCOUNTADMIN"
    database: str = "EMULATOR_DB"
    schema: str = "PUBLIC"
    pipe: str = PIPE_NAME
    table: str = TABLE_NAME
    columns: Sequence[tuple[str, str]] = COLUMNS
    #: Extra users: name -> PEM public key files (the default user's key is generated).
    public_keys: dict[str, list[Path]] = field(default_factory=dict)
    token_ttl_s: int = 3600
    fsync: bool = True
    duckdb_threads: int = 2
    #: Pre-scan every bulk batch so rows with unknown/duplicated keys are rejected. Off:
    #: ~30% less landing CPU, and such keys are ignored instead (nothing else changes).
    check_keys: bool = True
    #: The landing parse path (``parse_backends.py``): "native" (the Rust row parser)
    #: or "sql" (one DuckDB query); None: native when it is built.
    parse: str | None = None
    #: Sent to the SDK in pipe-info ``parameter_overrides`` as
    #: ``max_append_request_buffer_duration_ms`` (None, the default: no override, as an
    #: account is known to answer; the SDK then buffers ~1 s).
    append_buffer_ms: int | None = None
    #: Timeouts and the connection cap of the HTTPS server.
    limits: HttpLimits = field(default_factory=HttpLimits)
    #: More endpoints to serve (e.g. Snowflake's SQL API), after the built-in ones.
    extra_routes: Sequence[Route] = ()
    #: "native": rows land in a DuckDB table; "iceberg": in an Apache Iceberg table in
    #: DATA_DIR/iceberg (the ``iceberg`` extra), queried through a view of the same name.
    table_format: str = "native"
    #: "land" (spool, then DuckDB) or "drop": check every row, ack, discard (drop_sink.py).
    sink: str = "land"
    #: Wait this long before answering each rows request (a real account's latency).
    answer_delay_s: float = 0.0
    #: Drop sink only: type-check every row (off: count lines; to measure the check).
    sink_check: bool = True
    #: More DNS names for the server's certificate and hostname replies, such as an
    #: account's host (``myorg-myacct.snowflakecomputing.com``) pointed at 127.0.0.1.
    server_names: tuple[str, ...] = ()
    #: Each channel's throughput limit, uncompressed bytes/s (rows and file fragments);
    #: a request over it is answered 429, nothing of it taken (api/channel_limit.py).
    #: None: no limit.
    channel_limit_bps: float | None = None
    #: How much the limit lets a channel send at once, in seconds' worth of it.
    channel_limit_burst_s: float = 1.0

    def parameter_overrides(self) -> dict[str, int]:
        """What pipe-info sends the SDK in ``parameter_overrides``: only what was asked."""
        if self.append_buffer_ms is None:
            return {}
        return {"max_append_request_buffer_duration_ms": self.append_buffer_ms}

    def __post_init__(self) -> None:
        self.data_dir = Path(self.data_dir)
        if self.append_buffer_ms is not None and (
            type(self.append_buffer_ms) is not int or not 0 <= self.append_buffer_ms <= 600_000
        ):
            raise ValueError(
                f"append_buffer_ms must be a whole number of ms, 0..600000, got "
                f"{self.append_buffer_ms!r}"
            )
        check_loopback(self.host)  # a non-loopback address is named as such first
        check_served_host(self.host)
        if not 0 <= self.port <= 65535:
            raise ValueError(f"port must be 0..65535, got {self.port}")
        if self.sink not in SINKS:
            raise ValueError(f"sink must be one of {', '.join(SINKS)}, got {self.sink!r}")
        if not 0 <= self.answer_delay_s <= 600:
            raise ValueError(f"answer delay must be 0..600 s, got {self.answer_delay_s:g}")
        if self.channel_limit_bps is not None:
            ChannelLimit(self.channel_limit_bps, self.channel_limit_burst_s)  # checks both
        for name in self.server_names:
            if not _DNS_NAME.fullmatch(name):
                raise ValueError(f"server name {name!r} is not a DNS host name")
        self.server_names = tuple(n.lower() for n in self.server_names)
        for name in ("account", "user", "database", "schema", "pipe", "table"):
            setattr(self, name, getattr(self, name).upper())
        if self.table_format not in TABLE_FORMATS:
            raise ValueError(
                f"table_format must be one of {TABLE_FORMATS}, got {self.table_format!r}"
            )
