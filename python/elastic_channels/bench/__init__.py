"""Benchmarks that need no SDK and no server: ``client_cpu``, what making the rows costs."""
