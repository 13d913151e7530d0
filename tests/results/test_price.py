"""The run's ingest price: billable GB (the values' bytes, warmup included) times the
credits per GB, times the user's price of a credit; the settings; the summary's line;
``runs`` and ``compare`` showing them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elastic_channels import results
from elastic_channels.cli import main
from elastic_channels.results.derive import figures_of
from elastic_channels.results.price import (
    CREDITS_PER_GB,
    PRICE_SETTINGS,
    billable_figures,
    price_line,
    price_settings,
)
from elastic_channels.setting import SettingError

T0 = 1_800_000_000.0


def billed(make_result, run_id: str = "run-b", **extra):
    """A result whose two workers counted 40e9 + 10e9 billable bytes (and 5e9 in warmup)."""
    result = make_result(run_id, started_at=T0, **extra)
    counts = [(40_000_000_000, 5_000_000_000), (10_000_000_000, 0)]
    for s, (run, warm) in zip(result["worker_summaries"], counts, strict=True):
        s["billable_bytes"], s["warmup_billable_bytes"] = run, warm
    return result


def test_the_settings_default_to_the_published_rate_and_no_dollar_figure() -> None:
    assert price_settings({}, {}) == {"credits_per_gb": 0.0037, "price_per_credit": None}
    env = {"INGEST_CREDITS_PER_GB": "0.004", "PRICE_PER_CREDIT": "3"}
    assert price_settings({}, env) == {"credits_per_gb": 0.004, "price_per_credit": 3.0}
    assert price_settings({"price_per_credit": 2.5}, env)["price_per_credit"] == 2.5
    with pytest.raises(SettingError, match="PRICE_PER_CREDIT must be"):
        price_settings({}, {"PRICE_PER_CREDIT": "-1"})
    helps = {s.name: s.help_text() for s in PRICE_SETTINGS}
    assert "effective 2026-01-13" in helps["credits_per_gb"] and "0.0037" in helps["credits_per_gb"]
    assert "no default is guessed" in helps["price_per_credit"].lower()


def test_billable_figures_count_warmup_and_price_only_with_a_price(make_result) -> None:
    result = billed(make_result)
    figures, _ = figures_of(result)
    assert figures["billable_gb"] == 55.0
    assert figures["ingest_credits"] == pytest.approx(55 * CREDITS_PER_GB)
    assert figures["ingest_cost"] is None  # no price per credit: credits only
    priced, _ = figures_of({**result, "price": {"credits_per_gb": 0.004, "price_per_credit": 3}})
    assert (priced["ingest_credits"], priced["ingest_cost"]) == (0.22, 0.66)
    unknown, _ = figures_of(make_result("run-old"))  # recorded before billable bytes were
    assert unknown["billable_gb"] is unknown["ingest_cost"] is None


def test_the_summary_line_says_gb_credits_source_and_dollars() -> None:
    figures = billable_figures([{"billable_bytes": 2_000_000_000}], {"price_per_credit": 3.0})
    line = price_line(figures, {"credits_per_gb": 0.0037, "price_per_credit": 3.0})
    assert line == (
        "billable: 2 GB of values -> 0.0074 credits (at 0.0037 credits/GB, Snowflake's "
        "consumption table, effective 2026-01-13) = $0.02 at $3 a credit"
    )
    no_price = price_line(billable_figures([{"billable_bytes": 2_000_000_000}], None), None)
    assert no_price is not None and no_price.endswith("for the cost in dollars")
    assert price_line({"billable_gb": None}, None) is None


def test_runs_and_compare_show_billable_gb_and_cost(
    tmp_path: Path, make_result, capsys, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    home = tmp_path / "home"
    price = {"credits_per_gb": 0.0037, "price_per_credit": 2.0}
    a = results.record(billed(make_result, "run-a"), home)
    b = results.record(billed(make_result, "run-b", price=price), home)
    assert main(["runs", "--home", str(home), "--json"]) == 0
    listed = {x["run_id"]: x for x in json.loads(capsys.readouterr().out)}
    assert listed["run-b"]["ingest_cost"] == pytest.approx(55 * 0.0037 * 2, abs=1e-4)
    assert main(["runs", "--home", str(home)]) == 0
    lines = capsys.readouterr().out.splitlines()
    by_id = {line.split()[2]: line.split() for line in lines[2:]}
    assert by_id["run-b"][-2:] == ["55.000", "$0.41"]
    assert by_id["run-a"][-3:] == ["55.000", "0.2035", "cr"]
    assert main(["compare", str(a), str(b), "--json"]) == 0
    rows = {x["figure"]: x["values"] for x in json.loads(capsys.readouterr().out)["figures"]}
    assert rows["billable_gb"] == [55.0, 55.0]
    assert rows["ingest_cost"][0] is None and rows["ingest_cost"][1] == pytest.approx(0.407)


def test_run_refuses_a_bad_price_before_it_starts(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PRICE_PER_CREDIT", "abc")
    assert main(["run", "--duration-seconds", "1"]) == 2
    err = capsys.readouterr().err
    assert "PRICE_PER_CREDIT must be" in err and "'abc'" in err
    assert not (tmp_path / ".elastic-channels").exists()  # no emulator, no worker started
