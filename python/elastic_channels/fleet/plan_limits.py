"""The limits a plan sizes pods by: the worker's in-flight default, how pod memory is
rounded, and what the fleet's SDK properties throttle at."""

from __future__ import annotations

from ..worker.settings import BY_NAME as SETTINGS_BY_NAME

__all__ = [
    "MEMORY_STEP_MIB", "SDK_CHANNEL_INFLIGHT_MB", "SDK_THROTTLE_SHARE",
    "WORKER_MAX_INFLIGHT_DEFAULT",
]  # fmt: skip

#: The worker's --max-inflight-bytes default, from its settings table.
WORKER_MAX_INFLIGHT_DEFAULT: int = SETTINGS_BY_NAME["max_inflight_bytes"].default
MEMORY_STEP_MIB = 64  # pod memory requests are rounded up to a multiple of this
#: The fleet's SDK properties (deploy/sdk-properties.json, which run_job.sh scales with
#: --memory-mib) throttle at this share of the pod's memory, and cap each channel's
#: bytes in flight at this many MB; a test keeps these in step with that file.
SDK_THROTTLE_SHARE = 0.75
SDK_CHANNEL_INFLIGHT_MB = 128
