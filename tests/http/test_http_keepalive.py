"""`Client.http` and a server that closes an idle keep-alive connection just as the client reuses it.

A server closes a connection left idle past its keep-alive timeout (uvicorn: 5 s); a client that sends its next
request at that moment gets a reset and no answer (httpx: ReadError). Under load that happens for real (the workers'
load test, tests/http/test_http_workers.py). Here a relay in front of a real uvicorn plays the server's side at the
exact moment: once armed, it resets the next connection that brings a request after an answer, with that request
unread, as a closing server's kernel does.
"""

from __future__ import annotations

import contextlib
import socket
import struct
from collections.abc import AsyncIterator, Iterator

import anyio
import anyio.abc
import httpx
import pytest
from anyio.abc import SocketAttribute
from asgi_servers import TIMEOUT, Spawned

from toolkit import Client, ProtocolError, ProtocolMode

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def upstream() -> Iterator[Spawned]:
    server = Spawned("uvicorn-one")
    try:
        yield server
    finally:
        server.close()


class ClosingRelay:
    """Relays each connection to the server at `port`; once `armed`, the first connection that brings a POST after an
    answer is reset (linger 0: RST) with that POST unread, as a server closing it idle would (a 2025-11-25 session's
    GET stream, opened whenever the client likes, is left alone). With `new` too, a connection's first POST is reset
    just the same (a server that broke a connection it had just accepted)."""

    def __init__(self, port: int, *, new: bool) -> None:
        self.port = port
        self.new = new
        self.armed = False
        self.resets = 0

    async def serve(self, listener: anyio.abc.Listener[anyio.abc.SocketStream]) -> None:
        async with listener:
            await listener.serve(self._relay)

    async def _relay(self, client: anyio.abc.SocketStream) -> None:
        answered = anyio.Event()
        server = await anyio.connect_tcp("127.0.0.1", self.port)
        async with client, server, anyio.create_task_group() as tg:
            tg.start_soon(self._back, server, client, answered)
            try:
                async for chunk in client:
                    if self.armed and (answered.is_set() or self.new) and chunk.startswith(b"POST "):
                        self.armed = False
                        self.resets += 1
                        raw = client.extra(SocketAttribute.raw_socket)
                        raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        break
                    await server.send(chunk)
            except anyio.BrokenResourceError:
                pass  # the client went
            tg.cancel_scope.cancel()

    async def _back(
        self, server: anyio.abc.SocketStream, client: anyio.abc.SocketStream, answered: anyio.Event
    ) -> None:
        async for chunk in server:
            await client.send(chunk)
            answered.set()


@contextlib.asynccontextmanager
async def relayed_client(
    upstream: Spawned, protocol: str, *, keep_alive: bool = True
) -> AsyncIterator[tuple[ClosingRelay, Client]]:
    """A client of `upstream` through a `ClosingRelay`, armed after one `tools/list` (a kept-alive connection
    answered). Without `keep_alive` the client opens a connection for each request, and the relay resets a new one."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    relay = ClosingRelay(int(upstream.url.split(":")[2].split("/")[0]), new=not keep_alive)
    url = f"http://127.0.0.1:{listener.extra(SocketAttribute.local_port)}/mcp"
    limits = httpx.Limits(max_keepalive_connections=None if keep_alive else 0)
    http = httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(TIMEOUT, read=None))
    mode: ProtocolMode = "2026-07-28" if protocol == "2026-07-28" else "handshake"
    async with http, anyio.create_task_group() as tg:
        tg.start_soon(relay.serve, listener)
        async with Client.http(url, protocol=mode, http_client=http) as client:
            assert [t.name for t in await client.list_tools()] == ["add", "ticks", "worker"]
            relay.armed = True
            yield relay, client
        tg.cancel_scope.cancel()


@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
async def test_a_read_whose_kept_alive_connection_the_server_closes_as_it_arrives_is_sent_again(
    upstream: Spawned, protocol: str
) -> None:
    async with relayed_client(upstream, protocol) as (relay, client):
        assert [t.name for t in await client.list_tools()] == ["add", "ticks", "worker"]
        assert relay.resets == 1  # its connection was reset with the request unread: the request went again
        assert (await client.call_tool("add", {"a": 2, "b": 3})).text == "5"


@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
async def test_a_call_whose_kept_alive_connection_breaks_before_its_answer_is_never_sent_again(
    upstream: Spawned, protocol: str
) -> None:
    async with relayed_client(upstream, protocol) as (relay, client):
        # The client cannot know whether a server that broke the connection ran the tool: it says so, once.
        with pytest.raises(ProtocolError, match="HTTP request failed: ReadError"):
            await client.call_tool("add", {"a": 2, "b": 3})
        assert relay.resets == 1
        assert (await client.call_tool("add", {"a": 2, "b": 3})).text == "5"  # and it serves on


async def test_a_read_that_fails_on_a_new_connection_is_not_sent_again(upstream: Spawned) -> None:
    # Only a reused connection may have been closed idle by the server; a new one that breaks is another failure.
    async with relayed_client(upstream, "2026-07-28", keep_alive=False) as (relay, client):
        with pytest.raises(ProtocolError, match="HTTP request failed: ReadError"):
            await client.list_tools()
        assert relay.resets == 1
        assert [t.name for t in await client.list_tools()] == ["add", "ticks", "worker"]
