"""setup --workload: the table and pipe a workload declares, native and Iceberg; the
resort-sales default as it always was."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from elastic_channels.snowflake import ddl
from elastic_channels.snowflake.cli import main as setup_main
from elastic_channels.workload import load_workload, shipped_names

_TABLE = re.compile(r"CREATE TABLE IF NOT EXISTS (\S+) \(\n(.*?)\n\)\nROW_TIMESTAMP = TRUE;", re.S)
_ICEBERG = re.compile(r"CREATE ICEBERG TABLE IF NOT EXISTS (\S+) \(\n(.*?)\n\)\n(.*?);", re.S)
_PIPE = re.compile(r"CREATE PIPE IF NOT EXISTS (\S+)\n  AS COPY INTO (\S+)\n(.*?);", re.S)
_COLUMN = re.compile(r'    "((?:[^"]|"")+)" (.+?),?')


def _printed(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert setup_main(["--database", "DEMO", "--print", *argv]) == 0
    return capsys.readouterr().out


def _columns(body: str) -> list[tuple[str, str]]:
    out = []
    for line in body.splitlines():
        m = _COLUMN.fullmatch(line)
        assert m, line
        out.append((m[1].replace('""', '"'), m[2]))
    return out


@pytest.mark.parametrize("name", shipped_names())
def test_the_table_is_the_workloads_columns_and_the_pipe_matches_by_name(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    w = load_workload(name)
    sql = _printed(capsys, "--workload", name)
    ((table, body),) = _TABLE.findall(sql)
    assert table == f"DEMO.PUBLIC.{w.table}"
    assert tuple(_columns(body)) == w.sql_columns
    ((pipe, into, source),) = _PIPE.findall(sql)
    assert (pipe, into) == (f"DEMO.PUBLIC.{w.pipe}", table)
    assert "MATCH_BY_COLUMN_NAME = CASE_SENSITIVE" in source
    assert "ELASTIC_K8S_METRICS" in sql  # the metrics table beside it, as for resort sales


@pytest.mark.parametrize("name", shipped_names())
def test_the_iceberg_table_has_the_workloads_columns_in_iceberg_types(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    w = load_workload(name)
    sql = _printed(
        capsys, "--workload", name, "--table-format", "iceberg", "--external-volume", "V"
    )
    ((table, body, props),) = _ICEBERG.findall(sql)
    cols = _columns(body)
    assert table == f"DEMO.PUBLIC.{w.table}" and [n for n, _ in cols] == [c.name for c in w.columns]
    kinds = {c.type.kind for c in w.columns}
    for (_, iceberg), c in zip(cols, w.columns, strict=True):
        want = {
            "TIMESTAMP_TZ": "TIMESTAMP_LTZ(6)",
            "TIMESTAMP_NTZ": "TIMESTAMP_NTZ(6)",
            "VARCHAR": "VARCHAR",
        }.get(c.type.kind, c.type.sql)
        assert iceberg == want, c.name
    # VARIANT needs Iceberg v3; a table without one keeps Snowflake's default version.
    assert ("ICEBERG_VERSION = 3" in props) == ("VARIANT" in kinds)
    assert f"BASE_LOCATION = '{w.table}'" in props


def test_resort_sales_is_the_default_and_its_sql_is_what_it_was(
    capsys: pytest.CaptureFixture[str],
) -> None:
    default = _printed(capsys, "--upgrade")
    assert _printed(capsys, "--workload", "resort-sales", "--upgrade") == default
    assert default == ddl.render(ddl.statements("DEMO", "PUBLIC"))
    assert '"SALE_TIME" TIMESTAMP_TZ' in default and "RESORT_SALES_PIPE" in default


def test_flags_name_the_table_and_pipe_over_the_workload(
    capsys: pytest.CaptureFixture[str],
) -> None:
    sql = _printed(capsys, "--workload", "iot-telemetry", "--table", "T2", "--pipe", "P2")
    assert "CREATE TABLE IF NOT EXISTS DEMO.PUBLIC.T2 (" in sql
    assert "CREATE PIPE IF NOT EXISTS DEMO.PUBLIC.P2\n  AS COPY INTO DEMO.PUBLIC.T2" in sql
    assert '"TAGS" VARIANT' in sql


def test_the_workload_comes_from_the_environment_too(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKLOAD", "clickstream")
    assert "CREATE TABLE IF NOT EXISTS DEMO.PUBLIC.CLICKSTREAM_EVENTS (" in _printed(capsys)


def test_a_workload_file_with_odd_column_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text(
        "name: odd\ndescription: odd names\ntable: ODD_ROWS\ncolumns:\n"
        "  - {name: id, type: VARCHAR, unique_id: {}}\n"
        "  - {name: 'say \"hi\"', type: 'NUMBER(3,0)', range: {min: 0, max: 9}}\n"
        "  - {name: Größe, type: VARIANT, object: {a: {constant: 1}}}\n"
    )
    sql = _printed(capsys, "--workload", str(path))
    ((_, body),) = _TABLE.findall(sql)
    assert _columns(body) == [("id", "VARCHAR"), ('say "hi"', "NUMBER(3,0)"), ("Größe", "VARIANT")]
    assert '"say ""hi""" NUMBER(3,0)' in body  # a quote in a name is doubled
    assert "CREATE PIPE IF NOT EXISTS DEMO.PUBLIC.ODD_ROWS_PIPE" in sql


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--workload", "cars"], "setup: error: --workload: no shipped workload 'cars'"),
        (["--workload", "missing.yaml"], "setup: error: --workload: missing.yaml: cannot read it"),
    ],
)
def test_a_bad_workload_is_named(
    capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    assert setup_main(["--database", "DEMO", "--print", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(said) and "Traceback" not in err


def test_a_table_name_setup_cannot_create_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "spaced.yaml"
    path.write_text(
        "name: s\ndescription: d\ntable: my table\n"
        "columns:\n  - {name: A, type: VARCHAR, unique_id: {}}\n"
    )
    assert setup_main(["--database", "DEMO", "--print", "--workload", str(path)]) == 2
    err = capsys.readouterr().err
    assert "its table 'my table' is not a plain Snowflake identifier" in err
    assert "give --table NAME" in err
    argv = ["--database", "D", "--print", "--workload", str(path), "--table", "T"]
    assert setup_main(argv) == 2
    assert "its pipe 'my table_PIPE' is not a plain" in capsys.readouterr().err
    assert setup_main([*argv, "--pipe", "P"]) == 0
