"""Hostile settings files: a ``.env`` that the CLI and ``deploy/lib/common.sh`` would
read two ways (a key twice), a NUL byte, ``/dev/zero`` as a key or profile, a host that
is a URL. Each is one line naming the file (and line or setting); both readers keep one
rule for ``.env``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from elastic_channels.account import account_settings
from elastic_channels.account.private_key import PrivateKey
from elastic_channels.account.profile import load_profile
from elastic_channels.env_file import read_settings_file
from elastic_channels.setting import SettingError

REPO = Path(__file__).resolve().parents[2]
COMMON = REPO / "deploy" / "lib" / "common.sh"
BASH = shutil.which("bash")

TWICE = "SNOWFLAKE_ACCOUNT=first-acct\n# a comment\n\nSNOWFLAKE_ACCOUNT=second-acct\n"


def _clean_env() -> dict[str, str]:
    drop = ("SNOWFLAKE_", "RUN_ID", "WORKER_ID", "JOB_COMPLETION_INDEX", "SNOWPIPE_SDK_")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


def _deploy_load_env(env_file: Path) -> subprocess.CompletedProcess[str]:
    """deploy/lib/common.sh's load_env on ``env_file``, printing what it set."""
    assert BASH is not None
    script = f'source "{COMMON}"; load_env; echo "account=${{SNOWFLAKE_ACCOUNT:-}}"'
    env = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8", "ENV_FILE": str(env_file)}
    return subprocess.run(
        [BASH, "-c", script], capture_output=True, text=True, env=env, timeout=30,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def _cli(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "elastic_channels", "setup", "--print"], capture_output=True,
        text=True, timeout=60, cwd=cwd, env=_clean_env(), stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_a_key_given_twice_is_refused_by_both_readers_naming_both_lines(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text(TWICE)
    said = "line 4: SNOWFLAKE_ACCOUNT is given twice (first on line 1): give each setting once"
    with pytest.raises(SettingError, match=re.escape(said)):
        read_settings_file(env_file)
    done = _cli(tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"elastic-channels: error: .env {said}\n"
    if BASH is not None:
        deploy = _deploy_load_env(env_file)
        assert deploy.returncode == 2 and "account=" not in deploy.stdout
        assert deploy.stderr.strip() == f"bash: error: {env_file} {said}"


def test_keys_given_once_read_the_same_in_both(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text('export SNOWFLAKE_ACCOUNT="my-acct"  # ok\nSNOWFLAKE_USER=\n')
    assert read_settings_file(env_file) == {"SNOWFLAKE_ACCOUNT": "my-acct", "SNOWFLAKE_USER": ""}
    if BASH is not None:
        assert _deploy_load_env(env_file).stdout == "account=my-acct\n"


def test_a_nul_byte_in_dot_env_is_one_line_in_both(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_bytes(b"SNOWFLAKE_USER=u\nSNOWFLAKE_ACCOUNT=a\x00b\n")
    done = _cli(tmp_path)
    assert done.returncode == 2
    assert done.stderr == "elastic-channels: error: .env: holds a NUL byte (line 2)\n"
    if BASH is not None:
        deploy = _deploy_load_env(env_file)
        assert deploy.returncode == 2
        assert deploy.stderr.strip() == f"bash: error: {env_file}: holds a NUL byte (line 2)"


def test_a_line_that_is_not_a_setting_is_refused_by_both(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("SNOWFLAKE_USER=u\nnot a setting\n")
    with pytest.raises(SettingError, match="line 2: expected KEY=VALUE, got 'not a setting'"):
        read_settings_file(env_file)
    if BASH is not None:
        deploy = _deploy_load_env(env_file)
        assert deploy.returncode == 2 and "line 2: expected KEY=VALUE" in deploy.stderr


def test_dot_env_past_the_size_bound_or_not_a_file_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.env"
    big.write_text("# " + "x" * (1 << 20) + "\n")
    with pytest.raises(SettingError, match="over the 1 MiB such a file may hold"):
        read_settings_file(big)
    if BASH is not None:
        assert "over the 1 MiB such a file may hold" in _deploy_load_env(big).stderr
        zero = _deploy_load_env(Path("/dev/zero"))
        assert zero.returncode == 2 and "/dev/zero: not a regular file" in zero.stderr
        assert _deploy_load_env(Path("/dev/null")).returncode == 0


def test_a_key_file_or_profile_of_dev_zero_is_refused_by_its_bound() -> None:
    key = PrivateKey("SNOWFLAKE_PRIVATE_KEY_FILE", path="/dev/zero")
    with pytest.raises(
        SettingError,
        match=r"^private key file /dev/zero \(SNOWFLAKE_PRIVATE_KEY_FILE\): over the 64 KiB",
    ):
        key.read()
    with pytest.raises(
        SettingError, match=r"^--profile /dev/zero: cannot read it as JSON: over the 1 MiB"
    ):
        load_profile("/dev/zero")


def test_a_profile_nested_deep_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    for depth in (40, 100_000):
        path.write_text('{"account": ' + "[" * depth + "]" * depth + "}")
        with pytest.raises(
            SettingError,
            match=f"--profile {path}: cannot read it as JSON: nested deeper than the 32 levels",
        ):
            load_profile(str(path))


@pytest.mark.parametrize(
    "host",
    ["evil.example.com/path", "a.example.com?x=1", "a.example.com:8443", "https://a.example.com",
     "user@a.example.com", "a b.example.com", "-a.example.com", "a..b"],
)  # fmt: skip
def test_a_host_that_is_more_than_a_host_is_refused_naming_the_setting(host: str) -> None:
    with pytest.raises(
        SettingError, match=r"^SNOWFLAKE_HOST must be a host name or IP address alone"
    ):
        account_settings({}, {"SNOWFLAKE_ACCOUNT": "myorg-acct", "SNOWFLAKE_HOST": host})
    with pytest.raises(SettingError, match=r"^--host must be a host name"):
        account_settings({"host": host}, {"SNOWFLAKE_ACCOUNT": "myorg-acct"})


@pytest.mark.parametrize(
    ("host", "url"),
    [("localhost", "https://localhost"), ("127.0.0.1", "https://127.0.0.1"),
     ("::1", "https://[::1]"), ("[::1]", "https://[::1]"),
     ("myorg-my_acct.privatelink.snowflakecomputing.com",
      "https://myorg-my_acct.privatelink.snowflakecomputing.com")],
)  # fmt: skip
def test_a_host_name_or_address_is_taken(host: str, url: str) -> None:
    s = account_settings({}, {"SNOWFLAKE_ACCOUNT": "myorg-acct", "SNOWFLAKE_HOST": host})
    assert s.url == url
