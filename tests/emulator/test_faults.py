"""The fault table: by count, by probability, per endpoint, in order."""

from __future__ import annotations

import pytest

from elastic_channels.emulator.http.faults import FaultTable


def test_count_is_used_up_then_the_fault_is_gone():
    table = FaultTable()
    table.add("rows", "status", status=503, count=3)
    fired = [table.take("rows") for _ in range(4)]
    assert [f and f.status for f in fired] == [503, 503, 503, None]
    assert table.snapshot() == [] and table.pending() == 0


def test_faults_match_their_endpoint_or_any_in_order():
    table = FaultTable()
    table.add("pipe_info", "drop")
    table.add("any", "status", status=500)
    assert table.take("rows").action == "status"
    assert table.take("pipe_info").action == "drop"
    assert table.take("pipe_info") is None


def test_probability_is_seeded_and_roughly_right():
    table = FaultTable(seed=7)
    table.add("rows", "delay", delay_s=0.01, count=None, probability=0.25)
    fired = sum(table.take("rows") is not None for _ in range(2000))
    assert 400 < fired < 600
    again = FaultTable(seed=7)
    again.add("rows", "delay", delay_s=0.01, count=None, probability=0.25)
    assert sum(again.take("rows") is not None for _ in range(2000)) == fired


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ({"endpoint": "nope", "action": "drop"}, "unknown endpoint 'nope'"),
        ({"endpoint": "rows", "action": "explode"}, "unknown action 'explode'"),
        ({"endpoint": "rows", "action": "status", "status": 418}, "status must be one of"),
        ({"endpoint": "rows", "action": "drop", "count": 0}, "count must be"),
        ({"endpoint": "rows", "action": "drop", "probability": 0}, "probability"),
        ({"endpoint": "rows", "action": "drop", "when": 1}, "unknown fault field"),
        ({"action": "drop"}, "needs 'endpoint' and 'action'"),
    ],
)
def test_bad_specs_are_refused_clearly(spec, why):
    with pytest.raises(ValueError, match=why):
        FaultTable().add_spec(spec)
