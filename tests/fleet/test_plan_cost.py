"""plan shows what the fleet costs an hour: the ingest (values' bytes x credits per GB x
the price of a credit) beside the nodes (issue #32 item 4); no dollar figure is guessed."""

from __future__ import annotations

import json

import pytest

from elastic_channels.fleet.plan import main
from elastic_channels.fleet.plan_cost import billable_share, hourly_cost


def test_the_ingest_is_the_values_bytes_times_the_rate() -> None:
    share = billable_share()
    assert 0.2 < share < 0.6  # resort rows: about a third of the NDJSON is values
    c = hourly_cost(41.8, 15, {"credits_per_gb": 0.0037, "price_per_credit": 3.0}, 1.3, share)
    gb = 41.8 * 3600 * share
    assert c["billable_gb_per_hour"] == pytest.approx(gb, abs=0.1)
    assert c["ingest_credits_per_hour"] == pytest.approx(gb * 0.0037, abs=0.01)
    assert c["ingest_dollars_per_hour"] == pytest.approx(gb * 0.0037 * 3, abs=0.01)
    assert c["nodes_dollars_per_hour"] == pytest.approx(19.5)


def test_plan_prints_credits_without_a_price_and_dollars_with_one(capsys) -> None:
    assert main(["--target-gbps", "41.8", "--json"]) == 0
    cost = json.loads(capsys.readouterr().out)["cost"]
    assert cost["ingest_credits_per_hour"] > 0
    assert cost["ingest_dollars_per_hour"] is None and cost["nodes_dollars_per_hour"] is None
    assert main(["--target-gbps", "41.8", "--price-per-credit", "3",
                 "--node-price-per-hour", "1.3"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "credits an hour = $" in out and "at $3 a credit" in out
    assert "nodes: 15 x $1.3 = $19.50 an hour" in out
