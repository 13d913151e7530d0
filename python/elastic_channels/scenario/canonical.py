"""A scenario's canonical form, its hash, and the YAML ``run --print-scenario`` prints.

The resolved form spells out every key, defaults included, so two files that say the
same run the same way (one leaving ``workers`` out, one writing ``workers: 1``) hash the
same; a constant stage holds only ``seconds`` and ``mbps``, a ramp ``seconds``,
``from_mbps`` and ``to_mbps``, a threshold only the bounds it sets (``max``, ``min``).
The hash is the first 12 hex digits of the SHA-256 of the resolved form's JSON (keys
sorted, no spaces), less ``description``: rewording what a scenario is for does not
change what it runs.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import msgspec
import yaml

from .model import Scenario
from .yaml_source import Loader

__all__ = ["canonical_json", "resolved", "scenario_hash", "to_yaml"]

HASH_LENGTH = 12


def resolved(s: Scenario) -> dict[str, Any]:
    """Every key with its value, as plain data (the result file's ``resolved``)."""
    out: dict[str, Any] = msgspec.to_builtins(s)
    out["stages"] = [_set(stage) for stage in out["stages"]]
    out["thresholds"] = {figure: _set(bound) for figure, bound in out["thresholds"].items()}
    return out


def _set(keys: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in keys.items() if v is not None}


def canonical_json(s: Scenario) -> str:
    data = resolved(s)
    del data["description"]
    return json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)


def scenario_hash(s: Scenario) -> str:
    return hashlib.sha256(canonical_json(s).encode()).hexdigest()[:HASH_LENGTH]


class _Dumper(yaml.SafeDumper):
    """Quotes a text exactly when the scenario loader would read it as something else
    (``"1e7"``, ``"010"``), as its scalars are YAML 1.2's, not PyYAML's."""

    yaml_implicit_resolvers = Loader.yaml_implicit_resolvers


def to_yaml(s: Scenario) -> str:
    """A YAML file that loads back to ``s`` (same hash), every key spelled out."""
    body = yaml.dump(
        resolved(s),
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=None,
        allow_unicode=True,
        width=88,
    )
    head = f"# scenario {s.name}, hash {scenario_hash(s)} (every key: docs/SCENARIOS.md)\n"
    return head + body
