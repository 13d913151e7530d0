"""What the app reads from its environment: ``elastic-channels dashboard`` sets these for
the ``streamlit run`` child (a Streamlit script gets no arguments of ours)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DEFAULT_HOME", "DEFAULT_REFRESH_S", "DEFAULT_WORKLOAD", "ENV", "Settings"]

#: Where ``run`` keeps its emulator data dirs (``emulator``, ``emulator-iceberg``, ...).
DEFAULT_HOME = ".elastic-channels"
DEFAULT_REFRESH_S = 5.0
DEFAULT_WORKLOAD = "resort-sales"
#: setting -> environment variable
ENV = {
    "data_dir": "ELASTIC_DASHBOARD_DATA_DIR",
    "home": "ELASTIC_DASHBOARD_HOME",
    "workload": "ELASTIC_DASHBOARD_WORKLOAD",
    "profile": "ELASTIC_DASHBOARD_PROFILE",
    "refresh_s": "ELASTIC_DASHBOARD_REFRESH_S",
    "database": "ELASTIC_DASHBOARD_DATABASE",
    "schema": "ELASTIC_DASHBOARD_SCHEMA",
}


@dataclass(frozen=True)
class Settings:
    #: The emulator's data dir; None: the one under ``home`` whose data is newest
    #: (``data_dirs.find``).
    data_dir: Path | None = None
    home: Path = Path(DEFAULT_HOME)
    #: The workload whose rows the run landed: a shipped name or a file's path.
    workload: str = DEFAULT_WORKLOAD
    #: An SDK profile JSON for an account (as ``run --profile``); None: the emulator,
    #: unless SNOWFLAKE_ACCOUNT is set.
    profile: str | None = None
    refresh_s: float = DEFAULT_REFRESH_S
    #: An account's database and schema (``--database`` / ``--schema``, as ``run``
    #: takes them); None: SNOWFLAKE_DATABASE / _SCHEMA, then the profile's.
    database: str | None = None
    schema: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        raw = env.get(ENV["refresh_s"], "")
        try:
            refresh = float(raw) if raw else DEFAULT_REFRESH_S
        except ValueError:
            raise ValueError(f"{ENV['refresh_s']}={raw!r} is not a number of seconds") from None
        if not 0.5 <= refresh <= 3600:
            raise ValueError(f"{ENV['refresh_s']}={raw!r}: give 0.5 to 3600 seconds")
        return cls(
            data_dir=Path(env[ENV["data_dir"]]) if env.get(ENV["data_dir"]) else None,
            home=Path(env.get(ENV["home"]) or DEFAULT_HOME),
            workload=env.get(ENV["workload"]) or DEFAULT_WORKLOAD,
            profile=env.get(ENV["profile"]) or None,
            refresh_s=refresh,
            database=env.get(ENV["database"]) or None,
            schema=env.get(ENV["schema"]) or None,
        )

    def uses_account(self, env: Mapping[str, str] | None = None) -> bool:
        env = os.environ if env is None else env
        return bool(self.profile or env.get("SNOWFLAKE_ACCOUNT"))

    def to_env(self) -> dict[str, str]:
        out = {
            ENV["home"]: str(self.home),
            ENV["workload"]: self.workload,
            ENV["refresh_s"]: str(self.refresh_s),
        }
        for name in ("data_dir", "profile", "database", "schema"):
            value = getattr(self, name)
            if value:
                out[ENV[name]] = str(value)
        return out
