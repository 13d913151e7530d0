"""The worker's configuration: flags over environment over defaults, the worker id's
sources, errors that name what to fix, the connection an account alone gives the SDK
(its derived host), and SDK properties passed on as given for every target.
Everything runs in-process on ``load_config(argv, environ)`` with an explicit
environment, except ``--help`` and a bad start, which run the real command.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from elastic_channels.sdk.session import prepare_sdk_environment
from elastic_channels.worker.config import (
    ConfigError,
    load_config,
    worker_id_from_env,
)
from elastic_channels.worker.schedule import Schedule, Stage
from elastic_channels.worker.settings import flag_args

#: Flags naming a target with no profile (a real account would look like this).
ACCOUNT = ["--account", "ACME", "--user", "U", "--database", "DB", "--schema", "S"]
#: A host name with no pod ordinal, so the worker id comes from elsewhere.
NO_ORDINAL = {"HOSTNAME": "laptop"}
#: The SDK properties that keep its flushes inline (rowset mode), as a user may set them.
ROWSET_MODE_PROPERTIES = {
    "max_buffered_kb_for_rowset_mode": 1048576,
    "max_rowset_payload_size_mb": 16,
}


@pytest.fixture
def emulator_profile(tmp_path):
    """An emulator info file (``Emulator.info()``'s shape) with a real key file."""
    key = tmp_path / "user.p8"
    key.write_text("-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n")
    info = {
        "url": "https://127.0.0.1:4443",
        "ssl_cert_file": str(tmp_path / "ca.pem"),
        "private_key_file": str(key),
        "properties": {
            "account": "EMULATOR",
            "user": "EMULATOR_USER",
            "role": "ACCOUNTADMIN",
            "private_key_file": str(key),
            "host": "localhost",
            "port": 4443,
            "scheme": "https",
            **ROWSET_MODE_PROPERTIES,
        },
        "database": "EMULATOR_DB",
        "schema": "PUBLIC",
        "pipe": "RESORT_SALES_PIPE",
        "table": "RESORT_SALES",
        "data_dir": str(tmp_path),
    }
    path = tmp_path / "info.json"
    path.write_text(json.dumps(info))
    return path


# --- where values come from -------------------------------------------------------------


def test_defaults():
    cfg = load_config(ACCOUNT, NO_ORDINAL)
    assert (cfg.target_bps, cfg.duration_s, cfg.batch_bytes) == (92e6, 60.0, 1_000_000)
    assert cfg.worker_id == 0 and cfg.run_id.startswith("run-")
    assert cfg.pipe == "RESORT_SALES_PIPE"
    assert cfg.properties["data_retry_total_backoff_seconds"] == 30
    assert (cfg.encoder, cfg.append_mode, cfg.ssl_cert_file) == (None, None, None)
    assert cfg.sleep_quantum_s == 0.25
    assert cfg.ack_timeout_s == 30 + 60  # the SDK's retry backoff, and a minute more


def test_the_ack_timeout_follows_the_retry_backoff_unless_given():
    assert load_config([*ACCOUNT, "--retry-backoff-seconds", "5"], NO_ORDINAL).ack_timeout_s == 65
    given = [*ACCOUNT, "--retry-backoff-seconds", "5", "--ack-timeout-seconds", "2.5"]
    assert load_config(given, NO_ORDINAL).ack_timeout_s == 2.5


@pytest.mark.parametrize(
    ("flag", "var", "flag_value", "env_value", "attr", "expected"),
    [
        ("--target-bps", "TARGET_BPS", "5e6", "7e6", "target_bps", 5e6),
        ("--duration-seconds", "DURATION_SECONDS", "12", "99", "duration_s", 12.0),
        ("--batch-bytes", "BATCH_BYTES", "200000", "300000", "batch_bytes", 200_000),
        ("--run-id", "RUN_ID", "from-flag", "from-env", "run_id", "from-flag"),
        ("--worker-id", "WORKER_ID", "4", "9", "worker_id", 4),
        ("--database", "SNOWFLAKE_DATABASE", "FLAGDB", "ENVDB", "database", "FLAGDB"),
        ("--schema", "SNOWFLAKE_SCHEMA", "FLAGS", "ENVS", "schema", "FLAGS"),
        ("--pipe", "SNOWFLAKE_PIPE", "FLAGP", "ENVP", "pipe", "FLAGP"),
    ],
)
def test_flags_beat_environment(flag, var, flag_value, env_value, attr, expected):
    env = {**NO_ORDINAL, "SNOWFLAKE_DATABASE": "DB", "SNOWFLAKE_SCHEMA": "S", var: env_value}
    argv = ["--account", "ACME"]
    assert getattr(load_config([*argv, flag, flag_value], env), attr) == expected
    # ... and without the flag the variable is used.
    from_env = getattr(load_config(argv, env), attr)
    assert from_env == type(expected)(env_value)


@pytest.mark.parametrize(
    ("flag", "var", "prop"),
    [
        ("--account", "SNOWFLAKE_ACCOUNT", "account"),
        ("--user", "SNOWFLAKE_USER", "user"),
        ("--role", "SNOWFLAKE_ROLE", "role"),
        ("--host", "SNOWFLAKE_HOST", "host"),
    ],
)
def test_connection_flags_beat_environment(flag, var, prop):
    argv = [*ACCOUNT, flag, "from-flag"]
    assert load_config(argv, {**NO_ORDINAL, var: "from-env"}).properties[prop] == "from-flag"


def test_port_flag_beats_environment():
    cfg = load_config([*ACCOUNT, "--port", "8443"], {**NO_ORDINAL, "SNOWFLAKE_PORT": "9443"})
    assert cfg.properties["port"] == 8443


def test_connection_from_the_environment_alone(tmp_path):
    key = tmp_path / "k.p8"
    key.write_text("PEM TEXT")
    env = {
        **NO_ORDINAL,
        "SNOWFLAKE_ACCOUNT": "ACME",
        "SNOWFLAKE_USER": "U",
        "SNOWFLAKE_PRIVATE_KEY_FILE": str(key),
        "SNOWFLAKE_DATABASE": "DB",
        "SNOWFLAKE_SCHEMA": "S",
    }
    cfg = load_config([], env)
    assert cfg.properties["account"] == "ACME"
    assert cfg.properties["private_key"] == "PEM TEXT"
    assert "private_key_file" not in cfg.properties
    assert (cfg.database, cfg.schema) == ("DB", "S")


def test_sdk_property_flag_beats_the_environments_json():
    env = {**NO_ORDINAL, "SNOWPIPE_SDK_PROPERTIES": '{"a": 1, "b": 2}'}
    cfg = load_config([*ACCOUNT, "--sdk-property", "b=flag"], env)
    assert (cfg.properties["a"], cfg.properties["b"]) == (1, "flag")


def test_retry_backoff_flag_beats_the_environments_json():
    env = {**NO_ORDINAL, "SNOWPIPE_SDK_PROPERTIES": '{"data_retry_total_backoff_seconds": 600}'}
    cfg = load_config([*ACCOUNT, "--retry-backoff-seconds", "5"], env)
    assert cfg.properties["data_retry_total_backoff_seconds"] == 5


def test_an_emulator_profile_supplies_target_and_ca(emulator_profile):
    cfg = load_config(["--profile", str(emulator_profile)], NO_ORDINAL)
    assert (cfg.database, cfg.schema, cfg.pipe) == ("EMULATOR_DB", "PUBLIC", "RESORT_SALES_PIPE")
    assert cfg.ssl_cert_file and cfg.ssl_cert_file.endswith("ca.pem")
    assert cfg.properties["private_key"].startswith("-----BEGIN PRIVATE KEY-----")
    assert "private_key_file" not in cfg.properties  # the SDK refuses both
    assert (cfg.properties["host"], cfg.properties["port"]) == ("localhost", 4443)
    # The profile path may come from the environment too; flags still win over it.
    env = {**NO_ORDINAL, "SNOWFLAKE_PROFILE": str(emulator_profile)}
    assert load_config(["--database", "OTHER"], env).database == "OTHER"


def test_an_sdk_profile_is_taken_as_connection_properties(tmp_path):
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({"account": "ACME", "user": "U", "private_key": "PEM"}))
    cfg = load_config(["--profile", str(profile), "--database", "D", "--schema", "S"], NO_ORDINAL)
    assert cfg.properties["account"] == "ACME" and cfg.ssl_cert_file is None


# --- the worker id ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"WORKER_ID": "7", "JOB_COMPLETION_INDEX": "3", "HOSTNAME": "resort-worker-5"}, 7),
        ({"JOB_COMPLETION_INDEX": "3", "HOSTNAME": "resort-worker-5"}, 3),
        ({"WORKER_ID": "", "JOB_COMPLETION_INDEX": "3", "HOSTNAME": "w-5"}, 3),
        ({"HOSTNAME": "resort-worker-5"}, 5),
        ({"HOSTNAME": "resort-worker-12"}, 12),
        ({"HOSTNAME": "laptop"}, None),
        ({"HOSTNAME": "worker-5x"}, None),
    ],
)
def test_worker_id_sources_in_order(env, expected):
    assert worker_id_from_env(env) == expected
    assert load_config(ACCOUNT, env).worker_id == (0 if expected is None else expected)


def test_byte_counts_take_the_notation_rates_take():
    """Issue #23: --target-bps took 92e6 while --max-inflight-bytes refused 96e6."""
    cfg = load_config([*ACCOUNT, "--max-inflight-bytes", "96e6", "--batch-bytes", "1e6"], {})
    assert (cfg.max_inflight_bytes, cfg.batch_bytes) == (96_000_000, 1_000_000)
    assert load_config(ACCOUNT, {"BATCH_BYTES": "2e6"}).batch_bytes == 2_000_000


def test_worker_id_flag_beats_every_variable():
    env = {"WORKER_ID": "7", "JOB_COMPLETION_INDEX": "3", "HOSTNAME": "resort-worker-5"}
    assert load_config([*ACCOUNT, "--worker-id", "11"], env).worker_id == 11


# --- errors name what to fix ------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        ([], {"TARGET_BPS": "fast"}, "TARGET_BPS must be a number, got 'fast'"),
        ([], {"DURATION_SECONDS": "1m"}, "DURATION_SECONDS must be a number, got '1m'"),
        ([], {"BATCH_BYTES": "1500.5"}, "BATCH_BYTES must be a whole number, got '1500.5'"),
        ([], {"BATCH_BYTES": "nan"}, "BATCH_BYTES must be a whole number, got 'nan'"),
        (["--connect-timeout-seconds", "nan"], {}, "--connect-timeout-seconds must be a finite"),
        (["--drain-timeout-seconds", "inf"], {}, "--drain-timeout-seconds must be a finite"),
        ([], {"WORKER_ID": "w3"}, "WORKER_ID must be an integer, got 'w3'"),
        ([], {"JOB_COMPLETION_INDEX": "x"}, "JOB_COMPLETION_INDEX must be an integer"),
        (["--target-bps", "0"], {}, "--target-bps (TARGET_BPS) must be a finite number > 0"),
        (["--target-bps", "inf"], {}, "--target-bps (TARGET_BPS) must be a finite number > 0"),
        (["--duration-seconds", "-1"], {}, "--duration-seconds (DURATION_SECONDS) must be a"),
        (["--duration-seconds", "inf"], {}, "--duration-seconds (DURATION_SECONDS) must be a"),
        (["--batch-bytes", "999"], {}, "--batch-bytes (BATCH_BYTES) must be >= 1000"),
        (["--window-seconds", "0"], {}, "--window-seconds must be a finite number > 0"),
        (["--window-seconds", "inf"], {}, "--window-seconds must be a finite number > 0"),
        (["--sleep-quantum-ms", "-5"], {}, "--sleep-quantum-ms must be between 0 and 1000"),
        (["--worker-id", "-1"], {}, "--worker-id (WORKER_ID) must be >= 0"),
        (["--retry-backoff-seconds", "0"], {}, "--retry-backoff-seconds must be > 0"),
        (["--ack-timeout-seconds", "0"], {}, "--ack-timeout-seconds must be > 0, got 0"),
        (
            ["--batch-bytes", "2000000", "--max-inflight-bytes", "1000000"],
            {},
            "--max-inflight-bytes (1000000) must be >= --batch-bytes (2000000)",
        ),
        (["--sdk-property", "novalue"], {}, "--sdk-property expects KEY=VALUE"),
        ([], {"SNOWPIPE_SDK_PROPERTIES": "{nope"}, "SNOWPIPE_SDK_PROPERTIES is not JSON"),
        ([], {"SNOWPIPE_SDK_PROPERTIES": "[1]"}, "SNOWPIPE_SDK_PROPERTIES must be a JSON object"),
        (["--stages", "[]"], {}, "--stages (STAGES) must be a non-empty JSON list of stages"),
        ([], {"STAGES": '[{"seconds": 5}]'}, "--stages (STAGES): stages[0].from_bps is missing"),
        (
            ["--stages", '[{"seconds": 5, "from_bps": 1e6, "to_bps": 0}]'],
            {},
            "--stages (STAGES): stages[0].to_bps must be a finite number > 0, got 0",
        ),
        (["--warmup-seconds", "-1"], {}, "--warmup-seconds (WARMUP_SECONDS) must be 0 to 86400"),
        ([], {"WARMUP_SECONDS": "soon"}, "WARMUP_SECONDS must be a number, got 'soon'"),
        (["--scenario-name", "my step"], {}, "--scenario-name (SCENARIO_NAME) must be 1 to 64"),
        ([], {"SCENARIO_HASH": "xyz"}, "--scenario-hash (SCENARIO_HASH) must be 1 to 128 hex"),
    ],
)
def test_bad_values_name_the_flag_or_variable(argv, env, message):
    with pytest.raises(ConfigError) as info:
        load_config([*ACCOUNT, *argv], {**NO_ORDINAL, **env})
    assert message in str(info.value)


def test_the_schedule_is_one_stage_of_the_target_without_stages():
    cfg = load_config([*ACCOUNT, "--target-bps", "5e6", "--duration-seconds", "30"], NO_ORDINAL)
    assert cfg.stages is None and cfg.warmup_s == 0
    assert cfg.schedule() == Schedule([Stage(30, 5e6, 5e6)])
    assert cfg.scenario_ids() == {"scenario": None, "scenario_hash": None}


def test_stages_warmup_and_scenario_from_flags_or_environment():
    stages = '[{"seconds": 10, "from_bps": 1e6, "to_bps": 1e6}, '
    stages += '{"seconds": 20, "from_bps": 1e6, "to_bps": 3e6}]'
    env = {**NO_ORDINAL, "STAGES": stages, "WARMUP_SECONDS": "4", "SCENARIO_NAME": "ramp"}
    env["SCENARIO_HASH"] = "AbC123"
    cfg = load_config([*ACCOUNT, "--target-bps", "5e6"], env)
    want = Schedule([Stage(10, 1e6, 1e6), Stage(20, 1e6, 3e6)], warmup_s=4)
    assert cfg.schedule() == want and cfg.schedule().end == 34
    assert cfg.scenario_ids() == {"scenario": "ramp", "scenario_hash": "AbC123"}
    flags = ["--stages", '[{"seconds": 1, "from_bps": 2, "to_bps": 2}]', "--warmup-seconds", "0"]
    cfg = load_config([*ACCOUNT, *flags, "--scenario-name", "x"], env)  # flags win
    assert cfg.schedule() == Schedule([Stage(1, 2, 2)])
    assert cfg.scenario_name == "x"


def test_flag_args_pass_stages_on_as_json():
    args = flag_args({"stages": [Stage(2, 1e6, 3e6)], "warmup_seconds": 1.5})
    assert args[0] == "--stages" and args[2:] == ["--warmup-seconds", "1.5"]
    cfg = load_config([*ACCOUNT, *args], NO_ORDINAL)
    assert cfg.stages == (Stage(2, 1e6, 3e6),) and cfg.warmup_s == 1.5


def test_missing_pieces_are_named(tmp_path):
    with pytest.raises(ConfigError, match="no account: give --account or SNOWFLAKE_ACCOUNT"):
        load_config([], NO_ORDINAL)
    with pytest.raises(ConfigError, match="no database: give --database or SNOWFLAKE_DATABASE"):
        load_config(["--account", "A"], NO_ORDINAL)
    with pytest.raises(ConfigError, match="--account 'my acct' is not an account identifier"):
        load_config(["--account", "my acct", "--database", "D"], NO_ORDINAL)
    with pytest.raises(ConfigError, match="SNOWFLAKE_PORT must be an int, got 'https'"):
        load_config(ACCOUNT, {**NO_ORDINAL, "SNOWFLAKE_PORT": "https"})
    missing = tmp_path / "nope.p8"
    with pytest.raises(ConfigError, match=f"private key file {missing}"):
        load_config([*ACCOUNT, "--private-key-file", str(missing)], NO_ORDINAL)


def test_bad_profiles_are_named(tmp_path):
    absent = tmp_path / "absent.json"
    with pytest.raises(ConfigError, match=f"--profile {absent}: cannot read it as JSON: No such"):
        load_config(["--profile", str(absent)], NO_ORDINAL)
    garbled = tmp_path / "garbled.json"
    garbled.write_text("{")
    with pytest.raises(ConfigError, match="not JSON"):
        load_config(["--profile", str(garbled)], NO_ORDINAL)
    listed = tmp_path / "list.json"
    listed.write_text("[]")
    with pytest.raises(ConfigError, match="expected a JSON object"):
        load_config(["--profile", str(listed)], NO_ORDINAL)


def test_a_malformed_flag_value_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as info:
        load_config([*ACCOUNT, "--target-bps", "fast"], NO_ORDINAL)
    assert info.value.code == 2
    assert "--target-bps" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "env", "name"),
    [
        (["--run-id", "r" * 129], {}, "--run-id"),
        (["--worker-id", str(2**31)], {}, "--worker-id"),
        ([], {"WORKER_ID": str(2**31)}, "WORKER_ID"),
    ],
    ids=["run-id-too-long", "worker-id-flag-too-big", "worker-id-env-too-big"],
)
def test_values_the_generator_refuses_are_config_errors(argv, env, name):
    with pytest.raises(ConfigError, match=name):
        load_config([*ACCOUNT, *argv], {**NO_ORDINAL, **env})


# --- the connection an account gives the SDK -------------------------------------------


def _documented_env(tmp_path, **more):
    """What .env.example documents for an account, and nothing else."""
    key = tmp_path / "rsa_key.p8"
    key.write_text("-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n")
    return {
        **NO_ORDINAL,
        "SNOWFLAKE_ACCOUNT": "myorg-myacct",
        "SNOWFLAKE_USER": "INGEST",
        "SNOWFLAKE_PRIVATE_KEY_FILE": str(key),
        "SNOWFLAKE_DATABASE": "DEMO",
        **more,
    }


def test_an_account_alone_gives_the_sdk_its_derived_host(tmp_path):
    """The SDK builds its URL from scheme, host and port: with only the documented
    variables it must get the host derived from the account (it failed with "Missing
    host for account URL construction")."""
    cfg = load_config([], _documented_env(tmp_path, SNOWFLAKE_SCHEMA="S"))
    props = cfg.properties
    assert props["account"] == "myorg-myacct" and props["user"] == "INGEST"
    assert (props["host"], props["scheme"]) == ("myorg-myacct.snowflakecomputing.com", "https")
    assert "port" not in props and "role" not in props
    assert props["private_key"].startswith("-----BEGIN PRIVATE KEY-----")
    assert (cfg.database, cfg.schema, cfg.pipe) == ("DEMO", "S", "RESORT_SALES_PIPE")


@pytest.mark.parametrize(
    ("account", "name", "host"),
    [
        ("xy12345.us-east-2.aws", "xy12345", "xy12345.us-east-2.aws.snowflakecomputing.com"),
        ("myorg-my_acct", "myorg-my_acct", "myorg-my-acct.snowflakecomputing.com"),
    ],
)
def test_the_sdk_gets_the_account_name_and_its_urls_host(tmp_path, account, name, host):
    cfg = load_config([], _documented_env(tmp_path, SNOWFLAKE_ACCOUNT=account))
    assert (cfg.properties["account"], cfg.properties["host"]) == (name, host)


def test_the_schema_defaults_to_public(tmp_path):
    assert load_config([], _documented_env(tmp_path)).schema == "PUBLIC"


def test_empty_values_are_unset(tmp_path):
    """`cp .env.example .env` leaves every value empty: each means its default."""
    empty = {name: "" for name in (
        "SNOWFLAKE_SCHEMA", "SNOWFLAKE_PIPE", "SNOWFLAKE_ROLE", "SNOWFLAKE_HOST",
        "SNOWFLAKE_PORT", "SNOWFLAKE_PROFILE", "SNOWFLAKE_PRIVATE_KEY", "RUN_ID",
        "TARGET_BPS", "SNOWPIPE_SDK_PROPERTIES", "WORKER_ID",
    )}  # fmt: skip
    cfg = load_config([], _documented_env(tmp_path, **empty))
    assert (cfg.schema, cfg.pipe, cfg.target_bps) == ("PUBLIC", "RESORT_SALES_PIPE", 92e6)
    assert cfg.properties["host"] == "myorg-myacct.snowflakecomputing.com"
    assert not {"port", "role"} & cfg.properties.keys()
    assert cfg.properties["private_key"].startswith("-----BEGIN")  # the file, not ""
    # ... and so is an empty flag.
    assert load_config(["--schema", "", "--host", ""], _documented_env(tmp_path)).schema == "PUBLIC"


def test_host_and_port_only_override(tmp_path):
    env = _documented_env(tmp_path, SNOWFLAKE_HOST="sf.internal.example", SNOWFLAKE_PORT="8443")
    props = load_config([], env).properties
    assert (props["host"], props["port"], props["account"]) == (
        "sf.internal.example",
        8443,
        "myorg-myacct",
    )
    props = load_config(["--host", "flag.example", "--port", "9443"], env).properties
    assert (props["host"], props["port"]) == ("flag.example", 9443)


def test_flags_then_environment_then_the_profile(tmp_path):
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({
        "account": "profile-acct", "user": "P_USER", "private_key": "BODY", "role": "P_ROLE",
        "url": "https://profile-acct.snowflakecomputing.com:8443", "database": "P_DB",
        "max_inflight_megabytes_per_channel": "64",
    }))  # fmt: skip
    env = {**NO_ORDINAL, "SNOWFLAKE_PROFILE": str(profile), "SNOWFLAKE_USER": "ENV_USER"}
    cfg = load_config(["--role", "FLAG_ROLE"], env)
    props = cfg.properties
    assert (props["account"], props["user"], props["role"]) == (
        "profile-acct",
        "ENV_USER",
        "FLAG_ROLE",
    )
    assert (props["host"], props["port"]) == ("profile-acct.snowflakecomputing.com", 8443)
    assert props["private_key"] == "BODY" and props["max_inflight_megabytes_per_channel"] == "64"
    assert "url" not in props and "database" not in props  # resolved, not passed on twice
    assert cfg.database == "P_DB"
    # The environment's account wins over the profile's, and its host is derived again.
    props = load_config([], {**env, "SNOWFLAKE_ACCOUNT": "other-acct"}).properties
    assert props["account"] == "other-acct"
    assert props["host"] == "profile-acct.snowflakecomputing.com"  # the profile's url: an override


# --- SDK properties are the user's, for every target ------------------------------------


@pytest.mark.parametrize(
    "host", [None, "localhost", "127.0.0.1", "myorg-myacct.snowflakecomputing.com"]
)
def test_the_worker_adds_no_rowset_mode_properties(tmp_path, host):
    argv = [] if host is None else ["--host", host]
    cfg = load_config(argv, _documented_env(tmp_path))
    assert not ROWSET_MODE_PROPERTIES.keys() & cfg.properties.keys()


@pytest.mark.parametrize("host", ["localhost", "myorg-myacct.snowflakecomputing.com", "10.0.0.8"])
def test_a_users_own_properties_pass_through_untouched(tmp_path, emulator_profile, host):
    """Rowset-mode properties a user (or an emulator's info file) sets reach the SDK for
    any target: the worker no longer keeps them for loopback hosts only."""
    from_profile = load_config(["--profile", str(emulator_profile), "--host", host], NO_ORDINAL)
    env = _documented_env(tmp_path, SNOWPIPE_SDK_PROPERTIES=json.dumps(ROWSET_MODE_PROPERTIES))
    from_env = load_config(["--host", host], env)
    argv = ["--host", host, "--sdk-property", "max_rowset_payload_size_mb=16"]
    from_flag = load_config(argv, _documented_env(tmp_path))
    for cfg in (from_profile, from_env):
        for key, value in ROWSET_MODE_PROPERTIES.items():
            assert cfg.properties[key] == value
    assert from_flag.properties["max_rowset_payload_size_mb"] == "16"


# --- the SDK's environment ------------------------------------------------------------------


def test_sdk_logs_default_to_warn_on_stderr_unless_set(emulator_profile):
    cfg = load_config(ACCOUNT, NO_ORDINAL)
    env: dict[str, str] = {"SSL_CERT_FILE": "/etc/ssl/corp.pem"}
    prepare_sdk_environment(cfg.ssl_cert_file, env)
    assert env == {
        "SS_LOG_LEVEL": "warn",
        "SS_LOG_TARGET": "stderr",
        "SSL_CERT_FILE": "/etc/ssl/corp.pem",  # a real account: the usual trust store
    }
    env = {"SS_LOG_LEVEL": "debug"}
    cfg = load_config(["--profile", str(emulator_profile)], NO_ORDINAL)
    prepare_sdk_environment(cfg.ssl_cert_file, env)
    assert env["SS_LOG_LEVEL"] == "debug"
    assert env["SSL_CERT_FILE"].endswith("ca.pem")  # the emulator's CA


# --- the command -------------------------------------------------------------------------


def _run(args: list[str], env: dict[str, str], tmp_path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "elastic_channels.k8s_worker", *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )


def _clean_env() -> dict[str, str]:
    import os

    keep = ("PATH", "HOME", "LANG", "PYTHONPATH", "VIRTUAL_ENV", "PYENV_VERSION")
    return {k: os.environ[k] for k in keep if k in os.environ} | {"HOSTNAME": "laptop"}


def test_help_works(tmp_path):
    done = _run(["--help"], _clean_env(), tmp_path)
    assert done.returncode == 0, done.stderr
    for text in (
        "--target-bps",
        "--duration-seconds",
        "--profile",
        "--append-mode",
        "--retry-backoff-seconds",
        "--ack-timeout-seconds",
        "(default: 250)",
        "(default: 92e6)",
        "WORKER_ID",
        "JOB_COMPLETION_INDEX",
        "RUN_ID",
        "--stages",
        "[STAGES]",
        "--warmup-seconds",
        "--scenario-name",
        "--scenario-hash",
    ):
        assert text in done.stdout, text
    assert "default: None" not in done.stdout  # those flags name their default in words
    assert not done.stderr


def test_a_config_error_exits_2_with_the_message_and_no_json(tmp_path):
    done = _run(["--account", "A"], _clean_env(), tmp_path)
    assert done.returncode == 2
    assert "k8s_worker: error: no database: give --database or SNOWFLAKE_DATABASE" in done.stderr
    assert done.stdout == ""
