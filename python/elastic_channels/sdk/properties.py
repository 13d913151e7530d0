"""SDK client properties this project sets, in one place."""

from __future__ import annotations

#: Keep the SDK's flushes inline (rowset mode) instead of switching to encrypted uploads
#: to the pipe's stage (file mode) for flushes over ~1 MiB / 4 MiB. Nothing here sets them:
#: every target, the emulator included, runs the SDK with its own defaults as an account
#: does. Benchmarks and tests pass them (``--sdk-property``) to measure or test rowset mode.
ROWSET_MODE_PROPERTIES = {
    "max_buffered_kb_for_rowset_mode": 1048576,
    "max_rowset_payload_size_mb": 16,
}

#: How long the SDK retries a failing request before the worker reopens the channel
#: and resends (the SDK's own default is to retry forever).
DEFAULT_RETRY_BACKOFF_S = 30
