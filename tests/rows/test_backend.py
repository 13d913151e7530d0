"""Path selection: ELASTIC_FAST_JSON_ENCODE, the fallback when the native module is
missing or stale, and the one log line saying which path is in use."""

from __future__ import annotations

import logging
import sys

import pytest

from elastic_channels.rows import ResortGenerator, backend

LOGGER = "elastic_channels.rows"
NATIVE_STANDIN = object()  # what native_module() returns when the module is usable


@pytest.mark.parametrize(
    ("value", "fast"),
    [
        ("true", True),
        ("TRUE", True),
        (" True\n", True),
        ("1", True),
        ("yes", True),
        ("on", True),
        ("false", False),
        ("False", False),
        (" FALSE ", False),
        ("0", False),
        ("no", False),
        ("NO", False),
        ("off", False),
        ("Off", False),
    ],
)
def test_env_var_parsing(value, fast):
    assert backend.fast_encode_requested({backend.ENV_VAR: value}) is fast


def test_unset_means_fast():
    assert backend.fast_encode_requested({}) is True
    assert backend.fast_encode_requested({"OTHER": "false"}) is True


def test_reads_os_environ_by_default(monkeypatch):
    monkeypatch.setenv(backend.ENV_VAR, "off")
    assert backend.fast_encode_requested() is False
    monkeypatch.delenv(backend.ENV_VAR)
    assert backend.fast_encode_requested() is True


def selection_log(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == LOGGER and r.levelno >= logging.INFO]


@pytest.fixture
def native_available(monkeypatch):
    monkeypatch.setattr(backend, "native_module", lambda: NATIVE_STANDIN)


@pytest.fixture
def native_missing(monkeypatch):
    monkeypatch.setattr(backend, "native_module", lambda: None)


@pytest.mark.parametrize("value", ["false", "0", "no", "off"])
def test_env_off_picks_python(monkeypatch, caplog, native_available, value):
    monkeypatch.setenv(backend.ENV_VAR, value)
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        assert backend.select_backend() == "python"
    (record,) = selection_log(caplog)
    assert "python path" in record.getMessage()
    assert backend.ENV_VAR in record.getMessage()


def test_default_picks_native_when_available(monkeypatch, caplog, native_available):
    monkeypatch.delenv(backend.ENV_VAR, raising=False)
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        assert backend.select_backend() == "native"
    (record,) = selection_log(caplog)
    assert "native path" in record.getMessage()


def test_falls_back_to_python_when_native_missing(monkeypatch, caplog, native_missing):
    monkeypatch.setenv(backend.ENV_VAR, "true")
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        assert backend.select_backend() == "python"
    (record,) = selection_log(caplog)
    assert "python path" in record.getMessage()
    assert "not installed" in record.getMessage()


def test_native_requested_but_missing_raises(native_missing, caplog):
    with pytest.raises(RuntimeError, match="native"):
        backend.select_backend("native")


def test_native_requested_and_available(native_available, monkeypatch, caplog):
    monkeypatch.setenv(backend.ENV_VAR, "false")  # an explicit request wins
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        assert backend.select_backend("native") == "native"
    (record,) = selection_log(caplog)
    assert "native path" in record.getMessage()


def test_python_requested_wins_over_native(native_available, caplog):
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        assert backend.select_backend("python") == "python"
    (record,) = selection_log(caplog)
    assert "python path" in record.getMessage()


# --- native_module() itself ---------------------------------------------------------------


def test_native_module_none_when_not_importable(monkeypatch):
    monkeypatch.setitem(sys.modules, "elastic_native", None)  # import raises ImportError
    assert backend.native_module() is None


def test_native_module_is_the_real_module_when_current(native):
    assert backend.native_module() is native


def test_native_module_refuses_a_stale_build(native, monkeypatch, caplog):
    monkeypatch.setattr(backend, "table_fingerprint", lambda: "0" * 64)
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        assert backend.native_module() is None
    (record,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "pip install ." in record.getMessage()


def test_real_selection_with_native_built(native, monkeypatch, caplog):
    monkeypatch.delenv(backend.ENV_VAR, raising=False)
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        assert backend.select_backend() == "native"
    assert len(selection_log(caplog)) == 1


# --- make_generator --------------------------------------------------------------------------


def test_make_generator_backends_agree(native):
    a = backend.make_generator("run-e", 3, start_seq=5, backend="native")
    b = backend.make_generator("run-e", 3, start_seq=5, backend="python")
    assert isinstance(a, native.ResortGenerator)
    assert isinstance(b, ResortGenerator)
    assert a.next_batch(50, 0) == b.next_batch(50, 0)
    assert a.seq == b.seq == 55


def test_make_generator_python_needs_no_native(monkeypatch):
    monkeypatch.setitem(sys.modules, "elastic_native", None)
    g = backend.make_generator("run-e", 0, backend="python")
    assert g.next_batch(2, 0).count(b"\n") == 2
