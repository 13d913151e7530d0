"""Workload files that are not what a person writes (alias bombs, nesting, a NUL byte,
a file past the size bound) and columns the landing table keeps for itself: each is one
WorkloadError naming the file, and the column when there is one."""

from __future__ import annotations

from pathlib import Path

import pytest

from elastic_channels.workload import WorkloadError, load_workload
from elastic_channels.workload.load import load_text
from elastic_channels.workload.model import (
    RESERVED_COLUMN_PREFIX,
    RESERVED_COLUMNS,
    RESERVED_TABLE_PREFIX,
)

HEAD = "name: w\ndescription: a test workload\ntable: T\ncolumns:\n"
ID = "  - {name: ID, type: VARCHAR, unique_id: {}}\n"


def _refused(path: Path) -> str:
    with pytest.raises(WorkloadError) as caught:
        load_workload(path)
    text = str(caught.value)
    assert text.startswith(f"{path}"), text
    assert "\n" not in text
    return text


def test_an_alias_bomb_is_refused_before_it_is_expanded(tmp_path: Path) -> None:
    levels = ["  - name: C\n    type: VARIANT\n    constant: &a0 [x, x, x, x, x, x, x, x, x]\n"]
    for i in range(1, 6):  # 9**6 strings once expanded
        refs = ", ".join([f"*a{i - 1}"] * 9)
        levels.append(f"  - name: C{i}\n    type: VARIANT\n    constant: &a{i} [{refs}]\n")
    path = tmp_path / "bomb.yaml"
    path.write_text(HEAD + ID + "".join(levels))
    assert "more than 100,000 values (aliases counted as what they stand for)" in _refused(path)


def test_deep_nesting_a_nul_byte_and_size_are_one_error(tmp_path: Path) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text(HEAD + "  - " + "[" * 5000 + "]" * 5000 + "\n")
    assert _refused(deep) == f"{deep}:5: nested deeper than 64 levels"
    nul = tmp_path / "nul.yaml"
    nul.write_text(HEAD + ID + "# a\x00\n")
    assert _refused(nul) == f"{nul}: holds a NUL byte (line 6)"
    big = tmp_path / "big.yaml"
    big.write_text(HEAD + ID + "#" * (1 << 20) + "\n")
    assert "over the 1 MiB such a file may hold" in _refused(big)


@pytest.mark.parametrize("name", ["_COMMIT_TIME", "_commit_time", "METADATA$ROW_ID"])
def test_a_reserved_column_name_is_refused_naming_the_column(name: str) -> None:
    text = HEAD + ID + f"  - {{name: '{name}', type: VARCHAR, constant: x}}\n"
    with pytest.raises(WorkloadError) as caught:
        load_text(text, "w.yaml")
    said = str(caught.value)
    assert said.startswith(f"w.yaml:6: columns[1] ({name}): name: '{name}' is reserved"), said


def test_a_table_named_as_the_emulators_own_is_refused() -> None:
    text = HEAD.replace("table: T", "table: _EMULATOR_LANDED") + ID
    with pytest.raises(WorkloadError, match=r"w\.yaml:3: table: '_EMULATOR_LANDED' is reserved"):
        load_text(text, "w.yaml")


def test_the_reserved_names_are_the_emulators() -> None:
    from elastic_channels.emulator.sql.bookkeeping import PREFIX
    from elastic_channels.emulator.sql.translate import ROW_TIMESTAMP_COLUMN
    from elastic_channels.emulator.storage.schema import COMMIT_TIME_COLUMN

    assert COMMIT_TIME_COLUMN in RESERVED_COLUMNS
    assert ROW_TIMESTAMP_COLUMN.startswith(RESERVED_COLUMN_PREFIX)
    assert PREFIX == RESERVED_TABLE_PREFIX
