"""Any input: the server answers every request with a usable id exactly once, notifications never, and keeps serving.

Property tests (hypothesis) over the in-memory transport and a real stdio subprocess, plus the named hostile
inputs of issue 8 one by one. `TOOLKIT_FUZZ_EXAMPLES=5000 pytest tests/test_fuzz.py` runs more examples; for
a longer run, `python -m tests.fuzz_target --seconds 300` (see docs/reliability.md).
"""

from __future__ import annotations

import json
import os
import tracemalloc
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from fuzz_target import (
    META,
    build,
    draw_cases,
    expected_replies,
    lines,
    memory_peer,
    open_peer,
    run_cases,
    stdio_peer,
    without_cancellations_of,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit import StreamTransport

pytestmark = pytest.mark.anyio

EXAMPLES = int(os.environ.get("TOOLKIT_FUZZ_EXAMPLES", "60"))
fuzz_settings = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(params=["memory", "stdio"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# -- properties --------------------------------------------------------------------------------------------


@fuzz_settings
@given(case=lines, era=st.sampled_from(["modern", "2025-11-25", "2025-03-26"]))
async def test_any_case_in_memory_gets_one_reply_per_request_and_the_next_call_works(
    case: list[bytes], era: str
) -> None:
    async with memory_peer(build()[0]) as peer:
        if era != "modern":
            await peer.handshake(era)
        await peer.exchange(without_cancellations_of(case))
        assert peer.ledger.lost == 0


async def test_fuzzed_cases_over_stdio_get_one_reply_per_request_and_the_process_exits_0(anyio_backend: str) -> None:
    cases = draw_cases(EXAMPLES)

    ledger = await run_cases("stdio", anyio_backend, cases)

    assert (ledger.cases, ledger.lost) == (len(cases), 0)


# -- the reply model the properties rely on ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "replies"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"ping"}', [7]),
        (b'{"jsonrpc":"2.0","method":"ping"}', []),
        (b'{"jsonrpc":"2.0","id":7,"result":{}}', []),
        (b'{"jsonrpc":"1.0","id":7,"method":"ping"}', [7]),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', [None]),
        (b'{"jsonrpc":"2.0","id":7}', [7]),
        (b"[1]", [None]),
        (b"\xff", [None]),
        (b"   ", []),
        (b"[" * 300 + b"]" * 300, [None]),
    ],
)
def test_the_reply_model_follows_json_rpc(line: bytes, replies: list[Any]) -> None:
    assert expected_replies(line) == replies


# -- named hostile inputs ----------------------------------------------------------------------------------


def request_line(request_id: Any, method: str = "ping", **members: Any) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, **members}
    return json.dumps(message).encode()


async def test_every_kind_of_id_gets_the_reply_json_rpc_prescribes(transport: str, anyio_backend: str) -> None:
    async with open_peer(transport, anyio_backend) as peer:
        await peer.handshake()
        for request_id in [2**200, -(2**70), "", "ünï", None, 1.5, 1.0, True, {"a": 1}, [1]]:
            await peer.send_line(request_line(request_id))
        await peer.send_line(b'{"jsonrpc":"2.0","method":"ping"}')
        await peer.settle()

        replies = [(m["id"], "result" if "result" in m else m["error"]["code"]) for m in peer.messages[1:]]
        assert replies == [
            (2**200, "result"),
            (-(2**70), "result"),
            ("", "result"),
            ("ünï", "result"),
            *[(None, -32600)] * 6,
        ]


async def test_a_duplicate_id_while_the_first_call_runs_is_refused_and_the_first_still_answers(
    transport: str, anyio_backend: str
) -> None:
    async with open_peer(transport, anyio_backend) as peer:
        hold = {"name": "hold", "arguments": {"key": "k"}, "_meta": {**META, "progressToken": "t"}}
        await peer.send_line(request_line("dup", "tools/call", params=hold))
        await peer.send_line(request_line("dup", "tools/call", params={"name": "echo", "arguments": {"text": "x"}}))
        refused = await peer.wait_for(lambda m: "error" in m)
        await peer.call("release")
        await peer.settle()

        answers = [m for m in peer.messages if m.get("id") == "dup"]
        assert answers == [refused, answers[1]]
        assert (refused["error"]["code"], answers[1]["result"]["content"]) == (-32600, [{"type": "text", "text": "k"}])


async def test_json_nested_10000_levels_is_one_parse_error_and_the_server_goes_on(
    transport: str, anyio_backend: str
) -> None:
    async with open_peer(transport, anyio_backend) as peer:
        await peer.send_line(b"[" * 10_000 + b"]" * 10_000)
        await peer.send_line(b'{"a":' * 10_000 + b"1" + b"}" * 10_000)
        reply = await peer.call("echo", {"text": "after"})

        errors = [(m["id"], m["error"]["code"]) for m in peer.messages if "error" in m]
        assert errors == [(None, -32700), (None, -32700)]
        assert reply["result"]["content"] == [{"type": "text", "text": "after"}]


async def test_wrong_param_types_get_invalid_params_and_the_server_goes_on(transport: str, anyio_backend: str) -> None:
    async with open_peer(transport, anyio_backend) as peer:
        await peer.handshake()
        for params in [[1, 2], "text", 3, {"name": 5}, {"name": "echo", "arguments": [1]}, {"name": "nope"}]:
            await peer.send_line(request_line(f"p{len(peer.messages)}-{params!r}", "tools/call", params=params))
            await peer.settle()
        reply = await peer.call("echo", {"text": "after"})

        assert [m["error"]["code"] for m in peer.messages if "error" in m] == [-32602] * 6
        assert reply["result"]["content"] == [{"type": "text", "text": "after"}]


async def test_a_long_string_travels_intact(transport: str, anyio_backend: str) -> None:
    text = "ü" * 4_000_000  # 8 MB of UTF-8, under the 16 MiB default limit
    async with open_peer(transport, anyio_backend) as peer:
        reply = await peer.call("echo", {"text": text})

    assert reply["result"]["content"] == [{"type": "text", "text": text}]


async def test_a_message_over_max_message_size_is_refused_over_stdio_and_the_server_goes_on(anyio_backend: str) -> None:
    async with stdio_peer(anyio_backend, max_message_size=1_000_000) as peer:
        too_big = request_line(1, "tools/call", params={"name": "echo", "arguments": {"text": "x" * 3_000_000}})
        await peer.send_line(too_big, replies=[1])  # its id comes before the limit: the error has it
        id_last = b'{"jsonrpc":"2.0","params":{"x":"' + b"x" * 3_000_000 + b'"},"id":2,"method":"ping"}'
        await peer.send_line(id_last, replies=[None])  # its id comes after the limit: never read, id null
        reply = await peer.call("echo", {"text": "after"})

        assert [m for m in peer.messages if "error" in m] == [
            {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "message larger than 1000000 bytes"}},
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "message larger than 1000000 bytes"}},
        ]
        assert reply["result"]["content"] == [{"type": "text", "text": "after"}]


class Endless:
    """A byte stream that makes one huge line on the fly, chunk by chunk, then sends a ping, then ends."""

    def __init__(self, size: int) -> None:
        self.left = size
        self.parts = [b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"']
        self.tail = [b'"}}\n', request_line(2) + b"\n"]

    async def receive(self, max_bytes: int = 65536) -> bytes:
        await anyio.lowlevel.checkpoint()
        if self.parts:
            return self.parts.pop(0)
        if self.left > 0:
            chunk = min(self.left, max_bytes)
            self.left -= chunk
            return b"a" * chunk
        if self.tail:
            return self.tail.pop(0)
        raise anyio.EndOfStream


class Sink:
    def __init__(self) -> None:
        self.lines: list[Any] = []

    async def send(self, data: bytes) -> None:
        self.lines.append(json.loads(data))


async def test_an_oversize_line_is_discarded_chunk_by_chunk_without_being_held_in_memory() -> None:
    server, _ = build(max_message_size=1_000_000)
    source, sink = Endless(100_000_000), Sink()  # 100 MB in one line
    await server.serve(StreamTransport(source, sink, max_message_size=1_000_000))  # warm up imports and caches
    source, sink = Endless(100_000_000), Sink()

    tracemalloc.start()
    try:
        with anyio.fail_after(60):
            await server.serve(StreamTransport(source, sink, max_message_size=1_000_000))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert sink.lines == [
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "message larger than 1000000 bytes"}},
        {"jsonrpc": "2.0", "id": 2, "result": {}},
    ]
    assert peak < 4_000_000, f"peak {peak} bytes while discarding a 100 MB line"
