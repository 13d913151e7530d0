"""The resort point-of-sale model: the single source of truth.

Everything about what a sale looks like lives here: the 42 resorts and their sales
profiles, the four product categories with their items and base prices, customer
types, payment methods, quantity distributions and price tiers. At import a weighted
table of ``TABLE_LENGTH`` fully resolved sales is built, deterministically (the only
randomness is a fixed-seed shuffle done once). Generation replays that table
round-robin by sequence number, so there is no RNG and no arithmetic per row.

``codegen/generate_tables.py`` reads this file and bakes the same resolved table
into ``src/tables.rs``; the native generator only replays it. The pure-Python
``ResortGenerator`` below is the fallback and the byte-parity oracle.
"""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import operator
import random

import msgspec

__all__ = [
    "CATEGORIES",
    "COLUMNS",
    "CUSTOMER_TYPES",
    "PAYMENT_METHODS",
    "RESORTS",
    "TABLE",
    "TABLE_LENGTH",
    "ResortGenerator",
    "ResortSale",
    "table_fingerprint",
]

# --- the schema -----------------------------------------------------------------


class ResortSale(msgspec.Struct, frozen=True, gc=False):
    """One sale, fields in the table's column order."""

    TXID: str
    RESORT: str
    CATEGORY: str
    ITEM: str
    CUSTOMER_TYPE: str
    PAYMENT_METHOD: str
    QUANTITY: int
    UNIT_PRICE: float
    AMOUNT: float
    SALE_TIME: _dt.datetime
    RUN_ID: str
    WORKER_ID: int


#: Snowflake column types for each field, in schema order. The setup SQL and the
#: emulator's table are derived from this, so the three cannot drift apart.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("TXID", "VARCHAR"),
    ("RESORT", "VARCHAR"),
    ("CATEGORY", "VARCHAR"),
    ("ITEM", "VARCHAR"),
    ("CUSTOMER_TYPE", "VARCHAR"),
    ("PAYMENT_METHOD", "VARCHAR"),
    ("QUANTITY", "NUMBER(9,0)"),
    ("UNIT_PRICE", "NUMBER(12,2)"),
    ("AMOUNT", "NUMBER(14,2)"),
    ("SALE_TIME", "TIMESTAMP_TZ"),
    ("RUN_ID", "VARCHAR"),
    ("WORKER_ID", "NUMBER(10,0)"),
)
assert tuple(c for c, _ in COLUMNS) == ResortSale.__struct_fields__

# --- limits on the generator's inputs (shared with the native generator) -------

MAX_WORKER_ID = 2**31 - 1
MAX_SEQ = 2**63 - 1  # the last sequence number a row may carry
MAX_BATCH_ROWS = 1_000_000
MAX_RUN_ID_CHARS = 128
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
MIN_SALE_TIME_US = (_dt.datetime(1, 1, 1, tzinfo=_dt.timezone.utc) - _EPOCH) // _dt.timedelta(
    microseconds=1
)
MAX_SALE_TIME_US = (
    _dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=_dt.timezone.utc) - _EPOCH
) // _dt.timedelta(microseconds=1)
TXID_SEPARATOR = "-"

# --- the business model ---------------------------------------------------------

SEASON_PASS, DAY_TICKET, FOOD_BEV, MERCH = CATEGORIES = (
    "SEASON_PASS",
    "DAY_TICKET",
    "FOOD_BEV",
    "MERCH",
)

#: Items per category with base prices in cents (STANDARD tier).
ITEMS: dict[str, tuple[tuple[str, int], ...]] = {
    SEASON_PASS: (
        ("Season Pass", 89900),
        ("Midweek Pass", 54900),
        ("Youth Pass", 39900),
        ("Senior Pass", 44900),
        ("4-Day Pass", 32900),
    ),
    DAY_TICKET: (
        ("Adult Day", 18900),
        ("Child Day", 9900),
        ("Senior Day", 12900),
        ("Half Day", 11900),
        ("Beginner", 4900),
        ("Adult 3-Day", 49900),
    ),
    FOOD_BEV: (
        ("Coffee", 495),
        ("Cocoa", 550),
        ("Burrito", 1395),
        ("Chili Bowl", 1695),
        ("Burger", 2195),
        ("Beer", 995),
        ("Pizza", 895),
        ("Water", 450),
    ),
    MERCH: (
        ("Beanie", 3400),
        ("Hoodie", 7900),
        ("Gloves", 6500),
        ("Goggles", 14900),
        ("Stickers", 800),
        ("Hand Warmers", 399),
    ),
}

#: Quantity distribution per category: (quantity, weight).
QUANTITIES: dict[str, tuple[tuple[int, int], ...]] = {
    SEASON_PASS: ((1, 85), (2, 12), (4, 3)),
    DAY_TICKET: ((1, 45), (2, 30), (3, 10), (4, 15)),
    FOOD_BEV: ((1, 55), (2, 30), (3, 10), (4, 5)),
    MERCH: ((1, 80), (2, 15), (3, 5)),
}

#: Price tier -> multiplier in percent of the STANDARD price.
PRICE_TIERS: dict[str, int] = {"VALUE": 85, "STANDARD": 100, "PREMIUM": 120, "LUXURY": 145}

PASSHOLDER = "PASSHOLDER"
CUSTOMER_TYPES = (PASSHOLDER, "DAY_GUEST", "LODGING", "STAFF")
#: How non-passholder sales split among the other customer types.
NON_PASSHOLDER_MIX: tuple[tuple[str, int], ...] = (
    ("DAY_GUEST", 62),
    ("LODGING", 33),
    ("STAFF", 5),
)

PAYMENT_METHODS = (
    "CREDIT",
    "DEBIT",
    "MOBILE",
    "CASH",
    "PASS_CHARGE",
    "ROOM_CHARGE",
    "STAFF_ACCT",
)
#: Payment mix depends on who is paying: passholders charge to their pass, lodging
#: guests to their room, employees to their account.
PAYMENT_MIX: dict[str, tuple[tuple[str, int], ...]] = {
    PASSHOLDER: (
        ("PASS_CHARGE", 45),
        ("CREDIT", 30),
        ("MOBILE", 20),
        ("DEBIT", 4),
        ("CASH", 1),
    ),
    "DAY_GUEST": (("CREDIT", 55), ("MOBILE", 20), ("DEBIT", 15), ("CASH", 10)),
    "LODGING": (("ROOM_CHARGE", 50), ("CREDIT", 35), ("MOBILE", 12), ("CASH", 3)),
    "STAFF": (("STAFF_ACCT", 70), ("CREDIT", 20), ("CASH", 10)),
}

#: Category mix archetypes, weights in percent in CATEGORIES order.
CATEGORY_MIXES: dict[str, tuple[int, int, int, int]] = {
    "destination": (8, 30, 42, 20),
    "local": (14, 22, 48, 16),
    "pass_heavy": (20, 15, 47, 18),
    "family": (6, 35, 44, 15),
}


class Resort(msgspec.Struct, frozen=True):
    """A resort and its deterministic sales profile."""

    name: str
    region: str
    volume: int  # relative sales volume
    mix: str  # key into CATEGORY_MIXES
    tier: str  # key into PRICE_TIERS
    passholder_pct: int  # share of sales made by passholders, in percent


def _r(name: str, region: str, volume: int, mix: str, tier: str, passholder_pct: int) -> Resort:
    return Resort(name, region, volume, mix, tier, passholder_pct)


RESORTS: tuple[Resort, ...] = (
    _r("Vail", "CO", 100, "destination", "LUXURY", 55),
    _r("Breckenridge", "CO", 95, "pass_heavy", "PREMIUM", 62),
    _r("Keystone", "CO", 60, "local", "STANDARD", 58),
    _r("Beaver Creek", "CO", 55, "destination", "LUXURY", 45),
    _r("Copper Mountain", "CO", 50, "local", "STANDARD", 52),
    _r("Winter Park", "CO", 58, "local", "STANDARD", 56),
    _r("Steamboat", "CO", 52, "destination", "PREMIUM", 40),
    _r("Telluride", "CO", 30, "destination", "LUXURY", 30),
    _r("Crested Butte", "CO", 25, "family", "PREMIUM", 35),
    _r("Arapahoe Basin", "CO", 28, "pass_heavy", "VALUE", 70),
    _r("Aspen Snowmass", "CO", 70, "destination", "LUXURY", 38),
    _r("Park City", "UT", 90, "destination", "PREMIUM", 50),
    _r("Deer Valley", "UT", 45, "destination", "LUXURY", 33),
    _r("Alta", "UT", 26, "pass_heavy", "STANDARD", 60),
    _r("Snowbird", "UT", 40, "local", "PREMIUM", 48),
    _r("Brighton", "UT", 22, "local", "VALUE", 55),
    _r("Jackson Hole", "WY", 48, "destination", "LUXURY", 36),
    _r("Big Sky", "MT", 50, "destination", "PREMIUM", 34),
    _r("Whitefish Mountain", "MT", 18, "family", "VALUE", 42),
    _r("Sun Valley", "ID", 24, "destination", "LUXURY", 30),
    _r("Schweitzer", "ID", 16, "family", "VALUE", 40),
    _r("Mammoth Mountain", "CA", 75, "pass_heavy", "PREMIUM", 58),
    _r("Palisades Tahoe", "CA", 70, "destination", "PREMIUM", 50),
    _r("Heavenly", "CA", 72, "destination", "PREMIUM", 46),
    _r("Northstar", "CA", 54, "family", "PREMIUM", 44),
    _r("Kirkwood", "CA", 20, "pass_heavy", "STANDARD", 64),
    _r("Mt. Bachelor", "OR", 30, "local", "STANDARD", 50),
    _r("Mt. Hood Meadows", "OR", 27, "local", "STANDARD", 47),
    _r("Crystal Mountain", "WA", 32, "pass_heavy", "STANDARD", 66),
    _r("Stevens Pass", "WA", 29, "pass_heavy", "STANDARD", 63),
    _r("Taos Ski Valley", "NM", 19, "family", "STANDARD", 32),
    _r("Stowe", "VT", 58, "destination", "PREMIUM", 48),
    _r("Killington", "VT", 66, "local", "STANDARD", 54),
    _r("Sugarbush", "VT", 24, "local", "STANDARD", 45),
    _r("Okemo", "VT", 34, "family", "STANDARD", 43),
    _r("Stratton", "VT", 31, "family", "PREMIUM", 41),
    _r("Sunday River", "ME", 36, "family", "STANDARD", 46),
    _r("Sugarloaf", "ME", 26, "local", "STANDARD", 44),
    _r("Loon Mountain", "NH", 23, "family", "VALUE", 39),
    _r("Whistler Blackcomb", "BC", 98, "destination", "LUXURY", 42),
    _r("Revelstoke", "BC", 21, "destination", "PREMIUM", 28),
    _r("Mont Tremblant", "QC", 47, "family", "PREMIUM", 37),
)

# --- the resolved table ----------------------------------------------------------

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


def _weighted(rng: random.Random, pairs: tuple[tuple[object, int], ...]) -> object:
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
    for resort, n in zip(RESORTS, slots):
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
        for category, customer in zip(order, customers):
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


# --- argument checks (the native generator raises the same classes) -------------


def _int_arg(name: str, value: object, lo: int, hi: int) -> int:
    try:
        v = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{name} must be an int, got {type(value).__name__}") from None
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be between {lo} and {hi}, got {v}")
    return v


def _check_run_id(run_id: object) -> str:
    if not isinstance(run_id, str):
        raise TypeError(f"run_id must be a str, got {type(run_id).__name__}")
    try:
        run_id.encode("utf-8")
    except UnicodeEncodeError as e:
        raise UnicodeEncodeError(
            e.encoding, e.object, e.start, e.end, f"run_id: {e.reason}"
        ) from None
    if len(run_id) > MAX_RUN_ID_CHARS:
        raise ValueError(f"run_id must be at most {MAX_RUN_ID_CHARS} characters, got {len(run_id)}")
    return run_id


def sale_time(sale_time_us: object) -> _dt.datetime:
    """The UTC datetime of ``sale_time_us`` (Unix epoch microseconds), checked."""
    us = _int_arg("sale_time_us", sale_time_us, MIN_SALE_TIME_US, MAX_SALE_TIME_US)
    return _EPOCH + _dt.timedelta(microseconds=us)


# --- the generator ----------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _middle_len_prefix_sums() -> list[int]:
    """Prefix sums of each entry's rendered length (its eight values, as one JSON
    array, which adds the same brackets and commas every row's keys replace)."""
    sums = [0]
    for fields in ROW_FIELDS:
        sums.append(sums[-1] + len(_ENCODER.encode(fields)))
    return sums


def _digits_in_range(start: int, n: int) -> int:
    """Total decimal digits of the integers ``start .. start + n - 1``."""
    total, lo, end = 0, start, start + n
    while lo < end:
        width = len(str(lo))
        hi = min(end, 10**width)
        total += (hi - lo) * width
        lo = hi
    return total


_ENCODER = msgspec.json.Encoder()


class ResortGenerator:
    """Deterministic sales for one worker: the pure-Python path.

    Row ``seq`` replays ``TABLE[(worker_offset + seq) % TABLE_LENGTH]`` with TXID
    ``f"{run_id}-{worker_id}-{seq}"``, unique across every (run_id, worker_id, seq).
    """

    __slots__ = ("_offset", "_run_id", "_seq", "_txid_prefix", "_worker_id")

    def __init__(self, run_id: str, worker_id: int, *, start_seq: int = 0) -> None:
        self._run_id = _check_run_id(run_id)
        self._worker_id = _int_arg("worker_id", worker_id, 0, MAX_WORKER_ID)
        self._seq = _int_arg("start_seq", start_seq, 0, MAX_SEQ)
        self._offset = self._worker_id * WORKER_STRIDE % TABLE_LENGTH
        self._txid_prefix = f"{run_id}{TXID_SEPARATOR}{self._worker_id}{TXID_SEPARATOR}"

    @property
    def seq(self) -> int:
        """The sequence number of the next row."""
        return self._seq

    def next_rows(self, n: int, sale_time_us: int) -> list[ResortSale]:
        """The next ``n`` sales, all stamped ``sale_time_us``.

        Arguments are checked in order (``n``, then ``sale_time_us``), then whether
        ``n`` more rows fit below ``MAX_SEQ``; the native generator checks alike.
        """
        n = _int_arg("n", n, 0, MAX_BATCH_ROWS)
        t = sale_time(sale_time_us)
        start = self._seq
        if n > MAX_SEQ + 1 - start:
            raise ValueError(f"n={n} would carry seq past {MAX_SEQ} (next seq is {start})")
        prefix, run_id, worker_id = self._txid_prefix, self._run_id, self._worker_id
        base = self._offset
        rows = [
            ResortSale(
                prefix + str(s),
                *ROW_FIELDS[(base + s) % TABLE_LENGTH],
                t,
                run_id,
                worker_id,
            )
            for s in range(start, start + n)
        ]
        self._seq = start + n
        return rows

    def batch_len(self, n: int, sale_time_us: int) -> int:
        """``len(self.next_batch(n, sale_time_us))``, computed without making the rows
        (so a caller that sends row objects can still meter exact bytes)."""
        n = _int_arg("n", n, 0, MAX_BATCH_ROWS)
        t = sale_time(sale_time_us)
        if n == 0:
            return 0
        sums = _middle_len_prefix_sums()
        # Everything in a row but TXID's digits and the eight table columns.
        fixed = (
            len(_ENCODER.encode(ResortSale("", *ROW_FIELDS[0], t, self._run_id, self._worker_id)))
            - (sums[1] - sums[0])
            + len(_ENCODER.encode(self._txid_prefix))
            - 2  # the prefix's quotes are the TXID's, already counted
            + 1  # newline
        )
        start = (self._offset + self._seq) % TABLE_LENGTH
        full, rest = divmod(n, TABLE_LENGTH)
        end = start + rest
        span = (
            sums[end] - sums[start]
            if end <= TABLE_LENGTH
            else (sums[TABLE_LENGTH] - sums[start] + sums[end - TABLE_LENGTH])
        )
        middle = full * sums[TABLE_LENGTH] + span
        return n * fixed + middle + _digits_in_range(self._seq, n)

    def next_batch(self, n: int, sale_time_us: int) -> bytes:
        """The next ``n`` sales as NDJSON, exactly as msgspec ``encode_lines`` writes them."""
        return _ENCODER.encode_lines(self.next_rows(n, sale_time_us))
