"""Transports: the in-memory pair, newline framing over byte streams, and a real stdio server process."""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import anyio.lowlevel
import pytest
import servers
import wire

from toolkit import MemoryTransport, MessageError, Server, StreamTransport, Transport, tool
from toolkit._transports.base import RoutingTransport

pytestmark = pytest.mark.anyio


# -- MemoryTransport ----------------------------------------------------------------------------------------


def shutting_down(request_id: str) -> dict[str, Any]:
    """What a call still running past the shutdown grace is answered."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32000, "message": "Server shutting down"}}


async def test_a_memory_pair_carries_text_both_ways_in_order() -> None:
    left, right = MemoryTransport.pair()
    await left.send('{"a":1}')
    await left.send('{"a":2}')
    await right.send("back")

    assert [await right.receive(), await right.receive(), await left.receive()] == ['{"a":1}', '{"a":2}', "back"]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class ThreeMethods:
    """A user-written transport: only the three methods of the contract, no base class, no routing."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner

    async def send(self, message: str, /) -> None:
        await self.inner.send(message)

    async def receive(self) -> str:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_a_transport_of_only_send_receive_and_aclose_serves_a_call() -> None:
    mine, theirs = MemoryTransport.pair()
    transport = ThreeMethods(theirs)
    assert isinstance(transport, Transport)
    assert not isinstance(transport, RoutingTransport)  # the optional capability is declared, not guessed
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    params = {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": meta}
    async with anyio.create_task_group() as tg:
        tg.start_soon(Server("three", tools=[add]).serve, transport)
        await mine.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}))
        with anyio.fail_after(10):
            reply = json.loads(await mine.receive())
        await mine.aclose()
    wire.check_server_message(reply, "2026-07-28", "tools/call")
    assert reply["id"] == 1
    assert reply["result"]["content"] == [{"type": "text", "text": "3"}]


async def test_closing_one_end_lets_the_other_read_what_was_sent_then_end() -> None:
    left, right = MemoryTransport.pair()
    await left.send("last words")
    await left.aclose()

    assert await right.receive() == "last words"
    with pytest.raises(anyio.EndOfStream):
        await right.receive()
    with pytest.raises(anyio.BrokenResourceError):
        await right.send("anyone there?")
    await left.aclose()  # twice is harmless


async def test_a_full_memory_pipe_makes_the_sender_wait_for_the_reader() -> None:
    left, right = MemoryTransport.pair(buffer=2)
    await left.send("1")
    await left.send("2")
    with anyio.move_on_after(0.05) as blocked:
        await left.send("3")
    assert blocked.cancelled_caught

    assert await right.receive() == "1"
    with anyio.fail_after(wire.TIMEOUT):
        await left.send("3")
    assert [await right.receive(), await right.receive()] == ["2", "3"]


def test_a_memory_pair_needs_room_for_one_message() -> None:
    with pytest.raises(ValueError, match="buffer"):
        MemoryTransport.pair(buffer=0)


# -- StreamTransport framing --------------------------------------------------------------------------------


class Chunks:
    """A byte stream that yields the given chunks, then ends; it records what is written to it."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks = list(chunks)
        self.written = bytearray()

    async def receive(self, max_bytes: int = 65536) -> bytes:
        await anyio.lowlevel.checkpoint()
        if not self.chunks:
            raise anyio.EndOfStream
        chunk = self.chunks.pop(0)
        if len(chunk) > max_bytes:
            self.chunks.insert(0, chunk[max_bytes:])
            chunk = chunk[:max_bytes]
        return chunk

    async def send(self, item: bytes, /) -> None:
        self.written += item


async def read_all(transport: StreamTransport) -> list[Any]:
    """Every message, or the MessageError code standing for one that could not be read."""
    out: list[Any] = []
    with anyio.fail_after(wire.TIMEOUT):
        while True:
            try:
                out.append(await transport.receive())
            except MessageError as exc:
                out.append(exc.code)
            except anyio.EndOfStream:
                return out


async def test_lines_split_across_reads_are_joined_and_blank_lines_skipped() -> None:
    stream = Chunks(b'{"a"', b':1}\n\n  \n{"b":2}\r', b'\n{"c":', b"3}")
    assert await read_all(StreamTransport(stream, stream)) == ['{"a":1}', '{"b":2}', '{"c":3}']


async def test_bytes_that_are_not_utf8_are_one_parse_error_and_reading_goes_on() -> None:
    stream = Chunks(b'{"a":"\xff"}\n{"b":2}\n')
    assert await read_all(StreamTransport(stream, stream)) == [-32700, '{"b":2}']


async def test_a_line_over_the_size_limit_is_skipped_without_being_held_whole() -> None:
    huge = b'{"x":"' + b"y" * 5000 + b'"}\n'
    stream = Chunks(b'{"a":1}\n', huge[:2000], huge[2000:4000], huge[4000:], b'{"b":2}\n')
    messages = await read_all(StreamTransport(stream, stream, max_message_size=1024))

    assert messages == ['{"a":1}', -32600, '{"b":2}']


async def test_a_message_that_cannot_be_read_carries_the_members_read_before_the_problem() -> None:
    too_large = b'{"jsonrpc":"2.0","id":7,"result":{"text":"' + b"y" * 5000 + b'"}}\n'
    not_utf8 = b'{"jsonrpc":"2.0","id":"a","result":"\xff"}\n'
    id_last = b'{"result":"' + b"y" * 5000 + b'","id":8}\n'
    heads = []
    for data in (too_large, not_utf8, id_last):
        stream = Chunks(*(data[i : i + 1000] for i in range(0, len(data), 1000)))
        with pytest.raises(MessageError) as caught:
            await StreamTransport(stream, stream, max_message_size=1024).receive()
        heads.append((caught.value.code, caught.value.head))

    # The last member read may be cut short, so it is never among them: the id after a large result is unknown.
    assert heads == [(-32600, {"jsonrpc": "2.0", "id": 7}), (-32700, {"jsonrpc": "2.0", "id": "a"}), (-32600, {})]


async def test_a_message_exactly_at_the_size_limit_is_accepted() -> None:
    message = '{"x":"' + "y" * 1016 + '"}'
    assert len(message) == 1024
    stream = Chunks(message.encode() + b"\n")
    assert await read_all(StreamTransport(stream, stream, max_message_size=1024)) == [message]


async def test_sending_writes_one_line_per_message() -> None:
    stream = Chunks()
    transport = StreamTransport(stream, stream)
    await transport.send('{"a":"line\\nbreak"}')
    await transport.send('{"b":"é"}')

    assert bytes(stream.written) == '{"a":"line\\nbreak"}\n{"b":"é"}\n'.encode()


# -- a real stdio server --------------------------------------------------------------------------------------


async def test_every_message_is_one_line_of_json_even_with_newlines_in_the_data(anyio_backend: str) -> None:
    async with wire.stdio(wire.demo_command(anyio_backend)) as peer:
        await peer.initialize()
        echoed = await peer.call("echo", {"text": "two\nlines\r\nand\u2028more"})

    assert echoed["result"]["content"] == [{"type": "text", "text": "two\nlines\r\nand\u2028more"}]
    assert all("\n" not in line and "\r" not in line for line in peer.lines)


async def test_what_tools_print_goes_to_stderr_and_the_protocol_stream_stays_clean(anyio_backend: str) -> None:
    async with wire.stdio(wire.demo_command(anyio_backend)) as peer:
        await peer.initialize()
        shouted = await peer.call("shout")
        after = await peer.request("ping", id="after")

    assert shouted["result"] == {"content": [{"type": "text", "text": "quiet"}], "isError": False}
    assert after == {"jsonrpc": "2.0", "id": "after", "result": {}}
    assert [json.loads(line)["id"] for line in peer.lines] == [1, 2, "after"]
    for noise in ("print", "sys.stdout.write", "sys.stdout.buffer", "os.write(1)"):
        assert f"noise from {noise}\n" in peer.stderr


# The exits below are the process's own (its interpreter's shutdown, a thread still running at it): each server is
# started anew (`fresh=True`), not forked from the suite's warm zygote.


async def test_the_server_exits_with_code_0_when_stdin_closes(anyio_backend: str) -> None:
    async with wire.stdio(wire.demo_command(anyio_backend), fresh=True) as peer:
        await peer.initialize()
        await peer.close_input()
        rest = await peer.rest()
        code = await peer.wait_closed()

    assert (rest, code) == ([], 0)


async def test_the_server_exits_with_code_0_at_eof_even_with_a_sync_tool_stuck_in_a_thread(anyio_backend: str) -> None:
    stuck = str(servers.STUCK_SYNC)
    async with wire.stdio([sys.executable, stuck, anyio_backend], fresh=True) as peer:
        await peer.initialize()
        await peer.start_call("stuck", id="never")
        await peer.close_input()
        rest = await peer.rest()
        code = await peer.wait_closed()

    # cancelled after the shutdown grace and answered so (its client must not wait), and the process still exits
    assert (rest, code) == ([shutting_down("never")], 0)


async def test_the_server_exits_with_code_0_when_stdin_closes_before_any_message(anyio_backend: str) -> None:
    async with wire.stdio(wire.demo_command(anyio_backend), fresh=True) as peer:
        await peer.close_input()
        code = await peer.wait_closed()

    assert code == 0


async def test_a_call_in_flight_when_stdin_closes_is_still_answered(anyio_backend: str) -> None:
    async with wire.stdio(wire.demo_command(anyio_backend)) as peer:
        await peer.initialize()
        await peer.start_call("nap", {"seconds": 0.5}, id="late", _meta={"progressToken": 1})
        started = await peer.receive()
        await peer.close_input()
        rest = await peer.rest()
        code = await peer.wait_closed()

    assert started["params"] == {"progressToken": 1, "progress": 1, "message": "started"}
    rested = {"content": [{"type": "text", "text": "rested"}], "isError": False}
    assert rest == [{"jsonrpc": "2.0", "id": "late", "result": rested}]
    assert code == 0


async def test_a_call_still_running_after_the_shutdown_grace_is_cancelled_and_answered_so(anyio_backend: str) -> None:
    async with wire.stdio(wire.demo_command(anyio_backend, "--shutdown-grace", "0.1")) as peer:
        await peer.initialize()
        await peer.start_call("block", {"key": "k"}, id="stuck", _meta={"progressToken": 1})
        await peer.receive()
        await peer.close_input()
        rest = await peer.rest()
        code = await peer.wait_closed()

    assert (rest, code) == ([shutting_down("stuck")], 0)


async def test_an_open_subscription_does_not_hold_the_server_at_eof(anyio_backend: str) -> None:
    # A grace of a minute, and a bound well under it that still leaves a loaded machine time to stop the process
    # (under coverage it writes its data on the way out): 2 s under the default 5 s grace was too close.
    async with wire.stdio(wire.demo_command(anyio_backend, "--shutdown-grace", "60")) as peer:
        listen = {"notifications": {"toolsListChanged": True}, "_meta": wire.meta()}
        await peer.send({"jsonrpc": "2.0", "id": "sub", "method": "subscriptions/listen", "params": listen})
        ack = await peer.receive()
        await peer.close_input()
        with anyio.fail_after(20):  # well under the shutdown grace given to calls: the subscription did not wait it
            rest = await peer.rest()
            code = await peer.wait_closed()

    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert [m["method"] for m in rest] == ["notifications/cancelled"]  # the stream is told it ended
    assert code == 0


async def test_bytes_that_are_not_utf8_get_a_parse_error_and_the_server_keeps_serving(anyio_backend: str) -> None:
    async with wire.stdio(wire.demo_command(anyio_backend)) as peer:
        await peer.initialize()
        await peer.send_text(b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":"\xff\xfe"}}')
        reply = await peer.receive()
        after = await peer.request("ping", id="after")

    assert reply == wire.error(None, -32700)
    assert after == {"jsonrpc": "2.0", "id": "after", "result": {}}


async def test_an_oversize_message_gets_an_error_and_the_server_keeps_serving(anyio_backend: str) -> None:
    async with wire.stdio(wire.demo_command(anyio_backend, "--max-message-size", "4096")) as peer:
        await peer.initialize()
        await peer.start_call("echo", {"text": "x" * 100_000}, id=9)
        reply = await peer.receive()
        fits = await peer.call("echo", {"text": "x" * 3000})
        big = await peer.call("big", {"size": 100_000})  # the limit is on what the server reads, not what it sends

    assert reply == wire.error(9, -32600)  # its id came before the limit
    assert fits["result"] == {"content": [{"type": "text", "text": "x" * 3000}], "isError": False}
    assert len(big["result"]["content"][0]["text"]) == 100_000


async def test_crlf_line_endings_and_blank_lines_are_accepted(anyio_backend: str) -> None:
    async with wire.stdio(wire.demo_command(anyio_backend)) as peer:
        await peer.send_text(b"\n\r\n")
        await peer.send_text(b'{"jsonrpc":"2.0","id":"crlf","method":"ping"}\r')
        reply = await peer.receive()

    assert reply == {"jsonrpc": "2.0", "id": "crlf", "result": {}}


async def test_a_memory_connection_and_a_stdio_connection_say_the_same_thing(anyio_backend: str) -> None:
    transcripts = []
    for transport in ("memory", "stdio"):
        async with wire.connect(transport, anyio_backend) as peer:
            await peer.initialize()
            await peer.result("tools/list")
            await peer.call("add", {"a": 1, "b": 2})
            await peer.call("media")
            transcripts.append(list(peer.lines))

    assert transcripts[0] == transcripts[1]
