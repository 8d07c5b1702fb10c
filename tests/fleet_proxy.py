"""A round-robin HTTP/1.1 reverse proxy for the fleet tests: every request goes to the next server, none sticks.

    python tests/fleet_proxy.py PORT [PORT ...]

Listens on 127.0.0.1 (a port of the kernel's), says `proxying on http://127.0.0.1:<port>` on stderr once it
accepts connections, and sends each request it reads to the next of the given ports of 127.0.0.1 in turn, on a
fresh connection, whatever connection the client sent it on: a client that keeps its connection alive still has
every request of its session served by another process, as behind a plain load balancer with no affinity at all.
Answers are streamed through as they come (an SSE stream included), and a client that hangs up mid-answer closes the
server's connection at once, so the server sees the client go (a resumption test's dropped connection).

Small on purpose: bodies with a `Content-Length` (what every MCP client sends); answers framed by
`Content-Length`, chunked, or by the end of the connection. A backend that refuses the connection (a killed worker)
is skipped for the next one, as a load balancer's health check would. Nothing is changed in either direction.

It checks what it relays: every JSON-RPC message a server sends is validated against the official schema of its
revision, and no request of a session may be answered twice; a failure is one `invalid: ...` line on stderr
(tests/fleet.py fails the test on it). An SSE event that carries `DROP` makes it drop the client's connection
right after that event, as a network would.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import wire

_LIMIT = 1 << 20  # the longest header block


def _headers(head: bytes) -> dict[bytes, bytes]:
    found = {}
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        found[name.strip().lower()] = value.strip()
    return found


Observe = Callable[[bytes], bool]  # sees each piece of an answer; True: drop the client's connection now
#: An SSE event that carries this text makes the proxy drop the client's connection right after relaying it, as a
#: network would: the client resumes the stream (GET + Last-Event-ID) on the next server.
DROP = b"fleet-proxy: drop the connection here"


async def _relay_chunked(upstream: asyncio.StreamReader, client: asyncio.StreamWriter, observe: Observe) -> None:
    while True:
        size_line = await upstream.readuntil(b"\r\n")
        client.write(size_line)
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            while (trailer := await upstream.readuntil(b"\r\n")) != b"\r\n":
                client.write(trailer)
            client.write(b"\r\n")
            await client.drain()
            return
        chunk = await upstream.readexactly(size + 2)
        client.write(chunk)
        drop = observe(chunk[:-2])
        await client.drain()
        if drop:
            sys.stderr.write("dropped a connection, as asked\n")
            sys.stderr.flush()
            raise ConnectionResetError("dropped by the proxy, as asked")


async def _relay_answer(upstream: asyncio.StreamReader, client: asyncio.StreamWriter, exchange: Exchange) -> bool:
    """Stream one answer through; whether the client's connection may carry another request."""
    head = await upstream.readuntil(b"\r\n\r\n")
    client.write(head)
    status = int(head.split(b" ", 2)[1])
    headers = _headers(head[:-4])
    observe = exchange.observer(headers.get(b"content-type", b""))
    if exchange.method == b"HEAD" or status in (204, 304) or 100 <= status < 200:
        await client.drain()
    elif headers.get(b"transfer-encoding", b"").lower() == b"chunked":
        await _relay_chunked(upstream, client, observe)
    elif b"content-length" in headers:
        body = await upstream.readexactly(int(headers[b"content-length"]))
        client.write(body)
        observe(body)
        await client.drain()
    else:  # framed by the end of the connection: so is the client's
        while data := await upstream.read(65536):
            client.write(data)
            observe(data)
            await client.drain()
        return False
    return headers.get(b"connection", b"").lower() != b"close"


async def _safely(answer: Awaitable[bool]) -> bool:
    """`answer`, or False (end the client's connection) when either side went away mid-answer."""
    try:
        return await answer
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
        return False


async def _hang_up(reader: asyncio.StreamReader) -> bytes:
    """The client's next byte while its answer is relayed: b"" when it hung up (or reset the connection)."""
    try:
        return await reader.read(1)
    except OSError:
        return b""


async def _cancelled(task: asyncio.Future[Any]) -> None:
    """Cancel `task` and wait until it has ended (a read still pending would make the next one fail)."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


class Exchange:
    """One request and its answer, as the proxy checks them: every JSON-RPC message a server sends is validated
    against the official schema of its revision (tests/wire.py); a message that is not valid is said on stderr
    (`invalid: ...`), which the harness reads."""

    def __init__(self, head: bytes, body: bytes, proxy: Proxy) -> None:
        self.method = head.split(b" ", 1)[0]
        headers = _headers(head[:-4])
        self.session = headers.get(b"mcp-session-id", b"")
        self.version = headers.get(b"mcp-protocol-version", b"").decode() or wire.LATEST
        self.asked = proxy.asked  # (session, request id) -> method: what a resumed stream's result answers
        self.answered = proxy.answered  # (session, request id) of every answer seen: none may come twice
        self.drop = False  # the server asked the proxy to drop the client's connection here (DROP)
        self.pending = b""
        self.own: tuple[Any, str] | None = None  # the id and method of the request, answered here or on a resumption
        with contextlib.suppress(ValueError):
            sent = json.loads(body) if body else None
            if isinstance(sent, dict) and "method" in sent and "id" in sent:
                self.own = (sent["id"], sent["method"])
                if self.session:
                    self.asked[self.session, sent["id"]] = sent["method"]
                if sent["method"] == "initialize":
                    self.version = str(sent.get("params", {}).get("protocolVersion", wire.LATEST))

    def observer(self, content_type: bytes) -> Observe:
        if content_type.startswith(b"application/json"):
            return self._json
        if content_type.startswith(b"text/event-stream"):
            return self._sse
        return lambda data: False

    def _json(self, data: bytes) -> bool:
        self.pending += data
        with contextlib.suppress(ValueError):
            message = json.loads(self.pending)
            self.pending = b""
            self._check(message)
        return False

    def _sse(self, data: bytes) -> bool:
        self.pending += data.replace(b"\r\n", b"\n")
        *events, self.pending = self.pending.split(b"\n\n")
        for event in events:
            lines = [line[5:].lstrip(b" ") for line in event.split(b"\n") if line.startswith(b"data:")]
            if lines and any(lines):
                self._check(json.loads(b"\n".join(lines)))
                self.drop = self.drop or DROP in event
        return self.drop

    def _check(self, message: Any) -> None:
        answers = message.get("id") if isinstance(message, dict) and "method" not in message else None
        method = self.asked.pop((self.session, answers), None)
        if self.own is not None and self.own[0] == answers:
            method = self.own[1]
        try:
            wire.check_server_message(message, self.version, method)
            if self.session and answers is not None:
                assert (self.session, answers) not in self.answered, f"request {answers} answered twice"
                self.answered.add((self.session, answers))
        except AssertionError as exc:
            sys.stderr.write(f"invalid: {' '.join(str(exc).split())[:2000]}\n")
            sys.stderr.flush()
        next(_checked)


_checked = itertools.count()  # messages validated: said at the end


class Proxy:
    def __init__(self, ports: list[int]) -> None:
        self.ports = ports
        self.turn = itertools.cycle(range(len(ports)))
        self.early: dict[asyncio.StreamReader, bytes] = {}  # a byte of the next request read while watching
        self.asked: dict[tuple[bytes, Any], str] = {}
        self.answered: set[tuple[bytes, Any]] = set()

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        error: OSError | None = None
        for _ in self.ports:
            port = self.ports[next(self.turn)]
            try:
                return await asyncio.open_connection("127.0.0.1", port, limit=_LIMIT)
            except OSError as exc:  # a worker that is gone: the next one
                error = exc
        assert error is not None
        raise error

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = self.early.pop(reader, b"") + await reader.readuntil(b"\r\n\r\n")
        length = int(_headers(head[:-4]).get(b"content-length", b"0"))
        body = await reader.readexactly(length) if length else b""
        try:
            upstream_reader, upstream_writer = await self._open()
        except OSError:
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")
            await writer.drain()
            return True
        try:
            upstream_writer.write(head + body)
            exchange = Exchange(head, body, self)
            relay = asyncio.ensure_future(_safely(_relay_answer(upstream_reader, writer, exchange)))
            gone = asyncio.ensure_future(_hang_up(reader))  # clients send nothing mid-answer
            done, _ = await asyncio.wait({relay, gone}, return_when=asyncio.FIRST_COMPLETED)
            if relay not in done:  # the client hung up (or, never seen, pipelined): end the server's side too
                await _cancelled(relay)
                return False
            await _cancelled(gone)
            if not gone.cancelled():
                if not (early := gone.result()):
                    return False
                self.early[reader] = early  # the next request began as the answer ended
            return relay.result()
        finally:
            upstream_writer.close()

    async def serve_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            while await self._one(reader, writer):
                pass
        self.early.pop(reader, None)
        writer.close()


async def main(ports: list[int]) -> None:
    proxy = Proxy(ports)
    server = await asyncio.start_server(proxy.serve_client, "127.0.0.1", 0, limit=_LIMIT)
    port = server.sockets[0].getsockname()[1]
    sys.stderr.write(f"proxying on http://127.0.0.1:{port}\n")
    sys.stderr.flush()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with server:
        await stop.wait()
    sys.stderr.write(f"checked {next(_checked)} messages\n")


if __name__ == "__main__":
    asyncio.run(main([int(port) for port in sys.argv[1:]]))
