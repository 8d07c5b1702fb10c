"""`python -m benchmarks.http`: tool calls over Streamable HTTP, toolkit vs the official SDK vs fastmcp, each app on
the same uvicorn (one worker, 127.0.0.1), driven by the same raw httpx client.

Per side and era: calls per second and p50/p99 latency of a small tool (`add`) at a fixed concurrency, and the
memory (RSS) each idle 2025-11-25 session costs the server. The client runs on the same machine: on two cores it
competes with the server, so read the ratios, not the absolute figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx

SIDES = ("toolkit", "mcp", "fastmcp")
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _app(side: str) -> Any:
    if side == "toolkit":
        from toolkit import Server

        server = Server("bench")
        server.tool(add)
        return server.http_app()
    if side == "mcp":
        from mcp.server.mcpserver import MCPServer

        sdk = MCPServer("bench")
        sdk.tool()(add)
        return sdk.streamable_http_app()
    from fastmcp import FastMCP

    fast = FastMCP("bench")
    fast.tool(add)
    return fast.http_app()


def _serve(side: str) -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    config = uvicorn.Config(_app(side), lifespan="on", log_level="error")
    print(sock.getsockname()[1], flush=True)
    uvicorn.Server(config).run(sockets=[sock])


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _answer(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC answer of a POST, whether it came as JSON or as SSE."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                message = json.loads(line[5:])
                if "result" in message or "error" in message:
                    return dict(message)
        raise ValueError("no answer in the SSE stream")
    return dict(response.json())


class Driver:
    def __init__(self, url: str, era: str) -> None:
        self.url = url
        self.era = era
        self.session: str | None = None
        self.ids = 0

    async def open(self, http: httpx.AsyncClient) -> None:
        if self.era == LEGACY:
            init = {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}},
            }
            response = await http.post(self.url, json=init, headers={"accept": ACCEPT})
            _answer(response)
            self.session = response.headers.get("mcp-session-id")
            headers = self.headers("notifications/initialized")
            await http.post(self.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)

    def headers(self, method: str) -> dict[str, str]:
        headers = {"accept": ACCEPT, "content-type": "application/json"}
        if self.era == MODERN:
            headers.update({"mcp-protocol-version": MODERN, "mcp-method": method, "mcp-name": "add"})
        else:
            headers["mcp-protocol-version"] = LEGACY
            if self.session is not None:
                headers["mcp-session-id"] = self.session
        return headers

    def call(self, a: int) -> dict[str, Any]:
        self.ids += 1
        params: dict[str, Any] = {"name": "add", "arguments": {"a": a, "b": 1}}
        if self.era == MODERN:
            params["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        return {"jsonrpc": "2.0", "id": self.ids, "method": "tools/call", "params": params}


async def _measure(url: str, era: str, calls: int, concurrency: int) -> dict[str, Any]:
    latencies: list[float] = []
    errors = 0
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=30.0) as http:
        drivers = [Driver(url, era) for _ in range(concurrency)]
        for driver in drivers:
            await driver.open(http)
        per = calls // concurrency

        async def run(driver: Driver) -> None:
            nonlocal errors
            for i in range(per):
                message = driver.call(i)
                start = time.perf_counter()
                response = await http.post(url, content=json.dumps(message), headers=driver.headers("tools/call"))
                try:
                    answer = _answer(response)
                    ok = answer.get("result", {}).get("content", [{}])[0].get("text") == str(i + 1)
                except ValueError:
                    ok = False
                latencies.append(time.perf_counter() - start)
                errors += not ok

        began = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for driver in drivers:
                tg.start_soon(run, driver)
        elapsed = time.perf_counter() - began
    latencies.sort()
    done = len(latencies)
    return {
        "calls_per_s": done / elapsed,
        "p50_ms": latencies[done // 2] * 1000,
        "p99_ms": latencies[min(done - 1, int(done * 0.99))] * 1000,
        "errors": errors,
    }


_WRK_SCRIPT = """
counter = 0
request = function()
  counter = counter + 1
  return wrk.format(nil, nil, nil, string.format(BODY, counter))
end
"""


def _wrk(url: str, era: str, seconds: int, concurrency: int) -> dict[str, Any]:
    """Throughput and latency measured by wrk (a C load generator: the client no longer competes as Python)."""
    driver = Driver(url, era)
    anyio.run(_open_session, driver)
    message = driver.call(0)
    message["id"] = 999999  # placeholder for the per-request id
    message["params"]["arguments"]["a"] = 1
    body = json.dumps(message).replace("%", "%%").replace("999999", "%d")
    headers = driver.headers("tools/call")
    lua = "\n".join(f'wrk.headers["{k}"] = "{v}"' for k, v in headers.items())
    script = f'wrk.method = "POST"\n{lua}\nBODY = [[{body}]]\n{_WRK_SCRIPT}'
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as file:
        file.write(script)
    try:
        out = subprocess.run(
            ["wrk", "-t2", f"-c{concurrency}", f"-d{seconds}s", "--latency", "-s", file.name, url],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    finally:
        os.unlink(file.name)
    figures: dict[str, Any] = {"load": "wrk"}
    for line in out.splitlines():
        parts = line.split()
        if line.startswith("Requests/sec:"):
            figures["calls_per_s"] = float(parts[1])
        elif parts and parts[0] in ("50%", "99%"):
            value = parts[1]
            unit = 1000.0 if value.endswith("us") else (1.0 if value.endswith("ms") else 0.001)
            figures[f"p{parts[0][:-1]}_ms"] = float(value.rstrip("mus")) / unit
        elif "Non-2xx" in line:
            figures["errors"] = int(parts[-1])
    figures.setdefault("errors", 0)
    return figures


async def _open_session(driver: Driver) -> None:
    async with httpx.AsyncClient(timeout=30.0) as http:
        await driver.open(http)


async def _idle_sessions(url: str, pid: int, count: int) -> float:
    async with httpx.AsyncClient(timeout=30.0) as http:
        await Driver(url, LEGACY).open(http)  # warm up
        before = _rss_kib(pid)
        for _ in range(count):
            await Driver(url, LEGACY).open(http)
        after = _rss_kib(pid)
    return (after - before) * 1024 / count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.http", description=__doc__.splitlines()[0])
    parser.add_argument("--serve", choices=SIDES, help=argparse.SUPPRESS)
    parser.add_argument("--sides", default=",".join(SIDES))
    parser.add_argument("--calls", type=int, default=4000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--sessions", type=int, default=500, help="idle sessions opened for the memory figure")
    parser.add_argument("--quick", action="store_true", help="a smoke run: few calls, toolkit only")
    parser.add_argument(
        "--load",
        choices=("auto", "wrk", "httpx"),
        default="auto",
        help="the load generator: wrk when installed (auto), else the Python httpx client",
    )
    parser.add_argument("--seconds", type=int, default=10, help="with wrk: seconds per measurement")
    args = parser.parse_args(argv)
    if args.serve:
        _serve(args.serve)
        return 0
    sides = ["toolkit"] if args.quick else args.sides.split(",")
    calls, sessions = (200, 20) if args.quick else (args.calls, args.sessions)
    rows = []
    for side in sides:
        process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.http", "--serve", side], stdout=subprocess.PIPE, text=True
        )
        try:
            assert process.stdout is not None
            url = f"http://127.0.0.1:{process.stdout.readline().strip()}/mcp"
            use_wrk = args.load == "wrk" or (args.load == "auto" and shutil.which("wrk") and not args.quick)
            for era in (LEGACY, MODERN):
                try:
                    if use_wrk:
                        figures = _wrk(url, era, args.seconds, args.concurrency)
                    else:
                        figures = anyio.run(_measure, url, era, calls, args.concurrency)
                except (httpx.HTTPError, ValueError, KeyError, subprocess.CalledProcessError) as exc:
                    figures = {"failed": type(exc).__name__}
                rows.append({"side": side, "era": era, **figures})
            memory = anyio.run(_idle_sessions, url, process.pid, sessions)
            rows.append({"side": side, "era": "idle session", "bytes_per_session": memory})
        finally:
            process.terminate()
            process.wait(timeout=30)
    for row in rows:
        print(json.dumps(row))
    if os.environ.get("BENCH_HTTP_JSON"):
        Path(os.environ["BENCH_HTTP_JSON"]).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
