"""The account settings' one resolution: flags, then the environment (which .env fills),
then the --profile file, then the defaults; empty is unset everywhere; the connection
it makes for the SDK, the SQL API (the monitor) and snowflake-connector-python (setup,
the dashboard)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from elastic_channels.account import account_settings
from elastic_channels.setting import SettingError


def _pem() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()  # fmt: skip


@pytest.fixture(scope="module")
def pem() -> str:
    return _pem()


def _profile(tmp_path: Path, **data: Any) -> str:
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_flags_then_environment_then_profile_then_default(tmp_path: Path) -> None:
    profile = _profile(tmp_path, account="p-acct", database="P_DB", schema="P_S", pipe="P_P")
    env = {"SNOWFLAKE_PROFILE": profile, "SNOWFLAKE_DATABASE": "E_DB"}
    s = account_settings({"schema": "F_S"}, env)
    assert (s.database, s.schema, s.pipe) == ("E_DB", "F_S", "P_P")
    assert s.account is not None and s.account.name == "p-acct"
    s = account_settings({}, {"SNOWFLAKE_ACCOUNT": "myorg-myacct"})
    assert (s.schema, s.pipe, s.database, s.role) == ("PUBLIC", "RESORT_SALES_PIPE", None, None)


def test_empty_is_unset_for_flags_variables_and_the_profile(tmp_path: Path) -> None:
    profile = _profile(tmp_path, account="p-acct", schema="", host="")
    env = {"SNOWFLAKE_PROFILE": profile, "SNOWFLAKE_ACCOUNT": "", "SNOWFLAKE_SCHEMA": "  ",
           "SNOWFLAKE_PORT": "", "SNOWFLAKE_HOST": ""}  # fmt: skip
    s = account_settings({"database": "", "pipe": None}, env)
    assert s.account is not None and s.account.name == "p-acct"  # the profile's
    assert (s.schema, s.host, s.port, s.database) == (
        "PUBLIC", "p-acct.snowflakecomputing.com", None, None,
    )  # fmt: skip


def test_host_and_port_only_override_the_derived_url() -> None:
    env = {"SNOWFLAKE_ACCOUNT": "myorg-my_acct"}
    assert account_settings({}, env).url == "https://myorg-my-acct.snowflakecomputing.com"
    s = account_settings({"port": 8443}, {**env, "SNOWFLAKE_HOST": "sf.example"})
    assert s.url == "https://sf.example:8443"
    assert account_settings({"port": 443}, env).url.endswith(".snowflakecomputing.com")


def test_an_sdk_profiles_url_is_its_host_and_port(tmp_path: Path) -> None:
    profile = _profile(tmp_path, account="a", url="https://a.example.com:9443", scheme="https")
    s = account_settings({"profile": profile}, {})
    assert (s.host, s.port) == ("a.example.com", 9443)
    assert not {"url", "scheme"} & s.extra_properties.keys()


def test_sdk_properties(tmp_path: Path, pem: str) -> None:
    key = tmp_path / "k.p8"
    key.write_text(pem)
    profile = _profile(tmp_path, account="ignored", private_key="BODY", database="D",
                       max_inflight_megabytes_per_channel="64")  # fmt: skip
    env = {"SNOWFLAKE_ACCOUNT": "xy12345.us-east-2.aws", "SNOWFLAKE_USER": "U",
           "SNOWFLAKE_PRIVATE_KEY_FILE": str(key), "SNOWFLAKE_PROFILE": profile}  # fmt: skip
    assert account_settings({}, env).sdk_properties() == {
        "account": "xy12345",
        "user": "U",
        "private_key": pem,  # the file, over the profile's key
        "host": "xy12345.us-east-2.aws.snowflakecomputing.com",
        "scheme": "https",
        "max_inflight_megabytes_per_channel": "64",  # passed on as the profile has it
    }


def test_an_emulator_info_file(tmp_path: Path) -> None:
    info = _profile(
        tmp_path, url="https://127.0.0.1:4443", ssl_cert_file="/ca.pem",
        private_key_file="/k.p8", database="EMULATOR_DB", schema="PUBLIC",
        properties={"account": "EMULATOR", "user": "EMULATOR_USER", "host": "localhost",
                    "port": 4443, "scheme": "https", "private_key_file": "/k.p8"},
    )  # fmt: skip
    s = account_settings({"profile": info}, {})
    assert (s.host, s.port, s.url) == ("localhost", 4443, "https://localhost:4443")
    assert (s.database, s.ssl_cert_file, s.user) == ("EMULATOR_DB", "/ca.pem", "EMULATOR_USER")
    assert s.key is not None and s.key.path == "/k.p8"
    assert s.profile is not None and s.profile.emulator_info is not None


def test_connector_params(tmp_path: Path, pem: str) -> None:
    body = "".join(line for line in pem.splitlines() if "-----" not in line)
    profile = _profile(tmp_path, private_key=body, role="R")  # a profile's bare base64 body
    env = {"SNOWFLAKE_ACCOUNT": "myorg.my_acct", "SNOWFLAKE_USER": "U",
           "SNOWFLAKE_WAREHOUSE": "WH", "SNOWFLAKE_PROFILE": profile}  # fmt: skip
    params = account_settings({}, env).connector_params()
    der = params.pop("private_key")
    assert isinstance(der, bytes) and der == base64.b64decode(body)
    assert params == {
        "account": "myorg-my_acct", "user": "U", "host": "myorg-my-acct.snowflakecomputing.com",
        "role": "R", "warehouse": "WH",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "no account: give --account or SNOWFLAKE_ACCOUNT"),
        ({"SNOWFLAKE_ACCOUNT": "a"}, "no user: give --user or SNOWFLAKE_USER"),
        ({"SNOWFLAKE_ACCOUNT": "a", "SNOWFLAKE_USER": "u"}, "no private key: give "),
        ({"SNOWFLAKE_ACCOUNT": "a", "SNOWFLAKE_USER": "u", "SNOWFLAKE_PRIVATE_KEY": "K"},
         "no database: give --database or SNOWFLAKE_DATABASE"),
        ({"SNOWFLAKE_ACCOUNT": "a", "SNOWFLAKE_USER": "u", "SNOWFLAKE_DATABASE": "D",
          "SNOWFLAKE_PRIVATE_KEY_FILE": "/nope.p8"},
         "private key file /nope.p8 (SNOWFLAKE_PRIVATE_KEY_FILE): No such file"),
    ],
)  # fmt: skip
def test_check_names_the_first_missing_setting(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingError, match=message.replace("(", r"\(").replace(")", r"\)")):
        account_settings({}, env).check("account", "user", "private_key", "database")


@pytest.mark.parametrize(
    ("flags", "env", "message"),
    [
        ({}, {"SNOWFLAKE_ACCOUNT": "my acct"}, "SNOWFLAKE_ACCOUNT 'my acct' is not an account"),
        ({"account": "a/b"}, {}, "--account 'a/b' is not an account identifier"),
        ({}, {"SNOWFLAKE_PORT": "x"}, "SNOWFLAKE_PORT must be an int, got 'x'"),
        ({"port": 70000}, {}, "--port must be a port number"),
        ({"profile": "/nope.json"}, {}, "--profile /nope.json: cannot read it as JSON"),
        ({}, {"SNOWFLAKE_PROFILE": "/nope.json"}, "SNOWFLAKE_PROFILE /nope.json: cannot read"),
    ],
)
def test_bad_values_name_where_they_came_from(
    flags: dict[str, Any], env: dict[str, str], message: str
) -> None:
    with pytest.raises(SettingError, match=message):
        account_settings(flags, env)


def test_the_monitors_sql_api_is_at_the_derived_account_url(
    tmp_path: Path, pem: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from elastic_channels.monitor import target

    urls: list[str] = []
    monkeypatch.setattr(target, "http_transport", lambda url, token, **kw: urls.append(url))
    key = tmp_path / "k.p8"
    key.write_text(pem)
    env = {"SNOWFLAKE_ACCOUNT": "myorg-myacct", "SNOWFLAKE_USER": "U",
           "SNOWFLAKE_PRIVATE_KEY_FILE": str(key), "SNOWFLAKE_DATABASE": "D"}  # fmt: skip
    sink = target.sink_from(None, {}, env)
    assert urls == ["https://myorg-myacct.snowflakecomputing.com"]
    assert sink.client._context == {"database": "D", "schema": "PUBLIC"}
