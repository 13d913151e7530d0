"""The SQL API (POST /api/v2/statements) and the guard on what its statements may do."""
