"""Counters: requests, bytes, rows, and per-channel status as Snowflake reports it."""

from __future__ import annotations

import threading
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["ChannelState", "Stats"]

#: How many rejected rows are kept, per channel, for inspection.
MAX_KEPT_ERRORS = 100


@dataclass
class ChannelState:
    """One channel's counters, as ``bulk-channel-status`` returns them."""

    database_name: str
    schema_name: str
    pipe_name: str
    channel_name: str
    created_on_ms: int = field(default_factory=lambda: int(time.time() * 1000))
    rows_inserted: int = 0
    rows_parsed: int = 0
    rows_error_count: int = 0
    last_error_message: str | None = None
    last_error_timestamp_ms: int | None = None
    last_error_offset_upper_bound: str | None = None
    last_committed_offset_token: str | None = None
    dropped: bool = False
    continuation: int = 0
    kept_errors: int = 0
    #: Bumped each time the channel is (re)opened: a token from before is stale.
    client_sequencer: int = 0

    def took(self, parsed: int, inserted: int, errors: list[str], offset_token: str | None) -> None:
        """The status after a request of ``parsed`` rows, ``inserted`` of them taken
        (landed or, by the drop sink, checked and dropped), ``errors`` the rest's."""
        self.rows_parsed += parsed
        self.rows_inserted += inserted
        self.rows_error_count += parsed - inserted
        if errors:
            self.last_error_message = errors[-1]
            self.last_error_timestamp_ms = int(time.time() * 1000)
            self.last_error_offset_upper_bound = offset_token
        if offset_token is not None:
            self.last_committed_offset_token = offset_token

    def continuation_token(self) -> str:
        return f"{self.client_sequencer}_{self.continuation}"

    def status_json(self) -> dict[str, Any]:
        d = asdict(self)
        del d["dropped"], d["continuation"], d["kept_errors"], d["client_sequencer"]
        d["channel_status_code"] = "SUCCESS"
        d["snowflake_avg_processing_latency_ms"] = 0
        return d


class Stats:
    """Thread-safe counters for the whole emulator."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.started = time.time()
        self.requests: Counter[str] = Counter()
        self.responses: Counter[str] = Counter()
        self.faults_fired: Counter[str] = Counter()
        self.handler_seconds: defaultdict[str, float] = defaultdict(float)
        self.bytes_wire = 0
        self.bytes_raw = 0
        self.appends_acked = 0
        self.bytes_landed = 0
        #: The values' bytes of the bodies landed (what Snowflake bills: billable.py).
        self.billable_bytes = 0
        self.rows_received = 0
        self.rows_landed = 0
        self.rows_rejected = 0
        self.rows_dropped = 0  # checked and discarded by the drop sink
        self.files_landed = 0
        #: File mode: fragments of staged files registered (and their bytes).
        self.file_fragments = 0
        self.file_bytes_wire = 0
        self.file_bytes_raw = 0
        self.landing_seconds = 0.0
        self.last_land_time = 0.0
        self.channels: dict[tuple[str, str, str, str], ChannelState] = {}

    def request(self, endpoint: str) -> None:
        with self._lock:
            self.requests[endpoint] += 1

    def response(self, endpoint: str, status: int, seconds: float = 0.0) -> None:
        with self._lock:
            self.responses[f"{endpoint}:{status}"] += 1
            self.handler_seconds[endpoint] += seconds

    def fault(self, endpoint: str, action: str) -> None:
        with self._lock:
            self.faults_fired[f"{endpoint}:{action}"] += 1

    def appended(self, wire: int, raw: int) -> None:
        with self._lock:
            self.appends_acked += 1
            self.bytes_wire += wire
            self.bytes_raw += raw

    def file_fragment(self, wire: int, raw: int) -> None:
        """One fragment of a staged file taken (file mode's counterpart of appended)."""
        with self._lock:
            self.file_fragments += 1
            self.file_bytes_wire += wire
            self.file_bytes_raw += raw

    def channel(self, key: tuple[str, str, str, str], *, create: bool = True) -> ChannelState:
        """The channel's state (made on first use unless ``create`` is false: KeyError)."""
        with self._lock:
            state = self.channels.get(key)
            if state is None or state.dropped:
                if not create:
                    raise KeyError(key)
                state = self.channels[key] = ChannelState(*key)
            return state

    def open_channel(self, key: tuple[str, str, str, str]) -> ChannelState:
        """Open (or reopen) a named channel: its client sequencer moves on, which fences
        any writer still holding a continuation token from before."""
        with self._lock:
            state = self.channels.get(key)
            if state is None or state.dropped:
                state = self.channels[key] = ChannelState(*key)
            state.client_sequencer += 1
            return state

    def drop_channel(self, key: tuple[str, str, str, str]) -> ChannelState | None:
        with self._lock:
            state = self.channels.get(key)
            if state is None or state.dropped:
                return None
            state.dropped = True
            return state

    def check_continuation(self, key: tuple[str, str, str, str], token: str | None) -> None:
        """ApiError 400 unless ``token`` was issued since the channel was last opened."""
        from ..http.errors import ApiError

        with self._lock:
            current = self.channels[key].client_sequencer
        if not token:
            raise ApiError(
                400, "ERR_INVALID_REQUEST", "continuationToken is required on a named channel"
            )
        sequencer, _, _ = token.partition("_")
        if sequencer != str(current):
            raise ApiError(
                400,
                "STALE_CONTINUATION_TOKEN_SEQUENCER",
                f"continuation token {token!r} is stale: the channel was reopened since "
                f"(client sequencer now {current}); reopen the channel to write again",
            )

    def next_continuation(self, key: tuple[str, str, str, str]) -> str:
        with self._lock:
            state = self.channels[key]
            state.continuation += 1
            return state.continuation_token()

    def landed(
        self,
        key: tuple[str, str, str, str],
        parsed: int,
        inserted: int,
        errors: list[str],
        seconds: float,
        raw_bytes: int = 0,
        requests: int = 1,
        *,
        offset_token: str | None = None,
        billable_bytes: int = 0,
    ) -> None:
        with self._lock:
            self.bytes_landed += raw_bytes
            self.billable_bytes += billable_bytes
            self.rows_received += parsed
            self.rows_landed += inserted
            self.rows_rejected += parsed - inserted
            self.files_landed += requests
            self.landing_seconds += seconds
            self.last_land_time = time.time()
            self._state(key).took(parsed, inserted, errors, offset_token)

    def dropped(
        self,
        key: tuple[str, str, str, str],
        parsed: int,
        errors: list[str],
        *,
        offset_token: str | None = None,
    ) -> None:
        """A request the drop sink checked and discarded: the channel's status moves on as
        if its good rows had landed; the table and ``rows_landed`` do not."""
        with self._lock:
            self.rows_received += parsed
            self.rows_dropped += parsed - len(errors)
            self.rows_rejected += len(errors)
            self._state(key).took(parsed, parsed - len(errors), errors, offset_token)

    def _state(self, key: tuple[str, str, str, str]) -> ChannelState:
        """Under the lock: the channel's state, made if there is none (a dropped one as it is)."""
        return self.channels.get(key) or self.channels.setdefault(key, ChannelState(*key))

    def kept_errors(self, key: tuple[str, str, str, str]) -> int:
        with self._lock:
            state = self.channels.get(key)
            return state.kept_errors if state else 0

    def keep_errors(self, key: tuple[str, str, str, str], n: int) -> None:
        with self._lock:
            self._state(key).kept_errors += n

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "uptime_s": round(time.time() - self.started, 3),
                "requests": dict(self.requests),
                "responses": dict(self.responses),
                "faults_fired": dict(self.faults_fired),
                "handler_seconds": {k: round(v, 3) for k, v in self.handler_seconds.items()},
                "appends_acked": self.appends_acked,
                "bytes_wire": self.bytes_wire,
                "bytes_raw": self.bytes_raw,
                "bytes_landed": self.bytes_landed,
                "billable_bytes": self.billable_bytes,
                "rows_received": self.rows_received,
                "rows_landed": self.rows_landed,
                "rows_rejected": self.rows_rejected,
                "rows_dropped": self.rows_dropped,
                "files_landed": self.files_landed,
                "file_fragments": self.file_fragments,
                "file_bytes_wire": self.file_bytes_wire,
                "file_bytes_raw": self.file_bytes_raw,
                "landing_seconds": round(self.landing_seconds, 3),
                "process_cpu_seconds": round(time.process_time(), 3),
                "channels": [s.status_json() for s in self.channels.values() if not s.dropped],
            }
