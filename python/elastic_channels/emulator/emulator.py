"""The in-process emulator: start it, point the SDK at ``info()``, query, stop.

    with Emulator(EmulatorConfig(data_dir=tmp)) as emu:
        os.environ["SSL_CERT_FILE"] = emu.info()["ssl_cert_file"]   # in the SDK's process
        client = StreamingIngestClient("c", emu.config.database, emu.config.schema,
                                       emu.config.pipe, properties=emu.properties())
        ...
        emu.faults.add("rows", "status", status=503, count=3)
        emu.wait_landed(30)
        emu.query("SELECT count(*) FROM RESORT_SALES")

The data directory keeps the CA and server certificate (``tls/``), user keys
(``users/``), the control secret (``control.secret``, mode 0600), the spool of
acked-but-not-landed appends (``spool/``), the DuckDB file (``emulator.duckdb``) and,
while a server runs, ``server.json`` (its port and pid).
"""

from __future__ import annotations

import json
import logging
import os
import ssl
import threading
import time
from pathlib import Path
from typing import Any

import msgspec

from .api.account import Target
from .api.channel_limit import ChannelLimit
from .api.control import control_routes
from .api.drop_sink import DropSink
from .api.stats import Stats
from .api.streaming import SnowpipeApi, snowpipe_routes
from .config import TABLE_FORMATS, EmulatorConfig
from .file_mode import FileMode, start_file_mode
from .http.access import Authenticator, ensure_control_secret
from .http.app import EmulatorApp
from .http.auth import ScopedTokens, UserKeys, ensure_tls, ensure_user_key
from .http.faults import FaultTable
from .http.routes import Router
from .http.server import HttpServer, check_loopback
from .landing.lander import Lander, lower_thread_priority
from .landing.spool import work_dir_of
from .malloc_tuning import keep_big_buffers
from .sql.api import statements_route
from .storage.parquet_store import LegacyTableError, ParquetStore
from .storage.store import Store

log = logging.getLogger("elastic_channels.emulator")

__all__ = [
    "DB_FILE", "SERVER_FILE", "TABLE_FORMATS", "Emulator", "EmulatorConfig",
    "write_json_atomic",
]  # fmt: skip

DB_FILE = "emulator.duckdb"
SERVER_FILE = "server.json"


def _store_class(table_format: str) -> type[Store]:
    if table_format != "iceberg":
        return ParquetStore
    try:
        from .storage.iceberg_store import IcebergStore
    except ImportError as e:
        raise ValueError(
            f"--table-format iceberg needs pyiceberg and pyarrow ({e}): pip install '.[iceberg]'"
        ) from None
    return IcebergStore


def _open_store_nicer(*args: Any, table_format: str = "native", **kwargs: Any) -> Store:
    """Open the database from a thread of landing priority, so that DuckDB's worker
    threads (started with it) inherit that priority, not the HTTP threads' one."""
    out: dict[str, Any] = {}
    store_class = _store_class(table_format)

    def open_it() -> None:
        lower_thread_priority()
        try:
            out["store"] = store_class(*args, **kwargs)
        except LegacyTableError as e:
            log.warning("%s: landing into it as a DuckDB table, as before", e)
            kwargs.pop("fsync", None)
            try:
                out["store"] = Store(*args, **kwargs)
            except BaseException as e2:
                out["error"] = e2
        except BaseException as e:
            out["error"] = e

    t = threading.Thread(target=open_it, name="emulator-open-store")
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["store"]


def write_json_atomic(path: Path, obj: Any) -> None:
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


class Emulator:
    """A running emulator: HTTPS server + lander + DuckDB store. Also a context manager."""

    def __init__(self, config: EmulatorConfig) -> None:
        self.config = config
        self.stats = Stats()
        self.faults = FaultTable()
        self.store: Store | None = None
        self.lander: Lander | None = None
        self.api: SnowpipeApi | None = None
        self.drop_sink: DropSink | None = None
        self.file_mode: FileMode | None = None
        self.channel_limit: ChannelLimit | None = None
        self._server: HttpServer | None = None
        self.port = 0

    # --- lifecycle ----------------------------------------------------------------

    def start(self) -> Emulator:
        """Start it all; if any part fails to start, what did start is stopped (the
        database closed, threads ended: nothing is landed from a half-started one) and
        the error is raised."""
        try:
            return self._start()
        except BaseException:
            self.stop(land_timeout_s=0)
            raise

    def _start(self) -> Emulator:
        cfg = self.config
        keep_big_buffers()  # landing's big buffers reused, not mapped afresh per request
        cfg.data_dir.mkdir(parents=True, exist_ok=True)
        tls = ensure_tls(cfg.data_dir / "tls", cfg.server_names)
        self._private_key_file = ensure_user_key(cfg.data_dir / "users", cfg.user)
        users = UserKeys(cfg.account)
        users.load_dir(cfg.data_dir / "users")
        for user, paths in cfg.public_keys.items():
            for p in paths:
                users.add(user, Path(p).read_bytes())
        self.control_secret = ensure_control_secret(cfg.data_dir)
        spool = cfg.data_dir / "spool"
        work_dir_of(spool).mkdir(parents=True, exist_ok=True)
        self.store = _open_store_nicer(
            cfg.data_dir / DB_FILE, cfg.table, cfg.columns, threads=cfg.duckdb_threads,
            work_dir=work_dir_of(spool), check_keys=cfg.check_keys,
            table_format=cfg.table_format, parse=cfg.parse,
            **({} if cfg.table_format == "iceberg" else {"fsync": cfg.fsync}),
        )  # fmt: skip
        self.lander = Lander(spool, self.store, self.stats, fsync=cfg.fsync)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(tls.chain, tls.key)
        self._tls = tls
        overrides = cfg.parameter_overrides()
        names = tuple(dict.fromkeys(["localhost", "127.0.0.1", *cfg.server_names]))
        target = Target(cfg.account, cfg.database, cfg.schema, cfg.pipe, names)
        self.tokens = ScopedTokens(cfg.token_ttl_s)
        if cfg.sink == "drop":
            self.drop_sink = DropSink(
                cfg.columns, self.stats, check_keys=cfg.check_keys, check_rows=cfg.sink_check
            )
        self.file_mode = start_file_mode(
            cfg.data_dir, chain=tls.chain, key_file=tls.key, host=cfg.host, fsync=cfg.fsync,
            faults=self.faults, stats=self.stats, lander=self.lander, store=self.store,
            sink=self.drop_sink, body_timeout_s=cfg.limits.body_timeout_s,
            max_connections=cfg.limits.max_connections,
            header_timeout_s=cfg.limits.header_timeout_s,
        )  # fmt: skip
        # Only now: file mode has read which fragments the spool holds, before any of them
        # could be taken off the queue to land (a retry of one is then known, not new).
        self.lander.start()
        if cfg.channel_limit_bps is not None:
            self.channel_limit = ChannelLimit(cfg.channel_limit_bps, cfg.channel_limit_burst_s)
        self.api = SnowpipeApi(
            target, self.tokens, self.lander, self.stats, overrides, self.drop_sink,
            cfg.answer_delay_s, keys=self.file_mode.keys, stage=self.file_mode.info,
            files=self.file_mode.files, limit=self.channel_limit,
        )  # fmt: skip
        store = self.store
        sql_api = statements_route(lambda: store.connection)  # setup's SQL, the monitor
        router = Router(
            [*snowpipe_routes(self.api), sql_api, *control_routes(self), *cfg.extra_routes]
        )
        authenticator = Authenticator(users, self.tokens, self.control_secret)
        self._app = EmulatorApp(
            router, authenticator, self.faults, self.stats,
            body_timeout_s=cfg.limits.body_timeout_s,
            # a delayed answer holds its handler thread: one per connection, none waits
            workers=max(16, cfg.limits.max_connections) if cfg.answer_delay_s else 16,
        )  # fmt: skip
        self._server = HttpServer(self._app, cfg.host, cfg.port, context, cfg.limits)
        self.port = self._server.port
        self._server.start()
        write_json_atomic(
            cfg.data_dir / SERVER_FILE,
            {"pid": os.getpid(), "port": self.port, "url": self.url, "started": time.time()},
        )
        return self

    def stop(self, land_timeout_s: float = 60.0) -> None:
        """Stop accepting requests, land what was acked, close the database."""
        if self._server is not None:
            self._server.stop()
            self._server = None
            self._app.close()
        if self.file_mode is not None:
            self.file_mode.stop()
            self.file_mode = None
        (self.config.data_dir / SERVER_FILE).unlink(missing_ok=True)
        if self.lander is not None:
            self.lander.stop(land_timeout_s)
            self.lander = None
        if self.store is not None:
            self.store.close()
            self.store = None

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- what a client needs ------------------------------------------------------

    @property
    def url(self) -> str:
        host = check_loopback(self.config.host)
        return f"https://[{host}]:{self.port}" if ":" in host else f"https://{host}:{self.port}"

    def properties(self) -> dict[str, Any]:
        """``StreamingIngestClient`` properties for the default user (its key as a file path)."""
        cfg = self.config
        return {
            "account": cfg.account,
            "user": cfg.user,
            "role": cfg.role,
            "private_key_file": str(self._private_key_file.resolve()),
            "host": "localhost",
            "port": self.port,
            "scheme": "https",
        }

    def client_env(self) -> dict[str, str]:
        """Environment a client process needs before it imports the SDK: the CA to trust,
        and the stage's URL as the S3 endpoint (file mode's uploads go there, as they go
        to the cloud storage of the pipe's stage on an account)."""
        ca = str(self._tls.ca_cert.resolve())
        env = {"SSL_CERT_FILE": ca, "AWS_CA_BUNDLE": ca}
        if self.file_mode is not None:
            env["AWS_ENDPOINT_URL"] = env["AWS_ENDPOINT_URL_S3"] = self.file_mode.stage.url
        return env

    def info(self) -> dict[str, Any]:
        """What ``--info-file`` holds: the CA to trust, client properties, target names."""
        cfg = self.config
        return {
            "url": self.url,
            "ssl_cert_file": str(self._tls.ca_cert.resolve()),
            "private_key_file": str(self._private_key_file.resolve()),
            "properties": self.properties(),
            "client_env": self.client_env(),
            "database": cfg.database,
            "schema": cfg.schema,
            "pipe": cfg.pipe,
            "table": cfg.table,
            "data_dir": str(cfg.data_dir.resolve()),
            # what pipe-info tells the SDK to change ({}: nothing, as an account)
            "parameter_overrides": cfg.parameter_overrides(),
        }

    # --- reading back -------------------------------------------------------------

    def wait_landed(self, timeout_s: float = 30.0) -> bool:
        """Wait until every acked append is committed to the table."""
        return self.lander.wait_idle(timeout_s) if self.lander else False

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        assert self.store is not None, "the emulator is not running"
        return self.store.query(sql)[1]

    def query_json_lines(self, sql: str) -> list[bytes]:
        assert self.store is not None, "the emulator is not running"
        return rows_as_json_lines(*self.store.query(sql))

    def stats_snapshot(self) -> dict[str, Any]:
        return stats_snapshot(self)


def stats_snapshot(emu: Emulator) -> dict[str, Any]:
    """The emulator's counters and the state of its parts, as ``stats`` prints them."""
    snap = emu.stats.snapshot()
    snap["faults"] = emu.faults.snapshot()
    snap["landing_backlog"] = emu.lander.pending() if emu.lander else 0
    snap["port"] = emu.port
    snap["table_format"] = emu.config.table_format
    if hasattr(emu.store, "iceberg_summary"):  # snapshot, data files, files written
        snap["iceberg"] = emu.store.iceberg_summary()  # type: ignore[union-attr]
    if isinstance(emu.store, ParquetStore):  # the native table's data files
        snap["data_files"] = emu.store.files_summary()
    if emu.file_mode is not None:
        snap["stage"] = emu.file_mode.stage.stats()
    snap["sink"] = emu.config.sink
    snap["answer_delay_s"] = emu.config.answer_delay_s
    snap["parameter_overrides"] = emu.config.parameter_overrides()
    if emu.channel_limit is not None:
        snap["channel_limit"] = emu.channel_limit.snapshot()
    if emu.drop_sink is not None:
        snap["drop_sink"] = emu.drop_sink.snapshot()
    return snap


_JSON = msgspec.json.Encoder(decimal_format="number")


def rows_as_json_lines(columns: list[str], rows: list[tuple[Any, ...]]) -> list[bytes]:
    """One JSON object per row, keyed by column name, each line ending in a newline."""
    return [_JSON.encode({c: row[i] for i, c in enumerate(columns)}) + b"\n" for row in rows]
