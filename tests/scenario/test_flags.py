"""Flags and a scenario: the flags-only form, overrides, and the worker flags a
scenario comes to (read back by the worker's own parser)."""

from __future__ import annotations

import json

import pytest

from elastic_channels.measures import MB
from elastic_channels.scenario import (
    ScenarioError,
    find_scenario,
    from_flags,
    load_file,
    load_text,
    run_seconds,
    scenario_hash,
    stages_bps,
    with_overrides,
    worker_flags,
)
from elastic_channels.worker.config import load_config

ACCOUNT = {"SNOWFLAKE_ACCOUNT": "myorg-myacct", "SNOWFLAKE_DATABASE": "D"}


def step():
    return load_file(find_scenario("step"))


def test_the_flags_only_form_is_a_scenario_named_flags() -> None:
    s = from_flags({"target_bps": 5e6, "duration_seconds": 10, "workers": None})
    assert s.name == "flags" and s.workers == 1
    assert [(st.seconds, st.mbps) for st in s.stages] == [(10.0, 5.0)]
    account = from_flags({"target_bps": 5e6, "duration_seconds": 10, "target": "account",
                          "profile": "p.json"})  # fmt: skip
    assert (account.destination.target, account.destination.profile) == ("account", "p.json")


def test_a_flag_replaces_one_key_and_leaves_the_rest() -> None:
    s = with_overrides(step(), {"workers": 4, "window_seconds": 1, "warmup_seconds": 0,
                                "channels": 2, "batch_bytes": 200_000, "table_format": "iceberg",
                                "max_inflight_bytes": 4_000_000})  # fmt: skip
    assert (s.workers, s.window_seconds, s.warmup_seconds, s.channels) == (4, 1.0, 0.0, 2)
    assert (s.batch_bytes, s.max_inflight_bytes) == (200_000, 4_000_000)
    assert s.destination.table_format == "iceberg"
    assert s.stages == step().stages and s.name == "step"
    assert scenario_hash(s) != scenario_hash(step())
    assert with_overrides(step(), {"workers": None}) == step()  # None: not given


def test_target_bps_makes_the_stages_one_constant_stage_as_long_as_they_were() -> None:
    s = with_overrides(step(), {"target_bps": 7e6})
    (stage,) = s.stages
    assert (stage.seconds, stage.mbps) == (step().stages_seconds, 7.0)
    assert s.warmup_seconds == step().warmup_seconds


def test_duration_sets_the_length_of_a_scenario_of_one_stage_only() -> None:
    smoke = load_file(find_scenario("smoke"))
    assert with_overrides(smoke, {"duration_seconds": 3}).stages[0].seconds == 3.0
    with pytest.raises(ScenarioError) as caught:
        with_overrides(step(), {"duration_seconds": 3})
    assert str(caught.value).startswith(
        "the command line: --duration-seconds: scenario step has 6 stages"
    )
    both = with_overrides(step(), {"duration_seconds": 3, "target_bps": 2e6})
    assert [(st.seconds, st.mbps) for st in both.stages] == [(3.0, 2.0)]


def test_a_profile_makes_the_target_an_account_and_properties_are_added() -> None:
    s = load_text("name: p\nstages: [{seconds: 1, mbps: 1}]\nsdk_properties: {a: '1'}\n")
    t = with_overrides(s, {"profile": "acct.json", "sdk_properties": {"b": "2", "a": "3"}})
    assert (t.destination.target, t.destination.profile) == ("account", "acct.json")
    assert t.sdk_properties == {"a": "3", "b": "2"}


@pytest.mark.parametrize(
    ("given", "said"),
    [({"window_seconds": 0.0}, "the command line: --window-seconds: expected a number > 0"),
     ({"channels": 65}, "the command line: --channels: expected a whole number from 1 to 64"),
     ({"max_inflight_bytes": 2000}, "the command line: --max-inflight-bytes: 2000 is less than"),
     ({"target_bps": float("inf")}, "the command line: --target-bps: expected a finite number"),
     ({"table_format": "iceberg", "profile": "p.json"},
      "the command line: --table-format: iceberg needs target emulator")],
)  # fmt: skip
def test_a_bad_override_names_the_flag(given: dict, said: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        with_overrides(step(), given)
    assert str(caught.value).startswith(said), str(caught.value)


def test_a_bad_flag_of_the_flags_only_form_names_its_variable_too() -> None:
    with pytest.raises(ScenarioError, match=r"--batch-bytes or BATCH_BYTES: expected a whole"):
        from_flags({"target_bps": 1e6, "duration_seconds": 1, "batch_bytes": 999})


def test_the_worker_flags_carry_the_scenario_in_bytes_per_second() -> None:
    s = load_text(
        "name: shape\nwarmup_seconds: 7\nwindow_seconds: 2\nchannels: 2\nbatch_bytes: 300000\n"
        "max_inflight_bytes: 9000000\nsdk_properties: {compression: zstd, n: 4, on: true}\n"
        "stages:\n  - {seconds: 20, mbps: 1.1}\n  - {seconds: 5, from_mbps: 10, to_mbps: 30}\n"
    )
    flags = worker_flags(s)
    value = {flags[i]: flags[i + 1] for i in range(0, len(flags), 2)}
    assert json.loads(value["--stages"]) == [
        {"seconds": 20.0, "from_bps": 1.1e6, "to_bps": 1.1e6},
        {"seconds": 5.0, "from_bps": 1e7, "to_bps": 3e7},
    ]
    assert value["--scenario-name"] == "shape" and value["--scenario-hash"] == scenario_hash(s)
    assert (value["--warmup-seconds"], value["--window-seconds"]) == ("7.0", "2.0")
    assert (value["--channels"], value["--batch-bytes"]) == ("2", "300000")
    assert value["--max-inflight-bytes"] == "9000000"
    props = [flags[i + 1] for i in range(len(flags)) if flags[i] == "--sdk-property"]
    assert props == ["compression=zstd", "n=4", "on=true"]
    assert stages_bps(s)[0]["from_bps"] == 1.1 * MB
    # the worker rounds the warmup up to a window boundary (8 s), and run waits as long
    cfg = load_config(flags, ACCOUNT)
    assert run_seconds(s) == cfg.schedule().aligned(0.0, cfg.window_s).end == 8 + 25


@pytest.mark.parametrize("name", ["reference", "smoke", "soak", "spike", "step"])
def test_the_worker_reads_the_flags_back_as_the_scenario(name: str) -> None:
    s = with_overrides(load_file(find_scenario(name)), {"sdk_properties": {"k": "v"}})
    cfg = load_config(worker_flags(s), ACCOUNT)
    assert [(st.seconds, st.from_bps, st.to_bps) for st in cfg.stages] == [
        (st.seconds, st.first_mbps * MB, st.last_mbps * MB) for st in s.stages
    ]
    assert (cfg.warmup_s, cfg.window_s) == (s.warmup_seconds, s.window_seconds)
    assert (cfg.scenario_name, cfg.scenario_hash) == (s.name, scenario_hash(s))
    assert (cfg.channels, cfg.batch_bytes) == (s.channels, s.batch_bytes)
    assert cfg.max_inflight_bytes == s.max_inflight_bytes
    assert cfg.properties["k"] == "v"
    # how long the workers send, as run waits for them: from a window boundary
    schedule = cfg.schedule().aligned(0.0, cfg.window_s)
    assert run_seconds(s) == pytest.approx(schedule.end)
