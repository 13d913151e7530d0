"""Snowflake itself: the objects a run writes to (``ddl``, ``iceberg``), and
``elastic-channels setup`` (``cli``), which runs that SQL or a file's (``sql_file``)
statement by statement (``execute``) through the SQL API (``sql_api``, the default) or
snowflake-connector-python (``connector``)."""
