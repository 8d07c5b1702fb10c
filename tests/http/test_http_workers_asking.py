"""2025-11-25 tools that ask the client, served by two real workers: no client ever waits for an answer that cannot
arrive (issue 21 §5).

The question goes out on the call's stream from the worker that runs the tool; the client's answer comes back in a
POST of its own, which the kernel hands to either worker. Routing it to the asking worker is not done (docs/deploy.md
says how to route by `Mcp-Session-Id`, or to use 2026-07-28). When it reaches the other worker, that worker refuses
it (`400`, saying what to do) and tells the asking worker through the shared session store, which ends the call
with the same advice at once. Each test calls until both cases happened (the answer reached the asking worker, and
it did not): no reliance on which worker gets which request. Every request goes on a fresh connection.

Served as docs/deploy.md says: `uvicorn --workers 2` with a shared `MCP_SECRET` and `SqliteSessionStore`, no
backend. `toolkit serve FILE --http --workers 2` gives its workers the machine's backend, through which every
answer reaches the asking worker (issue 26): the last test; the fleet tests run every row so (test_http_fleet.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import anyio
import httpx
import httpx2
import mcp
import mcp_types as t
import pytest
import servers
from asgi_servers import TIMEOUT, Spawned
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from served import Served

from toolkit import Client, ElicitRequest, ElicitResult, ProtocolError

pytestmark = pytest.mark.anyio

APP = servers.ASKING_APP
ATTEMPTS = 100  # calls before giving up on seeing both cases (measured: about one answer in three is misrouted)
ADVICE = ("Mcp-Session-Id", "2026-07-28", "docs/deploy.md")


class Workers(Protocol):
    url: str


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workers]:
    """`uvicorn --workers 2` with a shared key and store, and no backend (`toolkit serve --workers` has its own)."""
    store = tmp_path_factory.mktemp("store") / "sessions.db"
    spawned = Spawned("uvicorn", module="asking_app", env={"MCP_SESSION_STORE": str(store)})
    yield spawned
    output = spawned.close()
    assert "Traceback" not in output, output


def advises(text: str) -> bool:
    return all(part in text for part in ADVICE)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the servers are the subject: one client backend is enough
async def test_toolkit_client_gets_the_refusal_of_an_answer_that_reached_the_other_worker(workers: Workers) -> None:
    async def confirm(request: ElicitRequest) -> ElicitResult[Any]:
        return ElicitResult.accept()

    seen: set[str] = set()
    fresh = httpx.AsyncClient(limits=httpx.Limits(max_keepalive_connections=0), timeout=httpx.Timeout(TIMEOUT))
    async with (
        fresh,
        Client.http(workers.url, http_client=fresh, protocol="handshake", elicitation_handler=confirm) as client,
    ):
        for _ in range(ATTEMPTS):
            with anyio.fail_after(TIMEOUT):  # a safety net: before the fix, a misrouted answer hung here forever
                try:
                    result = await client.call_tool("purge")
                except ProtocolError as exc:  # the worker that got the answer refused it: the call fails at once
                    outcome = (True, exc.message)
                else:  # answered; or (if it came first) the asking worker's own error result
                    outcome = (result.is_error, result.text or "")
            if outcome[0]:
                assert advises(outcome[1]), outcome[1]
                seen.add("refused")
            else:
                assert outcome == (False, "purged")
                seen.add("answered")
            if seen == {"answered", "refused"}:
                break
    assert seen == {"answered", "refused"}


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_official_sdk_gets_an_error_result_from_the_worker_whose_question_went_unanswered(
    workers: Workers,
) -> None:
    async def confirm(context: ClientRequestContext, params: t.ElicitRequestParams) -> t.ElicitResult:
        return t.ElicitResult(action="accept", content={})

    seen: set[str] = set()
    fresh = httpx2.AsyncClient(limits=httpx2.Limits(max_keepalive_connections=0), timeout=httpx2.Timeout(TIMEOUT))
    async with (
        fresh,
        mcp.Client(
            streamable_http_client(workers.url, http_client=fresh), mode="legacy", elicitation_callback=confirm
        ) as client,
    ):
        for _ in range(ATTEMPTS):
            with anyio.fail_after(TIMEOUT):
                result = await client.call_tool("purge", {})
            text = "\n".join(block.text for block in result.content if isinstance(block, t.TextContent))
            if result.is_error:
                assert advises(text), text
                seen.add("refused")
            else:
                assert text == "purged"
                seen.add("answered")
            if seen == {"answered", "refused"}:
                break
    assert seen == {"answered", "refused"}


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_under_toolkit_serve_workers_every_answer_reaches_the_asking_worker() -> None:
    async def confirm(request: ElicitRequest) -> ElicitResult[Any]:
        return ElicitResult.accept()

    served = Served(Path(f"{APP}:server"), "--workers", "2")
    try:
        fresh = httpx.AsyncClient(limits=httpx.Limits(max_keepalive_connections=0), timeout=httpx.Timeout(TIMEOUT))
        async with (
            fresh,
            Client.http(served.url, http_client=fresh, protocol="handshake", elicitation_handler=confirm) as client,
        ):
            for _ in range(20):  # about one answer in two reaches the other worker: routed, never refused
                with anyio.fail_after(TIMEOUT):
                    result = await client.call_tool("purge")
                assert (result.is_error, result.text) == (False, "purged")
    finally:
        served.close()
