"""Mounting servers written with other SDKs: the TypeScript SDK 1.32 (`@modelcontextprotocol/sdk`, 2025-11-25) and
2.4 (`@modelcontextprotocol/server`, 2026-07-28 and 2025-11-25 from one factory), and the official Python SDK 1.x
(`mcp<2`, FastMCP, 2025-11-25), each over stdio and Streamable HTTP, driven by toolkit clients of both eras.

Each server has the same tools (tests/conformance/ts_sdk1_server.mjs, ts_sdk2_server.mjs, tests/servers/
sdk1_server.py): `add` (structured content), `count` (progress), `greet` (elicitation), `slow` (waits until
cancelled), `cancelled` (how many calls of `slow` were) and `pid`. Through the gateway: the definitions and results
are what the server gives a direct client, progress and the question reach the downstream client, a cancelled call is
cancelled upstream, and an upstream killed mid-call ends that call with a tool error while the gateway keeps serving.

The npm packages are pinned in tests/conformance (installed by `install_node`, as for the other Node tests); the
Python SDK 1.x runs in a venv of its own (`sdk1_python`), kept in pytest's cache folder, keyed by its pinned
requirements and this Python, made once whichever xdist worker comes first.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anyio
import anyio.to_thread
import pytest
from asgi_servers import free_port
from served import CONFORMANCE, follow, install_node
from servers import SDK1, SDK1_REQUIREMENTS

from toolkit import CallToolResult, Client, ElicitRequest, ElicitResult, Server

pytestmark = pytest.mark.anyio

TIMEOUT = 60  # one test, to its end; only a hang reaches it


@dataclass(frozen=True)
class Case:
    """An upstream: which SDK's server, over which transport, and the era the gateway speaks to it."""

    sdk: str
    transport: str
    era: Literal["auto", "handshake"] = "auto"  # the mount's `protocol=`

    @property
    def id(self) -> str:
        return f"{self.sdk}-{self.transport}" + ("" if self.era == "auto" else f"-{self.era}")


CASES = [
    Case("ts1.32", "stdio"),
    Case("ts1.32", "http"),
    Case("ts2.4", "stdio"),  # 2026-07-28
    Case("ts2.4", "stdio", "handshake"),
    # 2.4 over HTTP serves 2025-11-25 statelessly (createMcpHandler's `legacy: 'stateless'`): a fresh server instance
    # per request, so none can ask the client or be cancelled; the gateway speaks 2026-07-28 to it, as `auto` does.
    Case("ts2.4", "http"),
    Case("py1.x", "stdio"),
    Case("py1.x", "http"),
]


@pytest.fixture(scope="session")
def sdk1_python(pytestconfig: pytest.Config) -> Path:
    """The Python of a venv with the Python SDK 1.x (tests/servers/sdk1_requirements.txt): made on first use, kept
    in pytest's cache folder for the next runs (the system's temporary folder with `-p no:cacheprovider`). Fails (never
    skips) when pip cannot install it."""
    key = hashlib.sha256(SDK1_REQUIREMENTS.read_bytes() + sys.version.encode()).hexdigest()[:12]
    cache = getattr(pytestconfig, "cache", None)
    if cache is not None:
        folder: Path = cache.mkdir(f"mcp1-venv-{key}")
    else:
        folder = Path(tempfile.gettempdir()) / "toolkit-tests" / f"mcp1-venv-{key}"
        folder.mkdir(parents=True, exist_ok=True)
    python = folder / "bin" / "python"
    with (folder.parent / f"mcp1-venv-{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one xdist worker makes it while the others wait, then find it made
        if not (folder / "made").exists():
            shutil.rmtree(folder)  # what an interrupted run left
            for command in (
                [sys.executable, "-m", "venv", str(folder)],
                [
                    str(python),
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--disable-pip-version-check",
                    "-r",
                    str(SDK1_REQUIREMENTS),
                ],
            ):
                made = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
                if made.returncode != 0:
                    pytest.fail(f"cannot make the venv of the Python SDK 1.x: {made.stdout}{made.stderr}")
            (folder / "made").write_text(SDK1_REQUIREMENTS.read_text())
    return python


def command(case: Case, request: pytest.FixtureRequest) -> list[str]:
    """What starts the case's server (serving stdio; with `--http`, Streamable HTTP)."""
    if case.sdk == "py1.x":
        return [str(request.getfixturevalue("sdk1_python")), str(SDK1)]
    script = "ts_sdk1_server.mjs" if case.sdk == "ts1.32" else "ts_sdk2_server.mjs"
    return [str(install_node()), str(CONFORMANCE / script)]


@dataclass
class Upstream:
    """What the gateway mounts: a command (stdio) or the URL of a process this fixture started (HTTP)."""

    case: Case
    target: list[str] | str
    process: subprocess.Popen[str] | None = None

    def direct(self) -> Client:
        """A client of the upstream itself, not through the gateway."""
        if isinstance(self.target, str):
            return Client.http(self.target, protocol=self.case.era, validate_output=False)
        return Client.stdio(self.target, protocol=self.case.era, validate_output=False)


@pytest.fixture(params=CASES, ids=[case.id for case in CASES])
def upstream(request: pytest.FixtureRequest) -> Iterator[Upstream]:
    case: Case = request.param
    start = command(case, request)
    if case.transport == "stdio":
        yield Upstream(case, start)
        return
    process = subprocess.Popen([*start, "--http"], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    said: list[str] = []
    reader, lines = follow(process.stdout, said)
    try:
        url = lines.get(timeout=TIMEOUT).strip()
        assert url.startswith("http://127.0.0.1:"), f"the server did not say its URL: {said}"
        yield Upstream(case, url, process)
    except queue.Empty:
        raise AssertionError("the server did not say its URL") from None
    finally:
        process.terminate()
        process.wait(timeout=TIMEOUT)
        reader.join(timeout=TIMEOUT)
        process.stdout.close()


def wire(result: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


async def call_slow(client: Client, then: Callable[[anyio.CancelScope], object]) -> list[CallToolResult]:
    """Call the upstream's `slow` and, once it runs (its progress says so), `then(scope)` (`scope` is around the
    call); what the call returned (nothing when the scope was cancelled)."""
    outcome: list[CallToolResult] = []
    started = anyio.Event()
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                outcome.append(await client.call_tool("up_slow", progress=lambda *_: started.set()))

            tg.start_soon(call)
            await started.wait()
            then(scope)
    return outcome


def assert_killed(upstream: Upstream, killed: CallToolResult, again: CallToolResult) -> None:
    """The call the upstream died in is a tool error; the next call starts a command again, a URL's says it is down."""
    assert killed.is_error
    if upstream.process is None:
        assert "closed its connection during the call (the server process was killed by signal 9" in killed.text
        assert again.structured_content == {"sum": 2}
    else:  # docs/gateway.md, "Faults": a URL that died is down, and stays so while it is away
        assert killed.text.startswith(f"the upstream server {upstream.target} is down: "), killed.text
        assert again.is_error
        assert again.text.startswith(f"the upstream server {upstream.target} is down: "), again.text


@pytest.mark.parametrize("client_era", ["2026-07-28", "handshake"])
async def test_a_server_of_another_sdk_is_served_through_the_gateway_until_it_is_killed_mid_call(
    upstream: Upstream, client_era: Any
) -> None:
    asked: list[str] = []

    def elicit(request: ElicitRequest) -> ElicitResult[Any]:
        asked.append(request.message)
        return ElicitResult.accept({"name": "Ada"})

    gateway = Server("gateway")

    @gateway.tool
    def local() -> str:
        """A tool of the gateway's own."""
        return "here"

    gateway.mount(upstream.target, prefix="up", protocol=upstream.case.era)
    reports: list[float] = []
    with anyio.fail_after(TIMEOUT):
        async with Client(gateway, protocol=client_era, elicitation_handler=elicit) as client:
            listed = {tool.name: tool for tool in await client.list_tools()}
            added = await client.call_tool("up_add", {"a": 2, "b": 3})
            async with upstream.direct() as direct:
                tools = await direct.list_tools()
                assert wire(added) == wire(await direct.call_tool("add", {"a": 2, "b": 3}))
            counted = await client.call_tool("up_count", {"steps": 2}, progress=lambda done, *_: reports.append(done))
            greeted = await client.call_tool("up_greet")
            assert not await call_slow(client, lambda scope: scope.cancel())
            cancelled = await client.call_tool("up_cancelled")
            pid = int((await client.call_tool("up_pid")).text)
            [killed] = await call_slow(client, lambda _: os.kill(pid, signal.SIGKILL))
            here = await client.call_tool("local")
            still = await client.list_tools()
            again = await client.call_tool("up_add", {"a": 1, "b": 1})
    assert sorted(listed) == sorted(["local", *(f"up_{tool.name}" for tool in tools)])
    for tool in tools:  # as the upstream wrote them, renamed (`execution` is 2025-11-25's: not listed in 2026-07-28)
        execution = tool.execution if client_era == "handshake" else None
        assert listed[f"up_{tool.name}"] == tool.model_copy(update={"name": f"up_{tool.name}", "execution": execution})
    assert added.structured_content == {"sum": 5}
    assert not added.is_error
    assert (counted.text, reports) == ("counted 2", [1, 2])
    assert (greeted.text, asked) == ("hello Ada", ["Your name?"])  # asked of the downstream client, in its era
    assert cancelled.text == "1"  # the cancelled call was cancelled upstream too
    assert_killed(upstream, killed, again)
    assert here.text == "here"  # the gateway serves on, and lists what it last knew
    assert [tool.name for tool in still] == list(listed)


def serve_http(start: list[str]) -> tuple[subprocess.Popen[str], str]:
    """Start an HTTP server (`start`): it, and the URL it printed once listening."""
    process = subprocess.Popen(start, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def stop(process: subprocess.Popen[str]) -> None:
    process.kill()
    process.wait(timeout=TIMEOUT)
    assert process.stdout is not None
    process.stdout.close()


async def test_an_http_upstream_that_died_and_came_back_is_connected_again() -> None:
    # The TypeScript SDK 1.32 over HTTP (a 2025-11-25 session): killed, then started again on the same port.
    start = [str(install_node()), str(CONFORMANCE / "ts_sdk1_server.mjs"), "--http", str(free_port())]
    first, url = await anyio.to_thread.run_sync(serve_http, start)
    gateway = Server("gateway")
    gateway.mount(url, prefix="up")
    with anyio.fail_after(TIMEOUT):
        async with Client(gateway) as client:
            before = await client.call_tool("up_add", {"a": 1, "b": 1})
            await anyio.to_thread.run_sync(stop, first)
            down = await client.call_tool("up_add", {"a": 1, "b": 1})
            second, again_url = await anyio.to_thread.run_sync(serve_http, start)
            try:
                again = await client.call_tool("up_add", {"a": 1, "b": 1})
            finally:
                await anyio.to_thread.run_sync(stop, second)
    assert again_url == url
    assert before.structured_content == {"sum": 2}
    assert down.is_error
    assert down.text.startswith(f"the upstream server {url} is down: "), down.text  # docs/gateway.md, Faults
    assert again.structured_content == {"sum": 2}, again.text  # a new session: the call waited for it
