"""Fuzzing and fault injection for toolkit's message handling: the shared harness and a longer bounded run.

`tests/test_fuzz.py` and `tests/test_faults.py` import this module. Run it to fuzz for longer:

    python -m tests.fuzz_target --seconds 300                  # memory and stdio, asyncio and trio
    python -m tests.fuzz_target --seconds 60 --transport stdio --backend trio

It prints the cases fuzzed, the messages sent and answered, and the requests lost (which must be 0), and
exits 1 on the first broken invariant, with hypothesis's shrunk counterexample. `serve` runs the fuzzed
server over stdio (the subprocess end of the stdio runs):

    python tests/fuzz_target.py serve [--backend trio] [--max-concurrent-requests N] [--tool-timeout S] ...
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit import Context, MemoryTransport, Server, ToolError

MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
BATCH_VERSION = "2025-03-26"  # the one revision with JSON-RPC batches
MAX_DEPTH = 200  # JSON nested deeper than this is refused as a parse error (pydantic-core's limit)
TIMEOUT = 20.0  # seconds any one wait may take: generous, so that only a hang fails
SELF = Path(__file__).resolve()
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
}
# Text that would betray an internal detail if it reached a client.
LEAKS = ("Traceback", 'File "', str(SELF.parent.parent), "site-packages", "a secret detail")


# -- the server under test ---------------------------------------------------------------------------------


class Unprintable(Exception):
    """An exception whose str() and repr() raise."""

    def __str__(self) -> str:
        raise RuntimeError("str() of this exception raises")

    def __repr__(self) -> str:
        raise RuntimeError("repr() of this exception raises")


class UnprintableBase(BaseException):
    """A BaseException subclass whose str() raises."""

    def __str__(self) -> str:
        raise RuntimeError("str() of this exception raises")


def _recurse(depth: int) -> int:
    return _recurse(depth + 1) + 1


def raise_kind(kind: str) -> None:
    """Raise the exception named `kind` (one of `EXCEPTIONS`), carrying text that must not reach a client."""
    if kind == "RecursionError":
        _recurse(0)
    raise EXCEPTIONS[kind]()


EXCEPTIONS: dict[str, Callable[[], BaseException]] = {
    "ValueError": lambda: ValueError("a secret detail in /etc/passwd"),
    "RuntimeError": lambda: RuntimeError("a secret detail"),
    "KeyError": lambda: KeyError("a secret detail"),
    "OSError": lambda: FileNotFoundError(2, "a secret detail", "/srv/secret/path.txt"),
    "KeyboardInterrupt": lambda: KeyboardInterrupt("a secret detail"),
    "SystemExit": lambda: SystemExit(3),
    "GeneratorExit": lambda: GeneratorExit("a secret detail"),
    "BaseException": lambda: BaseException("a secret detail"),
    "StopIteration": lambda: StopIteration("a secret detail"),
    "StopAsyncIteration": lambda: StopAsyncIteration("a secret detail"),
    "MemoryError": lambda: MemoryError("a secret detail"),
    "RecursionError": lambda: RecursionError("a secret detail"),
    "Unprintable": Unprintable,
    "UnprintableBase": UnprintableBase,
    "CancelledError": asyncio.CancelledError,  # raised by the tool itself, not a cancellation of the call
    "ToolErrorUnprintable": lambda: type("Odd", (ToolError,), {"__str__": Unprintable.__str__})("x"),
}


class Unserialisable:
    """Neither JSON nor anything pydantic knows."""

    __module__ = "fuzz_target"  # the same name in process and in the `serve` subprocess (where it is __main__)


def _circular() -> list[Any]:
    items: list[Any] = []
    items.append(items)
    return items


BAD_VALUES: dict[str, Callable[[], Any]] = {
    "object": Unserialisable,
    "circular": _circular,
    "nan-in-dict": lambda: {"x": math.nan, "y": math.inf},
    "generator": lambda: (i for i in range(3)),
    "non-str-keys": lambda: {(1, 2): "tuple key"},
    "bytes-invalid-utf8": lambda: b"\xff\xfe\x00",
    "huge-int": lambda: 10**5000,
    "lone-surrogate": lambda: "\ud800",
}


class State:
    """What the server's tools record, readable in process and through the `stats` tool."""

    def __init__(self) -> None:
        self.started = 0
        self.finished = 0
        self.cancelled = 0
        self.gate: anyio.Event | None = None
        self.release_sync = threading.Event()
        self.threads: list[threading.Thread] = []

    def as_dict(self) -> dict[str, int]:
        return {"started": self.started, "finished": self.finished, "cancelled": self.cancelled}


def build(**options: Any) -> tuple[Server, State]:
    """A fresh fuzz server and the record its tools keep. `options` go to `Server(...)`."""
    options.setdefault("shutdown_grace", 0.5)
    server = Server("fuzz", version="1.0.0", **options)
    state = State()

    @server.tool
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @server.tool(structured=True)
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool
    def fail() -> str:
        """Fail with a message meant for the model."""
        raise ToolError("the tool failed on purpose")

    @server.tool
    def crash(kind: str) -> str:
        """Raise the exception named `kind`, from a worker thread."""
        raise_kind(kind)
        return "unreachable"

    @server.tool
    async def acrash(kind: str) -> str:
        """Raise the exception named `kind`, in the event loop."""
        raise_kind(kind)
        return "unreachable"

    @server.tool
    def bad(kind: str) -> Any:
        """Return a value that cannot be sent."""
        return BAD_VALUES[kind]()

    @server.tool
    async def hold(key: str, ctx: Context) -> str:
        """Report progress once, then wait until `release` is called; records how each call ended."""
        state.started += 1
        if state.gate is None:
            state.gate = anyio.Event()
        try:
            await ctx.report_progress(1, message="started")
            await state.gate.wait()
        except BaseException:
            state.cancelled += 1
            raise
        state.finished += 1
        return key

    @server.tool
    async def release() -> str:
        """Let every `hold` call finish."""
        if state.gate is None:
            state.gate = anyio.Event()
        state.gate.set()
        return "released"

    @server.tool
    def stats() -> dict[str, int]:
        """How many `hold` calls started, finished and were cancelled."""
        return state.as_dict()

    @server.tool
    def hang() -> str:
        """Block a worker thread until `unhang` is called (or for a minute)."""
        state.release_sync.wait(60)
        return "unhung"

    @server.tool
    def unhang() -> str:
        """Let `hang` calls return."""
        state.release_sync.set()
        return "ok"

    @server.tool
    async def sleep(seconds: float) -> str:
        """Sleep in the event loop."""
        await anyio.sleep(seconds)
        return "slept"

    @server.tool
    def big(size: int) -> str:
        """A text of `size` characters."""
        return "x" * size

    @server.tool
    async def abig(size: int) -> str:
        """A text of `size` characters, made in the event loop."""
        return "x" * size

    @server.tool
    def shout() -> str:
        """Write to stdout in every way a tool or a library might."""
        print("noise from print")
        sys.stdout.write("noise from sys.stdout.write\n")
        sys.stdout.flush()
        sys.stdout.buffer.write(b"noise from sys.stdout.buffer\n")
        sys.stdout.buffer.flush()
        os.write(1, b"noise from os.write(1)\n")
        return "quiet"

    @server.tool
    def spawn(count: int) -> int:
        """Start `count` threads that print to stdout after the call returned; returns how many started."""
        go = threading.Event()

        def noisy() -> None:
            go.wait(10)
            print("noise from a thread the tool started")
            sys.stdout.buffer.write(b"more noise from that thread\n")
            sys.stdout.buffer.flush()

        for _ in range(count):
            thread = threading.Thread(target=noisy)
            thread.start()
            state.threads.append(thread)
        threading.Timer(0.01, go.set).start()
        return count

    return server, state


# Tools a fuzzed call may reach: they answer at once. (`hold`, `hang` and `sleep` wait, so a call to them
# would have no answer within the case; `spawn` is a fault test of its own.)
FUZZ_TOOLS = ("echo", "add", "fail", "crash", "acrash", "bad", "stats", "release", "unhang", "missing")
SLOW_TOOLS = frozenset(build()[0].tools) - set(FUZZ_TOOLS)


# -- what a message deserves -------------------------------------------------------------------------------


def usable_id(value: Any) -> bool:
    """JSON-RPC ids a server can answer with: strings and integers (not booleans, floats or null)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def expected_replies(data: bytes, framed: bool = True, batches: bool = False) -> list[Any]:
    """The ids of the replies one line deserves (None: an error with a null id); empty for none.

    JSON-RPC 2.0: a request gets exactly one response, with its id; a notification (no `id`) and a response
    get none; anything else gets one error, with the id when it can be read and `null` when not. A blank line
    is no message at all when `framed` (stdio framing skips it). With `batches` (2025-03-26), a non-empty
    array gets one array of the replies its items deserve (none if they deserve none); otherwise an array is
    one error.
    """
    if framed and not data.strip():
        return []
    try:
        message = json.loads(data.decode("utf-8"), parse_constant=_reject)
    except (ValueError, RecursionError):
        return [None]
    if _depth(message) > MAX_DEPTH:
        return [None]  # the server's parser refuses deeper JSON: a parse error, whatever the content
    if batches and isinstance(message, list) and message:
        return [reply for item in message for reply in _replies_to(item)]
    return _replies_to(message)


def _replies_to(message: Any) -> list[Any]:
    if not isinstance(message, dict):
        return [None]
    request_id = message.get("id")
    readable = request_id if usable_id(request_id) else None
    if message.get("jsonrpc") != "2.0":
        return [readable]
    if "method" not in message and ("result" in message or "error" in message):
        return []
    if not isinstance(message.get("method"), str):
        return [readable]
    if "id" not in message:
        return []
    return [readable]


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def _reject(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def check_message(text: str) -> Any:
    """Fail unless `text` is a well-formed JSON-RPC response, batch of responses or notification, leaking nothing."""
    assert "\n" not in text, f"a message with an embedded newline: {text[:200]!r}"
    for leak in LEAKS:
        assert leak not in text, f"{leak!r} reached the client: {text[:500]}"
    message = json.loads(text)
    if isinstance(message, list):
        assert message, "an empty batch reply"
        for item in message:
            assert "method" not in _check_one(item, text), f"a notification inside a batch reply: {text[:200]}"
        return message
    return _check_one(message, text)


def _check_one(message: Any, text: str) -> dict[str, Any]:
    assert isinstance(message, dict), f"not an object: {text[:200]}"
    assert message.get("jsonrpc") == "2.0", f"bad jsonrpc member: {text[:200]}"
    if "method" in message:
        assert set(message) <= {"jsonrpc", "method", "params"}, f"a server request or junk: {text[:200]}"
        assert isinstance(message["method"], str)
        assert isinstance(message.get("params", {}), dict)
        return message
    assert set(message) in ({"jsonrpc", "id", "result"}, {"jsonrpc", "id", "error"}), f"bad envelope: {text[:200]}"
    if "result" in message:
        assert usable_id(message["id"]), f"a result needs the request's id: {text[:200]}"
        assert isinstance(message["result"], dict), f"a result must be an object: {text[:200]}"
    else:
        assert message["id"] is None or usable_id(message["id"]), f"bad id: {text[:200]}"
        error = message["error"]
        assert isinstance(error, dict), text[:200]
        assert set(error) <= {"code", "message", "data"}, text[:200]
        assert isinstance(error.get("code"), int), text[:200]
        assert isinstance(error.get("message"), str), text[:200]
    return message


# -- a raw peer that keeps the books -----------------------------------------------------------------------


class Ledger:
    """Replies expected and received, by id (ids are compared through their JSON text)."""

    def __init__(self) -> None:
        self.expected: Counter[str] = Counter()
        self.received: Counter[str] = Counter()
        self.cases = 0
        self.sent = 0
        self.replies = 0
        self.notifications = 0

    def expect(self, request_id: Any) -> None:
        self.expected[json.dumps(request_id)] += 1

    def receive(self, request_id: Any, text: str) -> None:
        key = json.dumps(request_id)
        self.received[key] += 1
        self.replies += 1
        assert self.received[key] <= self.expected[key], f"a reply no request asked for: {text[:300]}"

    def forget(self, request_id: Any) -> None:
        """The request was cancelled: it must get no reply from now on."""
        self.expected[json.dumps(request_id)] -= 1

    def settled(self) -> bool:
        return self.received == self.expected

    def add(self, other: Ledger) -> None:
        self.cases += other.cases
        self.sent += other.sent
        self.replies += other.replies
        self.notifications += other.notifications
        self.expected += other.expected
        self.received += other.received

    @property
    def lost(self) -> int:
        return sum((self.expected - self.received).values())


class Peer:
    """One raw connection to the fuzz server; a background task reads and checks everything it sends."""

    def __init__(self, write: Callable[[bytes], Any], framed: bool) -> None:
        self._write = write
        self._framed = framed
        self.ledger = Ledger()
        self.messages: list[dict[str, Any]] = []
        self._changed = anyio.Event()
        self._ids = itertools.count()
        self.modern = True
        self.version = MODERN
        self.last_case: list[bytes] = []
        self.reading = anyio.Event()  # the background reader reads nothing before this is set

    def start_reading(self) -> None:
        """Let the background reader begin (for a peer opened with `reading=False`)."""
        self.reading.set()

    async def send_line(self, data: bytes, replies: list[Any] | None = None) -> None:
        """Send one message (over stdio: a line) and book the replies it deserves (or the ids in `replies`)."""
        if not self._framed:  # the memory transport carries text: bytes that are not UTF-8 cannot travel
            data = data.decode("utf-8", "replace").encode()
        if replies is None:
            replies = expected_replies(data, self._framed, batches=self.version == BATCH_VERSION)
        for request_id in replies:
            self.ledger.expect(request_id)
        self.ledger.sent += 1
        await self._write(data + b"\n" if self._framed else data)

    def on_text(self, text: str) -> None:
        message = check_message(text)
        for item in message if isinstance(message, list) else [message]:
            self.messages.append(item)
            if "method" in item:
                self.ledger.notifications += 1
            else:
                self.ledger.receive(item["id"], text)
        self._changed.set()

    async def settle(self) -> None:
        """Wait until every reply expected so far has arrived."""
        with anyio.move_on_after(TIMEOUT):
            while not self.ledger.settled():
                self._changed = anyio.Event()
                await self._changed.wait()
        missing = self.ledger.expected - self.ledger.received
        assert not missing, f"no reply within {TIMEOUT:g} s for ids {dict(missing)}; the case: {self.last_case}"

    async def wait_until(self, condition: Callable[[], bool]) -> None:
        """Wait until `condition()` holds, re-checking after each message."""
        with anyio.fail_after(TIMEOUT):
            while not condition():
                self._changed = anyio.Event()
                await self._changed.wait()

    async def wait_for(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first message received so far or from now on that matches `predicate`."""
        with anyio.fail_after(TIMEOUT):
            while True:
                for message in self.messages:
                    if predicate(message):
                        return message
                self._changed = anyio.Event()
                await self._changed.wait()

    def request(self, method: str, params: dict[str, Any] | None = None) -> tuple[str, bytes]:
        """A request with a fresh id, in this connection's era: (id, encoded line)."""
        request_id = f"peer-{next(self._ids)}"
        body = dict(params or {})
        if self.modern:
            body["_meta"] = {**META, **body.get("_meta", {})}
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": body}
        return request_id, encode_message(message)

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """`tools/call` and wait for its reply; returns the reply."""
        request_id, line = self.request("tools/call", {"name": name, "arguments": arguments or {}})
        await self.send_line(line)
        await self.settle()
        return self.reply(request_id)

    def reply(self, request_id: str) -> dict[str, Any]:
        found = [m for m in self.messages if m.get("id") == request_id and "method" not in m]
        assert len(found) == 1, f"{len(found)} replies to {request_id}"
        return found[0]

    async def handshake(self, version: str = HANDSHAKE) -> None:
        """Speak the handshake era (revision `version`) on this connection from now on."""
        self.modern = False
        self.version = version
        params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}
        await self.send_line(
            json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": params}).encode()
        )
        await self.send_line(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        await self.settle()

    async def exchange(self, lines: list[bytes]) -> None:
        """One fuzz case: send `lines`, then a normal call, and check every invariant."""
        self.ledger.cases += 1
        self.last_case = lines
        for line in lines:
            await self.send_line(line)
        reply = await self.call("echo", {"text": "still here"})
        assert reply["result"]["content"] == [{"type": "text", "text": "still here"}], reply
        assert self.ledger.settled()


@asynccontextmanager
async def memory_peer(server: Server, *, reading: bool = True) -> AsyncIterator[Peer]:
    """A peer on `server` through `MemoryTransport`, served in this event loop.

    With `reading=False` the peer reads nothing until `peer.start_reading()`.
    """
    mine, theirs = MemoryTransport.pair()
    served = anyio.Event()

    async def write(data: bytes) -> None:
        await mine.send(data.decode())

    peer = Peer(write, framed=False)
    if reading:
        peer.start_reading()

    async def serve() -> None:
        try:
            await server.serve(theirs)
        finally:
            served.set()

    async def read() -> None:
        await peer.reading.wait()
        while True:
            try:
                text = await mine.receive()
            except anyio.EndOfStream:
                return
            peer.on_text(text)

    async with anyio.create_task_group() as tg:
        tg.start_soon(serve)
        tg.start_soon(read)
        yield peer
        peer.start_reading()
        await mine.aclose()
        with anyio.fail_after(TIMEOUT):
            await served.wait()
        tg.cancel_scope.cancel()


def serve_command(backend: str, **options: Any) -> list[str]:
    args = [f"--{key.replace('_', '-')}={value}" for key, value in options.items()]
    return [sys.executable, str(SELF), "serve", "--backend", backend, *args]


@asynccontextmanager
async def stdio_peer(backend: str, *, reading: bool = True, **options: Any) -> AsyncIterator[Peer]:
    """A peer on a fuzz server subprocess; on exit stdin closes, all replies must have come, and the exit code be 0.

    With `reading=False` the peer reads nothing until `peer.start_reading()`.
    """
    process = await anyio.open_process(
        serve_command(backend, **options), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdin is not None
    assert process.stdout is not None
    stdout = BufferedByteReceiveStream(process.stdout)
    peer = Peer(process.stdin.send, framed=True)
    if reading:
        peer.start_reading()
    done = anyio.Event()

    async def read() -> None:
        await peer.reading.wait()
        try:
            while True:
                line = await stdout.receive_until(b"\n", 256 * 1024 * 1024)
                peer.on_text(line.decode("utf-8"))
        except (anyio.EndOfStream, anyio.IncompleteRead):
            pass
        finally:
            done.set()

    async with process, anyio.create_task_group() as tg:
        tg.start_soon(read)
        try:
            yield peer
            assert process.returncode is None, "the server process died"
        except BaseException:
            process.kill()
            raise
        peer.start_reading()
        await process.stdin.aclose()
        with anyio.fail_after(TIMEOUT):
            await done.wait()
            code = await process.wait()
        assert code == 0, f"the server exited with {code}"
        assert peer.ledger.lost == 0, f"{peer.ledger.lost} requests were never answered"


def open_peer(
    transport: str, backend: str, *, reading: bool = True, **options: Any
) -> AbstractAsyncContextManager[Peer]:
    """`memory_peer` on a fresh fuzz server, or `stdio_peer` on one in a subprocess."""
    if transport == "memory":
        return memory_peer(build(**options)[0], reading=reading)
    return stdio_peer(backend, reading=reading, **options)


# -- what the fuzzer sends ---------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
ids = st.one_of(
    st.integers(),
    st.integers(min_value=2**63, max_value=2**200) | st.integers(max_value=-(2**63), min_value=-(2**200)),
    st.text(max_size=20),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    st.lists(st.integers(), max_size=2),
).filter(lambda value: not (isinstance(value, str) and value.startswith(("peer-", "init"))))
METHODS = ["tools/call", "tools/list", "ping", "initialize", "logging/setLevel", "server/discover"]
NOTES = ["notifications/initialized", "notifications/cancelled", "notifications/progress", "notifications/other"]
methods = st.sampled_from(METHODS + NOTES) | st.text(max_size=20)


@st.composite
def params_for(draw: st.DrawFn, method: str) -> Any:
    """Parameters near what `method` expects: right keys, wrong types, odd values."""
    if draw(st.integers(0, 9)) == 0:
        return draw(json_values)
    body: dict[str, Any] = {}
    if method == "tools/call":
        body["name"] = draw(st.sampled_from(FUZZ_TOOLS) | st.text(max_size=10).filter(lambda n: n not in SLOW_TOOLS))
        body["arguments"] = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "text": json_values | st.text(min_size=1000, max_size=5000),
                    "a": json_values,
                    "b": json_values,
                    "kind": st.sampled_from(sorted(EXCEPTIONS) + sorted(BAD_VALUES)) | json_values,
                },
            )
            | json_values
        )
    elif method == "tools/list":
        body["cursor"] = draw(json_values)
    elif method == "logging/setLevel":
        body["level"] = draw(st.sampled_from(["debug", "error", "loud"]) | json_values)
    elif method == "initialize":
        body["protocolVersion"] = draw(st.sampled_from([HANDSHAKE, "2024-11-05", "1999-01-01"]) | json_values)
    elif method in NOTES:
        body = draw(st.dictionaries(st.sampled_from(["requestId", "progressToken", "reason"]), json_values))
    if draw(st.booleans()):
        meta: dict[str, Any] = dict(META) if draw(st.booleans()) else {}
        if draw(st.booleans()):
            meta[draw(st.sampled_from([*META, "progressToken"]))] = draw(json_values)
        body["_meta"] = meta
    return body


@st.composite
def messages(draw: st.DrawFn) -> Any:
    """One JSON-RPC-shaped object, every member possibly missing or of the wrong type."""
    method = draw(methods)
    message: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        message["jsonrpc"] = "2.0"
    elif draw(st.booleans()):
        message["jsonrpc"] = draw(st.sampled_from(["1.0", "2", 2.0, None]) | json_values)
    if (method not in NOTES or not draw(st.integers(0, 4))) and draw(st.integers(0, 5)):
        message["id"] = draw(ids)
    if draw(st.integers(0, 9)):
        message["method"] = method
    else:
        message[draw(st.sampled_from(["method", "result", "error"]))] = draw(json_values)
    if draw(st.integers(0, 3)):
        message["params"] = draw(params_for(method))
    return message


def _nested(depth: int, kind: str) -> bytes:
    if kind == "array":
        return b"[" * depth + b"]" * depth
    if kind == "object":
        return b'{"a":' * depth + b"1" + b"}" * depth
    inner = b'{"a":' * depth + b"1" + b"}" * depth
    return (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":' + inner + b"}}}"
    )


raw_lines = st.one_of(
    st.binary(max_size=200).filter(lambda b: b"\n" not in b and b"\r" not in b),
    st.text(max_size=200).map(lambda t: t.replace("\n", " ").replace("\r", " ").encode("utf-8", "surrogatepass")),
    st.builds(_nested, st.sampled_from([10, 150, 300, 10_000]), st.sampled_from(["array", "object", "arguments"])),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.sampled_from([b"NaN", b'{"jsonrpc":"2.0","id":1,"method":"ping","x":Infinity}', b"\xef\xbb\xbf{}", b"{}"]),
)


def encode_message(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")


batches = st.lists(messages() | json_values, max_size=5).map(encode_message)
lines = st.lists(messages().map(encode_message) | raw_lines | batches, min_size=1, max_size=8)
"""One case: a handful of lines, mostly near-valid messages, some raw bytes."""


def without_cancellations_of(case: list[bytes]) -> list[bytes]:
    """Drop `notifications/cancelled` lines that name a request of the same case (which then need not answer)."""
    parsed = []
    for data in case:
        try:
            message = json.loads(data)
        except (ValueError, RecursionError):
            message = None
        parsed.append(message if isinstance(message, list) else [message])
    requested = {json.dumps(m["id"]) for items in parsed for m in items if isinstance(m, dict) and "id" in m}

    def cancels(message: Any) -> bool:
        params = message.get("params") if isinstance(message, dict) else None
        return isinstance(params, dict) and "requestId" in params and json.dumps(params["requestId"]) in requested

    return [data for data, items in zip(case, parsed, strict=True) if not any(map(cancels, items))]


# -- the longer run ----------------------------------------------------------------------------------------


def draw_cases(count: int) -> list[list[bytes]]:
    """`count` fresh random cases, drawn by hypothesis (to run many on one connection, as over stdio)."""
    cases: list[list[bytes]] = []

    @settings(max_examples=count, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(case=lines)
    def collect(case: list[bytes]) -> None:
        cases.append(without_cancellations_of(case))

    collect()
    return cases


async def run_cases(transport: str, backend: str, cases: list[list[bytes]], **options: Any) -> Ledger:
    """Run `cases` over one connection per era (a third each: modern, handshake, batches); the combined books."""
    total = Ledger()
    third = len(cases) // 3
    eras = (("modern", cases[:third]), (HANDSHAKE, cases[third : 2 * third]), (BATCH_VERSION, cases[2 * third :]))
    for era, batch in eras:
        if transport == "memory":
            async with memory_peer(build(**options)[0]) as peer:
                await _exchange_all(peer, era, batch)
        else:
            async with stdio_peer(backend, **options) as peer:
                await _exchange_all(peer, era, batch)
        total.add(peer.ledger)
    return total


async def _exchange_all(peer: Peer, era: str, cases: list[list[bytes]]) -> None:
    if era != "modern":
        await peer.handshake(era)
    for case in cases:
        await peer.exchange(case)


def fuzz_for(seconds: float, transports: list[str], backends: list[str], per_round: int = 200) -> Ledger:
    """Fuzz in rounds of fresh random cases until `seconds` have passed; returns the combined books."""
    total = Ledger()
    deadline = time.monotonic() + seconds
    for number in itertools.count():
        if time.monotonic() >= deadline:
            break
        transport = transports[number % len(transports)]
        backend = backends[(number // len(transports)) % len(backends)]
        ledger = anyio.run(run_cases, transport, backend, draw_cases(per_round), backend=backend)
        total.add(ledger)
        print(f"round {number}: {transport}/{backend}: {ledger.cases} cases, lost {ledger.lost}", flush=True)
    return total


def serve(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="fuzz_target.py serve")
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    parser.add_argument("--max-message-size", type=int, default=None)
    parser.add_argument("--max-concurrent-requests", type=int, default=None)
    parser.add_argument("--max-queued-messages", type=int, default=None)
    parser.add_argument("--max-queued-bytes", type=int, default=None)
    parser.add_argument("--tool-timeout", type=float, default=None)
    parser.add_argument("--shutdown-grace", type=float, default=0.5)
    args = parser.parse_args(argv)
    options: dict[str, Any] = {"shutdown_grace": args.shutdown_grace}
    limits = ("max_message_size", "max_concurrent_requests", "max_queued_messages", "max_queued_bytes")
    for name in (*limits, "tool_timeout"):
        if getattr(args, name) is not None:
            options[name] = getattr(args, name)
    build(**options)[0].run(backend=args.backend)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["serve"]:
        serve(argv[1:])
        return 0
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz_target", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="how long to fuzz (default 60)")
    parser.add_argument("--transport", choices=["memory", "stdio", "both"], default="both")
    parser.add_argument("--backend", choices=["asyncio", "trio", "both"], default="both")
    parser.add_argument("--per-round", type=int, default=200, help="cases per connection pair (default 200)")
    args = parser.parse_args(argv)
    transports = ["memory", "stdio"] if args.transport == "both" else [args.transport]
    backends = ["asyncio", "trio"] if args.backend == "both" else [args.backend]
    started = time.monotonic()
    total = fuzz_for(args.seconds, transports, backends, args.per_round)
    elapsed = time.monotonic() - started
    print(
        f"{total.cases} cases fuzzed in {elapsed:.0f} s: {total.sent} messages sent, {sum(total.expected.values())} "
        f"replies expected, {total.replies} received, {total.notifications} notifications; requests lost: {total.lost}"
    )
    return 0 if total.lost == 0 else 1


if __name__ == "__main__":
    if str(SELF.parent.parent) not in sys.path:
        sys.path.insert(0, str(SELF.parent.parent))
    sys.exit(main())
