"""`examples/tcp_transport.py`: a hand-written Transport over TCP on loopback, end to end."""

from __future__ import annotations

import importlib.util
import inspect
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from anyio.abc import SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

import toolkit

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "tcp_transport.py"
TIMEOUT = 10


def load() -> ModuleType:
    """Import `examples/tcp_transport.py` (the examples folder is not a package)."""
    name = "examples_tcp_transport"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, EXAMPLE)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


example = load()


@asynccontextmanager
async def serving(server: toolkit.Server) -> AsyncIterator[int]:
    """Serve `server` over the example's TCP transport; yield the port."""
    async with anyio.create_task_group() as tg:
        port: int = await tg.start(example.serve, server)
        yield port
        tg.cancel_scope.cancel()


def wire(result: toolkit.CallToolResult) -> dict[str, Any]:
    data: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return data


def test_the_transports_guide_shows_the_example_code_verbatim() -> None:
    guide = (ROOT / "docs" / "transports.md").read_text(encoding="utf-8")
    for obj in (example.TcpTransport, example.serve, example.connect):
        assert inspect.getsource(obj) in guide, f"docs/transports.md is out of date with {obj.__name__}"


async def test_the_example_serves_calls_and_prints_the_result(capsys: pytest.CaptureFixture[str]) -> None:
    with anyio.fail_after(TIMEOUT):
        await example.main()
    assert capsys.readouterr().out == "HELLO OVER TCP\n"


@pytest.mark.parametrize(("protocol", "version"), [("auto", "2026-07-28"), ("handshake", "2025-11-25")])
async def test_a_toolkit_client_calls_a_tool_over_tcp_in_either_era(protocol: Any, version: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with serving(example.demo) as port, example.connect(port, protocol=protocol) as client:
            tools = await client.list_tools()
            result = await client.call_tool("shout", {"text": "hi"})
            failed = await client.call_tool("shout", {})
            assert client.protocol_version == version

    assert [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools] == [
        {
            "name": "shout",
            "description": "Return `text` in capitals.",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
                "additionalProperties": False,
            },
        }
    ]
    assert result.text == "HI"
    assert result.is_error is False
    assert failed.is_error is True


async def test_the_hand_written_transport_satisfies_the_protocol_at_both_ends() -> None:
    server = toolkit.Server("tcp-progress")

    @server.tool
    async def count(steps: int, ctx: toolkit.Context) -> int:
        for step in range(1, steps + 1):
            await ctx.report_progress(step, total=steps)
        return steps

    reports: list[tuple[float, float | None, str | None]] = []
    with anyio.fail_after(TIMEOUT):
        async with serving(server) as port:
            transport = example.TcpTransport(await anyio.connect_tcp("127.0.0.1", port))
            assert isinstance(transport, toolkit.Transport)
            async with toolkit.Client(transport) as client:
                result = await client.call_tool("count", {"steps": 2}, progress=lambda *r: reports.append(r))

    assert result.text == "2"
    assert reports == [(1, 2, None), (2, 2, None)]


async def test_one_listener_serves_many_clients_at_once() -> None:
    results: dict[int, str] = {}

    async def one(port: int, n: int) -> None:
        async with example.connect(port) as client:
            results[n] = (await client.call_tool("shout", {"text": f"client {n}"})).text

    with anyio.fail_after(TIMEOUT):
        async with serving(example.demo) as port, anyio.create_task_group() as tg:
            for n in range(5):
                tg.start_soon(one, port, n)

    assert results == {n: f"CLIENT {n}" for n in range(5)}


async def test_one_client_runs_many_calls_at_once_over_one_socket() -> None:
    results: dict[int, str] = {}

    async def one(client: toolkit.Client, n: int) -> None:
        results[n] = (await client.call_tool("shout", {"text": f"call {n}"})).text

    with anyio.fail_after(TIMEOUT):
        async with serving(example.demo) as port, example.connect(port) as client, anyio.create_task_group() as tg:
            for n in range(50):
                tg.start_soon(one, client, n)

    assert results == {n: f"CALL {n}" for n in range(50)}


class RawPeer:
    """A client that writes raw bytes to the socket and reads whole lines back: the wire, unfiltered."""

    def __init__(self, stream: SocketStream) -> None:
        self.stream = stream
        self.lines = BufferedByteReceiveStream(stream)

    async def read(self) -> Any:
        line = await self.lines.receive_until(b"\n", 1 << 20)
        assert b"\n" not in line  # every message is exactly one line
        return json.loads(line)


async def test_framing_newlines_end_messages_and_chunks_blank_lines_and_crlf_do_not_matter() -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    first = json.dumps(initialize).encode()
    with anyio.fail_after(TIMEOUT):
        async with serving(example.demo) as port:
            peer = RawPeer(await anyio.connect_tcp("127.0.0.1", port))
            # One message split across two writes, ended by CRLF, after a blank line.
            await peer.stream.send(b"\n" + first[:10])
            await peer.stream.send(first[10:] + b"\r\n")
            answer = await peer.read()
            # Two messages in one write.
            await peer.stream.send(json.dumps(initialized).encode() + b"\n" + json.dumps(ping).encode() + b"\n")
            pong = await peer.read()
            # Bytes that are not UTF-8: a parse error with id null, and the connection carries on.
            await peer.stream.send(b"\xff\xfe\n" + json.dumps({**ping, "id": 3}).encode() + b"\n")
            bad = await peer.read()
            pong_again = await peer.read()
            await peer.stream.aclose()

    assert answer["id"] == 1
    assert answer["result"]["protocolVersion"] == "2025-11-25"
    assert pong == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert bad["id"] is None
    assert bad["error"]["code"] == -32700
    assert pong_again == {"jsonrpc": "2.0", "id": 3, "result": {}}


async def test_the_transport_reports_end_of_stream_when_the_peer_closes() -> None:
    accepted: list[Any] = []
    with anyio.fail_after(TIMEOUT):
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
        async with listener, anyio.create_task_group() as tg:

            async def accept(stream: SocketStream) -> None:
                transport = example.TcpTransport(stream)
                accepted.append(await transport.receive())
                with pytest.raises(anyio.EndOfStream):
                    await transport.receive()
                await transport.aclose()
                tg.cancel_scope.cancel()

            tg.start_soon(listener.serve, accept)
            port = listener.extra(anyio.abc.SocketAttribute.local_port)
            client = await anyio.connect_tcp("127.0.0.1", port)
            await client.send(b'{"last": "message"}\n')
            await client.aclose()

    assert accepted == ['{"last": "message"}']
