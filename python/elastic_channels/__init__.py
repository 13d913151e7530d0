"""elastic_channels: stream synthetic resort point-of-sale rows into Snowflake through
Snowpipe Streaming elastic channels.

The package follows the data: ``model`` (the single source of truth) -> ``rows`` (the
generators) -> ``sdk`` (the elastic channel and the fast append) -> ``worker`` (paced,
metered, at-least-once) -> ``fleet`` (local runs and what landed); ``emulator`` is the
local Snowpipe Streaming target, ``snowflake`` the account's objects, ``bench`` the
client-only benchmark, ``cli`` the one command.
"""

__version__ = "0.1.0"
