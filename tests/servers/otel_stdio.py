"""A stdio server with OpenTelemetry configured the global way (an SDK tracer provider, nothing exported): its tool
reports the span it runs in (the server's span of the call), so that a test in the parent process can check that
the trace continued over the pipe (tests/test_telemetry.py)."""

from __future__ import annotations

import json

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from toolkit import Server

trace.set_tracer_provider(TracerProvider())
server = Server("otel-stdio")


@server.tool
def trace_of_this_call() -> str:
    """The trace id, parent span id and transport of the server span this call runs in."""
    span = trace.get_current_span()
    parent = getattr(span, "parent", None)
    attributes = getattr(span, "attributes", None) or {}
    return json.dumps(
        {
            "trace_id": format(span.get_span_context().trace_id, "032x"),
            "parent_id": format(parent.span_id, "016x") if parent is not None else None,
            "network.transport": attributes.get("network.transport"),
        }
    )


if __name__ == "__main__":
    server.run()
