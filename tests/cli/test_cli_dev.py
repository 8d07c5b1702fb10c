"""`toolkit dev FILE`: the module served over stdio or HTTP in a child process, files under its folder edited, and
what the connected clients see: `notifications/tools/list_changed` and the new tools over stdio, the same session
working over HTTP, the last good tools after a broken edit (and its one line on stderr); the extra's install hint.

Every wait is for a line the process writes or a message it sends, bounded by a generous timeout; none is a delay.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import cli_helpers
import pytest
import wire
from anyio.streams.buffered import BufferedByteReceiveStream

from toolkit import Client, TextContent
from toolkit.cli._dev import watched_files

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0  # any one wait for the process (a reload under a loaded CI machine included); only a hang reaches it
pytestmark = pytest.mark.anyio
LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}

GREET = '''
from toolkit import tool
from helper import greeting


@tool
def greet(who: str) -> str:
    """Greet someone."""
    return f"{greeting()} {who}"
'''
BYE = '''

@tool
def bye(who: str) -> str:
    """Say goodbye."""
    return f"bye {who}"
'''


@pytest.fixture
def anyio_backend() -> str:
    """The server runs in its own process on its own loop: the tests' side runs on one backend (each is slow)."""
    return "asyncio"


def write(path: Path, source: str) -> None:
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A folder with a tool module, `app.py`, and the neighbour it imports, `helper.py`."""
    write(tmp_path / "helper.py", 'def greeting() -> str:\n    return "hello"\n')
    write(tmp_path / "app.py", GREET)
    return tmp_path


class Dev:
    """A `toolkit dev` process: a raw peer on its stdin/stdout (every message schema-checked), its stderr by line."""

    def __init__(self, process: anyio.abc.Process, tg: anyio.abc.TaskGroup) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.process = process
        self.stderr: list[str] = []
        self._lines, self.incoming = anyio.create_memory_object_stream[str](1000)
        stdout = BufferedByteReceiveStream(process.stdout)
        self.peer = wire.Peer(process.stdin.send, lambda: stdout.receive_until(b"\n", 1 << 24), None, framed=True)
        tg.start_soon(self._read_stderr)

    async def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        buffered = BufferedByteReceiveStream(self.process.stderr)
        async with self._lines:
            while True:
                try:
                    line = (await buffered.receive_until(b"\n", 1 << 20)).decode()
                except (anyio.IncompleteRead, anyio.EndOfStream, anyio.ClosedResourceError):
                    return
                self.stderr.append(line)
                await self._lines.send(line)

    async def said(self, start: str) -> str:
        """The next stderr line that starts with `toolkit: {start}` (the lines before it are kept in `stderr`)."""
        with anyio.fail_after(TIMEOUT):
            async for line in self.incoming:
                if line.startswith(f"toolkit: {start}"):
                    return line
        raise AssertionError(f"the process ended without saying {start!r}: {self.stderr}")


@asynccontextmanager
async def dev(*args: str) -> AsyncIterator[Dev]:
    """`toolkit dev ARGS`; on exit (over stdio) stdin closes and the process must exit with status 0."""
    command = [sys.executable, "-m", "toolkit", "dev", *args]
    process = await anyio.open_process(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    async with process, anyio.create_task_group() as tg:
        running = Dev(process, tg)
        try:
            yield running
        except BaseException:
            process.kill()
            raise
        finally:
            if "--http" in args:
                process.terminate()  # as a process manager stops a server
        assert process.stdin is not None
        await process.stdin.aclose()
        with running.incoming, anyio.fail_after(TIMEOUT):
            status = await process.wait()
        assert status in (0, -15), running.stderr


def toolkit(*args: str, cwd: Path, path: str | None = None, without: str = "") -> subprocess.CompletedProcess[str]:
    """`toolkit ARGS` in a child process, run to its end; `path` is its PATH, `without` a module it cannot import."""
    env = {"PATH": path} if path is not None else None
    return cli_helpers.toolkit(*args, cwd=cwd, env=env, without=(without,) if without else ())


def relative(path: Path) -> str:
    """A path as toolkit shows it in an error: relative to the current folder."""
    return os.path.relpath(path)


async def call(peer: wire.Peer, name: str, **arguments: Any) -> Any:
    reply = await peer.call(name, arguments)
    return reply["result"]["content"][0]["text"]


async def listed(peer: wire.Peer) -> list[str]:
    return [tool["name"] for tool in (await peer.result("tools/list"))["tools"]]


async def test_an_edit_that_adds_a_tool_tells_the_stdio_client_and_serves_it(project: Path) -> None:
    async with dev(str(project / "app.py")) as running:
        peer = running.peer
        await peer.initialize()
        before = await listed(peer)
        await running.said("watching ")
        write(project / "app.py", GREET + BYE)
        reloaded = await running.said("reloaded ")
        notified = await peer.receive()
        after = await listed(peer)
        answer = await call(peer, "bye", who="ann")

    assert before == ["greet"]
    assert reloaded == f"toolkit: reloaded {project / 'app.py'}: tools greet, bye"
    assert notified == LIST_CHANGED
    assert after == ["greet", "bye"]
    assert answer == "bye ann"


MOUNTING = '''
from toolkit import Server

upstream = Server("upstream")


@upstream.tool
def ping() -> str:
    """Answer pong."""
    return "pong"


server = Server("gateway")
server.mount(upstream, prefix="up")


@server.tool
def greet(who: str) -> str:
    """Greet someone."""
    return f"hello {who}"
'''


async def test_a_reload_keeps_the_tools_of_the_mounted_servers(tmp_path: Path) -> None:
    write(tmp_path / "gateway.py", MOUNTING)
    async with dev(f"{tmp_path / 'gateway.py'}:server") as running:
        peer = running.peer
        await peer.initialize()
        before = await listed(peer)
        await running.said("watching ")
        write(tmp_path / "gateway.py", MOUNTING + BYE.replace("@tool", "@server.tool"))
        await running.said("reloaded ")
        notified = await peer.receive()
        after = await listed(peer)
        answer = await call(peer, "up_ping")
    assert sorted(before) == ["greet", "up_ping"]
    assert notified == LIST_CHANGED
    assert sorted(after) == ["bye", "greet", "up_ping"]
    assert answer == "pong"


async def test_an_edit_of_a_neighbour_module_changes_what_a_tool_does_without_a_notification(project: Path) -> None:
    async with dev(str(project / "app.py")) as running:
        peer = running.peer
        await peer.initialize()
        first = await call(peer, "greet", who="ann")
        await running.said("watching ")
        write(project / "helper.py", 'def greeting() -> str:\n    return "good morning"\n')
        reloaded = await running.said("reloaded ")
        # The reply is the next message: a list_changed would have been sent before it.
        second = await call(peer, "greet", who="ann")

    assert (first, second) == ("hello ann", "good morning ann")
    assert reloaded.endswith(": tools greet (definitions unchanged)")


SERVER = '''
import uuid
from contextlib import asynccontextmanager

from toolkit import Context, Server


@asynccontextmanager
async def lifespan(server):
    yield uuid.uuid4().hex


server = Server("app", lifespan=lifespan)


@server.tool
def run(ctx: Context) -> str:
    """Which run of the lifespan this is."""
    return "VERSION:" + ctx.lifespan_context
'''


async def test_a_server_module_reloads_its_tools_inside_the_lifespan_that_was_started_once(tmp_path: Path) -> None:
    write(tmp_path / "app.py", SERVER.replace("VERSION", "first"))
    async with dev(str(tmp_path / "app.py")) as running:
        peer = running.peer
        await peer.initialize()
        await running.said("watching ")
        before = await call(peer, "run")
        write(tmp_path / "app.py", SERVER.replace("VERSION", "second"))
        await running.said("reloaded ")
        after = await call(peer, "run")

    assert before.startswith("first:")
    assert after == "second:" + before.removeprefix("first:")


async def test_a_broken_edit_keeps_the_last_good_tools_and_says_why_in_one_line(project: Path) -> None:
    async with dev(str(project / "app.py")) as running:
        peer = running.peer
        await peer.initialize()
        await running.said("watching ")
        write(project / "app.py", GREET + "\ndef broken(:\n")
        failed = await running.said("reload failed")
        still = await call(peer, "greet", who="ann")
        names = await listed(peer)
        write(project / "app.py", GREET + BYE)  # fixed: served again
        await running.said("reloaded ")
        notified = await peer.receive()

    # The message of the SyntaxError itself is Python's, and changes between versions. Its file is shown as every
    # other error's is: relative to the current folder.
    prefix = f"toolkit: reload failed, still serving the last good tools: cannot import {str(project / 'app.py')!r}: "
    assert failed.startswith(prefix + "SyntaxError: ")
    assert failed.endswith(f"({relative(project / 'app.py')}, line 10)")
    assert (still, names) == ("hello ann", ["greet"])
    assert notified == LIST_CHANGED
    assert [line for line in running.stderr if not line.startswith("toolkit: ")] == []  # no traceback: one line


FACTORY = '''
from toolkit import Server, tool


@tool
def ping() -> str:
    """Answer."""
    return "pong"


def make() -> Server:
    BODY
'''


async def test_a_factory_that_raises_after_an_edit_keeps_the_last_good_tools(tmp_path: Path) -> None:
    write(tmp_path / "app.py", FACTORY.replace("BODY", 'return Server("app", tools=[ping])'))
    async with dev(f"{tmp_path / 'app.py'}:make") as running:
        peer = running.peer
        await peer.initialize()
        await running.said("watching ")
        write(tmp_path / "app.py", FACTORY.replace("BODY", 'raise RuntimeError("no configuration found")'))
        failed = await running.said("reload failed")
        still = await call(peer, "ping")

    assert failed == "toolkit: reload failed, still serving the last good tools: RuntimeError: no configuration found"
    assert still == "pong"


@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
async def test_an_http_client_keeps_working_across_a_reload(project: Path, protocol: Any) -> None:
    changed = anyio.Event()
    async with dev(str(project / "app.py"), "--http", "--port", "0") as running:
        url = (await running.said("serving on ")).removeprefix("toolkit: serving on ").strip()
        await running.said("watching ")
        async with Client.http(url, protocol=protocol, on_tools_changed=changed.set) as client:
            first = await client.call_tool("greet", {"who": "ann"})
            write(project / "app.py", GREET + BYE)
            await running.said("reloaded ")
            # 2025-11-25: on the session's GET stream; 2026-07-28: on the client's subscriptions/listen stream.
            with anyio.fail_after(TIMEOUT):
                await changed.wait()
            # The same client: its 2025-11-25 session id is still good after the reload.
            second = await client.call_tool("bye", {"who": "ann"})
            names = [t.name for t in await client.list_tools()]

    assert [c.text for c in first.content if isinstance(c, TextContent)] == ["hello ann"]
    assert [c.text for c in second.content if isinstance(c, TextContent)] == ["bye ann"]
    assert names == ["greet", "bye"]


# The suite runs from an editable install of its clone (the README's command): the hint keeps it editable.
INSTALL = f"pip install -e {shlex.quote(f'{ROOT}[reload]')}"


def test_without_the_reload_extra_it_says_what_to_install(project: Path) -> None:
    # Before: pip install '.[reload]', which replaces an editable install with a copy.
    run = toolkit("dev", "app.py", cwd=project, without="watchfiles")
    assert (run.returncode, run.stdout, run.stderr) == (
        2,
        "",
        "toolkit: error: toolkit dev needs watchfiles to see files change: install toolkit's reload extra: "
        f"{INSTALL}\n",
    )


def test_a_module_name_or_a_file_that_is_not_there_is_one_line_with_status_2(tmp_path: Path) -> None:
    # Only a file that is there can be edited until it loads: a module name or a missing file is no server to wait for.
    runs = [toolkit("dev", "nowhere_to_be_found", cwd=tmp_path), toolkit("dev", "app.py", cwd=tmp_path)]

    assert [run[:2] for run in map(cli_helpers.outcome, runs)] == [(2, "")] * 2
    assert runs[0].stderr.startswith("toolkit: error: cannot import 'nowhere_to_be_found': ModuleNotFoundError: ")
    assert runs[1].stderr == f"toolkit: error: no such file: {str(tmp_path / 'app.py')!r}\n"


async def test_a_file_that_does_not_load_at_start_is_watched_and_served_from_the_first_edit_that_loads(
    project: Path,
) -> None:
    write(project / "app.py", "def broken(:\n")
    async with dev(str(project / "app.py")) as running:
        first = await running.said("cannot import")
        await running.said("watching ")
        write(project / "app.py", "import nowhere_to_be_found\n")
        again = await running.said("still cannot serve it")
        write(project / "app.py", GREET)
        peer = running.peer
        await peer.initialize()
        greeted = await call(peer, "greet", who="ann")

    # Before: exit status 2 at once. The SyntaxError's own text is Python's, and changes between versions.
    assert first.startswith(f"toolkit: cannot import {str(project / 'app.py')!r}: SyntaxError: ")
    assert first.endswith(f" ({relative(project / 'app.py')}, line 1); serving once an edit makes it load")
    assert again.startswith(f"toolkit: still cannot serve it: cannot import {str(project / 'app.py')!r}: ")
    assert greeted == "hello ann"


def test_the_inspector_without_node_says_how_to_get_it_and_the_command_to_run(project: Path) -> None:
    run = toolkit("dev", "app.py", "--inspector", cwd=project, path=str(project))  # no npx there
    widened = toolkit("dev", "app.py", "--inspector", "--watch-ext", ".toml", cwd=project, path=str(project))
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == (
        "toolkit: error: --inspector runs the MCP Inspector with npx, from Node.js, which is not on PATH: install "
        "Node.js (https://nodejs.org), or run it yourself: npx @modelcontextprotocol/inspector "
        f"{sys.executable} -m toolkit dev {project / 'app.py'}\n"
    )
    assert widened.stderr == run.stderr.replace("\n", " --watch-ext .toml\n")


def test_the_inspector_starts_the_server_over_stdio_so_http_is_refused(project: Path) -> None:
    run = toolkit("dev", "app.py", "--inspector", "--http", cwd=project)
    assert (run.returncode, run.stderr) == (
        2,
        "toolkit: error: --inspector starts the server over stdio itself: leave out --http\n",
    )


def test_over_http_without_the_http_extra_it_says_what_to_install(project: Path) -> None:
    run = toolkit("dev", "app.py", "--http", cwd=project, without="uvicorn")
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == (
        "toolkit: error: serving over HTTP needs uvicorn: "
        "install toolkit's http extra (in a clone of toolkit: pip install '.[http]')\n"
    )


def test_only_python_files_reload_and_never_the_files_toolkit_writes_its_output_to(tmp_path: Path) -> None:
    from watchfiles import Change, DefaultFilter

    own = tmp_path / "dev.err"
    (tmp_path / "app.py").write_text("", encoding="utf-8")
    with own.open("w", encoding="utf-8") as stderr:
        plain = watched_files(DefaultFilter(), [], own=[stderr])
        widened = watched_files(DefaultFilter(), [".toml", "err"], own=[stderr])
        names = ["app.py", "gone.py", "dev.err", "out.log", "app.py.bak", ".venv/x.py", "pyproject.toml"]
        seen = {name: plain(Change.modified, str(tmp_path / name)) for name in names}
        seen_widened = {name: widened(Change.modified, str(tmp_path / name)) for name in names}

    assert seen == dict.fromkeys(names, False) | {"app.py": True, "gone.py": True}
    assert seen_widened == seen | {"pyproject.toml": True}  # dev.err stays out: this process writes it


async def test_output_written_into_the_watched_folder_does_not_reload(project: Path) -> None:
    """What a person saw with `toolkit dev app.py > dev.out 2> dev.err` in the project: every line said reloaded
    the module again, which said another line. Here the test copies each line it reads into the folder, and
    writes files that cannot change what is served, before the edit that does: one reload, of that edit. (Whether a
    change is seen at all has no signal of its own, so this run may miss a stray reload by ending first; the filter
    itself is pinned by the test above.)"""
    copied = project / "dev.log"
    async with dev(str(project / "app.py")) as running:
        peer = running.peer
        await peer.initialize()
        with copied.open("a", encoding="utf-8") as log:
            log.write(await running.said("watching ") + "\n")
            log.flush()
            (project / ".ruff_cache").mkdir()
            (project / ".ruff_cache" / "data").write_text("x", encoding="utf-8")
            (project / "app.py.bak").write_text(GREET, encoding="utf-8")
            write(project / "app.py", GREET + BYE)
            reloaded = await running.said("reloaded ")
            log.write(reloaded + "\n")
            log.flush()
            notified = await peer.receive()
            # A request answered after the copied line was seen (or not) by the watcher: a reload it caused would
            # have said so on stderr before the process ends.
            answer = await call(peer, "bye", who="ann")
        await peer.result("tools/list")

    assert reloaded == f"toolkit: reloaded {project / 'app.py'}: tools greet, bye"
    assert notified == LIST_CHANGED
    assert answer == "bye ann"
    assert [line for line in running.stderr if "reloaded" in line] == [reloaded]


SERVER_NAMED = """
from toolkit import Server

server = Server("NAME")


@server.tool
def ping() -> str:
    \"\"\"Answer.\"\"\"
    return "pong"
"""


async def test_a_changed_server_name_says_that_it_needs_a_restart(tmp_path: Path) -> None:
    write(tmp_path / "app.py", SERVER_NAMED.replace("NAME", "devapp"))
    async with dev(str(tmp_path / "app.py")) as running:
        await running.peer.initialize()
        await running.said("watching ")
        write(tmp_path / "app.py", SERVER_NAMED.replace("NAME", "devapp2"))
        reloaded = await running.said("reloaded ")

    assert reloaded == (
        f"toolkit: reloaded {tmp_path / 'app.py'}: tools ping (definitions unchanged); the server's name changed: "
        "restart toolkit dev to serve them"
    )


@pytest.mark.parametrize("command", ["serve", "dev"])
@pytest.mark.parametrize(
    ("options", "flag"),
    [
        (["--port", "5"], "--port"),
        (["--port", "8000"], "--port"),
        (["--host", "0.0.0.0"], "--host"),
        (["--allowed-host", "example.com"], "--allowed-host"),
    ],
)
def test_an_http_option_without_http_is_refused_in_one_line(
    project: Path, command: str, options: list[str], flag: str
) -> None:
    run = toolkit(command, "app.py", *options, cwd=project)
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == f"toolkit: error: {flag} needs --http (without it, {command} serves over stdio)\n"


def test_workers_without_http_is_refused_in_one_line(project: Path) -> None:
    run = toolkit("serve", "app.py", "--workers", "2", cwd=project)
    assert (run.returncode, run.stderr) == (
        2,
        "toolkit: error: --workers needs --http (without it, serve serves over stdio)\n",
    )


HANGS_ON_IMPORT = """
import sys
import threading

sys.stderr.write("toolkit: importing, and never done\\n")
sys.stderr.flush()
threading.Event().wait()  # an import that never ends: a module waiting on a resource that never comes
"""


async def test_stopping_waits_a_bounded_time_for_a_reload_that_never_ends_its_import(project: Path) -> None:
    async with dev(str(project / "app.py")) as running:
        await running.peer.initialize()
        await running.said("watching ")
        write(project / "app.py", HANGS_ON_IMPORT)
        await running.said("importing, and never done")
    # Leaving `dev` closed stdin: the process had to exit with status 0 (checked there), saying what it left behind.

    assert running.stderr[-1] == (
        f"toolkit: stopping without the reload in progress: importing {project / 'app.py'} took over 5 s"
    )
