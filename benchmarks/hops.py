"""Count the distinct toolkit functions (and modules) that one `tools/call` runs on the server side.

`python -m benchmarks.hops [-v]` prints the figure for a sync and an async tool, in both protocol eras, on asyncio
and trio, then one HTTP POST (`http_count`) for a plain sync tool and a tool that takes a Context; `tests/test_hops.py`
pins the bounds (docs/architecture.md). A raw client writes JSON-RPC text to one end of
an in-memory transport, so every toolkit function the profiler hook sees belongs to the server; the transports
themselves are not counted. A function counts once however often it runs, and a coroutine counts when it is
resumed, so a long-lived loop (the connection's reader) counts too. Code that runs on a worker thread started
before the measured call (the sync tool's body) is not seen: `threading.setprofile` reaches new threads only.
"""

from __future__ import annotations

import gc
import itertools
import json
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import CodeType
from typing import Any

import anyio

import toolkit
from toolkit import Context, MemoryTransport, Server, tool

PACKAGE = Path(toolkit.__file__).resolve().parent
TRANSPORTS = "_transports"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
ERAS = ("modern", "handshake")
TOOLS = ("add", "add_async")
BACKENDS = ("asyncio", "trio")
HTTP_TOOLS = ("add", "add_context")


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def add_async(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def add_context(a: int, b: int, ctx: Context) -> int:
    """Add two integers (and take a Context, which makes the call a stream of its own over HTTP)."""
    return a + b


def _profile(seen: set[str], skip: str | None) -> Any:
    """A profiler hook that adds each toolkit function it sees called to `seen` (not those of the `skip` wing)."""

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        try:
            relative = Path(code.co_filename).resolve().relative_to(PACKAGE)
        except ValueError:
            return
        module = ".".join(relative.with_suffix("").parts)
        if module.split(".", 1)[0] == skip:
            return
        seen.add(f"{module}:{_qualname(code)}")

    return hook


_QUALNAMES: dict[CodeType, str] = {}


def _qualname(code: CodeType) -> str:
    """The qualified name of a code object's function (`Posts._read`, not `_read`): `co_qualname` since Python
    3.11; on 3.10, the `__qualname__` of the function, coroutine or generator that runs it (found once per code
    object among its referrers), so that the names, and the count of distinct names, are the same on 3.10."""
    if sys.version_info >= (3, 11):
        return code.co_qualname
    if code not in _QUALNAMES:
        names = {owner.__qualname__ for owner in gc.get_referrers(code) if hasattr(owner, "__qualname__")}
        _QUALNAMES[code] = names.pop() if len(names) == 1 else code.co_name
    return _QUALNAMES[code]


def count(name: str, backend: str, era: str) -> set[str]:
    """The `module:qualname` of every toolkit function one warm `tools/call` of tool `name` runs."""
    seen: set[str] = set()
    hook = _profile(seen, TRANSPORTS)

    async def main() -> None:
        server = Server("hops", tools=[add, add_async])
        client_end, server_end = MemoryTransport.pair()
        ids = iter(range(1, 100))

        async def request(method: str, params: dict[str, Any]) -> Any:
            if era == "modern":
                params = {**params, "_meta": MODERN_META}
            await client_end.send(json.dumps({"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params}))
            while True:
                reply = json.loads(await client_end.receive())
                if "id" in reply:
                    return reply

        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, server_end)
            if era == "handshake":
                info = {"name": "hops", "version": "1"}
                await request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": info})
                await client_end.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            call = {"name": name, "arguments": {"a": 1, "b": 2}}
            for _ in range(3):  # warm: worker threads started, payloads prepared
                await request("tools/call", call)
            sys.setprofile(hook)
            threading.setprofile(hook)
            try:
                reply = await request("tools/call", call)
            finally:
                sys.setprofile(None)
                threading.setprofile(None)
            assert reply["result"]["content"][0]["text"] == "3", reply
            await client_end.aclose()

    anyio.run(main, backend=backend)
    return seen


class _Asgi:
    """A minimal ASGI server in process: one request at a time, its whole body, its response collected."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def post(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        raw = json.dumps(body).encode()
        listed = [(b"host", b"127.0.0.1"), (b"content-type", b"application/json")]
        listed += [(b"accept", b"application/json, text/event-stream"), (b"content-length", str(len(raw)).encode())]
        listed += [(k.encode(), v.encode()) for k, v in headers.items()]
        scope: dict[str, Any] = {
            "type": "http",
            "method": "POST",
            "path": "/mcp",
            "headers": listed,
            "client": ("127.0.0.1", 1),
        }
        scope |= {
            "scheme": "http",
            "root_path": "",
            "query_string": b"",
            "http_version": "1.1",
            "asgi": {"version": "3.0"},
        }
        start: dict[str, Any] = {}
        chunks: list[bytes] = []
        sent = False

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": raw, "more_body": False}
            await anyio.sleep_forever()  # the client stays until the response is complete
            raise AssertionError("unreachable")

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            else:
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, send)
        names = {k.decode(): v.decode() for k, v in start["headers"]}
        return start["status"], names, b"".join(chunks)


@asynccontextmanager
async def running(app: Any) -> AsyncIterator[_Asgi]:
    """A driver for `app` while its lifespan runs (as under uvicorn: started first, stopped after)."""
    lifespan_in = [{"type": "lifespan.startup"}]
    started, stop = anyio.Event(), anyio.Event()

    async def lifespan_receive() -> dict[str, Any]:
        if lifespan_in:
            return lifespan_in.pop()
        await stop.wait()
        return {"type": "lifespan.shutdown"}

    async def lifespan_send(message: dict[str, Any]) -> None:
        if message["type"] == "lifespan.startup.complete":
            started.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(app, {"type": "lifespan"}, lifespan_receive, lifespan_send)
        await started.wait()
        try:
            yield _Asgi(app)
        finally:
            stop.set()


async def open_session(asgi: _Asgi, version: str) -> dict[str, str]:
    """A 2025-11-25 session opened (`initialize`, then `notifications/initialized`): the headers of its requests."""
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "hops", "version": "1"}}
    _, got, _ = await asgi.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}, {})
    headers = {"mcp-session-id": got.get("mcp-session-id", ""), "mcp-protocol-version": version}
    await asgi.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    return headers


def _reply(body: bytes) -> Any:
    """The JSON-RPC reply in a response body: JSON, or the last `data:` line of an SSE stream."""
    text = body.decode()
    if text.startswith("{"):
        return json.loads(text)
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]
    return json.loads(data[-1])


def http_count(name: str, backend: str, era: str) -> set[str]:
    """The `module:qualname` of every toolkit function one warm HTTP POST `tools/call` of tool `name` runs, server
    side: the ASGI app driven in process (its lifespan running, as under uvicorn), no client code counted."""
    seen: set[str] = set()
    hook = _profile(seen, None)

    async def main() -> None:
        server = Server("hops", tools=[add, add_context])
        ids = iter(range(1, 100))
        async with running(server.http_app()) as asgi:
            if era == "handshake":
                headers = await open_session(asgi, "2025-11-25")
            else:
                headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": name}
            call: dict[str, Any] = {"name": name, "arguments": {"a": 1, "b": 2}}
            if era == "modern":
                call["_meta"] = MODERN_META
            for _ in range(3):  # warm
                await asgi.post({"jsonrpc": "2.0", "id": next(ids), "method": "tools/call", "params": call}, headers)
            message = {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call", "params": call}
            sys.setprofile(hook)
            threading.setprofile(hook)
            try:
                status, _, body = await asgi.post(message, headers)
            finally:
                sys.setprofile(None)
                threading.setprofile(None)
            reply = _reply(body)
            assert status == 200, (status, body)
            assert reply["result"]["content"][0]["text"] == "3", reply

    anyio.run(main, backend=backend)
    return seen


def modules(functions: set[str]) -> set[str]:
    return {function.split(":")[0] for function in functions}


def http_modules(functions: set[str]) -> set[str]:
    """The modules of the HTTP wing (`_http/`) among those `functions` ran; the rest are the core's."""
    return {module for module in modules(functions) if module.startswith("_http.")}


def _show(label: str, functions: set[str], verbose: bool) -> None:
    wing = http_modules(functions)
    split = f" ({len(wing)} of HTTP, {len(modules(functions)) - len(wing)} of the core)" if wing else ""
    print(f"{label}: {len(functions)} functions in {len(modules(functions))} modules{split}")
    if verbose:
        for function in sorted(functions):
            print("   ", function)


def main(argv: list[str]) -> None:
    verbose = "-v" in argv
    for era, name, backend in itertools.product(ERAS, TOOLS, BACKENDS):
        _show(f"{era:9} {name:9} {backend:7}", count(name, backend, era), verbose)
    for era, name, backend in itertools.product(ERAS, HTTP_TOOLS, BACKENDS):
        _show(f"http {era:9} {name:11} {backend:7}", http_count(name, backend, era), verbose)


if __name__ == "__main__":
    main(sys.argv[1:])
