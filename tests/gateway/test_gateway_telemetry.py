"""OpenTelemetry across the hop: a mounted tool's call is one trace, from the gateway's SERVER span through its CLIENT
span to the upstream's SERVER span (the trace context goes in `_meta`)."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from servers import gateway_upstream

from toolkit import Client, Server

pytestmark = pytest.mark.anyio


async def test_a_mounted_call_is_one_trace_across_the_gateway_and_the_upstream() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    upstream = gateway_upstream()
    upstream.registry.tracer_provider = provider  # the upstream, in memory, reports to the same exporter
    gateway = Server("gateway", tracer_provider=provider)
    gateway.mount(upstream, prefix="up")
    async with Client(gateway) as client:
        await client.call_tool("up_add", {"a": 1, "b": 2})
    calls = [span for span in exporter.get_finished_spans() if span.name.startswith("tools/call")]
    kinds = sorted((span.kind.name, span.name) for span in calls)
    assert kinds == [("CLIENT", "tools/call add"), ("SERVER", "tools/call add"), ("SERVER", "tools/call up_add")]
    assert len({span.context.trace_id for span in calls if span.context is not None}) == 1
    gateway_span = next(span for span in calls if span.name == "tools/call up_add")
    hop = next(span for span in calls if span.kind == SpanKind.CLIENT)
    assert hop.parent is not None
    assert gateway_span.context is not None
    assert hop.parent.span_id == gateway_span.context.span_id
