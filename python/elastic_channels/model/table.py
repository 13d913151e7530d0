"""The resolved table the generators replay, and its fingerprint.

At import a weighted table of ``TABLE_LENGTH`` fully resolved sales is built from the
profiles, deterministically (the only randomness is one fixed-seed shuffle). Row
``seq`` of worker ``w`` replays entry ``(w * WORKER_STRIDE + seq) % TABLE_LENGTH``, so
there is no RNG and no arithmetic per row. ``codegen/generate_tables.py`` bakes this
same table into ``src/tables.rs``.
"""

from __future__ import annotations

import hashlib
import random
from typing import TypeVar

import msgspec

from .profiles import (
    CATEGORIES,
    CATEGORY_MIXES,
    DAY_TICKET,
    ITEMS,
    NON_PASSHOLDER_MIX,
    PASSHOLDER,
    PAYMENT_MIX,
    PRICE_TIERS,
    QUANTITIES,
    RESORTS,
)
from .schema import (
    MAX_BATCH_ROWS,
    MAX_RUN_ID_CHARS,
    MAX_SALE_TIME_US,
    MAX_SEQ,
    MAX_WORKER_ID,
    MIN_SALE_TIME_US,
    TXID_SEPARATOR,
    ResortSale,
)

TABLE_LENGTH = 8192
#: Worker w starts at table index (w * WORKER_STRIDE) % TABLE_LENGTH. The stride is
#: odd (coprime with the power-of-two length), near the golden ratio of the length,
#: so neighbouring workers start far apart and never replay in lockstep.
WORKER_STRIDE = 5063
_SHUFFLE_SEED = 20261130


def _apportion(total: int, weights: list[int]) -> list[int]:
    """Split ``total`` by ``weights`` exactly (largest remainder, ties by index)."""
    s = sum(weights)
    quotas = [total * w for w in weights]
    counts = [q // s for q in quotas]
    order = sorted(range(len(weights)), key=lambda i: (-(quotas[i] % s), i))
    for i in order[: total - sum(counts)]:
        counts[i] += 1
    return counts


def _spread(labels: list[str], counts: list[int]) -> list[str]:
    """Interleave labels evenly (smooth weighted round robin), deterministic."""
    out: list[str] = []
    current = [0] * len(counts)
    total = sum(counts)
    for _ in range(total):
        for i, c in enumerate(counts):
            current[i] += c
        best = max(range(len(counts)), key=lambda i: (current[i], -i))
        current[best] -= total
        out.append(labels[best])
    return out


T = TypeVar("T")


def _weighted(rng: random.Random, pairs: tuple[tuple[T, int], ...]) -> T:
    values = [v for v, _ in pairs]
    weights = [w for _, w in pairs]
    return rng.choices(values, weights)[0]


#: One resolved sale: everything but TXID, SALE_TIME, RUN_ID and WORKER_ID.
#: (resort, category, item, customer_type, payment_method, quantity,
#:  unit_price_cents, amount_cents)
Entry = tuple[str, str, str, str, str, int, int, int]


def _build_table() -> tuple[Entry, ...]:
    rng = random.Random(_SHUFFLE_SEED)
    entries: list[Entry] = []
    slots = _apportion(TABLE_LENGTH, [r.volume for r in RESORTS])
    for resort, n in zip(RESORTS, slots, strict=False):
        mix = CATEGORY_MIXES[resort.mix]
        cats = _spread(list(CATEGORIES), _apportion(n, list(mix)))
        n_pass = round(n * resort.passholder_pct / 100)
        n_day = cats.count(DAY_TICKET)
        if n_pass > n - n_day:
            raise ValueError(f"{resort.name}: passholder share exceeds non-day-ticket sales")
        # Passholders never buy day tickets: they take the first n_pass
        # non-day-ticket slots; everyone else takes the rest.
        order = [c for c in cats if c != DAY_TICKET] + [DAY_TICKET] * n_day
        others = _spread(
            [t for t, _ in NON_PASSHOLDER_MIX],
            _apportion(n - n_pass, [w for _, w in NON_PASSHOLDER_MIX]),
        )
        customers = [PASSHOLDER] * n_pass + others
        multiplier = PRICE_TIERS[resort.tier]
        for category, customer in zip(order, customers, strict=False):
            item, base_cents = rng.choice(ITEMS[category])
            quantity = _weighted(rng, QUANTITIES[category])
            payment = _weighted(rng, PAYMENT_MIX[customer])
            unit_cents = (base_cents * multiplier + 50) // 100
            entries.append(
                (
                    resort.name,
                    category,
                    item,
                    customer,
                    payment,
                    quantity,
                    unit_cents,
                    unit_cents * quantity,
                )
            )
    rng.shuffle(entries)
    return tuple(entries)


TABLE: tuple[Entry, ...] = _build_table()
assert len(TABLE) == TABLE_LENGTH


def _row_fields(e: Entry) -> tuple[str, str, str, str, str, int, float, float]:
    """The eight middle columns of a row, prices as floats in currency units."""
    return (e[0], e[1], e[2], e[3], e[4], e[5], e[6] / 100, e[7] / 100)


ROW_FIELDS = tuple(_row_fields(e) for e in TABLE)


def table_fingerprint() -> str:
    """SHA-256 over everything generation depends on, as msgspec renders it."""
    h = hashlib.sha256()
    enc = msgspec.json.encode
    h.update(
        enc(
            [
                ResortSale.__struct_fields__,
                TABLE_LENGTH,
                WORKER_STRIDE,
                TXID_SEPARATOR,
                [MAX_WORKER_ID, MAX_SEQ, MAX_BATCH_ROWS, MAX_RUN_ID_CHARS],
                [MIN_SALE_TIME_US, MAX_SALE_TIME_US],
            ]
        )
    )
    for fields in ROW_FIELDS:
        h.update(enc(fields))
    return h.hexdigest()
