"""The setup SQL with --table-format iceberg: RESORT_SALES as a Snowflake-managed Iceberg
table, types Snowflake supports for Iceberg, the same pipe; and native stays as it was."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from elastic_channels.model import COLUMNS
from elastic_channels.snowflake import ddl as setup
from elastic_channels.snowflake.iceberg import iceberg_column_type

REPO = Path(__file__).resolve().parents[2]

_CREATE_ICEBERG = re.compile(
    r"CREATE ICEBERG TABLE IF NOT EXISTS (\S+) \(\n(.*)\n\)\n"
    r"CATALOG = 'SNOWFLAKE'\nEXTERNAL_VOLUME = '(\w+)'\nBASE_LOCATION = '([^']+)'$",
    re.S,
)
_COLUMN = re.compile(r'\s*"([A-Z_][A-Z0-9_]*)" (.+?),?$')


def _iceberg(stmts: list[str]) -> tuple[str, list[tuple[str, str]], str, str]:
    (create,) = [s for s in stmts if s.startswith("CREATE ICEBERG TABLE")]
    m = _CREATE_ICEBERG.match(create)
    assert m, create
    cols = [_COLUMN.fullmatch(line).group(1, 2) for line in m.group(2).splitlines()]  # type: ignore[union-attr]
    return m.group(1), cols, m.group(3), m.group(4)


def test_iceberg_table_has_every_column_with_a_supported_type() -> None:
    stmts = setup.statements(
        "demo", "public", table_format="iceberg", external_volume="ice_vol", base_location="a/b"
    )
    name, cols, volume, base = _iceberg(stmts)
    assert (name, volume, base) == ("DEMO.PUBLIC.RESORT_SALES", "ICE_VOL", "a/b")
    assert [n for n, _ in cols] == [n for n, _ in COLUMNS]
    types = dict(cols)
    # TIMESTAMP_TZ is not an Iceberg type in Snowflake: the instant is kept as LTZ(6).
    assert types["SALE_TIME"] == "TIMESTAMP_LTZ(6)"
    assert "TIMESTAMP_TZ" not in " ".join(types.values())
    for n, sf_type in COLUMNS:
        if sf_type.startswith(("NUMBER", "VARCHAR")):
            assert types[n] == sf_type  # exact: decimal(p,s) and string
    # No native-only property on the Iceberg table, and no ALTER TABLE for it.
    assert not any("ROW_TIMESTAMP" in s for s in stmts)
    assert not any(
        s.startswith("CREATE TABLE IF NOT EXISTS DEMO.PUBLIC.RESORT_SALES") for s in stmts
    )


def test_iceberg_keeps_the_same_pipe_and_metrics_table() -> None:
    native = setup.statements("D", "S")
    iceberg = setup.statements("D", "S", table_format="iceberg", external_volume="V")
    assert [s for s in native if "PIPE" in s] == [s for s in iceberg if "PIPE" in s]
    assert [s for s in native if "ELASTIC_K8S_METRICS" in s] == [
        s for s in iceberg if "ELASTIC_K8S_METRICS" in s
    ]
    assert _iceberg(iceberg)[3] == "RESORT_SALES"  # the default base location


def test_native_is_unchanged_by_the_new_format() -> None:
    assert setup.statements("D", "S") == setup.statements("D", "S", table_format="native")
    assert any(s.endswith("ROW_TIMESTAMP = TRUE") for s in setup.statements("D", "S"))


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"table_format": "iceberg"}, "--external-volume"),
        ({"table_format": "delta", "external_volume": "V"}, "--table-format"),
        ({"external_volume": "V"}, "--table-format iceberg"),
        ({"table_format": "iceberg", "external_volume": "bad vol"}, "--external-volume"),
        ({"table_format": "iceberg", "external_volume": "V", "base_location": "../x"}, "--base"),
        ({"table_format": "iceberg", "external_volume": "V", "base_location": "/abs"}, "--base"),
        ({"table_format": "iceberg", "external_volume": "V", "base_location": "a'b"}, "--base"),
    ],
)
def test_bad_iceberg_options_are_named(kwargs: dict[str, str], needle: str) -> None:
    with pytest.raises(setup.SetupError, match=re.escape(needle)):
        setup.statements("D", "S", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("sf_type", "iceberg"),
    [
        ("TIMESTAMP_TZ", "TIMESTAMP_LTZ(6)"),
        ("TIMESTAMP_TZ(9)", "TIMESTAMP_LTZ(6)"),
        ("timestamp_ltz", "TIMESTAMP_LTZ(6)"),
        ("TIMESTAMP_NTZ", "TIMESTAMP_NTZ(6)"),
        ("TIMESTAMP", "TIMESTAMP_NTZ(6)"),
        ("NUMBER(12,2)", "NUMBER(12,2)"),
        ("VARCHAR", "VARCHAR"),
        ("VARCHAR(16)", "VARCHAR"),  # Iceberg's string has no length
        ("DATE", "DATE"),
        ("BOOLEAN", "BOOLEAN"),
        ("FLOAT", "FLOAT"),
        ("VARIANT", "VARIANT"),  # Iceberg v3's variant
    ],
)
def test_iceberg_column_types(sf_type: str, iceberg: str) -> None:
    assert iceberg_column_type(sf_type) == iceberg


@pytest.mark.parametrize("sf_type", ["OBJECT", "ARRAY", "GEOGRAPHY", "VARIANT(1)"])
def test_types_without_an_iceberg_type_are_named(sf_type: str) -> None:
    with pytest.raises(ValueError, match=re.escape(sf_type)):
        iceberg_column_type(sf_type)


def _run_cli(*argv: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO / "python")}
    return subprocess.run(
        [sys.executable, "-m", "elastic_channels", "setup", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_cli_prints_both_formats() -> None:
    native = _run_cli("--database", "DEMO", "--print", "--upgrade")
    assert native.returncode == 0, native.stderr
    assert native.stdout == setup.render(setup.statements("DEMO", "PUBLIC"))
    argv = ["--database", "DEMO", "--print", "--upgrade", "--table-format", "iceberg"]
    iceberg = _run_cli(*argv, "--external-volume", "VOL", "--base-location", "sales/rs")
    assert iceberg.returncode == 0, iceberg.stderr
    want = setup.statements(
        "DEMO", "PUBLIC", table_format="iceberg", external_volume="VOL", base_location="sales/rs"
    )
    assert iceberg.stdout == setup.render(want)
    assert "CATALOG = 'SNOWFLAKE'" in iceberg.stdout
    missing = _run_cli(*argv)
    assert missing.returncode == 2 and "--external-volume" in missing.stderr
