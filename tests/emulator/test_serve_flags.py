"""``serve``'s flags refuse what would remove a bound or serve where no client can reach
(issue #23 item 5), and ``-v`` logs what it promises. On main ``--host ::1`` and
``--host 127.0.0.2`` were accepted (the certificate and the client properties say
localhost), ``nan`` removed a timeout's bound, and ``-v`` printed nothing per batch."""

from __future__ import annotations

import argparse
import re

import pytest
from emulator_support import ROWS_PATH, EmulatorProcess

from elastic_channels.emulator.cli import configure_parser
from elastic_channels.rows import ResortGenerator

DURATIONS = (
    "--duration-seconds", "--answer-delay-seconds", "--header-timeout-seconds",
    "--body-timeout-seconds", "--idle-timeout-seconds",
)  # fmt: skip
TIMEOUTS = ("--header-timeout-seconds", "--body-timeout-seconds", "--idle-timeout-seconds")
COUNTS = ("--token-ttl-seconds", "--duckdb-threads", "--max-connections", "--append-buffer-ms")


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="emulator", exit_on_error=False)
    configure_parser(parser)
    return parser.parse_args(list(argv))


def _refused(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as e:
        _parse(*argv)
    assert e.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("host", ["::1", "127.0.0.2", "0.0.0.0", "::"])
def test_serve_binds_only_what_its_certificate_and_properties_cover(capsys, host):
    err = _refused(capsys, "serve", "--data-dir", "d", "--host", host)
    assert "--host" in err and "127.0.0.1 or localhost" in err


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_the_covered_hosts_pass(host):
    assert _parse("serve", "--data-dir", "d", "--host", host).host == host


@pytest.mark.parametrize("flag", DURATIONS)
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", "-1", "ten"])
def test_every_duration_flag_refuses_what_is_not_a_finite_number(capsys, flag, value):
    err = _refused(capsys, "serve", "--data-dir", "d", f"{flag}={value}")
    assert flag in err and repr(value) in err


@pytest.mark.parametrize("flag", TIMEOUTS)
def test_a_timeout_of_zero_is_refused(capsys, flag):
    assert "more than 0" in _refused(capsys, "serve", "--data-dir", "d", flag, "0")


def test_durations_take_fractions_and_the_answer_delay_its_bound(capsys):
    args = _parse("serve", "--data-dir", "d", "--duration-seconds", "1.5",
                  "--body-timeout-seconds", "2.5e1")  # fmt: skip
    assert args.duration_seconds == 1.5 and args.body_timeout_seconds == 25.0
    assert "at most 600" in _refused(capsys, "serve", "--data-dir", "d",
                                     "--answer-delay-seconds", "601")  # fmt: skip


@pytest.mark.parametrize("flag", COUNTS)
def test_counts_are_whole_and_not_negative(capsys, flag):
    err = _refused(capsys, "serve", "--data-dir", "d", f"{flag}=-1")
    assert flag in err and ("0 or more" in err or "more than 0" in err)


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--delay-seconds", "nan"), ("--delay-seconds", "inf"), ("--probability", "nan"),
     ("--probability", "1.5"), ("--count", "-1")],
)  # fmt: skip
def test_fault_flags_refuse_them_too(capsys, flag, value):
    err = _refused(capsys, "faults", "--data-dir", "d", "add", "rows", "delay", f"{flag}={value}")
    assert flag in err


def test_serve_v_logs_a_line_per_landed_batch(tmp_path):
    emu = EmulatorProcess(tmp_path / "emu", "-v").start()
    try:
        token = emu.scoped_token()
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/x-ndjson"}
        for i, n in enumerate((7, 11)):
            body = ResortGenerator(f"v{i}", 0).next_batch(n, 1_700_000_000_000_000)
            body += b'{"not": "a row"}\n'
            status, _, out = emu.request("POST", ROWS_PATH.format(rid=f"v{i}"), body, headers)
            assert status == 200, out
            assert emu.wait_landed(60)
    finally:
        assert emu.stop() == 0, emu.stderr()
    lines = re.findall(r"INFO .*landed a batch of 1 request\(s\): (\d+) row\(s\), (\d+) refused",
                       emu.stderr())  # fmt: skip
    assert lines == [("7", "1"), ("11", "1")], emu.stderr()


@pytest.mark.parametrize("host", ["::1", "127.0.0.2"])
def test_the_config_refuses_a_loopback_address_clients_would_not_reach(tmp_path, host):
    """Not only the flag: EmulatorConfig (what `run` and tests build) refuses them too."""
    from elastic_channels.emulator import EmulatorConfig

    with pytest.raises(ValueError, match=r"127\.0\.0\.1 or localhost"):
        EmulatorConfig(data_dir=tmp_path, host=host)
    with pytest.raises(ValueError, match="loopback addresses only"):
        EmulatorConfig(data_dir=tmp_path, host="10.0.0.1")
