"""Several workers: real `uvicorn http_app:tagged --workers 2` on 127.0.0.1 with a shared key and a shared session
store (tests/asgi_servers.py), under load and across a DELETE.

`tagged` adds `X-Served-By` (the worker's pid) to every response, so that a test knows which worker answered.
Requests that must reach either worker go on fresh connections (no keep-alive): the kernel hands each to whichever
worker accepts it first.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import textwrap
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import servers
import wire
from asgi_servers import TIMEOUT, Spawned
from served import Served

from toolkit import Client, ProtocolMode

DEMO = servers.HTTP_DEMO
LIMIT = 64 * 1024  # the workers' body limit here (MCP_MAX_BODY_SIZE)
LOAD_BOUND = 120  # seconds: the load test's bound
ACCEPT = wire.POST_HEADERS
INITIALIZE = wire.initialize_request(0)
GONE = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32600, "message": "Session not found: initialize a new session"},
}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Spawned]:
    store = tmp_path_factory.mktemp("store") / "sessions.db"
    env = {"MCP_SESSION_STORE": str(store), "MCP_MAX_BODY_SIZE": str(LIMIT)}
    # Keep-alive past the load test's bound: under load its one event loop (270 clients) can leave a pooled connection
    # idle past uvicorn's 5 s and reuse it as uvicorn closes it (a reset: ReadError); not the subject here.
    server = Spawned("uvicorn", app="tagged", env=env, options=["--timeout-keep-alive", str(LOAD_BOUND)])
    yield server
    output = server.close()
    assert "Traceback" not in output, output


def call(request_id: int, name: str, arguments: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def answer(request_id: int, text: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {"content": [{"type": "text", "text": text}], "isError": False},
    }


def session_headers(response: httpx.Response) -> dict[str, str]:
    assert response.status_code == 200, response.text
    return {**ACCEPT, "mcp-session-id": response.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}


def test_a_session_deleted_on_one_worker_is_404_on_the_other(workers: Spawned) -> None:
    with httpx.Client(limits=httpx.Limits(max_keepalive_connections=0), timeout=TIMEOUT) as http:
        headers = session_headers(http.post(workers.url, json=INITIALIZE, headers=ACCEPT))
        served: set[str] = set()
        deadline = time.monotonic() + TIMEOUT
        request_id = 0
        while len(served) < 2:  # the session is served by both workers (its id is signed, not stored)
            assert time.monotonic() < deadline, "every request of the session reached the same worker"
            request_id += 1
            response = http.post(workers.url, json=call(request_id, "worker"), headers=headers)
            pid = response.headers["x-served-by"]
            assert (response.status_code, response.json()) == (200, answer(request_id, pid))
            served.add(pid)
        deleted = http.delete(workers.url, headers=headers)
        assert deleted.status_code == 204
        [other] = served - {deleted.headers["x-served-by"]}
        replies: dict[str, tuple[int, Any]] = {}
        while other not in replies:  # until the worker that did not get the DELETE has answered too
            assert time.monotonic() < deadline, "no request reached the other worker"
            request_id += 1
            response = http.post(workers.url, json=call(request_id, "worker"), headers=headers)
            replies[response.headers["x-served-by"]] = (response.status_code, response.json())
        assert replies[other] == (404, GONE)
        assert all(reply == (404, GONE) for reply in replies.values())


# -- load: hundreds of clients at once, both eras, faults mixed in -------------------------------------------------


# Each job notes in `steps` the request it is about to make, so that a failure says which request failed.


async def client_http(steps: list[str], url: str, protocol: ProtocolMode, i: int) -> str:
    steps.append("connect (initialize in the handshake era)")
    async with Client.http(url, protocol=protocol) as client:
        # Pinned, not "auto": under this load a discovery can outlast auto's 10 s and fall back to a session.
        assert client.protocol_version == ("2026-07-28" if protocol == "2026-07-28" else "2025-11-25")
        steps.append("tools/list")
        assert [t.name for t in await client.list_tools()] == ["add", "ticks", "worker"]
        for j in range(2):
            steps.append(f"tools/call add #{j}")
            result = await client.call_tool("add", {"a": i, "b": j})
            # 2026-07-28 sends the int as structuredContent too (SEP-2106), the handshake era its text alone
            structured = {"structuredContent": i + j} if protocol == "2026-07-28" else {}
            assert result.model_dump(mode="json", by_alias=True, exclude_none=True) == {
                "content": [{"type": "text", "text": str(i + j)}],
                **structured,
                "isError": False,
            }
        seen: list[float] = []
        steps.append("tools/call ticks")
        result = await client.call_tool("ticks", {"count": 3}, progress=lambda p, t, m: seen.append(p))
        assert (result.text, seen) == ("3 ticks", [1, 2, 3])
        steps.append("DELETE (the handshake era) and close")
    return str(protocol)


async def hopping_session(steps: list[str], url: str, pids: list[set[str]]) -> str:
    """A 2025-11-25 session whose every request goes on a fresh connection, so to either worker."""
    limits = httpx.Limits(max_keepalive_connections=0)
    async with httpx.AsyncClient(limits=limits, timeout=TIMEOUT) as http:
        steps.append("initialize")
        headers = session_headers(await http.post(url, json=INITIALIZE, headers=ACCEPT))
        served: set[str] = set()
        for request_id in range(1, 5):
            steps.append(f"tools/call worker #{request_id}")
            response = await http.post(url, json=call(request_id, "worker"), headers=headers)
            pid = response.headers["x-served-by"]
            assert (response.status_code, response.json()) == (200, answer(request_id, pid))
            served.add(pid)
        pids.append(served)
        steps.append("DELETE")
        assert (await http.delete(url, headers=headers)).status_code == 204
        steps.append("tools/call add after the DELETE")
        response = await http.post(url, json=call(9, "add", {"a": 1, "b": 2}), headers=headers)
        assert (response.status_code, response.json()) == (404, GONE)  # whichever worker: the store is shared
    return "hopping"


async def leaving_mid_stream(steps: list[str], url: str, modern: bool) -> str:
    """Start a long call with progress, read its first event, and hang up."""
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        if modern:
            message = call(1, "ticks", {"count": 500}, progressToken="p", **MODERN_META)
            headers = {**ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "ticks"}
        else:
            steps.append("initialize")
            headers = session_headers(await http.post(url, json=INITIALIZE, headers=ACCEPT))
            message = call(1, "ticks", {"count": 500}, progressToken="p")
        steps.append("tools/call ticks (streamed, left after its first event)")
        async with http.stream("POST", url, json=message, headers=headers) as response:
            assert (response.status_code, response.headers["content-type"]) == (200, "text/event-stream")
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    first = json.loads(line[6:])
                    break
        progress = {"progressToken": "p", "progress": 1, "total": 500}
        assert first == {"jsonrpc": "2.0", "method": "notifications/progress", "params": progress}
    return "left"


async def oversized(steps: list[str], url: str, chunked: bool) -> str:
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":"' + b"x" * LIMIT

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 8192):
            yield body[start : start + 8192]

    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        headers = {**ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "add"}
        steps.append(f"tools/call add with a body over the limit ({'chunked' if chunked else 'Content-Length'})")
        response = await http.post(url, content=chunks() if chunked else body, headers=headers)
    assert (response.status_code, response.content) == (413, b"")
    return "oversized"


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the server is the subject: one client backend is enough
async def test_hundreds_of_clients_at_once_on_two_workers_get_exact_replies(workers: Spawned) -> None:
    url = workers.url
    pids: list[set[str]] = []
    done: list[str] = []
    failures: list[str] = []

    async def run(i: int, job: Any, *args: Any) -> None:
        steps: list[str] = []
        try:
            done.append(await job(steps, url, *args))
        except Exception as exc:  # collected: one failure must not hide how many others there were
            shown = ", ".join(repr(arg) for arg in args if arg is not pids)
            failures.append(f"job {i}: {job.__name__}({shown}) at {steps[-1]}: {exc!r}")

    with anyio.fail_after(LOAD_BOUND):
        async with anyio.create_task_group() as tg:
            for i in range(270):
                kind = i % 9
                if kind < 3:
                    tg.start_soon(run, i, client_http, "2026-07-28", i)
                elif kind < 6:
                    tg.start_soon(run, i, client_http, "handshake", i)
                elif kind == 6:
                    tg.start_soon(run, i, hopping_session, pids)
                elif kind == 7:
                    tg.start_soon(run, i, leaving_mid_stream, i % 2 == 0)
                else:
                    tg.start_soon(run, i, oversized, i % 2 == 0)
    # A failure names its job and request, with what the server said besides its access log (a worker it restarted).
    assert failures == [], "\n".join(
        [*failures, *(line for line in workers.output().splitlines() if ' - "' not in line)]
    )
    assert Counter(done) == {"2026-07-28": 90, "handshake": 90, "hopping": 30, "left": 30, "oversized": 30}
    assert len(set().union(*pids)) == 2, "one worker served every request"
    assert any(len(served) == 2 for served in pids), "no session was served by both workers"
    # Still serving, and exactly, after the clients that left and the bodies refused.
    assert await client_http([], url, "handshake", 7) == "handshake"


def test_toolkit_serve_workers_share_ended_sessions_too() -> None:
    served = Served(DEMO, "--workers", "2")  # one key and one session store, made by `toolkit serve` itself
    try:
        with httpx.Client(limits=httpx.Limits(max_keepalive_connections=0), timeout=TIMEOUT) as http:
            headers = session_headers(http.post(served.url, json=INITIALIZE, headers=ACCEPT))
            pids: set[str] = set()
            deadline = time.monotonic() + TIMEOUT
            while len(pids) < 2:  # both workers are up and serve the session
                assert time.monotonic() < deadline, "every request of the session reached the same worker"
                response = http.post(served.url, json=call(1, "worker"), headers=headers)
                pids.add(response.json()["result"]["content"][0]["text"])
            assert http.delete(served.url, headers=headers).status_code == 204
            # Without a shared store about half of these would reach the other worker and be served.
            replies = [http.post(served.url, json=call(2, "add", {"a": 1, "b": 2}), headers=headers) for _ in range(40)]
            assert [(r.status_code, r.json()) for r in replies] == [(404, GONE)] * 40
    finally:
        served.close()


def test_connections_to_the_socket_toolkit_serve_binds_have_nagle_off() -> None:
    # asyncio turns TCP_NODELAY on for an accepted connection only when the listening socket says IPPROTO_TCP; with
    # Nagle on, each keep-alive answer (headers and body written apart) waits ~40 ms for the client's delayed ACK
    # (uvicorn's own `--workers` socket has that bug: Kludex/uvicorn#3149).
    import asyncio
    import socket

    from toolkit._http.serve import _bind

    async def accept_one() -> int:
        sock = _bind("127.0.0.1", 0)
        accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                raw = transport.get_extra_info("socket")
                accepted.set_result(raw.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await asyncio.get_running_loop().create_server(Probe, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
            nodelay = await asyncio.wait_for(accepted, TIMEOUT)
            writer.close()
        return nodelay

    assert asyncio.run(accept_one()) == 1


CHILD_ENVIRONMENT = textwrap.dedent(
    """
    import subprocess
    import sys

    from toolkit import Server

    server = Server("env")

    @server.tool
    def child_environment() -> str:
        \"\"\"The names of the toolkit variables a subprocess of this tool sees.\"\"\"
        code = "import os; print(' '.join(sorted(name for name in os.environ if name.startswith('TOOLKIT_'))))"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        return done.stdout.strip() or "none"
    """
)


def test_a_subprocess_a_worker_s_tool_starts_inherits_neither_the_secret_nor_the_hub(tmp_path: Path) -> None:
    target = tmp_path / "child_environment.py"
    target.write_text(CHILD_ENVIRONMENT, encoding="utf-8")
    served = Served(target, "--workers", "2")
    try:
        headers = {**ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call"}
        message = call(1, "child_environment", {}, **MODERN_META)
        reply = httpx.post(
            served.url, json=message, headers={**headers, "mcp-name": "child_environment"}, timeout=TIMEOUT
        )
        assert reply.json()["result"]["content"] == [{"type": "text", "text": "none"}], reply.text
    finally:
        served.close()


# -- the hub (the workers' shared state, in the supervisor): started again when it fails, or the server stops -----

HUB_RESTARTED = "toolkit: the workers' shared state (the hub) failed; starting it again"


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A fresh folder with a short path, for the supervisor's (`TMPDIR`): the hub's Unix socket path must fit in 107
    bytes, which pytest's `tmp_path` under xdist does not leave room for."""
    with tempfile.TemporaryDirectory() as folder:
        yield Path(folder)


def test_a_hub_that_fails_is_logged_once_and_started_again_and_the_workers_serve_on(short_tmp: Path) -> None:
    # Its socket file removed (a /tmp cleaner, say): the hub fails, says so once, and serves again on a new one.
    served = Served(DEMO, "--workers", "2", env={"TMPDIR": str(short_tmp)})  # the supervisor's folder goes there
    try:
        [socket_file] = short_tmp.glob("toolkit-sessions-*/backend.sock")
        with httpx.Client(limits=httpx.Limits(max_keepalive_connections=0), timeout=TIMEOUT) as http:
            headers = session_headers(http.post(served.url, json=INITIALIZE, headers=ACCEPT))
            ended = session_headers(http.post(served.url, json=INITIALIZE, headers=ACCEPT))
            assert http.delete(served.url, headers=ended).status_code == 204
            socket_file.unlink()
            served.wait_for(HUB_RESTARTED)
            pids: list[str] = []
            deadline = time.monotonic() + TIMEOUT
            while len(pids) < 20 or len(set(pids)) < 2:  # 20 in a row once the hub is back, from both workers
                assert time.monotonic() < deadline, f"the workers did not reach the hub again: {pids}"
                reply = http.post(served.url, json=call(2, "worker"), headers=headers)
                # (a request before the hub is back is refused: 503)
                pids = [*pids, reply.json()["result"]["content"][0]["text"]] if reply.status_code == 200 else []
            gone = [http.post(served.url, json=call(3, "add", {"a": 1, "b": 2}), headers=ended) for _ in range(10)]
            assert [(r.status_code, r.json()) for r in gone] == [(404, GONE)] * 10
    finally:
        served.close()
    said = "".join(served.stderr)
    # Said once: one line, then its traceback, which ends with the cause.
    assert [line for line in served.stderr if "(the hub)" in line] == [HUB_RESTARTED + "\n"], said
    assert said.count("Traceback") == 1, said
    assert said.count(f"OSError: the hub's socket {socket_file} was removed") == 1, said


def test_a_hub_that_keeps_failing_stops_the_server_with_one_line_and_status_2(short_tmp: Path) -> None:
    # The supervisor's whole folder removed: the hub fails, and every start again fails to bind. After 5 failures
    # within a minute the supervisor stops the workers rather than let them answer 503 to every session.
    served = Served(DEMO, "--workers", "2", env={"TMPDIR": str(short_tmp)})
    [folder] = short_tmp.glob("toolkit-sessions-*")
    shutil.rmtree(folder)
    status = served.exited()
    said = "".join(served.stderr)
    assert status == 2, said
    socket_file = folder / "backend.sock"
    cause = f"FileNotFoundError: [Errno 2] the hub cannot bind its socket {socket_file}: No such file or directory"
    # Each failure said once: four started again (each with its traceback), the fifth as the reason to stop.
    assert [line for line in served.stderr if "(the hub)" in line] == [HUB_RESTARTED + "\n"] * 4 + [
        "toolkit: error: the workers' shared state (the hub) failed 5 times within 60 s,"
        f" stopping the server; the last time: {cause}\n"
    ], said
    assert said.count("Traceback") == 4, said
    assert served.stderr[-1].startswith("toolkit: error: "), said
