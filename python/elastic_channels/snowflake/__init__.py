"""Snowflake itself: the objects a run writes to (``ddl``), running that SQL on an
account (``connection``), and ``elastic-channels setup`` (``cli``)."""
