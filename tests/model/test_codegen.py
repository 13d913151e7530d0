"""The codegen check (src/tables.rs is what the model gives) and the drift test
(the installed native module was built from the model in this tree)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from elastic_channels import model as rs

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "python" / "elastic_channels" / "model"


def changed_model(tmp_path: Path) -> Path:
    """A copy of the model package with one price changed (Coffee 4.95 -> 4.96)."""
    changed = tmp_path / "changed_model"
    shutil.copytree(MODEL, changed)
    profiles = changed / "profiles.py"
    source = profiles.read_text()
    assert source.count('("Coffee", 495)') == 1
    profiles.write_text(source.replace('("Coffee", 495)', '("Coffee", 496)'))
    return changed


TABLES_RS = ROOT / "src" / "tables.rs"
IN_CI = os.environ.get("CI") == "true"


@pytest.fixture(scope="module")
def codegen():
    spec = importlib.util.spec_from_file_location(
        "generate_tables", ROOT / "codegen" / "generate_tables.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def needs_rustfmt():
    if shutil.which("rustfmt") is None:
        if IN_CI:
            pytest.fail("rustfmt is not installed (CI=true)")
        pytest.skip("rustfmt is not installed")


def checked_in_fingerprint() -> str:
    m = re.search(r'pub const FINGERPRINT: &str = "([0-9a-f]{64})";', TABLES_RS.read_text())
    assert m, "no FINGERPRINT in src/tables.rs"
    return m.group(1)


# --- --check ----------------------------------------------------------------------------


def test_check_passes_on_checked_in_tables(codegen, needs_rustfmt, capsys):
    assert codegen.main(["--check"]) == 0
    assert "up to date" in capsys.readouterr().out


def test_check_fails_when_a_price_changes(codegen, needs_rustfmt, tmp_path, capsys):
    before = TABLES_RS.read_bytes()
    tables = tmp_path / "tables.rs"
    shutil.copy(TABLES_RS, tables)
    same = tmp_path / "same_model"
    shutil.copytree(MODEL, same)
    assert codegen.main(["--check", "--model", str(same), "--output", str(tables)]) == 0

    changed = changed_model(tmp_path)
    capsys.readouterr()
    assert codegen.main(["--check", "--model", str(changed), "--output", str(tables)]) == 1
    err = capsys.readouterr().err
    assert "stale" in err and "FINGERPRINT" in err
    assert tables.read_bytes() == before  # --check never writes

    # Without --check the stale copy is rewritten, and then it checks clean.
    assert codegen.main(["--model", str(changed), "--output", str(tables)]) == 0
    assert tables.read_bytes() != before
    assert '"4.96"' in tables.read_text()  # Coffee at the STANDARD tier
    assert codegen.main(["--check", "--model", str(changed), "--output", str(tables)]) == 0
    assert TABLES_RS.read_bytes() == before  # the repo's file was never touched


def test_generated_file_is_marked(codegen):
    head = TABLES_RS.read_text().splitlines()[:3]
    assert any("@generated" in line for line in head)
    assert any("DO NOT EDIT" in line for line in head)


# --- render_value -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "named"),
    [(1e16, r"1e\+?16"), (1.5e17, r"1\.5e\+?17"), (1e-7, r"1e-0?7"), (1.25e-5, r"1\.25e-0?5")],
)
def test_render_value_refuses_floats_msgspec_and_json_write_differently(codegen, value, named):
    with pytest.raises(codegen.CodegenError, match=named):
        codegen.render_value(value)


@pytest.mark.parametrize(
    ("value", "text"),
    [(4.21, "4.21"), (1299.0, "1299.0"), (0.1, "0.1"), (1e15, "1000000000000000.0"), (3, "3")],
)
def test_render_value_renders_what_msgspec_and_json_agree_on(codegen, value, text):
    assert codegen.render_value(value) == text


def test_render_value_escapes_strings_as_json(codegen):
    assert codegen.render_value('Mt. "Hood"\\\n') == '"Mt. \\"Hood\\"\\\\\\n"'


def test_every_model_price_renders(codegen):
    for fields in rs.ROW_FIELDS:
        for value in fields[-2:]:
            codegen.render_value(value)


# --- drift ----------------------------------------------------------------------------------


def test_installed_model_is_the_model_in_this_tree(codegen):
    """Tests import the installed elastic_channels; it must be this tree's model
    (else re-run `pip install .`)."""
    assert codegen.load_model(MODEL).table_fingerprint() == rs.table_fingerprint()


def test_checked_in_tables_fingerprint_is_the_model(codegen):
    assert checked_in_fingerprint() == codegen.load_model(MODEL).table_fingerprint()


def test_native_was_built_from_this_model(native):
    assert native.TABLES_FINGERPRINT == rs.table_fingerprint(), (
        "elastic_native is stale: rebuild it with `pip install .`"
    )
    assert native.TABLES_FINGERPRINT == checked_in_fingerprint()
    assert native.TABLE_LENGTH == rs.TABLE_LENGTH
    assert native.MAX_BATCH_ROWS == rs.MAX_BATCH_ROWS


def test_fingerprint_sees_a_price_change(codegen, tmp_path):
    """The drift test can only catch what the fingerprint covers."""
    changed = changed_model(tmp_path)
    assert codegen.load_model(changed).table_fingerprint() != rs.table_fingerprint()
