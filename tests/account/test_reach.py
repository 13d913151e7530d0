"""The preflight (issue #29 item 7): before anything starts, the account is reached and
logged in to within a bound of seconds, or one line names the host and what failed.

On loopback: the emulator (HTTPS with its CA, key-pair JWTs checked) answers the login;
a closed port refuses it; a full backlog never answers the TCP connect; a port that
accepts and never speaks times out the TLS handshake; the emulator's certificate is not
trusted without its CA; a key the emulator does not know gets a 401. The stage endpoint
the SDK's file mode uploads to (``AWS_ENDPOINT_URL``) is checked too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from emulator_support import make_emulator
from key_files import pem_key
from reach_support import closed_port, full_port, silent_port

from elastic_channels.account import account_settings
from elastic_channels.account.reach import Unreachable, check_reachable

pytest.importorskip("jwt")
#: Every check here is given this bound; a failure must come within it and a margin
#: (a margin for a loaded machine: this asserts a bound, not a speed).
TIMEOUT_S = 1.0
BOUND_S = TIMEOUT_S + 4.0


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    emu = make_emulator(tmp_path_factory.mktemp("reach"))
    try:
        yield emu
    finally:
        emu.stop()


@pytest.fixture(scope="module")
def info_file(emulator: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("reach-info") / "info.json"
    path.write_text(json.dumps(emulator.info()))
    return path


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user key no server here knows."""
    return pem_key(tmp_path_factory.mktemp("reach-key"))


def _account(key: Path, port: int, host: str = "127.0.0.1") -> Any:
    flags = {"account": "myorg-myacct", "user": "ingest", "private_key_file": str(key),
             "host": host, "port": port}  # fmt: skip
    return account_settings(flags, {})


def _refused(settings: Any, environ: dict[str, str] | None = None) -> Unreachable:
    """The error the check raises, after asserting it came within the bound."""
    start = time.monotonic()
    with pytest.raises(Unreachable) as caught:
        check_reachable(settings, timeout=TIMEOUT_S, environ=environ or {})
    took = time.monotonic() - start
    assert took < BOUND_S, f"took {took:.1f} s: {caught.value}"
    assert "\n" not in str(caught.value)
    return caught.value


def test_the_emulator_is_reached_and_logged_in_to(emulator: Any, info_file: Path) -> None:
    """Its info file as the profile: its URL, CA and user's key. The login is one
    key-pair GET of the streaming hostname, as the SDK's first request."""
    before = emulator.stats_snapshot()["requests"].get("hostname", 0)
    check_reachable(account_settings({"profile": str(info_file)}, {}), environ={})
    assert emulator.stats_snapshot()["requests"].get("hostname", 0) == before + 1


def test_a_closed_port_is_a_refused_connect(key: Path) -> None:
    port = closed_port()
    e = _refused(_account(key, port))
    assert (
        str(e) == f"cannot reach the account at 127.0.0.1:{port}: TCP connect to 127.0.0.1 refused"
    )
    assert e.step == "tcp"


def test_a_connect_never_answered_times_out(key: Path) -> None:
    with full_port() as port:
        e = _refused(_account(key, port))
    assert str(e).startswith(f"cannot reach the account at 127.0.0.1:{port}: TCP connect")
    assert "timed out" in str(e) and e.step == "tcp"


def test_a_server_that_never_answers_times_out_the_tls_handshake(key: Path) -> None:
    with silent_port() as port:
        e = _refused(_account(key, port))
    assert str(e) == (
        f"cannot reach the account at 127.0.0.1:{port}: TLS handshake timed out "
        "(connected, no answer)"
    )


def test_a_certificate_the_client_does_not_trust(
    emulator: Any, info_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The emulator's host and port, but not its CA: the system's CAs do not sign it."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    info = emulator.info()["properties"]
    flags = {"account": info["account"], "user": info["user"],
             "private_key_file": emulator.info()["private_key_file"],
             "host": "localhost", "port": emulator.port}  # fmt: skip
    e = _refused(account_settings(flags, {}))
    assert str(e).startswith(
        f"cannot reach the account at localhost:{emulator.port}: TLS certificate not trusted: "
    )
    assert e.step == "tls"


def test_a_key_the_account_does_not_know_is_a_refused_login(
    emulator: Any, info_file: Path, key: Path
) -> None:
    """The emulator's user, another key: its auth answers 401, which the line quotes."""
    settings = account_settings({"profile": str(info_file), "private_key_file": str(key)}, {})
    e = _refused(settings)
    assert str(e).startswith(
        f"cannot reach the account at localhost:{emulator.port}: login refused: HTTP 401 from "
        "GET /v2/streaming/hostname (code 390144: JWT token is invalid"
    )
    assert "key --private-key-file" in str(e) and e.step == "login"


def test_the_stage_endpoint_of_file_mode_is_reached_too(emulator: Any, info_file: Path) -> None:
    """``AWS_ENDPOINT_URL`` (the SDK's S3 client honours it): the emulator's own stage
    passes; a closed port there fails, named by its variable."""
    client_env = emulator.info()["client_env"]  # the stage's URL and CA (AWS_CA_BUNDLE)
    settings = account_settings({"profile": str(info_file)}, {})
    check_reachable(settings, environ=client_env)
    port = closed_port()
    e = _refused(settings, {"AWS_ENDPOINT_URL": f"https://127.0.0.1:{port}"})
    assert str(e) == (
        f"cannot reach the stage endpoint (AWS_ENDPOINT_URL) at 127.0.0.1:{port}: "
        "TCP connect to 127.0.0.1 refused"
    )
