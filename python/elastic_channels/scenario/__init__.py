"""Scenarios: a run described in one YAML file (docs/SCENARIOS.md).

s = load_file("scenarios/step.yaml")       # or find_scenario("step")
s = with_overrides(s, {"workers": 4})      # what run's flags do
worker_flags(s)                            # --stages ... for every worker
to_yaml(s), scenario_hash(s)               # what --print-scenario shows; its id
"""

from __future__ import annotations

from .canonical import canonical_json, resolved, scenario_hash, to_yaml
from .errors import Problem, ScenarioError
from .figures import FIGURE_HELP, FIGURES
from .flags import (
    FLAGS_NAME,
    OVERRIDES,
    from_flags,
    run_seconds,
    stages_bps,
    with_overrides,
    worker_flags,
)
from .loader import from_data, load_file, load_text
from .model import Bound, Destination, Scenario, Search, SearchBounds, Stage
from .shipped import SHIPPED_DIR, find_scenario, shipped_names

__all__ = [
    "FIGURES",
    "FIGURE_HELP",
    "FLAGS_NAME",
    "OVERRIDES",
    "SHIPPED_DIR",
    "Bound",
    "Destination",
    "Problem",
    "Scenario",
    "ScenarioError",
    "Search",
    "SearchBounds",
    "Stage",
    "canonical_json",
    "find_scenario",
    "from_data",
    "from_flags",
    "load_file",
    "load_text",
    "resolved",
    "run_seconds",
    "scenario_hash",
    "shipped_names",
    "stages_bps",
    "to_yaml",
    "with_overrides",
    "worker_flags",
]
