"""A column's value may not be null (every landing column is NOT NULL, and the emulator
refuses a null): the workload is refused at the key, naming the column; a VARIANT keeps
null inside an object or array."""

from __future__ import annotations

import pytest

from elastic_channels.workload import WorkloadError, from_data

BASE = {"name": "n", "description": "d", "table": "T"}


@pytest.mark.parametrize("source", [{"choice": {"values": [None, 1]}}, {"constant": None}])
def test_a_top_level_null_in_a_variant_column_is_refused(source):
    with pytest.raises(WorkloadError, match=r"columns\[0\] \(V\).*null is not a column's value"):
        from_data({**BASE, "columns": [{"name": "V", "type": "VARIANT", **source}]}, "w.yaml")


def test_null_inside_a_variant_is_kept():
    w = from_data(
        {**BASE, "columns": [{"name": "V", "type": "VARIANT",
                              "choice": {"values": [[None], {"a": None}]}}]},
        "w.yaml",
    )  # fmt: skip
    assert [c.name for c in w.columns] == ["V"]
