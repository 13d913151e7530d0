"""``elastic-channels setup --sql-file FILE``: a file's statements, split, printed or run.

deploy/allowlist.sh runs its network-rule SQL this way; the last tests take the exact
command its dry run prints and run it through the CLI's own parser. No network: the SQL
API's HTTPS (``fake_sql_api``, conftest.py) and the connector are stand-ins.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from key_files import pem_key

from elastic_channels import cli as top_cli
from elastic_channels.snowflake import cli as setup_cli
from elastic_channels.snowflake.ddl import SetupError
from elastic_channels.snowflake.sql_file import split_statements

REPO = Path(__file__).resolve().parents[2]


def test_statements_split_at_semicolons_outside_quotes_and_comments() -> None:
    text = (
        "-- a comment; not a statement\n"
        "CREATE X COMMENT = 'a;b' -- trailing; comment\n"
        "  ;\n"
        '/* block\n;*/ ALTER "Q;" SET BODY = $$ x; y $$;;\n'
        "SELECT 'it''s; \\' still'; // end\n"
        "SELECT A$$B;"
    )
    assert split_statements(text) == [
        (2, "CREATE X COMMENT = 'a;b'"),
        (5, 'ALTER "Q;" SET BODY = $$ x; y $$'),
        (6, "SELECT 'it''s; \\' still'"),
        (7, "SELECT A$$B"),
    ]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("SELECT 1;\nSELECT 'open", "line 2: a ' quote is never closed"),
        ('SELECT "open', 'line 1: a " quote is never closed'),
        ("SELECT 1; /* open", "a /* comment is never closed"),
        ("SELECT $$ open", "a $$ string is never closed"),
    ],
)
def test_an_unclosed_quote_or_comment_names_its_line(text: str, needle: str) -> None:
    with pytest.raises(SetupError, match=re.escape(needle)):
        split_statements(text)


def _setup(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``elastic-channels setup ARGV`` through the one command's parser, in process."""
    args = top_cli.build_parser("setup").parse_args(["setup", *argv])
    rc = args.func(args)
    out, err = capsys.readouterr()
    return rc, out, err


def test_print_shows_each_statement_and_needs_no_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SNOWFLAKE_DATABASE", raising=False)
    sql = tmp_path / "grants.sql"
    sql.write_text("-- two grants\nGRANT USAGE ON DATABASE D TO ROLE R;\nGRANT ROLE R TO USER U\n")
    rc, out, err = _setup(["--sql-file", str(sql), "--print"], capsys)
    assert (rc, err) == (0, "")
    assert out == "GRANT USAGE ON DATABASE D TO ROLE R;\n\nGRANT ROLE R TO USER U;\n"


@pytest.mark.parametrize(
    ("content", "extra", "needle"),
    [
        (None, [], "cannot read it: No such file or directory"),
        ("", [], "no SQL statement in it"),
        ("-- only a comment\n  ;\n", [], "no SQL statement in it"),
        ("SELECT 'x", [], "line 1: a ' quote is never closed"),
        ("SELECT 1", ["--table-format", "iceberg"], "--table-format cannot apply"),
        ("SELECT 1", ["--external-volume", "V"], "--external-volume cannot apply"),
    ],
)
def test_file_errors_are_clear(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: str | None,
    extra: list[str],
    needle: str,
) -> None:
    sql = tmp_path / "x.sql"
    if content is not None:
        sql.write_text(content)
    rc, out, err = _setup(["--sql-file", str(sql), *extra, "--print"], capsys)
    assert rc == 2 and out == ""
    assert err.startswith("setup: error: ") and needle in err
    if extra == []:
        assert f"--sql-file {sql}" in err


class _FakeConnector:
    """snowflake.connector as far as setup uses it; ``fail_on`` makes one statement fail."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.executed: list[str] = []
        self.connects: list[dict[str, object]] = []
        self.module = types.ModuleType("snowflake.connector")
        self.module.connect = self.connect  # type: ignore[attr-defined]
        self.module.Error = RuntimeError  # type: ignore[attr-defined]
        self.fail_on = fail_on

    def connect(self, **params: object) -> _FakeConnector:
        self.connects.append(params)
        return self

    def cursor(self) -> _FakeConnector:
        return self

    def execute(self, sql: str) -> None:
        if self.fail_on and self.fail_on in sql:
            raise RuntimeError("002003 (02000): does not exist or not authorized")
        self.executed.append(sql)

    def close(self) -> None:
        pass


def _credentials(tmp_path: Path) -> list[str]:
    key = pem_key(tmp_path)
    return ["--account", "ORG-ACCT", "--user", "ADMIN", "--private-key-file", str(key)]


@pytest.mark.parametrize("via", ["sql-api", "connector"])
def test_a_failed_statement_is_named_by_file_number_and_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fake_sql_api: Any,
    via: str,
) -> None:
    fake = _FakeConnector(fail_on="MISSING_ROLE")
    monkeypatch.setitem(sys.modules, "snowflake.connector", fake.module)
    fake_sql_api.fail_on = "MISSING_ROLE"
    sql = tmp_path / "grants.sql"
    sql.write_text(
        "GRANT USAGE ON DATABASE D TO ROLE R;\n\n"
        "-- next\nGRANT ROLE MISSING_ROLE\n TO USER U;\nSELECT 1;\n"
    )
    argv = ["--sql-file", str(sql), *_credentials(tmp_path), "--via", via]
    rc, out, err = _setup(argv, capsys)
    assert rc == 2
    ran = fake.executed if via == "connector" else fake_sql_api.statements
    assert ran[0] == "GRANT USAGE ON DATABASE D TO ROLE R"
    assert "SELECT 1" not in ran  # stopped at the failure
    assert out == "ok: GRANT USAGE ON DATABASE D TO ROLE R\n"
    server = "002003" if via == "connector" else "HTTP 422 (code 002003): SQL compilation error"
    assert f"{sql} statement 2 of 3 (line 4): GRANT ROLE MISSING_ROLE: {server}" in err


def _allowlist_dry_run(tmp_path: Path, *script_args: str) -> tuple[str, str, str]:
    """deploy/allowlist.sh --dry-run in a clean environment: (heredoc target, heredoc SQL,
    the ``elastic-channels setup ...`` line it prints)."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    empty_env = tmp_path / "empty.env"
    empty_env.write_text("")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "ENV_FILE": str(empty_env),  # a developer's .env cannot leak in
        "SNOWFLAKE_DATABASE": "DEMO",
        "SNOWFLAKE_USER": "INGEST",
    }
    proc = subprocess.run(
        [bash, str(REPO / "deploy" / "allowlist.sh"), *script_args, "--dry-run"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    heredoc = re.search(r"^cat > (\S+) <<'SQL'\n(.*?)^SQL$", proc.stdout, re.S | re.M)
    assert heredoc, proc.stdout
    (setup_line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("elastic-channels ")]
    return heredoc.group(1), heredoc.group(2), setup_line


def _expected_statements(sql: str) -> list[str]:
    """The heredoc's statements, by its own layout: ``--`` lines are comments and each
    statement ends with ``;`` at the end of a line (no quoted ``;`` in this SQL)."""
    body = "\n".join(ln for ln in sql.splitlines() if not ln.startswith("--"))
    return [s.strip() for s in body.split(";\n") if s.strip().rstrip(";")]


@pytest.mark.parametrize(
    "script_args",
    [["--ip", "203.0.113.7"], ["--ip", "203.0.113.7", "--policy", "CORP_POLICY"], ["--remove"]],
    ids=["own-policy", "accounts-policy", "remove"],
)
def test_the_command_allowlist_sh_runs_is_accepted_and_prints_its_sql(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    script_args: list[str],
) -> None:
    target, sql, setup_line = _allowlist_dry_run(tmp_path, *script_args)
    argv = shlex.split(setup_line)
    assert argv[:2] == ["elastic-channels", "setup"]
    args = top_cli.build_parser("setup").parse_args(argv[1:])  # exits 2 on an unknown flag
    assert args.command == "setup" and args.sql_file == target
    # The same argv, on a copy of the heredoc (the dry run writes no file), with --print.
    local = tmp_path / "allowlist.sql"
    local.write_text(sql + "\n")
    rc, out, err = _setup(
        [a if a != target else str(local) for a in argv[2:]] + ["--print"], capsys
    )
    assert (rc, err) == (0, "")
    expected = [s.rstrip(";") for s in _expected_statements(sql)]
    assert len(expected) >= 2
    assert out == "".join(f"{s};\n\n" for s in expected).rstrip("\n") + "\n"


def test_the_allowlist_sql_runs_statement_by_statement_through_the_sql_api(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_sql_api: Any
) -> None:
    target, sql, setup_line = _allowlist_dry_run(tmp_path, "--ip", "203.0.113.7")
    local = tmp_path / "allowlist.sql"
    local.write_text(sql + "\n")
    argv = [a if a != target else str(local) for a in shlex.split(setup_line)[2:]]
    rc, out, err = _setup([*argv, *_credentials(tmp_path), "--role", "SECURITYADMIN"], capsys)
    assert (rc, err) == (0, "")
    assert fake_sql_api.statements == [s.rstrip(";") for s in _expected_statements(sql)]
    assert len(fake_sql_api.requests) == len(fake_sql_api.statements)  # one each
    assert {body["role"] for _, _, body in fake_sql_api.requests} == {"SECURITYADMIN"}
    assert out.count("ok: ") == len(fake_sql_api.statements)


def test_python_m_setup_takes_the_same_flag(tmp_path: Path) -> None:
    sql = tmp_path / "one.sql"
    sql.write_text("SELECT CURRENT_ROLE();\n")
    proc = subprocess.run(
        [sys.executable, "-m", "elastic_channels.setup", "--sql-file", str(sql), "--print"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "SELECT CURRENT_ROLE();\n"
    assert setup_cli.build_parser().parse_args(["--sql-file", "f"]).sql_file == "f"
