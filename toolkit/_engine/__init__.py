"""The engine: the server's registry, one connection's method tables, the Context a tool receives."""
