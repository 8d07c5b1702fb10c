"""A third transport: MCP over TCP on loopback, one JSON message per line (MCP's stdio framing).

`TcpTransport` implements toolkit's three-method `Transport` protocol by hand; `serve` puts any toolkit
`Server` behind a TCP listener, and `connect` opens a `Client` to it through toolkit's built-in
`StreamTransport`, which frames messages the same way.

    python examples/tcp_transport.py          # serve, connect, call a tool, print the result
    python examples/tcp_transport.py 8765     # serve on 127.0.0.1:8765 until interrupted

The transport binds to 127.0.0.1 only: it has no authentication and no encryption, so anyone who can reach
the port can call the tools.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.abc import SocketAttribute, SocketStream, TaskStatus
from anyio.streams.buffered import BufferedByteReceiveStream

from toolkit import Client, MessageError, Server, StreamTransport

HOST = "127.0.0.1"
MAX_MESSAGE_SIZE = 16 * 1024 * 1024


class TcpTransport:
    """toolkit's `Transport` over one TCP connection: UTF-8 JSON, one message per line."""

    def __init__(self, stream: SocketStream) -> None:
        self._stream = stream
        self._buffered = BufferedByteReceiveStream(stream)

    async def send(self, message: str, /) -> None:
        # toolkit encodes JSON compactly: a message never contains a raw newline, so "\n" ends it.
        await self._stream.send(message.encode() + b"\n")

    async def receive(self) -> str:
        while True:
            try:
                line = await self._buffered.receive_until(b"\n", MAX_MESSAGE_SIZE)
            except (anyio.IncompleteRead, anyio.BrokenResourceError, anyio.ClosedResourceError):
                raise anyio.EndOfStream from None  # the peer closed (or reset) the connection
            except anyio.DelimiterNotFound:
                # Too long to be a message. Unlike StreamTransport, which skips the line and goes on, this
                # transport gives up on the connection: simpler, and a well-behaved peer never does it.
                raise anyio.EndOfStream from None
            line = line.removesuffix(b"\r")
            if not line.strip():
                continue  # blank lines carry no message
            try:
                return line.decode("utf-8")
            except UnicodeDecodeError:
                # One bad message: the server answers it with a parse error (-32700) and keeps reading.
                raise MessageError("message is not valid UTF-8", -32700) from None

    async def aclose(self) -> None:
        await self._stream.aclose()


async def serve(server: Server, *, port: int = 0, task_status: TaskStatus[int] = anyio.TASK_STATUS_IGNORED) -> None:
    """Serve `server` to every client that connects to 127.0.0.1:`port`, until cancelled.

    Each connection gets its own `TcpTransport` (the server keeps per-connection state). Start it with
    `port = await task_group.start(serve, server)`: port 0 picks a free port, and `start` returns it.
    The server's lifespan starts before the port opens to clients and lasts until the listener stops, however
    many connections come and go (a failing startup raises `StartupError` from `start`).
    """
    listener = await anyio.create_tcp_listener(local_host=HOST, local_port=port)
    async with listener, server.running():
        task_status.started(listener.extra(SocketAttribute.local_port))
        await listener.serve(lambda stream: server.serve(TcpTransport(stream)))


@asynccontextmanager
async def connect(port: int, **options: Any) -> AsyncIterator[Client]:
    """A connected `Client` for the server on 127.0.0.1:`port`; `options` are `Client`'s (e.g. `protocol=`)."""
    stream = await anyio.connect_tcp(HOST, port)
    # The built-in StreamTransport frames messages exactly as TcpTransport does: either end can use either.
    async with Client(StreamTransport(stream, stream), **options) as client:
        yield client


demo = Server("tcp-demo", version="1.0.0")


@demo.tool
def shout(text: str) -> str:
    """Return `text` in capitals."""
    return text.upper()


async def main() -> None:
    async with anyio.create_task_group() as tg:
        port = await tg.start(serve, demo)
        async with connect(port) as client:
            result = await client.call_tool("shout", {"text": "hello over tcp"})
            print(result.text)
        tg.cancel_scope.cancel()


if __name__ == "__main__":
    if len(sys.argv) > 1:
        with contextlib.suppress(KeyboardInterrupt):
            anyio.run(lambda: serve(demo, port=int(sys.argv[1])))
    else:
        anyio.run(main)
