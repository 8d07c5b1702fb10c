"""`python -m benchmarks.http`: tool calls over Streamable HTTP, toolkit vs the official SDK vs fastmcp, each app on
the same uvicorn (127.0.0.1, the same server stack for every side), driven by the same load generator; beside them
the floor (a bare ASGI app on that uvicorn: `json.loads` and the JSON-RPC result, no MCP), the TypeScript SDK 1.32
(2025-11-25 sessions) and 2.4 (`createMcpHandler`, 2026-07-28) on Node 22, and bare `node:http` as Node's floor,
the Node packages installed from npm by the harness itself (`benchmarks/_node.py`).

Per side, era, server stack and tool: calls per second and p50/p99 latency of a small tool at a fixed number of
connections (`--tools`: `add` sync, `add_async`, `add_progress` async with a Context reporting progress once; see
`benchmarks/_http_apps.py`), and the memory (RSS) each idle 2025-11-25 session costs the server. The sides are
measured in rounds, side after side with the order rotating, so that a busy machine's noise falls on every side
alike; every cell is the median over rounds, and the ratios are taken per round and then their median.

On two cores the server is pinned to one CPU and wrk (one thread) to the other, so that the client never takes the
server's core; the load average is printed with each round. docs/performance.md explains the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx

from . import _http_apps, _http_load, _node, claims

_PAGE = 4096  # bytes: the unit RSS grows by
SIDES = ("toolkit", "mcp", "fastmcp", "floor")
FLOOR = "floor"  # the bare ASGI app on the same uvicorn (benchmarks/_http_apps.py)
# The Node sides, benchmarks/node/<script> on the Node 22 that benchmarks/_node.py installs with the SDKs:
TS = "ts"  # the TypeScript SDK 1.32, stateful 2025-11-25 sessions on its express app
TS2 = "ts2"  # the TypeScript SDK 2.4, createMcpHandler: 2026-07-28, stateless
NODE_FLOOR = "node-floor"  # bare node:http answering the floor's JSON
NODE_SIDES = {TS: "ts_server.mjs", TS2: "ts2_server.mjs", NODE_FLOOR: "floor.mjs"}
ALL_SIDES = (*SIDES, *NODE_SIDES)
FLOORS = (FLOOR, NODE_FLOOR)  # they answer `add` (and `add_async`, the same JSON), not a progress-reporting tool
# The sides that serve the 2025-11-25 handshake with sessions, whose idle memory is measured.
SESSIONS = ("toolkit", "mcp", "fastmcp", TS)
BASELINE = "mcp"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ERAS = (LEGACY, MODERN)
ACCEPT = "application/json, text/event-stream"
# uvicorn's HTTP parser and event loop: its pure-Python defaults, and the C ones `uvicorn[standard]` brings.
STACKS = {"h11": ("h11", "asyncio"), "httptools": ("httptools", "uvloop")}
PROGRESS = "add_progress"  # the tool whose calls carry a progressToken (each call's id)


def _worker(side: str, fd: int, http: str, loop: str) -> None:
    """One uvicorn worker on the inherited listening socket; prints `ready` once it serves."""
    import uvicorn

    class Announcing(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            print("ready", flush=True)

    config = uvicorn.Config(_http_apps.app(side), http=http, loop=loop, lifespan="on", log_level="error")
    Announcing(config).run(sockets=[socket.socket(fileno=fd)])


class Side:
    """One side's server: `workers` uvicorn processes sharing one socket, each pinned to `cpus` when given."""

    def __init__(self, side: str, stack: str, workers: int, cpus: set[int] | None) -> None:
        self.side = side
        # IPPROTO_TCP, as uvicorn's own single-process socket is made: asyncio then turns Nagle off on each connection.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        sock.listen(2048)
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
        http, loop = STACKS[stack]
        argv = [sys.executable, "-m", "benchmarks.http", "--worker", side, str(sock.fileno()), http, loop]
        if side in NODE_SIDES:  # one Node process whatever the stack: Node's own HTTP parser
            packages = _node.install()
            script = _node.PACKAGES / NODE_SIDES[side]
            argv = [str(_node.node(packages)), str(script), str(sock.fileno()), str(packages)]
        if cpus:
            argv = ["taskset", "-c", ",".join(map(str, sorted(cpus))), *argv]
        self.processes = [
            subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, pass_fds=[sock.fileno()]) for _ in range(workers)
        ]
        sock.close()
        for process in self.processes:
            assert process.stdout is not None
            if process.stdout.readline().strip() != "ready":
                raise RuntimeError(f"{side}: a worker did not start")

    def close(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            process.wait(timeout=30)


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of the processes so far: what a call costs the server, whatever else runs."""
    ticks = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of proc(5))
    return ticks / os.sysconf("SC_CLK_TCK")


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
    """One client's requests in one era: the handshake (2025-11-25) and the headers and body of each call."""

    def __init__(self, url: str, era: str, tool: str = "add") -> None:
        self.url = url
        self.era = era
        self.tool = tool
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
            headers.update({"mcp-protocol-version": MODERN, "mcp-method": method, "mcp-name": self.tool})
        else:
            headers["mcp-protocol-version"] = LEGACY
            if self.session is not None:
                headers["mcp-session-id"] = self.session
        return headers

    def call(self, a: int) -> dict[str, Any]:
        self.ids += 1
        params: dict[str, Any] = {"name": self.tool, "arguments": {"a": a, "b": 1}}
        meta: dict[str, Any] = {}
        if self.era == MODERN:
            meta["io.modelcontextprotocol/protocolVersion"] = MODERN
            meta["io.modelcontextprotocol/clientCapabilities"] = {}
        if self.tool == PROGRESS:  # unique among the calls in flight: the call's id
            meta["progressToken"] = self.ids
        if meta:
            params["_meta"] = meta
        return {"jsonrpc": "2.0", "id": self.ids, "method": "tools/call", "params": params}


def _progress(response: httpx.Response, token: int) -> bool:
    """Whether an SSE response carried a progress notification for `token` (before its answer)."""
    if not response.headers.get("content-type", "").startswith("text/event-stream"):
        return False
    for line in response.text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            message = json.loads(line[5:])
            if message.get("method") == "notifications/progress":
                return bool(message["params"]["progressToken"] == token)
    return False


async def _check(driver: Driver) -> None:
    """One call through the same headers the load generator sends, so that errors answered with 200 are caught: the
    tool's answer must be `2` (found after any notification on an SSE stream), and `add_progress` must have sent
    its progress notification first."""
    async with httpx.AsyncClient(timeout=60.0) as http:
        await driver.open(http)
        call = driver.call(1)
        response = await http.post(driver.url, json=call, headers=driver.headers("tools/call"))
        answer = _answer(response)
        text = answer.get("result", {}).get("content", [{}])[0].get("text")
        if response.status_code != 200 or text != "2" or answer.get("id") != call["id"]:
            raise ValueError(f"unexpected answer {response.status_code} {answer}")
        if driver.tool == PROGRESS and not _progress(response, call["id"]):
            raise ValueError(f"no progress notification before the answer: {response.text[:500]}")


async def _measure(driver: Driver, seconds: float, concurrency: int) -> dict[str, Any]:
    """The load with the Python httpx client (when wrk is not installed): it competes with the server as Python."""
    latencies: list[float] = []
    errors = 0
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=30.0) as http:
        headers = driver.headers("tools/call")
        deadline = time.perf_counter() + seconds

        async def run() -> None:
            nonlocal errors
            while time.perf_counter() < deadline:
                start = time.perf_counter()
                response = await http.post(driver.url, content=json.dumps(driver.call(1)), headers=headers)
                latencies.append(time.perf_counter() - start)
                errors += response.status_code != 200

        began = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for _ in range(concurrency):
                tg.start_soon(run)
        elapsed = time.perf_counter() - began
    return _http_load.figures(latencies, elapsed, errors)


_WRK_SCRIPT = """
counter = 0
request = function()
  counter = counter + 1
  return wrk.format(nil, nil, nil, string.format(BODY, COUNTERS(counter)))
end
"""


@contextmanager
def _wrk_script(driver: Driver) -> Iterator[str]:
    """A wrk Lua script that POSTs the driver's tools/call, each with its own id, with the driver's headers."""
    body = _template(driver).decode().replace("%", "%%")
    places = body.count("999999")  # the id, and the progress token of `add_progress` (the same number)
    body = body.replace("999999", "%d")
    lua = "\n".join(f'wrk.headers["{k}"] = "{v}"' for k, v in driver.headers("tools/call").items())
    counters = ", ".join(["n"] * places)
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as file:
        file.write(f'wrk.method = "POST"\n{lua}\nBODY = [[{body}]]\nCOUNTERS = function(n) return {counters} end\n')
        file.write(_WRK_SCRIPT)
    try:
        yield file.name
    finally:
        os.unlink(file.name)


def _wrk(url: str, script: str, seconds: float, concurrency: int, cpus: set[int] | None) -> dict[str, Any]:
    """Throughput and latency measured by wrk (one C thread: the client does not compete as Python)."""
    argv = ["wrk", "-t1", f"-c{concurrency}", f"-d{max(1, round(seconds))}s", "--latency", "-s", script, url]
    if cpus:
        argv = ["taskset", "-c", ",".join(map(str, sorted(cpus))), *argv]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    figures: dict[str, Any] = {"errors": 0}
    for line in out.splitlines():
        parts = line.split()
        if " requests in " in line:
            figures["calls"] = int(parts[0])
        elif line.startswith("Requests/sec:"):
            figures["calls_per_s"] = float(parts[1])
        elif parts and parts[0] in ("50%", "99%"):
            value = parts[1]
            unit = 1000.0 if value.endswith("us") else (1.0 if value.endswith("ms") else 0.001)
            figures[f"p{parts[0][:-1]}_ms"] = float(value.rstrip("mus")) / unit
        elif "Non-2xx" in line or line.strip().startswith("Socket errors"):
            figures["errors"] += sum(int(p.strip(",")) for p in parts if p.strip(",").isdigit())
    return figures


async def _idle_sessions(url: str, pid: int, count: int) -> float:
    async with httpx.AsyncClient(timeout=30.0) as http:
        for _ in range(20):  # warm up: the first sessions allocate what every later one reuses
            await Driver(url, LEGACY).open(http)
        before = _rss_kib(pid)
        for _ in range(count):
            await Driver(url, LEGACY).open(http)
        after = _rss_kib(pid)
    return (after - before) * 1024 / count


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def _ratios(mine: list[dict[str, Any]], base: dict[int, dict[str, Any]], name: str) -> dict[str, float]:
    """The medians of the per-round ratios of `mine` to `base` (rounds by number): calls/s, p99 and CPU per call."""
    paired = [(r, base[r["round"]]) for r in mine if r["round"] in base]
    if not paired:
        return {}
    return {
        f"calls_vs_{name}": statistics.median(r["calls_per_s"] / b["calls_per_s"] for r, b in paired),
        f"p99_vs_{name}": statistics.median(r["p99_ms"] / b["p99_ms"] for r, b in paired),
        f"cpu_vs_{name}": statistics.median(b["cpu_us_per_call"] / r["cpu_us_per_call"] for r, b in paired),
    }


def _summary(rows: list[dict[str, Any]], sides: list[str]) -> list[dict[str, Any]]:
    """Per stack, workers, era, tool and side: the median over rounds, and the median of per-round ratios to mcp,
    to the floor and to Node's floor where they ran (and, for toolkit, to the TypeScript SDK of the era)."""
    table = []
    keys = sorted({(r["stack"], r["workers"], r["era"], r["tool"]) for r in rows})
    for cell in keys:
        cells = [r for r in rows if (r["stack"], r["workers"], r["era"], r["tool"]) == cell]
        base = {r["round"]: r for r in cells if r["side"] == BASELINE}
        ts = {r["round"]: r for r in cells if r["side"] in (TS, TS2)}  # 2025-11-25: 1.32; 2026-07-28: 2.4
        floors = {name: {r["round"]: r for r in cells if r["side"] == name} for name in FLOORS}
        for side in sides:
            mine = [r for r in cells if r["side"] == side]
            if not mine:
                continue
            stack, workers, era, tool = cell
            entry: dict[str, Any] = {"stack": stack, "workers": workers, "era": era, "tool": tool, "side": side}
            entry["rounds"] = len(mine)
            for key in ("calls_per_s", "p50_ms", "p99_ms", "cpu_us_per_call"):
                values = [r[key] for r in mine]
                entry[key] = statistics.median(values)
                entry[f"{key}_range"] = (min(values), max(values))
            entry["errors"] = sum(r["errors"] for r in mine)
            if side != BASELINE:
                entry.update(_ratios(mine, base, "mcp"))
            if side == "toolkit":
                entry.update(_ratios(mine, ts, "ts"))
            for name, floor in floors.items():
                entry.update(_ratios(mine, floor, name.replace("-", "_")))
            table.append(entry)
    return table


def _print_table(table: list[dict[str, Any]], memory: dict[str, float]) -> None:
    print(
        "\n| stack | workers | era | tool | side | calls/s | p50 (ms) | p99 (ms) | server CPU per call (µs)"
        " | calls/s vs mcp | p99 vs mcp's | CPU per call, mcp's / this | calls/s vs ts | calls/s vs floor"
        " | calls/s vs node floor | CPU per call, floor's / this | errors |"
    )
    print("| --- " * 17 + "|")
    for e in table:
        lo, hi = e["calls_per_s_range"]
        ratios = [_times(e, "calls_vs_mcp"), _times(e, "p99_vs_mcp"), _times(e, "cpu_vs_mcp"), _times(e, "calls_vs_ts")]
        ratios += [_share(e, "calls_vs_floor"), _share(e, "calls_vs_node_floor"), _share(e, "cpu_vs_floor")]
        print(
            f"| {e['stack']} | {e['workers']} | {e['era']} | {e['tool']} | {e['side']} | {e['calls_per_s']:,.0f}"
            f" ({lo:,.0f}-{hi:,.0f}) | {e['p50_ms']:.2f} | {e['p99_ms']:.2f} | {e['cpu_us_per_call']:.0f}"
            f" | {' | '.join(ratios)} | {e['errors']} |"
        )
    for side, value in memory.items():
        print(f"idle 2025-11-25 session, {side}: {value / 1024:.1f} KiB")


def _times(entry: dict[str, Any], key: str) -> str:
    return f"{entry[key]:.2f}x" if key in entry else ""


def _share(entry: dict[str, Any], key: str) -> str:
    return f"{entry[key]:.0%}" if key in entry else ""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.http", description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument(
        "--sides",
        default=",".join(SIDES),
        help=f"of {','.join(ALL_SIDES)}: the Node sides ({TS}: the TypeScript SDK 1.32, {TS2}: 2.4, {NODE_FLOOR}:"
        " bare node:http) come from npm, installed by the harness into ~/.cache/toolkit-benchmarks",
    )
    parser.add_argument("--stacks", default=",".join(STACKS), help="h11 (h11 + asyncio), httptools (+ uvloop)")
    parser.add_argument("--workers", default="1", help="worker counts to measure, e.g. 1,2")
    parser.add_argument("--eras", default=",".join(ERAS))
    parser.add_argument(
        "--tools",
        default="add",
        help=f"tools to call, of {','.join(_http_apps.TOOLS)}: sync, async, async with a Context reporting progress",
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=5, help="seconds per measurement")
    parser.add_argument("--warmup", type=int, default=1, help="seconds of untimed load before each measurement")
    parser.add_argument("--concurrency", type=int, default=16, help="open connections, each with one call in flight")
    parser.add_argument("--sessions", type=int, default=500, help="idle sessions opened for the memory figure")
    parser.add_argument("--no-pin", action="store_true", help="do not pin the servers and wrk to separate CPUs")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: one short round of every tool, toolkit and the floor (and the Node sides named)",
    )
    parser.add_argument(
        "--load",
        choices=("auto", "wrk", "raw", "httpx"),
        default="auto",
        help="the load generator: wrk when installed (auto), else raw (a lean asyncio HTTP/1.1 client); httpx",
    )
    parser.add_argument("--json", help="also write every measurement as JSON to this file")
    parser.add_argument(
        "--check-claims",
        action="store_true",
        help="measure toolkit and mcp only, and say which of README.md's HTTP claims no longer holds",
    )
    return parser


def _claim_ratios(rows: list[dict[str, Any]], memory: dict[str, float], sessions: int) -> dict[str, list[float]]:
    """Per claim row of `benchmarks.claims`, toolkit's per-round advantages over mcp (every stack's rounds, sync
    `add`: what README quotes)."""
    ratios: dict[str, list[float]] = {}
    base = {
        (r["stack"], r["workers"], r["era"], r["round"]): r for r in rows if (r["side"], r["tool"]) == (BASELINE, "add")
    }
    for row in rows:
        other = base.get((row["stack"], row["workers"], row["era"], row["round"]))
        if row["side"] != "toolkit" or row["tool"] != "add" or other is None:
            continue
        if not row["calls_per_s"] or not row["p99_ms"]:
            continue
        ratios.setdefault(f"http:{row['era']}:calls", []).append(row["calls_per_s"] / other["calls_per_s"])
        ratios.setdefault(f"http:{row['era']}:p99", []).append(other["p99_ms"] / row["p99_ms"])
    if "toolkit" in memory and memory.get(BASELINE):
        # RSS moves by 4 KiB pages: a growth of 0 over the sessions is less than one page among them all.
        ratios["http:session-memory"] = [memory[BASELINE] / max(memory["toolkit"], _PAGE / sessions)]
    return ratios


def _template(driver: Driver) -> bytes:
    """The driver's tools/call body with `999999` where each call's id goes (wrk's script and the raw load), its
    progress token too for `add_progress`."""
    message = driver.call(0)
    message["id"] = 999999
    if driver.tool == PROGRESS:
        message["params"]["_meta"]["progressToken"] = 999999
    message["params"]["arguments"]["a"] = 1
    return json.dumps(message).encode()


@contextmanager
def _on(cpus: set[int] | None) -> Iterator[None]:
    """Run this process on `cpus` for a while (the load generator, away from the server's CPU)."""
    if not cpus:
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def _one(args: argparse.Namespace, server: Side, row: dict[str, Any], client_cpus: set[int] | None) -> None:
    """One measurement of one side: untimed warmup, then the timed load, and the server's CPU time over it."""
    driver = Driver(server.url, row["era"], row["tool"])
    anyio.run(_check, driver)
    pids = [p.pid for p in server.processes]
    if args.load_name == "wrk":
        with _wrk_script(driver) as script:
            if args.warmup > 0:
                _wrk(driver.url, script, args.warmup, args.concurrency, client_cpus)
            cpu = _cpu_seconds(pids)
            row.update(_wrk(driver.url, script, args.seconds, args.concurrency, client_cpus))
    elif args.load_name == "raw":
        headers, body = driver.headers("tools/call"), _template(driver)
        with _on(client_cpus):
            if args.warmup > 0:
                _http_load.run(driver.url, headers, body, args.warmup, args.concurrency)
            cpu = _cpu_seconds(pids)
            row.update(_http_load.run(driver.url, headers, body, args.seconds, args.concurrency))
    else:
        with _on(client_cpus):
            if args.warmup > 0:
                anyio.run(_measure, driver, args.warmup, args.concurrency)
            cpu = _cpu_seconds(pids)
            row.update(anyio.run(_measure, driver, args.seconds, args.concurrency))
    calls = row.get("calls") or row["calls_per_s"] * args.seconds
    row["cpu_us_per_call"] = (_cpu_seconds(pids) - cpu) / calls * 1e6


def _serves(side: str, era: str, tool: str) -> bool:
    """Whether `side` is measured in `era` with `tool`: the TypeScript SDK 1.32 speaks no 2026-07-28, 2.4 is
    measured in 2026-07-28 (its 2025-11-25 serving is stateless, without the sessions the other sides keep), and the
    floors answer `add`'s JSON, with no progress notification."""
    if (side == TS and era == MODERN) or (side == TS2 and era == LEGACY):
        return False
    return not (side in FLOORS and tool == PROGRESS)


def _cells(args: argparse.Namespace, order: list[str]) -> Iterator[tuple[str, str, str]]:
    """A round's measurements: era, tool and side."""
    for era in args.eras.split(","):
        for tool in args.tool_list:
            for side in order:
                if _serves(side, era, tool):
                    yield era, tool, side


def _rounds(args: argparse.Namespace, stack: str, workers: int, rows: list[dict[str, Any]]) -> dict[str, float]:
    """Every round of one stack and worker count, sides interleaved; the idle-session memory with one worker."""
    cpus = sorted(os.sched_getaffinity(0))
    # One worker: the server on the first CPU, wrk on the others. Several: the servers share every CPU.
    pinned = args.pin and workers == 1
    servers = {side: Side(side, stack, workers, {cpus[0]} if pinned else None) for side in args.side_list}
    memory: dict[str, float] = {}
    try:
        for round_ in range(args.rounds):
            turn = round_ % len(args.side_list)
            order = args.side_list[turn:] + args.side_list[:turn]
            print(f"{stack}, {workers} worker(s), round {round_ + 1}: load average {_load()}", flush=True)
            for era, tool, side in _cells(args, order):
                # Handshake-era sessions of mcp, fastmcp and ts live in one process: not across workers. (The
                # floors keep none; toolkit's signed sessions verify on any worker.)
                if era == LEGACY and workers > 1 and side not in ("toolkit", *FLOORS):
                    continue
                row = {"stack": stack, "workers": workers, "era": era, "tool": tool, "side": side, "round": round_}
                _one(args, servers[side], row, set(cpus[1:]) if pinned else None)
                print(json.dumps(row), flush=True)
                rows.append(row)
        if workers == 1 and LEGACY in args.eras:
            for side, server in servers.items():
                if side in SESSIONS:
                    memory[side] = anyio.run(_idle_sessions, server.url, server.processes[0].pid, args.sessions)
    finally:
        for server in servers.values():
            server.close()
    return memory


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.worker:
        side, fd, http, loop = args.worker
        _worker(side, int(fd), http, loop)
        return 0
    args.side_list = ["toolkit", BASELINE] if args.check_claims else args.sides.split(",")
    args.tool_list = ["add"] if args.check_claims else args.tools.split(",")
    unknown = set(args.side_list) - set(ALL_SIDES)
    if unknown:
        print(f"unknown sides {', '.join(sorted(unknown))}: of {', '.join(ALL_SIDES)}", file=sys.stderr)
        return 2
    if args.quick:
        args.side_list = [s for s in args.side_list if s not in ("mcp", "fastmcp")] or ["toolkit"]
        args.tool_list = list(_http_apps.TOOLS)
        args.rounds, args.seconds, args.sessions = 1, 1, 20
    if set(args.side_list) & set(NODE_SIDES):
        try:
            print(f"Node sides: {_node.install()}", flush=True)
        except _node.NodeMissing as error:
            print(error, file=sys.stderr)
            return 2
    wrk = args.load == "wrk" or (args.load == "auto" and shutil.which("wrk") is not None and not args.quick)
    args.load_name = "wrk" if wrk else "httpx" if args.load == "httpx" else "raw"
    args.pin = not args.no_pin and len(os.sched_getaffinity(0)) >= 2 and shutil.which("taskset") is not None
    print(f"load average {_load()}, load: {args.load_name}, pinned: {args.pin}", flush=True)
    rows: list[dict[str, Any]] = []
    memory: dict[str, float] = {}
    for stack in args.stacks.split(","):
        for workers in (int(n) for n in args.workers.split(",")):
            measured = _rounds(args, stack, workers, rows)
            memory = memory or measured  # the first stack's: a session costs what the app keeps, whatever parses
    print(f"load average at the end {_load()}")
    table = _summary(rows, args.side_list)
    _print_table(table, memory)
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "table": table, "memory": memory}, indent=2))
    if args.check_claims:
        ratios = _claim_ratios(rows, memory, args.sessions)
        text, held = claims.report(claims.judge([c for c in claims.CLAIMS if c.http], ratios))
        print(text)
        return 0 if held else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
