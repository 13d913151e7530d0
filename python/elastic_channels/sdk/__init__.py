"""The SDK side: an elastic channel's session, the fast append, the client properties.

- ``session``: one SDK client + its elastic channel, opened on a thread;
- ``fast_append``: preserialized NDJSON into the channel without a second encode
  (the SDK's private core call, or the public API with ``msgspec.Raw`` rows);
- ``properties``: the client properties this project sets, once.
"""
