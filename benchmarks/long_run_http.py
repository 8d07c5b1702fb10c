"""`python -m benchmarks.long_run_http`: the long run over Streamable HTTP. A toolkit app on uvicorn (one worker,
127.0.0.1) takes calls in both eras from concurrent raw httpx clients while 2025-11-25 sessions are opened, called
and ended (DELETE); the server's RSS is sampled along the way.

Memory that grows with the calls or sessions served shows as a slope; flat is the expectation. The in-process
session store keeps each ended session until its id expires (docs/deploy.md), so `--store memory` shows that
cost as a slope of its own; `--store sqlite` moves it to a file. Every answer is checked; a wrong one stops the run.

    python -m benchmarks.long_run_http --calls 200000 --store sqlite
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx

from .rss import rss_kib

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}
SERVER_INFO = {"name": "long-run", "version": "1.0.0"}
# The slope is fit to the second half of the samples: over HTTP the server's arenas, uvicorn's buffers and SQLite's
# page cache take a while to fill (measured: most of the growth of a 16,000-call run is in its first half).
SETTLE = 0.5


def _serve(store: str) -> None:
    import socket

    import uvicorn

    from toolkit import Server, SqliteSessionStore

    server = Server(SERVER_INFO["name"], version=SERVER_INFO["version"])

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    session_store = SqliteSessionStore(Path(tempfile.mkdtemp()) / "sessions.db") if store == "sqlite" else None
    app = server.http_app(session_store=session_store)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # so that Nagle is off (asyncio)
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    print(sock.getsockname()[1], flush=True)
    # Idle keep-alive connections stay open for the run: a client reusing one just as uvicorn closes it after its
    # default 5 s would see a ReadError that says nothing about the server.
    config = uvicorn.Config(app, lifespan="on", log_level="error", timeout_keep_alive=600)
    uvicorn.Server(config).run(sockets=[sock])


def _call(request_id: int, a: int, modern: bool) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "add", "arguments": {"a": a, "b": 1}}
    if modern:
        params["_meta"] = META
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _check(response: httpx.Response, request_id: int, a: int, modern: bool) -> None:
    answer = response.json()
    result: dict[str, Any] = {"content": [{"type": "text", "text": str(a + 1)}], "isError": False}
    if modern:
        result |= {"resultType": "complete", "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO}}
    if response.status_code != 200 or answer != {"jsonrpc": "2.0", "id": request_id, "result": result}:
        raise AssertionError(f"wrong answer: {response.status_code} {answer}")


async def _modern(http: httpx.AsyncClient, url: str, calls: int) -> None:
    headers = {"accept": ACCEPT, "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "add"}
    for i in range(calls):
        _check(await http.post(url, json=_call(i + 1, i, True), headers=headers), i + 1, i, True)


async def _session(http: httpx.AsyncClient, url: str, calls: int) -> None:
    response = await http.post(url, json=INIT, headers={"accept": ACCEPT})
    headers = {"accept": ACCEPT, "mcp-session-id": response.headers["mcp-session-id"], "mcp-protocol-version": LEGACY}
    await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    for i in range(calls):
        _check(await http.post(url, json=_call(i + 1, i, False), headers=headers), i + 1, i, False)
    if (await http.delete(url, headers=headers)).status_code != 204:
        raise AssertionError("DELETE did not end the session")


async def _drive(url: str, pid: int, params: argparse.Namespace) -> dict[str, Any]:
    samples: list[tuple[int, int]] = []
    done = sessions = 0
    per_round = params.concurrency * params.per_client
    limits = httpx.Limits(max_connections=params.concurrency, max_keepalive_connections=params.concurrency)
    start = time.perf_counter()
    async with httpx.AsyncClient(limits=limits, timeout=30.0) as http:
        while done < params.calls:
            async with anyio.create_task_group() as tg:
                for c in range(params.concurrency):
                    if c % 2:
                        tg.start_soon(_session, http, url, params.per_client)
                        sessions += 1
                    else:
                        tg.start_soon(_modern, http, url, params.per_client)
            done += per_round
            samples.append((done, rss_kib(pid)))
    elapsed = time.perf_counter() - start
    settled = samples[int(len(samples) * SETTLE) :]
    last = len(samples) - 1
    slope = statistics.linear_regression([x for x, _ in settled], [y for _, y in settled]).slope
    return {
        "store": params.store,
        "calls": done,
        "sessions ended": sessions,
        "calls/s": round(done / elapsed),
        "rss KiB at 0, 1/4, 1/2, 3/4, end": [samples[min(len(samples) * q // 4, last)][1] for q in range(5)],
        "slope KiB per 100k calls (second half)": round(slope * 100_000, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.long_run_http", description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=60_000, help="calls in all (default 60,000)")
    parser.add_argument("--concurrency", type=int, default=20, help="clients at once, half of them sessions")
    parser.add_argument("--per-client", type=int, default=10, help="calls per client and round (and per session)")
    parser.add_argument("--store", choices=("memory", "sqlite"), default="memory", help="the server's session store")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        _serve(args.store)
        return 0
    command = [sys.executable, "-m", "benchmarks.long_run_http", "--serve", "--store", args.store]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        url = f"http://127.0.0.1:{port}/mcp"
        # The socket listens before the port is printed: this waits in the backlog until uvicorn has started.
        httpx.post(url, json=INIT, headers={"accept": ACCEPT}, timeout=30).raise_for_status()
        print(json.dumps(anyio.run(_drive, url, server.pid, args), indent=2))
    finally:
        server.terminate()
        server.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
