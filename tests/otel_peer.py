"""Trace context against a real peer, both ways, in one process: run by tests/test_telemetry.py as a child process
(it sets OpenTelemetry's global tracer provider, which a process can set only once, and which the official SDK's
own telemetry reads), it prints one JSON object with what each side's spans carried.

1. The official SDK's client (`mcp.Client`, its telemetry on) calls a toolkit server over HTTP (toolkit's app on
   uvicorn, 127.0.0.1, an ephemeral port), in both eras: the toolkit server's `tools/call` span must carry the SDK
   client span's trace id, as its child.
2. toolkit's `Client.http` calls an SDK server (`MCPServer`'s app on uvicorn): the SDK server's span must carry
   toolkit's client span's trace id, as its child.

Both servers find the tracer provider the global way (no `tracer_provider=`), which is what this also shows. The
toolkit-to-SDK direction is checked in 2026-07-28: toolkit's `Client.http` in the handshake era gets "Missing session
ID" from the SDK 2.3 server with or without tracing (an interop matter of its own, not of telemetry).
"""

from __future__ import annotations

import functools
import json
import socket
from collections.abc import Callable
from typing import Any, Literal

import anyio
import mcp
import uvicorn
from mcp.server.mcpserver import MCPServer
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from toolkit import Client, Server

EXPORTER = InMemorySpanExporter()


def _setup() -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
    trace.set_tracer_provider(provider)


async def _serving(app: Any, task_group: Any) -> tuple[uvicorn.Server, str]:
    """Serve `app` on uvicorn on a socket bound here (127.0.0.1, an ephemeral port), so its port is known at once and
    a client's connection waits in the backlog until uvicorn accepts it: nothing to poll."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task_group.start_soon(functools.partial(server.serve, sockets=[sock]))
    return server, f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"


def _ids(span: ReadableSpan) -> dict[str, Any]:
    return {
        "name": span.name,
        "kind": span.kind.name,
        "trace": format(span.context.trace_id, "032x"),
        "span": format(span.context.span_id, "016x"),
        "parent": format(span.parent.span_id, "016x") if span.parent is not None else None,
        "scope": span.instrumentation_scope.name if span.instrumentation_scope is not None else None,
        "attributes": dict(span.attributes or {}),
    }


async def _spans_of_one_call(app: Any, connect: Callable[[str], Any]) -> list[dict[str, Any]]:
    """Serve `app`, call its `add` with the client `connect(url)` opens, and return the spans both sides made."""
    async with anyio.create_task_group() as tg:
        served, url = await _serving(app, tg)
        async with connect(url) as client:
            result = await client.call_tool("add", {"a": 2, "b": 3})
            assert not result.is_error, result
        served.should_exit = True
    spans = [_ids(span) for span in EXPORTER.get_finished_spans()]
    EXPORTER.clear()
    return spans


async def sdk_client_to_toolkit_server(mode: Literal["legacy", "auto"]) -> list[dict[str, Any]]:
    server = Server("toolkit-side")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    return await _spans_of_one_call(server.http_app(), lambda url: mcp.Client(url, mode=mode))


async def toolkit_client_to_sdk_server(protocol: Literal["handshake", "2026-07-28"]) -> list[dict[str, Any]]:
    sdk = MCPServer("sdk-side")

    @sdk.tool()
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    return await _spans_of_one_call(sdk.streamable_http_app(), lambda url: Client.http(url, protocol=protocol))


async def main() -> None:
    _setup()
    report = {
        # legacy: the initialize handshake (2025-11-25); auto: the SDK probes server/discover, lands on 2026-07-28
        "sdk_to_toolkit": {mode: await sdk_client_to_toolkit_server(mode) for mode in ("legacy", "auto")},
        "toolkit_to_sdk": {"2026-07-28": await toolkit_client_to_sdk_server("2026-07-28")},
    }
    print(json.dumps(report))


if __name__ == "__main__":
    anyio.run(main)
