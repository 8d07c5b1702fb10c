"""The engine: the server's registry, one connection, the protocol's eras, the one `tools/call` pipeline and the
registry's method handlers, tasks, middleware and telemetry."""
