"""Sync tools on worker threads: results, exceptions, context variables, the thread cap, cancellation."""

from __future__ import annotations

import contextvars
import threading

import anyio
import anyio.lowlevel
import pytest

from toolkit import Client, Server, tool

pytestmark = pytest.mark.anyio

REQUEST = contextvars.ContextVar("REQUEST", default="none")
CAP = 40  # anyio's default limit, and toolkit's on asyncio


async def test_a_sync_tool_sees_the_context_variables_of_the_call() -> None:
    @tool
    def who() -> str:
        return REQUEST.get()

    REQUEST.set("caller")
    assert (await who.run({})).text == "caller"


async def test_many_blocked_sync_calls_run_at_most_cap_at_once_and_all_finish_even_with_some_cancelled() -> None:
    release = threading.Event()
    lock = threading.Lock()
    running = [0]
    peak = [0]
    full = anyio.Event()
    token = anyio.lowlevel.current_token()

    @tool
    def blocked(n: int) -> int:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
            if running[0] == CAP:
                anyio.from_thread.run_sync(full.set, token=token)
        release.wait()
        with lock:
            running[0] -= 1
        return n

    server = Server("threads", tools=[blocked])
    results: dict[int, str] = {}
    async with Client(server) as client:

        async def call(n: int) -> None:
            results[n] = (await client.call_tool("blocked", {"n": n})).text

        try:
            async with anyio.create_task_group() as tg:
                for n in range(CAP + 20):
                    tg.start_soon(call, n)
                async with anyio.create_task_group() as cancelled:
                    for n in range(1000, 1005):  # queued behind the cap, then cancelled while waiting for a thread
                        cancelled.start_soon(call, n)
                    with anyio.fail_after(60):  # CAP threads to start: slow on a busy machine under coverage
                        await full.wait()
                    cancelled.cancel_scope.cancel()
                assert peak[0] == CAP
                release.set()
        finally:
            release.set()  # never leave the pool's threads blocked for the tests after this one

        again = await client.call_tool("blocked", {"n": 7})  # the pool still has threads to give

    assert results == {n: str(n) for n in range(CAP + 20)}
    assert peak[0] == CAP
    assert again.text == "7"
