"""Any fault: whatever a tool or a client does, the server keeps serving, loses no request and leaks nothing.

Tools that raise every kind of exception, hang, return what cannot be sent, print to stdout, start threads;
clients that vanish mid-call, keep 1,000 calls in flight and cancel at random, write before they read, or stop
reading.
"""

from __future__ import annotations

import json
import os
import random
import select
import subprocess
import threading
from typing import Any

import anyio
import pytest
import wire
from fuzz_target import (
    BAD_VALUES,
    EXCEPTIONS,
    LEAKS,
    META,
    build,
    open_peer,
    serve_command,
    stdio_peer,
)

from toolkit import Client, MemoryTransport, Server, Transport

anyio_mark = pytest.mark.anyio


@pytest.fixture(params=["memory", "stdio"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def call_line(request_id: Any, name: str, arguments: dict[str, Any] | None = None, **meta: Any) -> bytes:
    """A 2026-07-28 `tools/call` request, encoded."""
    params = {"name": name, "arguments": arguments or {}, "_meta": {**META, **meta}}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}).encode()


def cancel_line(request_id: Any) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
    ).encode()


def text_of(reply: dict[str, Any]) -> tuple[bool, str]:
    result = reply["result"]
    return result.get("isError", False), result["content"][0]["text"]


# -- exceptions --------------------------------------------------------------------------------------------


@anyio_mark
async def test_a_tool_raising_any_exception_gives_a_generic_error_result_and_the_server_goes_on(
    transport: str, anyio_backend: str
) -> None:
    outcomes = {}
    async with open_peer(transport, anyio_backend) as peer:
        for kind in EXCEPTIONS:
            for tool in ("crash", "acrash"):
                outcomes[tool, kind] = text_of(await peer.call(tool, {"kind": kind}))
        after = text_of(await peer.call("echo", {"text": "still here"}))

    expected = {
        (tool, kind): (True, f"Error executing tool {tool!r}") for tool in ("crash", "acrash") for kind in EXCEPTIONS
    }
    expected["crash", "ToolErrorUnprintable"] = expected["acrash", "ToolErrorUnprintable"] = (
        True,
        "<Odd whose message cannot be shown>",
    )
    assert outcomes == expected
    assert after == (False, "still here")


@anyio_mark
async def test_exception_details_reach_the_client_only_when_the_server_opts_in() -> None:
    async with Client(build(show_error_details=True)[0]) as client:
        detailed = {kind: (await client.call_tool("crash", {"kind": kind})).text for kind in ("OSError", "Unprintable")}
    async with Client(build()[0]) as client:
        plain = (await client.call_tool("crash", {"kind": "OSError"})).text

    assert detailed == {
        "OSError": "Error executing tool 'crash': FileNotFoundError: [Errno 2] a secret detail: '/srv/secret/path.txt'",
        "Unprintable": "Error executing tool 'crash': Unprintable: <Unprintable whose message cannot be shown>",
    }
    assert plain == "Error executing tool 'crash'"


# -- values that cannot be sent ----------------------------------------------------------------------------


@anyio_mark
async def test_a_value_that_cannot_be_sent_is_an_error_and_the_server_goes_on(
    transport: str, anyio_backend: str
) -> None:
    replies = {}
    async with open_peer(transport, anyio_backend) as peer:
        for kind in BAD_VALUES:
            reply = await peer.call("bad", {"kind": kind})
            replies[kind] = text_of(reply) if "result" in reply else reply["error"]["code"]
        after = text_of(await peer.call("echo", {"text": "still here"}))

    unknown = "Unable to serialize unknown type: <class 'fuzz_target.Unserialisable'>"
    assert replies == {
        "object": (True, f"tool 'bad' returned a value that cannot be sent: {unknown}"),
        "circular": (
            True,
            "tool 'bad' returned a value that cannot be sent: Circular reference detected (id repeated)",
        ),
        "nan-in-dict": (False, '{"x":null,"y":null}'),
        "generator": (False, "[0,1,2]"),
        "non-str-keys": (False, '{"1,2":"tuple key"}'),
        "bytes-invalid-utf8": (False, '"__4A"'),
        "huge-int": (False, "1" + "0" * 5000),
        "lone-surrogate": -32603,  # the text cannot be UTF-8: an internal error reply, still exactly one
    }
    assert after == (False, "still here")


# -- hangs, timeouts, cancellation -------------------------------------------------------------------------


@anyio_mark
async def test_a_client_timeout_raises_and_cancels_the_call_on_the_server() -> None:
    server, state = build()
    async with Client(server) as client:
        with pytest.raises(TimeoutError):
            await client.call_tool("hold", {"key": "k"}, timeout=0.05)
        await anyio.wait_all_tasks_blocked()
        after = await client.call_tool("echo", {"text": "still here"})

    assert state.as_dict() == {"started": 1, "finished": 0, "cancelled": 1}
    assert after.text == "still here"


@anyio_mark
async def test_a_client_timeout_fires_even_when_the_server_has_stopped_reading() -> None:
    mine, theirs = MemoryTransport.pair(buffer=1)

    async def deaf_server() -> None:
        request = json.loads(await theirs.receive())
        result = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "resultType": "complete"}
        await theirs.send(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}))
        await anyio.sleep_forever()  # never reads again: the call fills the pipe, the cancel notice finds it full

    async with anyio.create_task_group() as tg:
        tg.start_soon(deaf_server)
        async with Client(mine, protocol="2026-07-28") as client:
            with anyio.fail_after(20), pytest.raises(TimeoutError):
                await client.call_tool("anything", timeout=0.05)
        tg.cancel_scope.cancel()


@anyio_mark
async def test_tool_timeout_ends_a_hanging_call_with_an_error_result(transport: str, anyio_backend: str) -> None:
    async with open_peer(transport, anyio_backend, tool_timeout=0.1) as peer:
        hung_async = text_of(await peer.call("hold", {"key": "k"}))
        hung_thread = text_of(await peer.call("hang"))
        await peer.call("unhang")  # let the abandoned worker thread go
        after = text_of(await peer.call("echo", {"text": "still here"}))

    assert hung_async == (True, "tool 'hold' timed out after 0.1 s")
    assert hung_thread == (True, "tool 'hang' timed out after 0.1 s")
    assert after == (False, "still here")


# -- stdout and threads ------------------------------------------------------------------------------------


@anyio_mark
async def test_tools_writing_to_stdout_and_starting_threads_leave_the_protocol_stream_clean(anyio_backend: str) -> None:
    async with stdio_peer(anyio_backend) as peer:
        shouted = text_of(await peer.call("shout"))
        spawned = text_of(await peer.call("spawn", {"count": 8}))
        echoes = [text_of(await peer.call("echo", {"text": str(i)})) for i in range(20)]

    assert (shouted, spawned) == ((False, "quiet"), (False, "8"))
    assert echoes == [(False, str(i)) for i in range(20)]


@anyio_mark
async def test_threads_a_tool_starts_do_not_disturb_the_connection_in_memory() -> None:
    server, state = build()
    async with Client(server) as client:
        assert (await client.call_tool("spawn", {"count": 8})).text == "8"
        assert (await client.call_tool("echo", {"text": "still here"})).text == "still here"
    for thread in state.threads:
        thread.join(10)

    assert [thread.is_alive() for thread in state.threads] == [False] * 8


# -- clients that go away ----------------------------------------------------------------------------------


@anyio_mark
async def test_a_client_that_disconnects_mid_call_ends_the_connection_cleanly_with_nothing_left_running() -> None:
    threads_before = set(threading.enumerate())
    tasks_before = len(anyio.get_running_tasks())
    server, state = build(shutdown_grace=0.05)
    mine, theirs = MemoryTransport.pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, theirs)
        await mine.send(call_line(1, "hold", {"key": "k"}).decode())
        await anyio.wait_all_tasks_blocked()
        assert state.started == 1
        await mine.aclose()

    assert state.as_dict() == {"started": 1, "finished": 0, "cancelled": 1}
    assert not server.registry.connections
    assert len(anyio.get_running_tasks()) == tasks_before
    assert set(threading.enumerate()) <= threads_before


@anyio_mark
async def test_a_server_process_whose_client_closes_stdin_mid_call_exits_with_code_0(anyio_backend: str) -> None:
    process = await anyio.open_process(
        serve_command(anyio_backend, shutdown_grace=0.05), stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    async with process:
        assert process.stdin is not None
        await process.stdin.send(call_line(1, "hold", {"key": "k"}, progressToken=1) + b"\n")
        assert process.stdout is not None
        # Each wait bounded on its own, generously (only a hang reaches it): under load a process's start (imports
        # under coverage) and its exit (coverage writes its data) took more than 20 s together.
        with anyio.fail_after(60):
            started = await process.stdout.receive()  # the progress notification: the call is running
        await process.stdin.aclose()
        with anyio.fail_after(60):
            code = await process.wait()

    assert json.loads(started)["method"] == "notifications/progress"
    assert code == 0


# -- many calls in flight ----------------------------------------------------------------------------------


@anyio_mark
async def test_1000_calls_in_flight_with_random_cancellations_each_end_in_a_reply_or_a_cancellation(
    transport: str, anyio_backend: str
) -> None:
    chosen = sorted(random.Random(8).sample(range(1000), 300))
    async with open_peer(transport, anyio_backend, max_concurrent_requests=1001) as peer:
        for n in range(1000):
            await peer.send_line(call_line(n, "hold", {"key": str(n)}, progressToken=n))
        await peer.wait_until(lambda: peer.ledger.notifications == 1000)  # every call is running
        for n in chosen:
            peer.ledger.forget(n)
            await peer.send_line(cancel_line(n))
        await peer.call("release")
        await peer.settle()
        stats = json.loads(text_of(await peer.call("stats"))[1])

    replied = sorted(m["id"] for m in peer.messages if isinstance(m.get("id"), int))
    assert replied == sorted(set(range(1000)) - set(chosen))
    assert [text_of(m) for m in peer.messages if m.get("id") == 0] == [(False, "0")]
    assert stats == {"started": 1000, "finished": 700, "cancelled": 300}


@anyio_mark
async def test_1000_client_calls_some_cancelled_by_their_scopes_each_end_exactly_once() -> None:
    server, state = build(max_concurrent_requests=1001)
    outcomes: dict[int, list[str]] = {n: [] for n in range(1000)}
    scopes = [anyio.CancelScope() for _ in range(1000)]
    # Through `Client(server)`'s own pipe (64 messages). The 300 notices go out one after another, sent by the first
    # caller cancelled (`RequestMatcher._cancel`); when each caller waited its own turn on the send lock, a second at
    # most, a loaded machine dropped most of them (CI: 54 of 300 reached the server).
    async with anyio.create_task_group() as serving:
        mine, theirs = MemoryTransport.pair()
        serving.start_soon(server.serve, theirs)
        async with Client(mine) as client:

            async def call(n: int) -> None:
                with scopes[n]:
                    result = await client.call_tool("hold", {"key": str(n)})
                    outcomes[n].append(f"result {result.text}")
                if scopes[n].cancelled_caught:
                    outcomes[n].append("cancelled")

            async with anyio.create_task_group() as tg:
                for n in range(1000):
                    tg.start_soon(call, n)
                with anyio.fail_after(60):  # only a hang reaches it (20 s was not enough under load)
                    while state.started < 1000:
                        await anyio.wait_all_tasks_blocked()
                chosen = set(random.Random(8).sample(range(1000), 300))
                for n in chosen:
                    scopes[n].cancel()
                # Released once the server has seen every cancellation: they reach it as notifications, which a busy
                # machine (the suite in parallel) may not have delivered by the time every task here is blocked.
                with anyio.move_on_after(60):
                    while state.cancelled < 300:
                        await anyio.lowlevel.checkpoint()  # a yield, not a wait: the server's tasks run meanwhile
                assert state.cancelled == 300, state.as_dict()
                await client.call_tool("release")

    assert outcomes == {n: ["cancelled"] if n in chosen else [f"result {n}"] for n in range(1000)}
    assert state.as_dict() == {"started": 1000, "finished": 700, "cancelled": 300}


class CountingTransport:
    """A transport that counts the messages the server has read through it."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.received = 0

    async def send(self, message: str, /) -> None:
        await self.inner.send(message)

    async def receive(self) -> str:
        message = await self.inner.receive()
        self.received += 1
        return message

    async def aclose(self) -> None:
        await self.inner.aclose()


class SteadyLink(CountingTransport):
    """The client's end of a pipe that takes `pause` seconds to send each message: slow, but it never stops."""

    def __init__(self, inner: Transport, pause: float) -> None:
        super().__init__(inner)
        self.pause = pause

    async def send(self, message: str, /) -> None:
        await anyio.sleep(self.pause)  # the link's own pace (what is tested is that the notices wait for it)
        await self.inner.send(message)


@anyio_mark
async def test_calls_cancelled_at_once_on_a_slow_link_tell_the_server_of_every_one() -> None:
    # 40 notices at 0.05 s each take 2 s in all, twice CANCEL_NOTICE_SECONDS: each is sent within the bound of the one
    # before, so none is dropped (each caller waiting its own turn for at most a second dropped the last half).
    server, state = build(max_concurrent_requests=100)
    mine, theirs = MemoryTransport.pair()
    link = SteadyLink(mine, pause=0.0)
    async with anyio.create_task_group() as serving:
        serving.start_soon(server.serve, theirs)
        async with Client(link) as client:
            async with anyio.create_task_group() as tg:
                for n in range(40):
                    tg.start_soon(client.call_tool, "hold", {"key": str(n)})
                with anyio.fail_after(wire.TIMEOUT):
                    while state.started < 40:
                        await anyio.wait_all_tasks_blocked()
                link.pause = 0.05
                tg.cancel_scope.cancel()
            # Every caller has left; the server counts the cancellations it was told of (the client is still open:
            # its end would cancel the calls by itself).
            with anyio.move_on_after(wire.TIMEOUT):
                while state.cancelled < 40:
                    await anyio.lowlevel.checkpoint()
            counted = state.as_dict()
        serving.cancel_scope.cancel()
    assert counted == {"started": 40, "finished": 0, "cancelled": 40}


@anyio_mark
async def test_calls_beyond_max_concurrent_requests_are_refused_at_once_and_accepted_again_later(
    transport: str, anyio_backend: str
) -> None:
    async with open_peer(transport, anyio_backend, max_concurrent_requests=4) as peer:
        for n in range(5):
            await peer.send_line(call_line(n, "hold", {"key": str(n)}))
        refused = await peer.wait_for(lambda m: "error" in m)
        for n in range(4):
            peer.ledger.forget(n)
            await peer.send_line(cancel_line(n))
        for _ in range(100):  # as a client would: retry until a slot is free (the cancelled calls unwind)
            reply = await peer.call("echo", {"text": "accepted"})
            if "result" in reply:
                break

    assert refused == {"jsonrpc": "2.0", "id": 4, "error": {"code": -32603, "message": "Too many requests in flight"}}
    assert text_of(reply) == (False, "accepted")


# -- a client that pipelines, or does not read -------------------------------------------------------------


def pipelined(count: int, holds: list[str], cancelled: list[str], big: str) -> list[bytes]:
    """`count` lines a pipelining client writes before it reads: calls and malformed lines, ten echoes of `big`,
    five lines of `big` cut short, deep nesting, and `hold` calls (first) of which `cancelled` are cancelled; the
    last line releases the other holds."""
    specials = [call_line(f"big-{k}", "echo", {"text": big}) for k in range(10)]
    specials += [b'{"jsonrpc":"2.0","id":"cut","method":"tools/call","params":{"text":"' + big.encode()] * 5
    specials += [b"[" * 10_000 + b"]" * 10_000, b'{"a":' * 300 + b"1" + b"}" * 300] * 5
    specials += [cancel_line(key) for key in cancelled]
    fillers = []
    for n in range(count - len(holds) - len(specials) - 1):
        fillers.append(
            (
                call_line(f"echo-{n}", "echo", {"text": str(n)}),
                b"{not json %d" % n,
                call_line(f"add-{n}", "add", {"a": n, "b": 1}),
                json.dumps({"jsonrpc": "2.0", "id": f"bad-{n}", "method": 7}).encode(),
            )[n % 4]
        )
    body = fillers + specials
    random.Random(11).shuffle(body)
    lines = [call_line(key, "hold", {"key": key}, progressToken=key) for key in holds]
    return [*lines, *body, call_line("release", "release")]


@anyio_mark
async def test_a_client_that_writes_5000_messages_before_reading_gets_every_reply_exactly_once(
    transport: str, anyio_backend: str
) -> None:
    big = "x" * 2_000_000
    holds = [f"hold-{k}" for k in range(50)]
    cancelled = holds[::2]
    lines = pipelined(5000, holds, cancelled, big)
    # Every call admitted (sync tools queue for worker threads, so more than the default 1,000 may be running and
    # would be refused): this test is about the replies waiting for the client, with the default bounds.
    async with open_peer(transport, anyio_backend, reading=False, max_concurrent_requests=5000) as peer:
        with anyio.fail_after(60):  # the server reads all of it although nobody reads a reply
            for line in lines:
                if line.startswith(b'{"jsonrpc": "2.0", "method": "notifications/cancelled"'):
                    peer.ledger.forget(json.loads(line)["params"]["requestId"])
                await peer.send_line(line)
        peer.start_reading()
        await peer.settle()
        after = text_of(await peer.call("echo", {"text": "still here"}))

    order = [(m.get("method"), m.get("id") or m.get("params", {}).get("progressToken")) for m in peer.messages]
    released = [key for key in holds if key not in cancelled]
    assert len(lines) == 5000
    assert peer.ledger.settled()  # every reply exactly once: the books also fail on a second reply to any id
    # Every line deserves one reply but the cancellations and the calls they cancel; plus the call after.
    assert peer.ledger.replies == sum(peer.ledger.expected.values()) == 5000 - 2 * len(cancelled) + 1
    assert [text_of(peer.reply(f"big-{k}")) for k in range(10)] == [(False, big)] * 10
    assert [text_of(peer.reply(key)) for key in released] == [(False, key) for key in released]
    assert all(order.index(("notifications/progress", key)) < order.index((None, key)) for key in released)
    assert not any(key in {m.get("id") for m in peer.messages} for key in cancelled)
    assert after == (False, "still here")


@anyio_mark
@pytest.mark.parametrize(
    ("bound", "size", "held"),
    [({"max_queued_messages": 50}, 10, 50), ({"max_queued_bytes": 1_000_000}, 100_000, 10)],
    ids=["messages", "bytes"],
)
async def test_a_client_that_never_reads_stops_the_server_reading_once_the_outbox_is_full(
    bound: dict[str, int], size: int, held: int
) -> None:
    server, _ = build(max_concurrent_requests=16, **bound)
    mine, theirs = MemoryTransport.pair(buffer=8)
    counting = CountingTransport(theirs)

    async def flood() -> None:
        for n in range(2000):
            await mine.send(call_line(n, "abig", {"size": size}).decode())

    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, counting)
        tg.start_soon(flood)
        await anyio.wait_all_tasks_blocked()
        stalled_at = counting.received
        with anyio.fail_after(60):  # 2,000 replies (200 MB in bytes): only a hang reaches it, however loaded
            replies = [json.loads(await mine.receive()) for _ in range(2000)]
            await mine.send(call_line("last", "abig", {"size": 1}).decode())
            last = json.loads(await mine.receive())
        await mine.aclose()

    # Read while there was room, then stopped: the client's pipe holds 8 replies, the outbox `held`, one is being
    # written, and each of the 16 calls in flight waits with its reply; the 2,000 replies never pile up.
    assert 8 + held <= stalled_at <= 8 + held + 1 + 16 + 1
    assert text_of(last) == (False, "x")
    assert sorted(r["id"] for r in replies) == list(range(2000))
    refused = {"code": -32603, "message": "Too many requests in flight"}  # the 17th call while 16 wait for room
    assert all(r["error"] == refused if "error" in r else text_of(r) == (False, "x" * size) for r in replies)


def test_outbox_bounds_below_one_are_refused_when_the_server_is_made() -> None:
    with pytest.raises(ValueError, match=r"^max_queued_messages and max_queued_bytes must be at least 1$"):
        Server("s", max_queued_messages=0)
    with pytest.raises(ValueError, match=r"^max_queued_messages and max_queued_bytes must be at least 1$"):
        Server("s", max_queued_bytes=0)


def vm(pid: int, field: str) -> int:
    """A memory figure of a process, in bytes, from /proc/PID/status (VmRSS, VmHWM)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} for {pid}")


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads memory figures from /proc")
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_stdio_server_whose_client_stops_reading_stops_reading_too_with_bounded_memory(backend: str) -> None:
    bound = 20_000_000
    command = serve_command(backend, max_concurrent_requests=8, max_queued_messages=1000, max_queued_bytes=bound)
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(call_line(-1, "abig", {"size": 1}) + b"\n")
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == -1
        baseline = vm(process.pid, "VmRSS")
        fd = process.stdin.fileno()
        os.set_blocking(fd, False)
        sent = 0
        while sent < 5000:
            try:
                os.write(fd, call_line(sent, "abig", {"size": 1_000_000}) + b"\n")  # < PIPE_BUF: all or nothing
            except BlockingIOError:
                if not select.select([], [fd], [], 2.0)[1]:
                    break  # two seconds without room: the server has stopped reading
                continue
            sent += 1
        peak = vm(process.pid, "VmHWM")
        replies = [json.loads(process.stdout.readline()) for _ in range(sent)]
        os.set_blocking(fd, True)
        process.stdin.close()
        code = process.wait(20)

    # It read while its outbox had room (for 20 replies of 1 MB, or 1,000 messages: calls beyond the 8 in flight
    # are refused), then stopped; beyond the outbox it holds the replies of the 8 calls in flight and the one
    # being written. What it read beyond that waited in the pipe and its 64 kB read buffer (about 700 lines).
    assert bound // 1_000_000 <= sent < 3000, "the server kept reading although nobody read its replies"
    assert peak - baseline < bound + 30_000_000, f"the server grew by {(peak - baseline) / 1e6:.0f} MB"
    assert sorted(r["id"] for r in replies) == list(range(sent))
    assert code == 0
    assert not any(leak in json.dumps(r) for r in replies for leak in LEAKS)
