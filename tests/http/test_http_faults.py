"""Load and faults over HTTP: many clients at once, clients that leave mid-stream, slow readers, bad requests.

Nothing is lost (every answer exact), nothing leaks (no connection left behind, memory flat over many cycles), and
the server keeps serving after each fault. No test asserts on time.
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any, cast

import anyio
import httpx
import pytest
import wire
from served import TIMEOUT, Served
from servers import HTTP_DEMO
from servers.http_demo import build as make_server  # the demo server: tests/servers/http_demo.py
from test_http import ACCEPT, http_client, initialize, legacy_headers, modern_headers, modern_message, post

from toolkit import Client, Context, Server

pytestmark = pytest.mark.anyio


class Finished:
    """Counts the calls of `chatter` that ended (answered, or cancelled), and says when `expected` did."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.count = 0
        self.all = anyio.Event()

    def one(self) -> None:
        self.count += 1
        if self.count == self.expected:
            self.all.set()


def chatty_server(finished: Finished | None = None) -> Server:
    server = make_server()

    @server.tool
    async def chatter(count: int, ctx: Context) -> int:
        """Send `count` progress notifications, then answer."""
        try:
            for done in range(count):
                await ctx.report_progress(done, total=count)
        finally:
            if finished is not None:
                finished.one()
        return count

    return server


async def test_hundreds_of_concurrent_calls_in_both_eras_get_exact_answers() -> None:
    server = make_server()
    # The 400 calls share one event loop: each one waits for the others, so the bound is the batch's, not a call's
    # (10 s a call was not enough on a loaded machine: 400 calls under coverage with the suite's workers beside).
    bound = wire.TIMEOUT * 6
    async with http_client(server.http_app()) as client:
        session = await initialize(client)
        answers: dict[int, Any] = {}

        async def call(i: int) -> None:
            if i % 2:
                message = modern_message("tools/call", {"name": "add", "arguments": {"a": i, "b": 1}}, request_id=i)
                _, [reply] = await post(client, message, modern_headers(message), within=bound)
            else:
                message = {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {"name": "add", "arguments": {"a": i, "b": 1}},
                }
                _, [reply] = await post(client, message, legacy_headers(session), wire.LATEST, within=bound)
            answers[i] = reply

        with anyio.fail_after(bound):
            async with anyio.create_task_group() as tg:
                for i in range(400):
                    tg.start_soon(call, i)
            await anyio.wait_all_tasks_blocked()
    assert {i: a["result"]["content"][0]["text"] for i, a in answers.items()} == {i: str(i + 1) for i in range(400)}
    assert all(a["id"] == i for i, a in answers.items())
    assert not server.registry.connections


async def test_clients_that_leave_mid_stream_leave_nothing_behind_and_the_server_serves_on() -> None:
    finished = Finished(100)
    server = chatty_server(finished)
    async with http_client(server.http_app()) as client:
        session = await initialize(client)

        async def leave_early(i: int) -> None:
            if i % 2:
                message = modern_message("tools/call", {"name": "chatter", "arguments": {"count": 1000}}, progress=i)
                headers = modern_headers(message)
            else:
                message = {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {"name": "chatter", "arguments": {"count": 50}, "_meta": {"progressToken": i}},
                }
                headers = legacy_headers(session)
            async with client.stream("POST", "/mcp", content=json.dumps(message), headers=headers) as response:
                assert response.status_code == 200
                async with aclosing(cast(AsyncGenerator[str, None], response.aiter_lines())) as lines:
                    async for line in lines:
                        if line.startswith("data: "):
                            break  # one event, then the client goes away

        with anyio.fail_after(wire.TIMEOUT * 3):
            async with anyio.create_task_group() as tg:
                for i in range(100):
                    tg.start_soon(leave_early, i)
            # 2026-07-28 calls were cancelled; 2025-11-25 ones ran to their end, unheard (the spec: not a cancel).
            await finished.all.wait()
            await anyio.wait_all_tasks_blocked()
        assert not server.registry.connections
        message = modern_message("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
        _, [reply] = await post(client, message, modern_headers(message))
    assert reply["result"]["content"] == [{"type": "text", "text": "2"}]


async def test_a_slow_reader_gets_every_event_in_order() -> None:
    async with http_client(chatty_server().http_app()) as client:
        message = modern_message("tools/call", {"name": "chatter", "arguments": {"count": 300}}, progress="p")
        seen: list[Any] = []
        with anyio.fail_after(wire.TIMEOUT):
            async with client.stream("POST", "/mcp", content=json.dumps(message), headers=modern_headers(message)) as r:
                async for line in r.aiter_lines():
                    if line.startswith("data: "):
                        seen.append(json.loads(line[6:]))
                        if len(seen) % 50 == 0:
                            await anyio.lowlevel.checkpoint()  # read late: the server waits (one chunk in flight)
    assert [m["params"]["progress"] for m in seen[:-1]] == list(range(300))
    assert seen[-1]["result"]["content"] == [{"type": "text", "text": "300"}]


@pytest.mark.parametrize(
    ("body", "headers", "status"),
    [
        (b"x" * 5000, {}, 413),
        (b"{", {}, 400),
        (b"[1, 2]", {}, 400),
        (b'{"jsonrpc": "2.0", "id": {}, "method": "tools/list"}', {}, 400),
        (b"{}", {"content-type": "application/xml"}, 415),
        (b"{}", {"accept": "image/png"}, 406),
        (b"{}", {"host": "attacker.example"}, 421),
        (b"{}", {"origin": "https://attacker.example"}, 403),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}', {"mcp-session-id": "\x01\x02"}, 400),
    ],
)
async def test_bad_requests_are_refused_and_the_server_keeps_serving(
    body: bytes, headers: dict[str, str], status: int
) -> None:
    async with http_client(make_server().http_app(max_body_size=4096)) as client:
        base = {"accept": ACCEPT, "content-type": "application/json"}
        for _ in range(20):
            response = await client.post("/mcp", content=body, headers={**base, **headers})
            assert response.status_code in (status, 404), response.text
        message = modern_message("tools/list")
        response, [reply] = await post(client, message, modern_headers(message))
    assert [t["name"] for t in reply["result"]["tools"]] == ["add", "steps"]


WARMUP_CYCLES = 100  # untraced (tracing doubles a cycle's cost)
TRACED_WARMUP_CYCLES = 100
CYCLES = 500  # 150 were too few on 3.10: its dicts grow in other steps, 66 KB over 150 cycles (bound 60)
CYCLE_BYTES = 400  # the growth a cycle may cause, traced bytes


async def test_memory_stays_flat_over_many_sessions_and_calls() -> None:
    server = make_server()
    app = server.http_app()
    async with http_client(app) as client:

        async def cycle() -> None:
            session = await initialize(client)
            call = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
            }
            await post(client, call, legacy_headers(session), wire.LATEST)
            await client.delete("/mcp", headers={"mcp-session-id": session})
            message = modern_message("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
            await post(client, message, modern_headers(message))

        for _ in range(WARMUP_CYCLES):  # warm up: caches, interned strings, the event loop's structures
            await cycle()
        tracemalloc.start()
        try:
            # Traced, not yet counted: what the warm-up left in a cache and a cycle replaces (an entry evicted, one
            # added) is freed untraced and allocated traced, which counts as growth until every such entry turned.
            for _ in range(TRACED_WARMUP_CYCLES):
                await cycle()
            gc.collect()
            before = tracemalloc.take_snapshot()
            for _ in range(CYCLES):
                await cycle()
            gc.collect()
            after = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    # Each ended session leaves one entry until its id expires (DELETE must keep answering 404): ~130 bytes a cycle,
    # measured, with the store's dict growing in steps. A leak of 250 bytes a cycle more fails.
    assert grown < CYCLES * CYCLE_BYTES, f"memory grew by {grown} bytes over {CYCLES} cycles"


def test_hundreds_of_clients_on_real_uvicorn_get_exact_answers() -> None:
    served = Served(HTTP_DEMO)
    try:

        async def main() -> dict[int, str | None]:
            answers: dict[int, str | None] = {}

            async def one(i: int) -> None:  # each client with its own connections, as separate programs would be
                # No keep-alive: under load this one event loop (200 clients) can leave a pooled connection idle past
                # uvicorn's 5 s and reuse it as uvicorn closes it (a reset: "HTTP request failed: ReadError", seen
                # under load); not the subject here (`toolkit serve` has no keep-alive option to lengthen it).
                limits = httpx.Limits(max_keepalive_connections=0)
                async with (
                    httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(30.0, read=None)) as http,  # Client.http's
                    Client.http(served.url, http_client=http) as client,
                ):
                    answers[i] = (await client.call_tool("add", {"a": i, "b": i})).text

            with anyio.fail_after(TIMEOUT * 3):
                async with anyio.create_task_group() as tg:
                    for i in range(200):
                        tg.start_soon(one, i)
            return answers

        assert anyio.run(main) == {i: str(2 * i) for i in range(200)}
    finally:
        served.close()
