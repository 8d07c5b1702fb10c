"""Streamable HTTP on a real socket: `toolkit serve FILE --http` on uvicorn (127.0.0.1, a free port), driven by
`toolkit.Client.http`, the official `mcp` SDK's HTTP client (both eras) and the `toolkit` command with a URL.

The server process says where it listens once its socket accepts connections; the tests wait for that line
(bounded), never for a delay.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import mcp
import pytest
import servers
from served import TIMEOUT, Served

from toolkit import Client

DEMO = servers.HTTP_DEMO


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    server = Served(DEMO)
    yield server
    server.close()


def test_the_server_listens_on_loopback_by_default(served: Served) -> None:
    assert served.url.startswith("http://127.0.0.1:")
    assert served.url.endswith("/mcp")


@pytest.mark.anyio
@pytest.mark.parametrize("protocol", ["auto", "handshake"])
async def test_client_http_over_a_real_socket_in_both_eras(served: Served, protocol: Any) -> None:
    logs: list[Any] = []
    with anyio.fail_after(TIMEOUT):
        async with Client.http(served.url, protocol=protocol, on_log=logs.append) as client:
            assert client.protocol_version == ("2026-07-28" if protocol == "auto" else "2025-11-25")
            assert [t.name for t in await client.list_tools()] == ["add", "steps", "worker"]
            await client.set_logging_level("info")
            seen: list[float] = []
            result = await client.call_tool("steps", {"count": 2}, progress=lambda p, t, m: seen.append(p))
            assert (result.text, seen) == ("2 steps", [1, 2])
            async with anyio.create_task_group() as tg:  # many calls at once over one client
                answers: dict[int, str | None] = {}

                async def call(i: int) -> None:
                    answers[i] = (await client.call_tool("add", {"a": i, "b": i})).text

                for i in range(50):
                    tg.start_soon(call, i)
            assert answers == {i: str(2 * i) for i in range(50)}
    assert [log.data for log in logs] == ["stepped"]


@pytest.mark.anyio
@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")])
async def test_the_official_sdk_http_client_in_both_eras(served: Served, mode: str, version: str) -> None:
    from mcp.client.streamable_http import streamable_http_client

    with anyio.fail_after(TIMEOUT):
        async with mcp.Client(streamable_http_client(served.url), mode=mode) as client:
            assert client.protocol_version == version
            listed = await client.list_tools()
            assert [tool.name for tool in listed.tools] == ["add", "steps", "worker"]
            result = await client.call_tool("add", {"a": 1, "b": 2})
            assert not result.is_error
            assert result.model_dump(mode="json", by_alias=True, exclude_none=True)["content"] == [
                {"type": "text", "text": "3"}
            ]


def test_json_answers_and_refusals_carry_their_length_rather_than_chunks(served: Served) -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    params = {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": meta}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    headers = {
        "accept": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "add",
    }
    with httpx.Client(timeout=TIMEOUT) as http:
        answer = http.post(served.url, json=call, headers=headers)
        refusal = http.post(served.url, content=b"{}", headers={"content-type": "text/plain"})
    for response, status in ((answer, 200), (refusal, 415)):
        assert response.status_code == status
        assert "transfer-encoding" not in response.headers
        assert response.headers["content-length"] == str(len(response.content))
    assert answer.json()["result"]["content"] == [{"type": "text", "text": "3"}]


def test_the_toolkit_command_takes_a_url(served: Served) -> None:
    env = {**os.environ, "COLUMNS": "200"}
    listing = subprocess.run(
        [sys.executable, "-m", "toolkit", "list", served.url],
        check=False,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=env,
    )
    assert listing.returncode == 0, listing.stderr
    assert listing.stdout.splitlines()[0].split() == ["NAME", "HINTS", "PARAMETERS"]
    assert listing.stdout.splitlines()[-1] == "3 tools"
    call = subprocess.run(
        [sys.executable, "-m", "toolkit", "call", served.url, "add", "a=2", "b=40", "-H", "X-Test: 1"],
        check=False,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert (call.returncode, call.stdout.strip()) == (0, "42")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigterm_stops_the_server_with_status_0_with_one_worker_as_with_two(workers: str) -> None:
    served = Served(DEMO, "--workers", workers)

    assert served.close() == 0  # not -15 with one worker: uvicorn raises the signal again once it has shut down
    assert served.stderr[-1] == "toolkit: stopped\n"


def test_two_workers_serve_one_session_whichever_gets_each_request() -> None:
    served = Served(DEMO, "--workers", "2")
    try:
        # A fresh connection per request, so that the kernel hands requests to either worker.
        with httpx.Client(limits=httpx.Limits(max_keepalive_connections=0), timeout=TIMEOUT) as http:
            accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
            init = {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
            response = http.post(served.url, json=init, headers=accept)
            assert response.status_code == 200
            headers = {
                **accept,
                "mcp-session-id": response.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            pids: set[str] = set()
            for i in range(1, 201):
                call = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "worker"}}
                response = http.post(served.url, json=call, headers=headers)
                assert response.status_code == 200, response.text
                pids.add(response.json()["result"]["content"][0]["text"])
                if len(pids) == 2:
                    break
            assert len(pids) == 2, "200 requests of one session all reached the same worker"
    finally:
        served.close()
