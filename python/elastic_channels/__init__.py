"""elastic_channels: stream synthetic resort point-of-sale rows into Snowflake
through Snowpipe Streaming elastic channels.

``resort_sales`` is the model; ``encoding`` picks the native generator or the
msgspec path; ``benchmark_client_cpu`` is the local, client-only benchmark.
"""

__version__ = "0.1.0"
