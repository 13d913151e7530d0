"""``elastic-channels setup`` through Snowflake's SQL API: one statement per request at the
account URL with a key-pair JWT, no driver.

On an in-process emulator (it serves the SQL API): from the ``SNOWFLAKE_*`` variables and
from its info file as ``--profile``, every statement arrives as one request and the
objects exist afterwards; a failed statement is named with the server's message. Against
a stand-in for the HTTPS (``fake_sql_api``): the request bodies, the JWT, a statement
still running polled at its handle and given up on at the timeout, and missing settings
stopped before any request.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from emulator_support import make_emulator
from key_files import pem_key

from elastic_channels.monitor import sql_client
from elastic_channels.snowflake import cli as setup_cli
from elastic_channels.snowflake import ddl
from elastic_channels.snowflake.sql_api import context_name

pytest.importorskip("duckdb")

USER = "SETUP_ADMIN"


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """An emulator that knows the key of ``USER`` besides its own user's (``emu``), and
    that key's file (``user_key``)."""
    tmp = tmp_path_factory.mktemp("setup-emu")
    key = pem_key(tmp)
    public = tmp / "rsa_key.pub"
    private = serialization.load_pem_private_key(key.read_bytes(), None)
    public.write_bytes(
        private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    emu = make_emulator(tmp, public_keys={USER: [public]})
    try:
        yield types.SimpleNamespace(emu=emu, user_key=key)
    finally:
        emu.stop()


def _sql_api_requests(emu: Any) -> int:
    return int(emu.stats_snapshot()["requests"].get("sql_statements", 0))


def _columns(emu: Any, table: str) -> list[str]:
    return [r[0] for r in emu.query(f"DESCRIBE {table}")]


def _tables(emu: Any) -> set[str]:
    return {r[0] for r in emu.query("SELECT table_name FROM information_schema.tables")}


@pytest.fixture
def no_connector(clean_env: pytest.MonkeyPatch) -> None:
    """snowflake-connector-python cannot be imported: the SQL API needs no driver."""
    clean_env.setitem(sys.modules, "snowflake.connector", None)


def test_setup_from_the_snowflake_variables_creates_the_objects_through_the_sql_api(
    emulator: Any,
    clean_env: pytest.MonkeyPatch,
    no_connector: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Only the documented variables (the account URL's host and port overridden to the
    emulator's, whose CA is trusted the system's way, SSL_CERT_FILE)."""
    emu = emulator.emu
    info = emu.info()
    env = {
        "SNOWFLAKE_ACCOUNT": info["properties"]["account"].lower(),
        "SNOWFLAKE_USER": USER.lower(),
        "SNOWFLAKE_PRIVATE_KEY_FILE": str(emulator.user_key),
        "SNOWFLAKE_DATABASE": "DEMO",
        "SNOWFLAKE_SCHEMA": "PUBLIC",
        "SNOWFLAKE_HOST": "localhost",
        "SNOWFLAKE_PORT": str(emu.port),
        "SSL_CERT_FILE": info["ssl_cert_file"],
    }
    for name, value in env.items():
        clean_env.setenv(name, value)
    assert "VARS_METRICS" not in _tables(emu)
    before = _sql_api_requests(emu)
    rc = setup_cli.main(["--metrics-table", "VARS_METRICS"])
    out, err = capsys.readouterr()
    assert (rc, err) == (0, "")
    stmts = ddl.statements("DEMO", "PUBLIC", metrics_table="VARS_METRICS")
    assert out.splitlines() == [f"ok: {s.splitlines()[0]}" for s in stmts]
    assert _sql_api_requests(emu) - before == len(stmts)  # one request per statement
    assert _columns(emu, "VARS_METRICS") == [n for n, _ in ddl.METRICS_COLUMNS]
    assert set(_columns(emu, "RESORT_SALES")) >= {n for n, _ in ddl.COLUMNS}


def test_setup_with_the_emulators_info_file_as_profile(
    emulator: Any,
    tmp_path: Path,
    no_connector: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``setup --profile info.json``: the emulator's URL, CA, user and key, nothing else."""
    info_file = tmp_path / "info.json"
    emu = emulator.emu
    info_file.write_text(json.dumps(emu.info()))
    assert "PROFILE_METRICS" not in _tables(emu)
    before = _sql_api_requests(emu)
    rc = setup_cli.main(["--profile", str(info_file), "--metrics-table", "PROFILE_METRICS"])
    out, err = capsys.readouterr()
    assert (rc, err) == (0, "")
    count = len(ddl.statements("EMULATOR_DB", "PUBLIC", metrics_table="PROFILE_METRICS"))
    assert out.count("ok: ") == count
    assert _sql_api_requests(emu) - before == count
    assert _columns(emu, "PROFILE_METRICS") == [n for n, _ in ddl.METRICS_COLUMNS]


def test_a_failed_statement_is_named_with_the_servers_message(
    emulator: Any,
    tmp_path: Path,
    no_connector: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    info_file = tmp_path / "info.json"
    emu = emulator.emu
    info_file.write_text(json.dumps(emu.info()))
    sql = tmp_path / "three.sql"
    sql.write_text(
        "CREATE TABLE FIRST_OK (A INT);\n\n-- the bad one\n"
        "SELECT * FROM NO_SUCH_TABLE;\nCREATE TABLE NEVER_RUN (A INT);\n"
    )
    rc = setup_cli.main(["--profile", str(info_file), "--sql-file", str(sql)])
    out, err = capsys.readouterr()
    assert rc == 2
    assert out == "ok: CREATE TABLE FIRST_OK (A INT)\n"
    assert err == (
        f"setup: error: {sql} statement 2 of 3 (line 4): SELECT * FROM NO_SUCH_TABLE: "
        "HTTP 422 (code 002003): SQL compilation error:\n"
        "Object 'NO_SUCH_TABLE' does not exist or not authorized.\n"
    )
    tables = _tables(emu)
    assert "FIRST_OK" in tables and "NEVER_RUN" not in tables  # stopped at the failure


# --- against a stand-in for the HTTPS ----------------------------------------------------


def _credentials(tmp_path: Path) -> list[str]:
    key = pem_key(tmp_path)
    return ["--account", "org-acct", "--user", "ingest", "--private-key-file", str(key)]


def test_each_request_carries_one_statement_role_warehouse_and_a_keypair_jwt(
    tmp_path: Path, fake_sql_api: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--database", "DEMO", "--role", "sysadmin", "--warehouse", '"Mixed WH"']
    rc = setup_cli.main([*argv, *_credentials(tmp_path), "--timeout", "90"])
    assert rc == 0, capsys.readouterr().err
    assert fake_sql_api.base_url == "https://org-acct.snowflakecomputing.com"
    assert fake_sql_api.statements == ddl.statements("DEMO", "PUBLIC")
    for method, path, body in fake_sql_api.requests:
        assert (method, path.split("?")[0]) == ("POST", "/api/v2/statements")
        assert body == {
            "statement": body["statement"],
            "timeout": 90,
            "role": "SYSADMIN",  # as Snowflake resolves the plain name
            "warehouse": "Mixed WH",  # quoted: as written
        }  # no database or schema: it may not exist yet, and every name is qualified
    claims = jwt.decode(fake_sql_api.tokens[0], options={"verify_signature": False})
    assert claims["sub"] == "ORG-ACCT.INGEST"
    assert claims["iss"].startswith("ORG-ACCT.INGEST.SHA256:")


def test_a_statement_still_running_is_polled_at_its_handle_until_done(
    tmp_path: Path, fake_sql_api: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_sql_api.running = 2
    sql = tmp_path / "one.sql"
    sql.write_text("CREATE DATABASE IF NOT EXISTS SLOW_DB;\n")
    rc = setup_cli.main(["--sql-file", str(sql), *_credentials(tmp_path)])
    out, err = capsys.readouterr()
    assert (rc, err) == (0, "")
    assert out == "ok: CREATE DATABASE IF NOT EXISTS SLOW_DB\n"
    (post, *polls) = fake_sql_api.requests
    assert post[0] == "POST"
    handle = polls[0][1].rsplit("/", 1)[-1]
    assert [(m, p) for m, p, _ in polls] == [("GET", f"/api/v2/statements/{handle}")] * 2


def test_a_statement_still_running_past_the_timeout_fails_naming_it(
    tmp_path: Path,
    fake_sql_api: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake_sql_api.running = 10**9
    now = [1000.0]
    clock = types.SimpleNamespace(
        monotonic=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + 5)
    )
    monkeypatch.setattr(sql_client, "time", clock)
    rc = setup_cli.main(["--database", "DEMO", "--timeout", "10", *_credentials(tmp_path)])
    out, err = capsys.readouterr()
    assert rc == 2 and out == ""
    assert err.startswith(
        "setup: error: CREATE DATABASE IF NOT EXISTS DEMO: statement still running after 10 s"
    )
    polls = len(fake_sql_api.requests) - 1
    assert 0 < polls <= (10 + 30) // 5 + 1  # bounded: the timeout and 30 s, no more
    assert fake_sql_api.statements == ["CREATE DATABASE IF NOT EXISTS DEMO"]  # stopped there


@pytest.mark.parametrize(
    ("argv", "env", "needle"),
    [
        (["--database", "D"], {}, "no credentials: give --account/--user/--private-key-file"),
        (["--database", "D", "--account", "a"], {}, "no user: give --user or SNOWFLAKE_USER"),
        (
            ["--database", "D"],
            {"SNOWFLAKE_ACCOUNT": "a", "SNOWFLAKE_USER": "u"},
            "no private key: give --private-key-file or SNOWFLAKE_PRIVATE_KEY_FILE",
        ),
        (
            ["--database", "D", "--account", "a", "--user", "u"],
            {"SNOWFLAKE_PRIVATE_KEY_FILE": "/nonexistent/key.p8"},
            "private key file /nonexistent/key.p8 (SNOWFLAKE_PRIVATE_KEY_FILE): No such file",
        ),
        (
            ["--database", "D", "--account", "a", "--user", "u"],
            {"SNOWFLAKE_PRIVATE_KEY": "not a key"},
            "the private key is not a usable PEM private key",
        ),
        (["--account", "a", "--user", "u"], {}, "--database (or SNOWFLAKE_DATABASE) is required"),
    ],
    ids=["nothing", "no-user", "no-key", "key-file-missing", "bad-key", "no-database"],
)
def test_missing_settings_give_one_error_before_any_request(
    fake_sql_api: Any,
    clean_env: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    env: dict[str, str],
    needle: str,
) -> None:
    for name, value in env.items():
        clean_env.setenv(name, value)
    rc = setup_cli.main(argv)
    out, err = capsys.readouterr()
    assert (rc, out) == (2, "")
    assert err.startswith("setup: error: ") and needle in err
    assert err.count("\n") == 1  # one error, one line
    assert fake_sql_api.requests == []


def test_print_needs_no_account_settings(
    fake_sql_api: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = setup_cli.main(["--database", "DEMO", "--print", "--upgrade"])
    out, err = capsys.readouterr()
    assert (rc, err) == (0, "")
    assert out == ddl.render(ddl.statements("DEMO", "PUBLIC"))
    assert fake_sql_api.requests == []


@pytest.mark.parametrize(
    ("given", "sent"),
    [
        ("securityadmin", "SECURITYADMIN"),
        ("Sys_Admin$1", "SYS_ADMIN$1"),
        ('"Mixed Case"', "Mixed Case"),
        ('"a""b"', 'a"b'),
        ("has space", "has space"),
        (None, None),
    ],
)
def test_role_and_warehouse_names_as_the_sql_api_matches_them(
    given: str | None, sent: str | None
) -> None:
    assert context_name(given) == sent
