"""What a client gets when the server stops with its call still running past `shutdown_grace` (issue 37): the answer
"Server shutting down" (JSON-RPC -32000) on the call's own response, never a response that ends with no answer, in
both eras and whichever way the call is served (an event stream, a JSON response, a connection of its own); over a
real socket, the official SDK's client fails at once instead of waiting for ever."""

from __future__ import annotations

import json
import threading
from typing import Any

import anyio
import anyio.to_thread
import httpx
import mcp
import pytest
import servers
import wire
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from served import Served
from test_http import http_client, initialize, legacy_headers, modern_headers, modern_message

pytestmark = pytest.mark.anyio

SHUTTING_DOWN = {"code": -32000, "message": "Server shutting down"}
# By era, each tool of tests/servers/shutdown_app.py and whether its call answers on an event stream (else JSON).
STREAMED = {
    wire.LATEST: {"nap": True, "doze": False, "snooze": False, "ponder": False},
    wire.MODERN: {"nap": True, "doze": False, "snooze": False},
}


def _call(era: str, name: str, request_id: int, session: str | None) -> tuple[dict[str, Any], dict[str, str]]:
    params: dict[str, Any] = {"name": name, "arguments": {"seconds": 600}}
    if era == wire.MODERN:
        message = modern_message("tools/call", params, request_id, progress=request_id)
        return message, modern_headers(message)
    assert session is not None
    params["_meta"] = {"progressToken": request_id}  # `nap` reports progress: its response is an event stream
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return message, legacy_headers(session)


def _messages(response: httpx.Response) -> list[Any]:
    if response.headers["content-type"].startswith("text/event-stream"):
        return [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")]
    return [response.json()]


@pytest.mark.parametrize("era", [wire.LATEST, wire.MODERN])
async def test_calls_still_running_past_the_grace_answer_server_shutting_down_on_their_own_responses(
    era: str, anyio_backend: str
) -> None:
    started = {name: threading.Event() for name in STREAMED[era]}
    release = threading.Event()  # `snooze`'s thread, abandoned when its call was stopped, ends with the test
    server = servers.build(servers.SHUTDOWN_APP, started=lambda name: started[name].set(), release=release)
    app = server.http_app()
    responses: dict[str, httpx.Response] = {}
    try:
        async with http_client(app) as client:
            session = await initialize(client) if era == wire.LATEST else None

            async def call(name: str, request_id: int) -> None:
                message, headers = _call(era, name, request_id, session)
                responses[name] = await client.post("/mcp", content=json.dumps(message), headers=headers)

            with anyio.fail_after(wire.TIMEOUT):
                async with anyio.create_task_group() as tg:
                    for request_id, name in enumerate(STREAMED[era], 1):
                        tg.start_soon(call, name, request_id)
                    for event in started.values():
                        await anyio.to_thread.run_sync(event.wait, wire.TIMEOUT)
                    app.stopping()  # as at SIGTERM: each call gets the server's 0.5 s, then is stopped
    finally:
        release.set()

    for request_id, (name, streamed) in enumerate(STREAMED[era].items(), 1):
        response = responses[name]
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream" if streamed else "application/json")
        answer = _messages(response)[-1]
        wire.check_server_message(answer, era, "tools/call")
        assert answer == {"jsonrpc": "2.0", "id": request_id, "error": SHUTTING_DOWN}, name


@pytest.mark.parametrize(("mode", "tool"), [("legacy", "nap"), ("2026-07-28", "doze")])
async def test_the_official_sdk_client_fails_at_once_when_the_server_stops_past_the_grace(mode: str, tool: str) -> None:
    served = Served(servers.SHUTDOWN_APP)  # `toolkit serve FILE --http`, on uvicorn; its grace is 0.5 s
    failures: list[MCPError] = []
    try:
        with anyio.fail_after(wire.TIMEOUT):
            async with mcp.Client(streamable_http_client(served.url), mode=mode) as client:

                async def progressed(progress: float, total: float | None, message: str | None) -> None:
                    pass  # asked for, so that `nap` answers on an event stream

                async def call() -> None:
                    with pytest.raises(MCPError) as raised:
                        await client.call_tool(tool, {"seconds": 600}, progress_callback=progressed)
                    failures.append(raised.value)

                async with anyio.create_task_group() as tg:
                    tg.start_soon(call)
                    await anyio.to_thread.run_sync(served.wait_for, f"{tool}: started")
                    served.process.terminate()
        served.process.wait(timeout=wire.TIMEOUT)  # stopped by that one SIGTERM: `close` must not send a second
    finally:
        served.close()

    assert [(failure.error.code, failure.error.message) for failure in failures] == [(-32000, "Server shutting down")]
