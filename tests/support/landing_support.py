"""Spool + lander + a store, without HTTP: shared by the store-level landing tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from elastic_channels.emulator.api.stats import Stats
from elastic_channels.emulator.landing.lander import Lander
from elastic_channels.rows import ResortGenerator

#: The channel the tests' requests come on.
KEY = ("DB", "PUBLIC", "PIPE", "ELASTIC")
#: A sale time (µs since the epoch) for generated rows.
T_US = 1_700_000_000_000_000


def work_dir(data_dir: Path) -> Path:
    """The work dir the lander's SQL path writes to (beside ``spool``, as in serve)."""
    work = data_dir / "spool-work"
    work.mkdir(parents=True, exist_ok=True)
    return work


def count_rows(store: Any, where: str = "TRUE") -> int:
    """Rows of ``RESORT_SALES`` in ``store`` that meet ``where``."""
    return store.query(f"SELECT count(*) FROM RESORT_SALES WHERE {where}")[1][0][0]


@contextmanager
def running_lander(data_dir: Path, store: Any) -> Iterator[tuple[Any, Stats, Lander]]:
    """(store, stats, lander): a lander started on ``data_dir/spool`` into ``store``;
    afterwards the lander stopped and the store closed."""
    stats = Stats()
    lander = Lander(data_dir / "spool", store, stats, fsync=False)
    lander.start()
    try:
        yield store, stats, lander
    finally:
        lander.stop(10)
        store.close()


def put_each(lander: Lander, bodies: Iterable[bytes], prefix: str) -> None:
    """Each body a request of its own (``{prefix}{i}``), each landed as its own batch."""
    for i, body in enumerate(bodies):
        lander.put(KEY, f"{prefix}{i}", body, "identity", len(body))
        assert lander.wait_idle(30)


def land_each(store: Any, data_dir: Path, bodies: Iterable[bytes], prefix: str) -> None:
    """Each body a request of its own (``prefix-i``), each request its own landing batch;
    the lander stopped afterwards, the store left open."""
    lander = Lander(data_dir / "spool", store, Stats(), fsync=False)
    lander.start()
    try:
        put_each(lander, bodies, f"{prefix}-")
    finally:
        lander.stop(10)


def mixed_body(
    run_id: str, good: int, more_bad: Callable[[dict], list[dict]] = lambda row: []
) -> bytes:
    """``good`` generated rows of ``run_id``, then bad ones made from the first: an
    unknown key, AMOUNT missing, a SALE_TIME that is no time, then ``more_bad(row)``."""
    rows = ResortGenerator(run_id, 0).next_batch(good, T_US)
    row = json.loads(rows.splitlines()[0])
    bad = [
        {**row, "TXID": "x1", "SURPRISE": True},
        {k: v for k, v in row.items() if k != "AMOUNT"},
        {**row, "SALE_TIME": "not a time"},
        *more_bad(row),
    ]
    return rows + b"".join(json.dumps(b).encode() + b"\n" for b in bad)
