"""The schema of a sale and the limits on the generator's inputs.

``COLUMNS`` gives each field's Snowflake type in the table's column order: the setup
SQL, the emulator's table and the monitor's checks are all derived from it, so they
cannot drift apart. The names of the Snowflake objects live here too, once.
"""

from __future__ import annotations

import datetime as _dt

import msgspec

#: The Snowflake objects a run writes to (created by ``elastic-channels setup``).
TABLE_NAME = "RESORT_SALES"
PIPE_NAME = "RESORT_SALES_PIPE"
METRICS_TABLE_NAME = "ELASTIC_K8S_METRICS"


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
EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
MIN_SALE_TIME_US = (_dt.datetime(1, 1, 1, tzinfo=_dt.timezone.utc) - EPOCH) // _dt.timedelta(
    microseconds=1
)
MAX_SALE_TIME_US = (
    _dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=_dt.timezone.utc) - EPOCH
) // _dt.timedelta(microseconds=1)
TXID_SEPARATOR = "-"
