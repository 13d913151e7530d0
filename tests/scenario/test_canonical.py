"""The canonical form and hash of a scenario, and the YAML --print-scenario prints."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from elastic_channels.scenario import (
    canonical_json,
    find_scenario,
    from_flags,
    load_file,
    load_text,
    resolved,
    scenario_hash,
    shipped_names,
    to_yaml,
)

STAGES = "stages:\n  - {seconds: 20, mbps: 10}\n  - {seconds: 20, from_mbps: 10, to_mbps: 30}\n"


def test_the_hash_is_12_hex_of_the_sha256_of_the_canonical_json() -> None:
    import hashlib

    s = load_text("name: h\n" + STAGES)
    digest = scenario_hash(s)
    assert re.fullmatch(r"[0-9a-f]{12}", digest)
    assert digest == hashlib.sha256(canonical_json(s).encode()).hexdigest()[:12]
    data = json.loads(canonical_json(s))
    assert list(data) == sorted(data) and "description" not in data


def test_spelling_out_a_default_or_the_description_does_not_change_the_hash() -> None:
    bare = load_text("name: h\n" + STAGES)
    spelled = load_text(
        "name: h\ndescription: says what it is for\nworkers: 1\nchannels: 1\n"
        "window_seconds: 5\ndestination: {target: emulator}\nsdk_properties: {}\n" + STAGES
    )
    assert scenario_hash(bare) == scenario_hash(spelled)


@pytest.mark.parametrize(
    "change",
    ["name: other\n", "workers: 2\n", "warmup_seconds: 1\n", "batch_bytes: 500000\n",
     "destination: {table_format: iceberg}\n", "sdk_properties: {compression: zstd}\n",
     "thresholds: {lost: {max: 0}}\n"],
)  # fmt: skip
def test_any_key_that_changes_the_run_changes_the_hash(change: str) -> None:
    base = "name: h\n" + STAGES
    changed = (base.replace("name: h\n", "") if change.startswith("name") else base) + change
    assert scenario_hash(load_text(changed)) != scenario_hash(load_text(base))


def test_a_stage_rate_changes_the_hash() -> None:
    a = load_text("name: h\nstages: [{seconds: 20, mbps: 10}]\n")
    b = load_text("name: h\nstages: [{seconds: 20, mbps: 10.5}]\n")
    assert scenario_hash(a) != scenario_hash(b)


def test_the_resolved_form_spells_out_every_key_and_no_unset_stage_or_bound() -> None:
    s = load_text("name: h\n" + STAGES + "thresholds: {ack_p99_ms: {max: 2000}}\n")
    r = resolved(s)
    assert set(r) == set(msgspec.structs.asdict(s))
    assert r["stages"] == [
        {"seconds": 20.0, "mbps": 10.0},
        {"seconds": 20.0, "from_mbps": 10.0, "to_mbps": 30.0},
    ]
    assert r["thresholds"] == {"ack_p99_ms": {"max": 2000.0}}
    json.dumps(r, allow_nan=False)  # plain JSON


@pytest.mark.parametrize("name", ["reference", "smoke", "soak", "spike", "step"])
def test_to_yaml_loads_back_to_the_same_scenario(name: str) -> None:
    assert name in shipped_names()
    s = load_file(find_scenario(name))
    again = load_text(to_yaml(s))
    assert again == s and scenario_hash(again) == scenario_hash(s)


def test_to_yaml_quotes_text_that_would_read_back_as_a_number() -> None:
    s = load_text(
        "name: q\n" + STAGES + "description: '010'\n"
        "sdk_properties: {a: '1e7', b: 'true', c: 'on', d: '', e: 3, f: false, g: 'null'}\n"
    )
    again = load_text(to_yaml(s))
    assert again.sdk_properties == {
        "a": "1e7", "b": "true", "c": "on", "d": "", "e": 3, "f": False, "g": "null"
    }  # fmt: skip
    assert again.description == "010"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "elastic_channels", "run", *args],
        capture_output=True, text=True, timeout=60, cwd=cwd, check=False,
    )  # fmt: skip


def test_print_scenario_of_a_flag_line_loads_back_to_the_same_hash(tmp_path: Path) -> None:
    line = ["--workers", "3", "--target-bps", "20e6", "--duration-seconds", "30",
            "--window-seconds", "2", "--sdk-property", "compression=zstd"]  # fmt: skip
    printed = _cli(*line, "--print-scenario", cwd=tmp_path)
    assert printed.returncode == 0, printed.stderr
    assert printed.stderr == ""
    s = load_text(printed.stdout)
    expected = from_flags({
        "workers": 3, "target_bps": 20e6, "duration_seconds": 30.0, "window_seconds": 2.0,
        "sdk_properties": {"compression": "zstd"}, "target": "emulator",
    })  # fmt: skip
    assert s.name == "flags" and s == expected
    assert [(st.seconds, st.mbps) for st in s.stages] == [(30.0, 20.0)]
    assert f"hash {scenario_hash(s)}" in printed.stdout.splitlines()[0]
    # ... and the file it printed, run with --print-scenario again, is the same scenario
    path = tmp_path / "flags.yaml"
    path.write_text(printed.stdout)
    again = _cli(str(path), "--print-scenario", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout == printed.stdout
    # no emulator was started, nothing was written
    assert not (tmp_path / ".elastic-channels").exists()
