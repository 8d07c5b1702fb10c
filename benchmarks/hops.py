"""Count the distinct toolkit functions (and modules) that one `tools/call` runs on the server side.

`python -m benchmarks.hops [-v]` prints the figure for a sync and an async tool, in both protocol eras, on asyncio
and trio; `tests/test_hops.py` pins the bound (docs/architecture.md). A raw client writes JSON-RPC text to one end of
an in-memory transport, so every toolkit function the profiler hook sees belongs to the server; the transports
themselves are not counted. A function counts once however often it runs, and a coroutine counts when it is
resumed, so a long-lived loop (the connection's reader) counts too. Code that runs on a worker thread started
before the measured call (the sync tool's body) is not seen: `threading.setprofile` reaches new threads only.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

import anyio

import toolkit
from toolkit import MemoryTransport, Server, tool

PACKAGE = Path(toolkit.__file__).resolve().parent
TRANSPORTS = "_transports"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
ERAS = ("modern", "handshake")
TOOLS = ("add", "add_async")
BACKENDS = ("asyncio", "trio")


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def add_async(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def count(name: str, backend: str, era: str) -> set[str]:
    """The `module:qualname` of every toolkit function one warm `tools/call` of tool `name` runs."""
    seen: set[str] = set()

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        try:
            relative = Path(code.co_filename).resolve().relative_to(PACKAGE)
        except ValueError:
            return
        module = ".".join(relative.with_suffix("").parts)
        if module.split(".", 1)[0] == TRANSPORTS:
            return
        seen.add(f"{module}:{getattr(code, 'co_qualname', code.co_name)}")

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
                threading.setprofile(None)  # type: ignore[arg-type]
            assert reply["result"]["content"][0]["text"] == "3", reply
            await client_end.aclose()

    anyio.run(main, backend=backend)
    return seen


def modules(functions: set[str]) -> set[str]:
    return {function.split(":")[0] for function in functions}


def main(argv: list[str]) -> None:
    for era in ERAS:
        for name in TOOLS:
            for backend in BACKENDS:
                functions = count(name, backend, era)
                print(f"{era:9} {name:9} {backend:7}: {len(functions)} functions in {len(modules(functions))} modules")
                if "-v" in argv:
                    for function in sorted(functions):
                        print("   ", function)


if __name__ == "__main__":
    main(sys.argv[1:])
