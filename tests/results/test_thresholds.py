"""thresholds.check: each bound that does not hold, named with its value."""

from __future__ import annotations

import pytest

from elastic_channels.results.thresholds import FIGURE_NAMES, ThresholdError, check, evaluate

FIGURES = {"ack_p99_ms": 1500.0, "mb_per_s": 9.0, "lost": 0, "visible_p99_ms": None}


def test_a_max_holds_at_and_under_it_and_fails_over_it() -> None:
    assert check({"ack_p99_ms": {"max": 2000}}, FIGURES) == []
    assert check({"ack_p99_ms": {"max": 1500}}, FIGURES) == []  # at the bound: held
    (f,) = check({"ack_p99_ms": {"max": 1000}}, FIGURES)
    assert (f.figure, f.bound, f.limit, f.value, f.held) == ("ack_p99_ms", "max", 1000, 1500, False)
    assert str(f) == "ack_p99_ms 1500 is over its max 1000"


def test_a_min_holds_at_and_over_it_and_fails_under_it() -> None:
    assert check({"mb_per_s": {"min": 9}}, FIGURES) == []
    (f,) = check({"mb_per_s": {"min": 9.5}}, FIGURES)
    assert (f.figure, f.bound, f.limit, f.value) == ("mb_per_s", "min", 9.5, 9.0)
    assert str(f) == "mb_per_s 9 is under its min 9.5"


def test_both_bounds_each_checked() -> None:
    assert check({"mb_per_s": {"min": 8, "max": 10}}, FIGURES) == []
    (f,) = check({"mb_per_s": {"min": 9.5, "max": 10}}, FIGURES)
    assert f.bound == "min"
    (f,) = check({"mb_per_s": {"min": 1, "max": 5}}, FIGURES)
    assert f.bound == "max"
    outcomes = evaluate({"mb_per_s": {"min": 1, "max": 5}, "lost": {"max": 0}}, FIGURES)
    assert [(o.figure, o.bound, o.held) for o in outcomes] == [
        ("mb_per_s", "max", False), ("mb_per_s", "min", True), ("lost", "max", True),
    ]  # fmt: skip


def test_a_figure_not_measured_fails_its_bound() -> None:
    """A gate that cannot be checked does not pass: None, or absent from the figures."""
    (f,) = check({"visible_p99_ms": {"max": 5000}}, FIGURES)
    assert f.value is None and not f.held
    assert str(f) == "visible_p99_ms was not measured in this run, so its max 5000 does not hold"
    (f,) = check({"duplicates": {"max": 0}}, FIGURES)  # absent
    assert f.figure == "duplicates" and f.value is None
    assert f.as_dict()["measured"] is False


def test_a_bound_of_none_is_not_set() -> None:
    """As a scenario's Bound holds an unset bound (msgspec.to_builtins of it)."""
    assert check({"mb_per_s": {"min": 8, "max": None}}, FIGURES) == []
    (f,) = check({"mb_per_s": {"min": None, "max": 5}}, FIGURES)
    assert (f.bound, f.limit) == ("max", 5)
    with pytest.raises(ThresholdError, match=r"thresholds.lost: expected \{max: X\}"):
        check({"lost": {"min": None, "max": None}}, FIGURES)


def test_no_thresholds_no_failures() -> None:
    assert check(None, FIGURES) == [] and check({}, FIGURES) == []


@pytest.mark.parametrize(
    ("block", "said"),
    [
        ({"ack_p98_ms": {"max": 1}}, "thresholds.ack_p98_ms: unknown figure 'ack_p98_ms'; known: "),
        ({"ack_p99_ms": {"below": 1}}, "thresholds.ack_p99_ms: unknown bound 'below'"),
        ({"ack_p99_ms": {"max": "fast"}}, "thresholds.ack_p99_ms.max: expected a finite number"),
        ({"ack_p99_ms": {"max": True}}, "thresholds.ack_p99_ms.max: expected a finite number"),
        ({"ack_p99_ms": {"max": float("nan")}}, "thresholds.ack_p99_ms.max: expected a finite"),
        ({"ack_p99_ms": {}}, r"thresholds.ack_p99_ms: expected \{max: X\} and/or \{min: Y\}"),
        ({"ack_p99_ms": 2000}, r"thresholds.ack_p99_ms: expected \{max: X\}"),
        ({"mb_per_s": {"min": 10, "max": 5}}, "thresholds.mb_per_s: min 10 is above max 5"),
        (["ack_p99_ms"], "thresholds: expected a mapping of figure to bounds, got list"),
    ],
)
def test_a_block_that_cannot_be_checked_is_an_error_naming_it(block, said) -> None:
    with pytest.raises(ThresholdError, match=said):
        check(block, FIGURES)


def test_the_figure_names_are_the_specs() -> None:
    assert FIGURE_NAMES == (
        "mb_per_s", "rows_per_s", "pct_of_target", "ack_p50_ms", "ack_p99_ms", "behind_p99_ms",
        "visible_p99_ms", "lost", "duplicates", "errors", "resent_batches", "sdk_retries",
        "cpu_s_per_gb", "peak_rss_mib",
    )  # fmt: skip
