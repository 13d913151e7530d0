"""``elastic-channels worker``: one worker process (also the fleet image's entrypoint,
as ``python -m elastic_channels.worker`` or ``python -m elastic_channels.k8s_worker``)."""

from __future__ import annotations

import os
import signal
import sys

from ..log import configure_logging
from ..sdk.metrics import EndpointError, SdkScraper, disable_endpoint, start_endpoint
from ..sdk.session import emulator_client_env, prepare_sdk_environment
from .config import ConfigError, load_config
from .multi import MultiChannelWorker
from .sdk_figures import SdkFigures
from .worker import Worker


def main(argv: list[str] | None = None, prog: str = "elastic-channels worker") -> int:
    try:
        configure_logging(os.environ.get("LOG_LEVEL", "INFO"))
        cfg = load_config(argv)
    except (ConfigError, ValueError) as e:  # a ValueError: LOG_LEVEL is not a level
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    prepare_sdk_environment(cfg.ssl_cert_file, client_env=emulator_client_env(cfg.profile_path))
    figures = sdk_figures(cfg.sdk_metrics, prog)
    worker: Worker | MultiChannelWorker = (
        MultiChannelWorker(cfg) if cfg.channels > 1 else Worker(cfg)
    )
    worker.sdk_figures = figures
    signal.signal(signal.SIGTERM, worker.request_stop)
    signal.signal(signal.SIGINT, worker.request_stop)
    summary = worker.run()
    code = 0 if summary["unacked_rows"] == 0 and "error" not in summary else 1
    if worker.stuck_connect:
        # An SDK thread is still inside its connect retries and would hold up the
        # interpreter's exit; everything worth keeping is already written.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def sdk_figures(on: bool, prog: str) -> SdkFigures | None:
    """The SDK's endpoint, on a free loopback port of this process's own, and what reads
    it once a window; None when off. The SDK is imported here, right after the port is
    chosen, as its import binds it. Should the endpoint not start, the SDK cannot be used
    in this process at all: the error is said here, and the channel's open says it again
    in the summary line."""
    if not on:
        disable_endpoint()
        return None
    try:
        return SdkFigures(SdkScraper(start_endpoint()))
    except EndpointError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return None
