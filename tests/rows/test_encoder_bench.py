"""benches/bench_encoders.py: the side-by-side encoder bench runs on the project's own
dependencies by default; orjson is opt-in and its absence is said plainly."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benches" / "bench_encoders.py"


def _bench(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", [str(BENCH), *argv])
    runpy.run_path(str(BENCH), run_name="__main__")


def _exit_code(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> object:
    with pytest.raises(SystemExit) as exc:
        _bench(argv, monkeypatch)
    return exc.value.code


def test_default_paths_need_no_orjson(
    native, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "orjson", None)  # `import orjson` fails
    code = _exit_code(["--repeats", "1", "--sizes", "50", "--json"], monkeypatch)
    out = capsys.readouterr().out
    assert code == 0
    results = [json.loads(line) for line in out.splitlines()]
    assert [r["path"] for r in results] == ["native", "python"]
    assert results[0]["batch_bytes"] == results[1]["batch_bytes"] > 0  # the same rows


def test_orjson_is_opt_in_and_its_absence_is_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "orjson", None)
    assert _exit_code(["--paths", "python,orjson", "--repeats", "1"], monkeypatch) == 2
    err = capsys.readouterr().err
    assert "path 'orjson' needs the orjson module: pip install orjson" in err


def test_orjson_path_writes_the_same_bytes_when_installed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("orjson")
    argv = ["--paths", "python,orjson", "--repeats", "1", "--sizes", "50", "--json"]
    assert _exit_code(argv, monkeypatch) == 0
    results = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["path"] for r in results] == ["python", "orjson"]
    assert results[0]["batch_bytes"] == results[1]["batch_bytes"]


def test_an_unknown_path_lists_the_known_ones(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _exit_code(["--paths", "native,rust"], monkeypatch) == 2
    assert "unknown path 'rust' (choose from native, python, orjson)" in capsys.readouterr().err


def test_workload_mode_runs_every_path_on_the_same_rows(
    native, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--workload", "resort-sales", "--workload", "iot-telemetry"]
    code = _exit_code([*argv, "--repeats", "1", "--sizes", "40", "--json"], monkeypatch)
    assert code == 0
    results = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    paths = [(r["workload"], r["path"]) for r in results]
    assert paths == [
        ("resort-sales", "native"),
        ("resort-sales", "python"),
        ("resort-sales", "compiled"),
        ("iot-telemetry", "native"),
        ("iot-telemetry", "python"),
    ]
    for name in ("resort-sales", "iot-telemetry"):
        sizes = {r["batch_bytes"] for r in results if r["workload"] == name}
        assert len(sizes) == 1 and sizes.pop() > 0  # the same rows on every path


def test_workload_mode_names_a_bad_workload_or_path(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _exit_code(["--workload", "nope", "--repeats", "1"], monkeypatch) == 2
    assert "no shipped workload 'nope'" in capsys.readouterr().err
    argv = ["--workload", "iot-telemetry", "--paths", "native,orjson"]
    assert _exit_code(argv, monkeypatch) == 2
    assert "with --workload the paths are native, python, compiled, not orjson" in (
        capsys.readouterr().err
    )
