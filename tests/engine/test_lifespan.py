"""`Server(lifespan=...)`: entered once before serving, shared by every connection and call, shut down after the
last reply; its value reaches tools through their Context, and tests can replace it."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
import wire
from cli_helpers import toolkit_here

from toolkit import Client, Context, MemoryTransport, Server, StartupError, tool
from toolkit._engine.registry import Registry
from toolkit.testing import ToolTester

pytestmark = pytest.mark.anyio

PYTHON = sys.executable
INITIALIZE = wire.initialize_request()
CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}}


@dataclass
class AppState:
    name: str
    calls: list[str] = field(default_factory=list)


class Journal:
    """What happened, in order: the lifespan's startups and shutdowns, the transport's reads and writes."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def lifespan(self, name: str = "real", fail_start: bool = False, fail_stop: bool = False) -> Any:
        @asynccontextmanager
        async def lifespan(server: Server) -> AsyncIterator[AppState]:
            self.events.append(f"start {name}")
            await anyio.lowlevel.checkpoint()
            if fail_start:
                raise ConnectionError("no database at db.example")
            yield AppState(name)
            await anyio.lowlevel.checkpoint()  # shutdown may await, even when serving was cancelled
            self.events.append(f"stop {name}")
            if fail_stop:
                raise OSError("the pool would not close")

        return lifespan


def make_server(journal: Journal, **options: Any) -> Server:
    server = Server("stateful", lifespan=journal.lifespan(**options))

    @server.tool
    async def whoami(ctx: Context[AppState]) -> str:
        ctx.lifespan_context.calls.append("whoami")
        journal.events.append("call")
        return ctx.lifespan_context.name

    @server.tool
    def count(ctx: Context[AppState]) -> int:  # sync: runs on a worker thread
        return len(ctx.lifespan_context.calls)

    return server


class Scripted:
    """A transport that reads the given messages, then reaches end of input, and journals what it does."""

    def __init__(self, journal: Journal, *messages: dict[str, Any]) -> None:
        self.journal = journal
        self.incoming = [json.dumps(m) for m in messages]
        self.sent: list[dict[str, Any]] = []

    async def send(self, message: str, /) -> None:
        self.sent.append(json.loads(message))
        self.journal.events.append(f"send {self.sent[-1].get('id')}")

    async def receive(self) -> str:
        self.journal.events.append("receive")
        await anyio.lowlevel.checkpoint()
        if not self.incoming:
            raise anyio.EndOfStream
        return self.incoming.pop(0)

    async def aclose(self) -> None:
        self.journal.events.append("close")


# -- tools reach the state ----------------------------------------------------------------------------------


async def test_async_and_sync_tools_share_the_state_the_lifespan_yields() -> None:
    journal = Journal()
    server = make_server(journal)
    async with Client(server) as client:
        assert (await client.call_tool("whoami")).text == "real"
        assert (await client.call_tool("whoami")).text == "real"
        assert (await client.call_tool("count")).text == "2"
        assert journal.events == ["start real", "call", "call"]
    assert journal.events == ["start real", "call", "call", "stop real"]


async def test_a_typed_context_parameter_is_the_context_not_a_schema_property() -> None:
    @tool
    def typed(x: int, ctx: Context[AppState]) -> int:
        return x

    @tool
    def optional(x: int, ctx: Context[AppState] | None = None) -> int:
        return x

    @tool
    def bare(x: int, ctx: Context) -> int:
        return x

    assert typed.definition.input_schema == bare.definition.input_schema == optional.definition.input_schema
    assert list(typed.definition.input_schema["properties"]) == ["x"]


async def test_a_server_without_a_lifespan_gives_tools_none() -> None:
    server = Server("plain")

    @server.tool
    def state(ctx: Context) -> str:
        return repr(ctx.lifespan_context)

    async with Client(server) as client:
        assert (await client.call_tool("state")).text == "None"


async def test_a_tool_run_directly_gets_the_state_its_context_is_given() -> None:
    @tool
    def name(ctx: Context[AppState]) -> str:
        return ctx.lifespan_context.name

    assert (await name.run({}, Context(lifespan_context=AppState("given")))).text == "given"
    detached = await name.run({})
    assert detached.is_error
    with pytest.raises(RuntimeError, match="no lifespan state"):
        Context().lifespan_context


async def test_the_state_is_readable_on_the_server_only_while_it_runs() -> None:
    server = make_server(Journal())
    with pytest.raises(RuntimeError, match="not running"):
        server.lifespan_context
    async with server.running() as state:
        assert isinstance(state, AppState)
        assert server.lifespan_context is state
    with pytest.raises(RuntimeError, match="not running"):
        server.lifespan_context


async def test_the_lifespan_is_called_with_the_server_and_a_registry_served_alone_with_itself() -> None:
    # Issue 39: a `Server` holds the engine's `Registry` (it is not one); its lifespan still gets the `Server`.
    called_with: list[Any] = []

    @asynccontextmanager
    async def lifespan(server: Any) -> AsyncIterator[None]:
        called_with.append(server)
        yield

    server = Server("held", lifespan=lifespan)
    alone = Registry("alone", lifespan, {})
    async with server.running(), alone.running():
        assert called_with == [server, alone]


# -- startup and shutdown order -----------------------------------------------------------------------------


async def test_startup_comes_before_the_first_read_and_shutdown_after_the_last_reply() -> None:
    journal = Journal()
    server = make_server(journal)
    # End of input right after the call: the server still answers it, then stops.
    await server.serve(Scripted(journal, INITIALIZE, CALL))
    events = journal.events
    # The server may read ahead of its replies (its outbox lets it), so only the order that matters is pinned:
    # the lifespan starts before the first read, and stops after the last reply is sent and the transport closed.
    assert events[0] == "start real"
    assert events.count("receive") == 3
    assert [e for e in events if e.startswith("send") or e == "call"] == ["send 1", "call", "send 2"]
    assert events[-3:] == ["close", "stop real", "close"]
    assert events.index("send 2") < events.index("stop real")


async def test_cancelling_the_server_still_shuts_the_lifespan_down() -> None:
    journal = Journal()
    server = make_server(journal)
    ours, theirs = MemoryTransport.pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, theirs)
        await ours.send(json.dumps(INITIALIZE))
        await ours.receive()
        tg.cancel_scope.cancel()
    assert journal.events == ["start real", "stop real"]


async def test_a_failing_startup_is_raised_before_anything_is_read() -> None:
    journal = Journal()
    server = make_server(journal, fail_start=True)
    transport = Scripted(journal, INITIALIZE)
    with pytest.raises(StartupError) as failed:
        await server.serve(transport)
    assert str(failed.value) == "server 'stateful' failed to start: ConnectionError: no database at db.example"
    assert isinstance(failed.value.__cause__, ConnectionError)
    assert (journal.events, transport.sent) == (["start real", "close"], [])


async def test_a_client_of_a_server_that_cannot_start_raises_on_connecting() -> None:
    server = make_server(Journal(), fail_start=True)
    with pytest.raises(StartupError, match="no database"):
        async with Client(server):
            pytest.fail("connected to a server that did not start")
    with pytest.raises(RuntimeError, match="not running"):
        server.lifespan_context


async def test_a_startup_cancelled_midway_leaves_the_server_ready_to_start_again() -> None:
    journal = Journal()
    hang = anyio.Event()

    @asynccontextmanager
    async def hanging(server: Server) -> AsyncIterator[AppState]:
        journal.events.append("start hanging")
        await hang.wait()
        yield AppState("never")

    server = make_server(journal)
    with anyio.move_on_after(0) as scope:
        async with server.running(lifespan=hanging):
            pytest.fail("started")
    assert scope.cancelled_caught
    with pytest.raises(RuntimeError, match="not running"):
        server.lifespan_context
    async with Client(server) as client:
        assert (await client.call_tool("whoami")).text == "real"
    assert journal.events == ["start hanging", "start real", "call", "stop real"]


async def test_a_failing_shutdown_is_logged_and_loses_no_reply(caplog: pytest.LogCaptureFixture) -> None:
    journal = Journal()
    server = make_server(journal, fail_stop=True)
    transport = Scripted(journal, INITIALIZE, CALL)
    await server.serve(transport)
    replies = transport.sent
    assert [(r["id"], "result" in r) for r in replies] == [(1, True), (2, True)]
    assert replies[1]["result"]["content"] == [{"type": "text", "text": "real"}]
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.ERROR, "server 'stateful': the lifespan failed to shut down")
    ]
    assert journal.events[-3:] == ["close", "stop real", "close"]


# -- one lifespan, many connections -------------------------------------------------------------------------


async def test_concurrent_clients_share_one_lifespan() -> None:
    journal = Journal()
    server = make_server(journal)
    names: list[str] = []

    async def use(opened: anyio.Event, done: anyio.Event) -> None:
        async with Client(server) as client:
            opened.set()
            names.append((await client.call_tool("whoami")).text)
            await done.wait()

    done = anyio.Event()
    async with anyio.create_task_group() as tg:
        openings = [anyio.Event() for _ in range(3)]
        for opened in openings:
            tg.start_soon(use, opened, done)
        for opened in openings:
            await opened.wait()
        assert journal.events.count("start real") == 1
        done.set()
    assert names == ["real"] * 3
    assert journal.events == ["start real", "call", "call", "call", "stop real"]


async def test_clients_that_connect_while_the_lifespan_starts_wait_for_it() -> None:
    release = anyio.Event()
    startups: list[int] = []

    @asynccontextmanager
    async def slow(server: Server) -> AsyncIterator[AppState]:
        startups.append(1)
        await release.wait()
        yield AppState("slow")

    server = Server("slow", lifespan=slow)

    @server.tool
    def whoami(ctx: Context[AppState]) -> str:
        return ctx.lifespan_context.name

    names: list[str] = []

    async def use() -> None:
        async with Client(server) as client:
            names.append((await client.call_tool("whoami")).text)

    async with anyio.create_task_group() as tg:
        tg.start_soon(use)
        tg.start_soon(use)
        await anyio.wait_all_tasks_blocked()
        release.set()
    assert (startups, names) == ([1], ["slow", "slow"])


async def test_connections_served_inside_running_reuse_its_lifespan() -> None:
    journal = Journal()
    server = make_server(journal)
    async with server.running() as state:
        for _ in range(2):  # one connection after another: the lifespan is not restarted between them
            async with Client(server) as client:
                await client.call_tool("whoami")
        assert journal.events == ["start real", "call", "call"]
        assert state.calls == ["whoami", "whoami"]
    assert journal.events[-1] == "stop real"


async def test_a_server_can_start_again_after_it_stopped() -> None:
    journal = Journal()
    server = make_server(journal)
    for _ in range(2):
        async with Client(server) as client:
            await client.call_tool("whoami")
    assert journal.events == ["start real", "call", "stop real"] * 2


async def test_a_client_that_connects_during_shutdown_waits_and_gets_a_fresh_lifespan() -> None:
    stopping = anyio.Event()
    release = anyio.Event()
    events: list[str] = []

    @asynccontextmanager
    async def lingering(server: Server) -> AsyncIterator[AppState]:
        number = events.count("start") + 1
        events.append("start")
        yield AppState(f"lifespan {number}")
        stopping.set()
        await release.wait()
        events.append("stop")

    server = Server("lingering", lifespan=lingering)

    @server.tool
    def whoami(ctx: Context[AppState]) -> str:
        return ctx.lifespan_context.name

    async def first() -> None:
        async with Client(server) as client:
            await client.call_tool("whoami")

    names: list[str] = []

    async def second() -> None:
        await stopping.wait()
        async with Client(server) as client:
            names.append((await client.call_tool("whoami")).text)

    async with anyio.create_task_group() as tg:
        tg.start_soon(first)
        tg.start_soon(second)
        await stopping.wait()
        await anyio.wait_all_tasks_blocked()
        assert events == ["start"]  # the second client waits for the first lifespan to finish shutting down
        release.set()
    assert (events, names) == (["start", "stop", "start", "stop"], ["lifespan 2"])


# -- replacing it in tests ----------------------------------------------------------------------------------


async def test_a_client_can_replace_the_lifespan_with_a_fake() -> None:
    journal = Journal()
    server = make_server(journal)
    async with Client(server, lifespan=journal.lifespan("fake")) as client:
        assert (await client.call_tool("whoami")).text == "fake"
    assert journal.events == ["start fake", "call", "stop fake"]


async def test_a_fake_cannot_replace_a_lifespan_that_is_running() -> None:
    journal = Journal()
    server = make_server(journal)
    async with server.running():
        with pytest.raises(RuntimeError, match="already running with another lifespan"):
            async with Client(server, lifespan=journal.lifespan("fake")):
                pytest.fail("connected with a second lifespan")
        async with Client(server) as client:  # joining it is fine
            assert (await client.call_tool("whoami")).text == "real"


async def test_only_a_toolkit_server_s_lifespan_can_be_replaced() -> None:
    ours, _ = MemoryTransport.pair()
    with pytest.raises(TypeError, match="replaces the lifespan of a toolkit Server"):
        async with Client(ours, lifespan=Journal().lifespan()):
            pytest.fail("connected")


def test_the_tool_tester_runs_the_lifespan_or_its_replacement() -> None:
    journal = Journal()
    server = make_server(journal)
    with ToolTester(server) as tester:
        assert tester.call("whoami").text == "real"
    with ToolTester(server, lifespan=journal.lifespan("fake"), backend="trio") as tester:
        assert tester.call("whoami").text == "fake"
        assert tester.call("count").text == "1"
    assert journal.events == ["start real", "call", "stop real", "start fake", "call", "stop fake"]
    failing = make_server(Journal(), fail_start=True)
    with pytest.raises(StartupError), ToolTester(failing):
        pytest.fail("entered")


# -- processes ----------------------------------------------------------------------------------------------

FAILING_SERVER = """\
from contextlib import asynccontextmanager

from toolkit import Server


@asynccontextmanager
async def lifespan(server):
    print("opening the database")  # goes to stderr: stdout is the protocol's
    raise ConnectionError("no database at db.example\\n(is it running?)")
    yield


server = Server("broken", lifespan=lifespan)


@server.tool
def ping() -> str:
    return "pong"


if __name__ == "__main__":
    server.run()
"""

MARKED_SERVER = """\
from contextlib import asynccontextmanager
from pathlib import Path

from toolkit import Context, Server

MARKER = Path(__file__).with_name("entered")


@asynccontextmanager
async def lifespan(server):
    MARKER.write_text("started\\n")
    yield {"greeting": "hello"}
    with MARKER.open("a") as f:
        f.write("stopped\\n")


server = Server("marked", lifespan=lifespan)


@server.tool
def greet(ctx: Context) -> str:
    return ctx.lifespan_context["greeting"]


if __name__ == "__main__":
    server.run()
"""


def test_a_stdio_server_that_cannot_start_says_so_in_one_line_and_exits_1(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text(FAILING_SERVER, encoding="utf-8")
    # `toolkit serve` exits with its own status for a target that cannot be started (docs/cli.md): 2.
    for command, status in (([PYTHON, "broken.py"], 1), ([PYTHON, "-m", "toolkit", "serve", "broken.py"], 2)):
        run = subprocess.run(
            command,
            input=json.dumps(INITIALIZE) + "\n",
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=60,
            check=False,
        )
        assert (run.returncode, run.stdout) == (status, "")
        assert run.stderr == (
            "opening the database\n"
            "toolkit: error: server 'broken' failed to start: ConnectionError: no database at db.example "
            "(is it running?)\n"
        )


async def test_a_stdio_server_runs_its_lifespan_around_the_session(tmp_path: Path) -> None:
    (tmp_path / "marked.py").write_text(MARKED_SERVER, encoding="utf-8")
    async with Client.stdio([PYTHON, str(tmp_path / "marked.py")]) as client:
        assert (await client.call_tool("greet")).text == "hello"
        assert (tmp_path / "entered").read_text() == "started\n"
    assert (tmp_path / "entered").read_text() == "started\nstopped\n"


def test_list_docs_and_check_never_enter_the_lifespan(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "marked.py").write_text(MARKED_SERVER, encoding="utf-8")
    (tmp_path / "broken.py").write_text(FAILING_SERVER, encoding="utf-8")

    def toolkit(*args: str) -> subprocess.CompletedProcess[str]:
        # `main` in this process: whether a command enters the lifespan is the command's doing, not the process's
        # (the file it writes says so); the process that fails to start is the test above.
        return toolkit_here(*args, cwd=tmp_path, capfd=capfd, monkeypatch=monkeypatch)

    for target in ("marked.py", "broken.py"):
        for args in (["list"], ["docs"], ["docs", "--format", "json"], ["check", "--write", "snapshot.json"]):
            run = toolkit(*args, target)
            assert (run.returncode, run.stderr.count("error")) == (0, 0), (args, run.stderr)
    assert not (tmp_path / "entered").exists()
    # `call` calls a tool, so it does run the lifespan (and reports one that fails in one line).
    assert toolkit("call", "marked.py", "greet").stdout == "hello\n"
    assert (tmp_path / "entered").read_text() == "started\nstopped\n"
    broken = toolkit("call", "broken.py", "ping")
    assert (broken.returncode, broken.stderr.splitlines()[-1]) == (
        2,
        "toolkit: error: server 'broken' failed to start: ConnectionError: no database at db.example (is it running?)",
    )


def test_the_mkdocs_plugin_documents_a_server_without_entering_its_lifespan(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    (tmp_path / "marked.py").write_text(MARKED_SERVER, encoding="utf-8")
    (tmp_path / "broken.py").write_text(FAILING_SERVER, encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text("site_name: t\nplugins:\n  - toolkit-tools\n", encoding="utf-8")
    (tmp_path / "docs").mkdir()
    page = "::: toolkit-tools marked.py\n\n::: toolkit-tools broken.py\n"
    (tmp_path / "docs" / "index.md").write_text(page, encoding="utf-8")
    run = subprocess.run(
        [PYTHON, "-m", "mkdocs", "build", "-q", "-d", "site"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=120,
        check=False,
    )
    assert (run.returncode, run.stderr) == (0, "")
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert ('id="greet"' in html, 'id="ping"' in html) == (True, True)
    assert not (tmp_path / "entered").exists()


def docs_block(first_line: str) -> str:
    guide = (Path(__file__).resolve().parents[2] / "docs" / "server.md").read_text(encoding="utf-8")
    start = guide.index(f"```python\n{first_line}\n") + len("```python\n")
    return guide[start : guide.index("```\n", start)]


async def test_the_guide_s_sqlite_server_keeps_its_counts_in_one_connection(tmp_path: Path) -> None:
    (tmp_path / "visits.py").write_text(docs_block("# visits.py"), encoding="utf-8")
    async with Client.stdio([PYTHON, "visits.py"], cwd=tmp_path) as client:
        assert [(await client.call_tool("record_visit", {"page": p})).text for p in ("/", "/a", "/")] == ["1", "1", "2"]
        assert (await client.call_tool("top_pages", {"limit": 1})).text == '["/"]'
    with contextlib.closing(sqlite3.connect(tmp_path / "visits.db")) as db:
        assert db.execute("SELECT page, count FROM visits ORDER BY page").fetchall() == [("/", 2), ("/a", 1)]


def test_the_guide_s_failed_startup_is_what_the_guide_shows(tmp_path: Path) -> None:
    (tmp_path / "visits.py").write_text(docs_block("# visits.py"), encoding="utf-8")
    (tmp_path / "visits.db").mkdir()
    run = subprocess.run(
        [PYTHON, "visits.py"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    guide = (Path(__file__).resolve().parents[2] / "docs" / "server.md").read_text(encoding="utf-8")
    assert (run.returncode, run.stdout) == (1, "")
    assert f"python visits.py < /dev/null\n{run.stderr}$ echo $?\n1\n" in guide


# -- the pytest plugin ----------------------------------------------------------------------------------------

pytest_plugins = ["pytester"]

PLUGIN_SERVER = """\
from contextlib import asynccontextmanager

from toolkit import Context, Server


@asynccontextmanager
async def lifespan(server):
    raise ConnectionError("a unit test must not open the real database")
    yield


server = Server("app", lifespan=lifespan)


@server.tool
def user(ctx: Context) -> str:
    return ctx.lifespan_context["users"][0]
"""

PLUGIN_TESTS = """\
from contextlib import asynccontextmanager

import pytest

from app import server

entered = []


@asynccontextmanager
async def fake(server):
    entered.append("start")
    yield {"users": ["ada"]}
    entered.append("stop")


@pytest.fixture
def toolkit_server():
    return server


@pytest.fixture
def toolkit_lifespan():
    return fake


def test_tester(toolkit_tester):
    assert toolkit_tester.call("user").text == "ada"
    assert entered[-1] == "start"


@pytest.mark.anyio
async def test_client(toolkit_client):
    assert (await toolkit_client.call_tool("user")).text == "ada"


@pytest.fixture(autouse=True)
def each_test_gets_its_own_lifespan():
    before = len(entered)
    yield
    assert entered[before:] in ([], ["start", "stop"])


@pytest.mark.anyio
@pytest.mark.parametrize("toolkit_transport", ["stdio"])
async def test_stdio_cannot_take_a_fake(toolkit_client):
    pass
"""


def test_the_plugin_fixtures_run_a_replacement_lifespan(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\nfilterwarnings = error\n")
    pytester.makepyfile(app=PLUGIN_SERVER, test_app=textwrap.dedent(PLUGIN_TESTS))
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=3, errors=2)
    result.stdout.fnmatch_lines(["*toolkit_lifespan cannot replace the lifespan of a server in another process*"])
