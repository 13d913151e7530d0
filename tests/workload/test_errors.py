"""Bad workload files: one WorkloadError naming the file, the line, the column and the
key, never a traceback from deeper down (issue #25 item 2)."""

from __future__ import annotations

import pytest

from elastic_channels.workload import WorkloadError, load_file, load_text, load_workload

HEAD = """\
name: t
description: d
table: T
columns:
  - {name: ID, type: VARCHAR, unique_id: {}}
"""
PARENT = "  - {name: P, type: VARCHAR, choice: {values: [a, b]}}\n"

#: (the columns after ID, the error's expected text after "t.yaml:")
CASES = {
    "unknown key": (
        "  - name: A\n    type: VARCHAR\n    choice: {values: [a], bogus: 1}\n",
        "8: columns[1] (A): choice.bogus: not a key this mapping takes",
    ),
    "two sources": (
        "  - {name: A, type: VARCHAR, choice: {values: [a]}, constant: x}\n",
        "6: columns[1] (A): needs exactly one source key, got 2 (choice, constant)",
    ),
    "no source": ("  - {name: A, type: VARCHAR}\n", "6: columns[1] (A): needs exactly one source"),
    "unknown type": (
        "  - {name: A, type: NUMBR(3), constant: 1}\n",
        "6: columns[1] (A): type: unknown type 'NUMBR'",
    ),
    "scale over precision": (
        "  - {name: A, type: 'NUMBER(2,3)', constant: 1}\n",
        "6: columns[1] (A): type: NUMBER scale must be at most its precision (2), got 3",
    ),
    "weights count": (
        "  - name: A\n    type: VARCHAR\n    choice: {values: [a, b], weights: [1]}\n",
        "8: columns[1] (A): choice.weights: 1 weights for 2 values",
    ),
    "negative weight": (
        "  - name: A\n    type: VARCHAR\n    choice:\n"
        "      values: [a, b]\n      weights: [1, -2]\n",
        "10: columns[1] (A): choice.weights[1]: must not be negative",
    ),
    "zero weights": (
        "  - {name: A, type: VARCHAR, choice: {values: [a], weights: [0]}}\n",
        "6: columns[1] (A): choice.weights: must not all be zero",
    ),
    "min over max": (
        "  - name: A\n    type: NUMBER(5,2)\n    range:\n      min: 50\n      max: 40\n",
        "9: columns[1] (A): range.min: must be at most max (50 > 40)",
    ),
    "finer than the scale": (
        "  - name: A\n    type: NUMBER(5,2)\n    range: {min: 0.001, max: 40}\n",
        "8: columns[1] (A): range.min: 0.001 has more decimal places than the scale (2)",
    ),
    "float range without scale": (
        "  - {name: A, type: FLOAT, range: {min: 0, max: 1}}\n",
        "6: columns[1] (A): range: a FLOAT range needs scale",
    ),
    "too many digits": (
        "  - {name: A, type: 'NUMBER(3,1)', constant: 123.4}\n",
        "6: columns[1] (A): constant: 123.4 has more than 2 digits before the point",
    ),
    "boolean for a string": (
        "  - {name: A, type: VARCHAR, choice: {values: [true, b]}}\n",
        "6: columns[1] (A): choice.values[0]: expected a string, got a boolean",
    ),
    "string for a number": (
        "  - {name: A, type: 'NUMBER(3,0)', choice: {values: [1, two]}}\n",
        "6: columns[1] (A): choice.values[1]: expected a number, got 'two'",
    ),
    "by an unknown column": (
        "  - name: A\n    type: VARCHAR\n    choice: {by: Z, cases: {a: {values: [x]}}}\n",
        "8: columns[1] (A): choice.by: 'Z' is not an earlier choice column",
    ),
    "case for no value": (
        PARENT + "  - name: A\n    type: VARCHAR\n    choice:\n      by: P\n      cases:\n"
        "        a: {values: [x]}\n        b: {values: [x]}\n        c: {values: [y]}\n",
        "14: columns[2] (A): choice.cases.c: 'c' is not a value of P",
    ),
    "value without a case": (
        PARENT + "  - name: A\n    type: VARCHAR\n    choice:\n      by: P\n      cases:\n"
        "        a: {values: [x]}\n",
        '11: columns[2] (A): choice.cases: no case for 1 value(s) of P ("b")',
    ),
    "bad case": (
        PARENT + "  - name: A\n    type: VARCHAR\n    choice:\n      by: P\n      cases:\n"
        "        a: {values: [x]}\n        b: {values: 3}\n",
        "13: columns[2] (A): choice.cases.b.values: expected a list, got an integer",
    ),
    "bad field deep in a variant": (
        "  - name: V\n    type: VARIANT\n    object:\n      ok: {constant: 1}\n"
        "      deep:\n        object:\n          x: {range: {min: 1}}\n",
        "12: columns[1] (V): object.deep.object.x.range: the key max is missing",
    ),
    "unknown key in a variant field": (
        "  - name: V\n    type: VARIANT\n    object:\n      bad: {bogus: 2}\n",
        "9: columns[1] (V): object.bad.bogus: not a key this mapping takes",
    ),
    "array with items and of": (
        "  - {name: V, type: VARIANT, array: {items: [], of: {constant: 1}}}\n",
        "6: columns[1] (V): array: give items (fixed elements) or of (a repeated one)",
    ),
    "key given twice": (
        "  - name: V\n    type: VARIANT\n    type: VARCHAR\n",
        "8: columns[1]: type: given twice (first on line 7)",
    ),
    "name given twice": (
        "  - {name: ID, type: VARCHAR, constant: x}\n",
        "6: columns[1] (ID): name: 'ID' is declared twice",
    ),
    "two unique ids": (
        "  - {name: ID2, type: VARCHAR, unique_id: {}}\n",
        "6: columns[1] (ID2): unique_id: only one column may be the unique_id",
    ),
    "send time into a number": (
        "  - {name: T, type: 'NUMBER(10,0)', send_time: {}}\n",
        "6: columns[1] (T): send_time: send_time cannot fill a NUMBER(10,0) column",
    ),
    "worker id too narrow": (
        "  - {name: W, type: 'NUMBER(5,0)', worker_id: {}}\n",
        "6: columns[1] (W): worker_id: worker ids need NUMBER(p,0) with p >= 10",
    ),
    "a dynamic source in a variant": (
        "  - name: V\n    type: VARIANT\n    object:\n      t: {send_time: {}}\n",
        "9: columns[1] (V): object.t.send_time: not a key this mapping takes",
    ),
    "a table too big": (
        "  - {name: X, type: VARCHAR, text: {min_length: 1, max_length: 1000000}}\n",
        "6: columns[1] (X): text: the replay table could take",
    ),
    "timestamp without offset": (
        "  - {name: X, type: TIMESTAMP_TZ, constant: '2024-01-01T00:00:00'}\n",
        "6: columns[1] (X): constant: 2024-01-01T00:00:00 has no UTC offset",
    ),
    "unknown builtin field": (
        "  - {name: X, type: VARCHAR, builtin: {table: resort-sales, field: NOPE}}\n",
        "6: columns[1] (X): builtin.field: resort-sales has no field 'NOPE'",
    ),
    "control character in a name": (
        '  - {name: "A\\tB", type: VARCHAR, constant: x}\n',
        "6: columns[1] (A\tB): name: 'A\\tB' holds the control character '\\t'",
    ),
    "null source": (
        "  - name: X\n    type: VARCHAR\n    choice:\n",
        "8: columns[1] (X): choice: expected a mapping, got null",
    ),
}


@pytest.mark.parametrize("columns, expected", CASES.values(), ids=CASES.keys())
def test_bad_file_names_the_line_column_and_key(tmp_path, columns, expected):
    path = tmp_path / "t.yaml"
    path.write_text(HEAD + columns, encoding="utf-8")
    with pytest.raises(WorkloadError) as info:
        load_file(path)
    assert str(info.value).startswith(f"{path}:{expected}"), str(info.value)
    assert info.value.origin == str(path)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("- a\n- b\n", "t.yaml:1: a workload is a mapping"),
        ("name: t\n", "t.yaml:1: the key description is missing"),
        ("name: [t\n", "t.yaml:2: not valid YAML"),
        (HEAD.replace("table: T", "table: ''"), "t.yaml:3: table: must be 1 to 255"),
        (HEAD + "entries: 0\n", "t.yaml:6: entries: must be between 1 and 65536"),
        (HEAD.replace("description: d", "description: ' '"), "t.yaml:2: description: must say"),
        (
            HEAD.replace("  - {name: ID, type: VARCHAR, unique_id: {}}\n", "  []\n"),
            "t.yaml:4: columns",
        ),
    ],
    ids=[
        "list",
        "missing keys",
        "syntax",
        "empty table",
        "entries",
        "blank description",
        "no columns",
    ],
)
def test_bad_top_level(text, expected):
    with pytest.raises(WorkloadError) as info:
        load_text(text, "t.yaml")
    assert str(info.value).startswith(expected), str(info.value)


def test_unreadable_and_unknown_files(tmp_path):
    with pytest.raises(WorkloadError, match=r"nope\.yaml: cannot read it"):
        load_workload(tmp_path / "nope.yaml")
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(WorkloadError, match=r"latin\.yaml: not UTF-8 text"):
        load_workload(str(latin))
    with pytest.raises(WorkloadError, match=r"no shipped workload 'iot'.*resort-sales"):
        load_workload("iot")
