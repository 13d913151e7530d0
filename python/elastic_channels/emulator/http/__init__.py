"""Transport and auth shared by every API: the HTTPS server, request routing, keys and
tokens, request bodies, scripted faults."""
