"""A throughput limit per channel: a token bucket of bytes, and a 429 over it.

Snowflake enforces a per-channel throughput limit on Snowpipe Streaming's
high-performance architecture (its limits page: 20 MB/s uncompressed per named channel
in the 2026 version, 12 MB/s "SDK throughput" per channel before) and Snowflake-paced
clients report 429s near it. ``serve --channel-limit-mbps X`` makes the emulator do the
same, so a search for the highest rate held has a known answer.

Every appended byte counts at its uncompressed length: the rows of an inline (rowset)
request as they inflate, and the fragments of a file-mode registration
(``filebuffer``) by the NDJSON they decrypt and inflate to. A request is admitted whole
or refused whole, before anything of it is spooled, so the SDK's retry of a refused one
lands it exactly once.

The bucket holds at most ``burst_s`` seconds' worth of bytes and refills at the limit.
A request is admitted when the bucket holds its size, or, for one bigger than the
bucket, when the bucket is full; it may then overdraw it, and the next is refused
until the debt is paid back. So the long-run rate is the limit whatever the request
sizes (file-mode fragments of a few seconds' worth included), and no request is
refused for ever.

Which channel a request is on: a named channel by its name; the elastic channel
(``ELASTIC``) is one per client (each SDK client's ``get_elastic_channel()``), told
apart by the scoped token the client presents (every token this emulator issues is
distinct). A client's token refresh (hourly by default) starts it a new, full bucket:
one more second's burst an hour.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from ..http.errors import ApiError
from ..http.routes import Request

__all__ = ["THROTTLED_CODE", "ChannelLimit", "client_of"]

#: The error code of a refusal. Snowflake's documented error codes name no such refusal;
#: this one is the emulator's own, in the shape of Snowflake's REST errors.
THROTTLED_CODE = "ERR_CHANNEL_THROUGHPUT_LIMIT_EXCEEDED"
#: Buckets kept at most before the ones back to full are forgotten (a full bucket is a
#: new one: forgetting it changes nothing).
_SWEEP_AT = 256


@dataclass
class _Bucket:
    tokens: float
    at: float


def client_of(req: Request) -> str:
    """Which client sent ``req``: a digest of its bearer token (the token itself is a
    credential, never kept)."""
    token = req.headers.get("authorization", "").partition(" ")[2].strip()
    return hashlib.sha256(token.encode()).hexdigest()[:16]


class ChannelLimit:
    """Token buckets of bytes per second, one per channel; thread-safe."""

    def __init__(
        self,
        bytes_per_s: float,
        burst_s: float = 1.0,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not (math.isfinite(bytes_per_s) and bytes_per_s > 0):
            raise ValueError(f"channel limit must be a number of bytes/s > 0, got {bytes_per_s}")
        if not (math.isfinite(burst_s) and burst_s > 0):
            raise ValueError(f"channel limit burst must be > 0 seconds, got {burst_s}")
        self.bytes_per_s = float(bytes_per_s)
        self.capacity = self.bytes_per_s * burst_s
        #: Where the buckets' time comes from (monotonic seconds); tests set their own.
        self.clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[Hashable, _Bucket] = {}
        self.admitted_requests = 0
        self.admitted_bytes = 0
        self.refused_requests = 0
        self.refused_bytes = 0

    def _refilled(self, channel: Hashable, now: float) -> _Bucket:
        bucket = self._buckets.get(channel)
        if bucket is None:
            if len(self._buckets) >= _SWEEP_AT:
                self._forget_full(now)
            bucket = self._buckets[channel] = _Bucket(self.capacity, now)
        else:
            elapsed = max(0.0, now - bucket.at)
            bucket.tokens = min(self.capacity, bucket.tokens + elapsed * self.bytes_per_s)
            bucket.at = now
        return bucket

    def _forget_full(self, now: float) -> None:
        full = [
            key
            for key, b in self._buckets.items()
            if b.tokens + (now - b.at) * self.bytes_per_s >= self.capacity
        ]
        for key in full:
            del self._buckets[key]

    def take(self, channel: Hashable, nbytes: int, name: str = "the channel") -> None:
        """Admit ``nbytes`` on ``channel`` or raise ApiError 429 (nothing taken).
        ``name`` is how the refusal names the channel."""
        now = self.clock()
        with self._lock:
            bucket = self._refilled(channel, now)
            need = min(float(nbytes), self.capacity)
            if bucket.tokens >= need:
                bucket.tokens -= nbytes
                self.admitted_requests += 1
                self.admitted_bytes += nbytes
                return
            wait_s = (need - bucket.tokens) / self.bytes_per_s
            self.refused_requests += 1
            self.refused_bytes += nbytes
        raise ApiError(
            429,
            THROTTLED_CODE,
            f"{name} is over its throughput limit of {self.bytes_per_s / 1e6:g} MB/s "
            f"(uncompressed): its allowance covers this request's {nbytes} bytes in "
            f"{wait_s:.2f} s; nothing of it was accepted, send it again",
        )

    def snapshot(self) -> dict[str, float | int]:
        with self._lock:
            return {
                "mb_per_s": self.bytes_per_s / 1e6,
                "burst_bytes": self.capacity,
                "admitted_requests": self.admitted_requests,
                "admitted_bytes": self.admitted_bytes,
                "refused_requests": self.refused_requests,
                "refused_bytes": self.refused_bytes,
                "channels": len(self._buckets),
            }
