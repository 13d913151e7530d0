"""The worker's --workload: its settings (flag, WORKLOAD, the workload's pipe unless one
is named, errors naming where it came from) and the generator its batches come from
(the native runtime generator when built, else msgspec's; resort sales by its name
keeps the compiled ResortGenerator), byte for byte the msgspec oracle's rows."""

from __future__ import annotations

import msgspec
import pytest

import elastic_channels.worker.workload_source as workload_source
from elastic_channels import rows
from elastic_channels.rows.workload_generator import WorkloadGenerator
from elastic_channels.worker.config import ConfigError, load_config
from elastic_channels.worker.ledger import Ledger
from elastic_channels.worker.source import BatchSource
from elastic_channels.workload import load_workload
from elastic_channels.workload.replay import resolve

ACCOUNT = ["--account", "ACME", "--user", "U", "--database", "DB", "--schema", "S"]
ENV = {"HOSTNAME": "laptop"}


def test_the_workload_and_its_pipe() -> None:
    cfg = load_config([*ACCOUNT, "--workload", "iot-telemetry"], ENV)
    assert (cfg.workload, cfg.pipe) == ("iot-telemetry", "IOT_TELEMETRY_PIPE")
    cfg = load_config(ACCOUNT, {**ENV, "WORKLOAD": "clickstream"})
    assert (cfg.workload, cfg.pipe) == ("clickstream", "CLICKSTREAM_EVENTS_PIPE")
    named = load_config([*ACCOUNT, "--workload", "iot-telemetry", "--pipe", "MINE"], ENV)
    assert named.pipe == "MINE"
    env = {**ENV, "SNOWFLAKE_PIPE": "FROM_ENV"}
    assert load_config([*ACCOUNT, "--workload", "iot-telemetry"], env).pipe == "FROM_ENV"
    default = load_config(ACCOUNT, ENV)
    assert (default.workload, default.pipe) == ("resort-sales", "RESORT_SALES_PIPE")


@pytest.mark.parametrize(
    ("argv", "env", "said"),
    [
        (["--workload", "cars"], {}, "--workload: no shipped workload 'cars'"),
        ([], {"WORKLOAD": "cars"}, "WORKLOAD: no shipped workload 'cars'"),
        (["--workload", "nowhere.yml"], {}, "--workload: nowhere.yml: cannot read it"),
    ],
)
def test_a_bad_workload_is_named_before_any_channel_opens(
    argv: list[str], env: dict[str, str], said: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config([*ACCOUNT, *argv], {**ENV, **env})
    assert str(caught.value).startswith(said)


def _source(*argv: str) -> BatchSource:
    return BatchSource(
        load_config([*ACCOUNT, "--run-id", "src-run", "--worker-id", "3", *argv], ENV)
    )


@pytest.mark.parametrize("name", ["iot-telemetry", "clickstream", "wide-events"])
@pytest.mark.parametrize("encoder", ["native", "python"])
def test_batches_are_the_oracles_rows_and_replay_alike(name: str, encoder: str) -> None:
    if encoder == "native" and workload_source.native_workload_module() is None:
        pytest.skip("elastic_native has no WorkloadGenerator (not built)")
    src = _source("--workload", name, "--encoder", encoder)
    assert src.encoder == encoder
    want_type = "elastic_native" if encoder == "native" else "elastic_channels.rows"
    assert type(src.gen).__module__.startswith(want_type), type(src.gen)
    assert type(src.gen).__name__ == "WorkloadGenerator"
    ledger = Ledger()
    first, payload = src.next(50, ledger)
    second, more = src.next(7, ledger)
    oracle = WorkloadGenerator(resolve(load_workload(name)), "src-run", 3)
    assert payload == oracle.next_batch(50, first.sale_time_us)
    assert more == oracle.next_batch(7, second.sale_time_us)
    assert src.replay(second) == more and src.replay(first) == payload
    assert first.nbytes == len(payload)


def test_rows_mode_hands_out_row_objects_of_the_workload() -> None:
    src = _source("--workload", "iot-telemetry", "--append-mode", "rows")
    assert src.encoder == "python"
    batch, objects = src.next(3, Ledger())
    encoded = msgspec.json.Encoder().encode_lines(objects)
    assert encoded.startswith(b'{"EVENT_ID":"src-run-3-0",') and len(objects) == 3
    assert batch.nbytes == len(encoded)  # what the SDK will encode, metered exactly


def test_resort_sales_by_its_name_keeps_the_compiled_generator() -> None:
    src = _source()
    backend = rows.choose_backend(None)[0]
    assert type(src.gen).__name__ == "ResortGenerator"
    assert src.encoder == backend
    assert type(_source("--workload", "resort-sales").gen) is type(src.gen)


def test_native_asked_for_without_the_runtime_generator_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if rows.native_module() is None:
        pytest.skip("elastic_native is not built")
    monkeypatch.setattr(workload_source, "native_workload_module", lambda: None)
    with pytest.raises(ConfigError, match="--encoder native: the installed elastic_native has no"):
        _source("--workload", "iot-telemetry", "--encoder", "native")
    # Not asked for: the msgspec generator, which writes the same rows.
    assert _source("--workload", "iot-telemetry").encoder == "python"
