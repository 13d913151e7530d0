"""Landing: the durable spool, the landing threads, and the two parse paths (native, SQL)."""
