"""The one list of figures a threshold can name, and who else names them."""

from __future__ import annotations

from pathlib import Path

import pytest

from elastic_channels.results.thresholds import FIGURE_NAMES
from elastic_channels.scenario import FIGURE_HELP, FIGURES, ScenarioError, load_text

DOC = Path(__file__).resolve().parents[2] / "docs" / "SCENARIOS.md"


def test_the_results_check_the_same_figures_a_scenario_may_name() -> None:
    assert tuple(FIGURE_NAMES) == FIGURES


def test_every_figure_is_described_here_and_in_the_docs() -> None:
    doc = DOC.read_text()
    for figure in FIGURES:
        assert FIGURE_HELP[figure]
        assert f"| `{figure}` |" in doc, figure


def test_a_threshold_may_name_each_figure_and_no_other() -> None:
    lines = "".join(f"  {f}: {{max: 1}}\n" for f in FIGURES)
    s = load_text("name: t\nstages: [{seconds: 1, mbps: 1}]\nthresholds:\n" + lines)
    assert tuple(s.thresholds) == FIGURES
    bad = "name: t\nstages: [{seconds: 1, mbps: 1}]\nthresholds: {mbps: {max: 1}}\n"
    with pytest.raises(ScenarioError, match=r"thresholds\.mbps: not a figure a threshold can name"):
        load_text(bad)
