"""Issue 39's one `tools/call` pipeline: whoever serves a call (a connection, a task, HTTP in the request's task),
it runs the same steps, and nothing is injected into the engine after construction: a `Registry` served without the
`Server` facade runs tool middleware around its tasks too."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest

from toolkit import Client, Identity, ProtocolMode, Server, StaticTokenVerifier, StreamingASGITransport, tool
from toolkit._engine.connection import Connection
from toolkit._engine.registry import Registry
from toolkit._transports.base import Transport

pytestmark = pytest.mark.anyio


class Bare:
    """A `Registry` served as it is, without the `Server` facade (what `Client(server)` uses in memory)."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def running(self, *, lifespan: Any = None) -> AbstractAsyncContextManager[Any]:
        return self.registry.running(lifespan=lifespan)

    async def serve(self, transport: Transport) -> None:
        await Connection(self.registry, transport).run()


@tool(task="optional")
async def slow(n: int) -> int:
    """Double `n`, as a task if the client wants one."""
    await anyio.lowlevel.checkpoint()
    return 2 * n


@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
async def test_a_registry_without_the_facade_runs_tool_middleware_around_its_tasks(protocol: ProtocolMode) -> None:
    seen: list[tuple[str, Any]] = []

    async def note(request: Any, call_next: Any) -> Any:
        seen.append((request.tool.name, request.arguments))
        return await call_next(request)

    registry = Registry("bare", None, {"tool_middleware": [note]})
    registry.put_tool(slow)
    async with Client(Bare(registry), protocol=protocol) as client:
        plain = await client.call_tool("slow", {"n": 1})
        task = await client.start_task("slow", {"n": 2})
        with anyio.fail_after(10):
            result = await task.result()
    assert (plain.text, result.text) == ("2", "4")
    assert seen == [("slow", {"n": 1}), ("slow", {"n": 2})]


TOKEN = "alice-token-0123456789"


@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
async def test_tool_middleware_sees_the_request_and_its_callers_identity_on_a_call_and_on_a_task(
    protocol: ProtocolMode,
) -> None:
    seen: list[tuple[Any, str | None, str | None, Any]] = []

    async def note(request: Any, call_next: Any) -> Any:
        who = request.identity.subject if request.identity is not None else None
        seen.append((request.request_id, who, request.version, request.params.get("arguments")))
        return await call_next(request)

    server = Server("ids", tools=[slow], tool_middleware=[note])
    verifier = StaticTokenVerifier({TOKEN: Identity("alice", frozenset({"tools"}))})
    app = server.http_app(auth=verifier, authorization_servers=["https://auth.example.com"])
    headers = {"authorization": f"Bearer {TOKEN}"}
    async with (
        server.running(),
        httpx.AsyncClient(transport=StreamingASGITransport(app), base_url="http://127.0.0.1", headers=headers) as http,
        Client.http("http://127.0.0.1/mcp", http_client=http, protocol=protocol) as client,
    ):
        plain = await client.call_tool("slow", {"n": 1})
        task = await client.start_task("slow", {"n": 2})
        with anyio.fail_after(10):
            result = await task.result()
        version = client.protocol_version
    assert (plain.text, result.text) == ("2", "4")
    # The call's own id, then the task's; the caller's identity and the request's revision on both runs.
    assert [(who, revision, arguments) for _, who, revision, arguments in seen] == [
        ("alice", version, {"n": 1}),
        ("alice", version, {"n": 2}),
    ]
    assert seen[1][0] == task.id
    assert seen[0][0] != task.id
