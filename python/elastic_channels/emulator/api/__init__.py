"""The Snowpipe Streaming REST API (rows and files), the control endpoints, the
per-channel state and the drop sink."""
