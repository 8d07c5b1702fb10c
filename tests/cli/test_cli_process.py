"""The `toolkit` command as a process: signals, terminals and what reaches its streams (real processes only).

Every wait is bounded by a generous `TIMEOUT`: only a hang reaches it, and no test asserts how fast anything is.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
HITL = str(ROOT / "tests" / "servers" / "hitl_server.py")
TIMEOUT = 60.0

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and pseudo-terminals")


class Running:
    """A child process whose stderr is read on a thread, so that a test can wait for a line (bounded)."""

    def __init__(self, command: list[str], **options: object) -> None:
        self.process = subprocess.Popen(command, stderr=subprocess.PIPE, cwd=ROOT, **options)  # type: ignore[call-overload]
        self.stderr = bytearray()
        self._chunks: queue.Queue[bytes] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        while chunk := os.read(self.process.stderr.fileno(), 65536):
            self._chunks.put(chunk)
        self._chunks.put(b"")

    def wait_for(self, text: str) -> None:
        """Wait until stderr holds `text` (fails if the process ends first)."""
        while text.encode() not in self.stderr:
            chunk = self._chunks.get(timeout=TIMEOUT)
            if not chunk:
                # Reaped first: a process left to the garbage collector fails the next test with its warning.
                _, said = self.wait()
                raise AssertionError(f"the process ended before writing {text!r}: {said}")
            self.stderr += chunk

    def wait(self) -> tuple[int, str]:
        """The exit status and all of stderr, once the process has ended (within TIMEOUT)."""
        try:
            status = self.process.wait(timeout=TIMEOUT)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
        self._reader.join(timeout=TIMEOUT)
        while not self._chunks.empty():
            self.stderr += self._chunks.get()
        assert self.process.stderr is not None
        self.process.stderr.close()
        return status, self.stderr.decode()


@contextmanager
def terminal() -> Iterator[int]:
    """The far end of a pseudo-terminal, for a child's stdin: what a person at a terminal types into."""
    import pty

    ours, theirs = pty.openpty()
    try:
        yield theirs
    finally:
        os.close(theirs)
        os.close(ours)


# -- toolkit call: Ctrl-C at a prompt ---------------------------------------------------------------------------


@posix_only
@pytest.mark.parametrize("transport", ["memory", "stdio"])
def test_ctrl_c_at_a_prompt_of_toolkit_call_exits_130_without_waiting_for_enter(transport: str) -> None:
    where = [f"{HITL}:build", "delete_file"] if transport == "memory" else ["--stdio", "delete_file"]
    command = [sys.executable, "-m", "toolkit", "call", *where, "path=/tmp/x"]
    if transport == "stdio":
        command += ["--", sys.executable, HITL]
    with terminal() as stdin:
        running = Running(command, stdin=stdin, stdout=subprocess.DEVNULL)
        running.wait_for("? Delete /tmp/x? [y/N]: ")  # waiting for a line the person has not typed
        running.process.send_signal(signal.SIGINT)
        status, stderr = running.wait()  # before the fix: waited for Enter forever (the reading thread)
    assert status == 130
    assert "Traceback" not in stderr


@posix_only
@pytest.mark.parametrize("transport", ["memory", "stdio"])
def test_ctrl_c_on_a_task_of_a_server_the_command_runs_says_the_task_ends_with_it(transport: str) -> None:
    tasks = str(ROOT / "tests" / "servers" / "client_tasks.py")
    where = (
        [f"{tasks}:build", "forever"] if transport == "memory" else ["--stdio", "forever", "--", sys.executable, tasks]
    )
    running = Running(
        [sys.executable, "-m", "toolkit", "call", *where], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE
    )
    running.wait_for(": working\n")
    running.process.send_signal(signal.SIGINT)
    status, stderr = running.wait()
    assert running.process.stdout is not None
    running.process.stdout.close()

    # Before: "; task ID goes on: toolkit task result ID TARGET", a literal placeholder for a task that was gone.
    task_id = stderr.split(": working", 1)[0].rsplit(" ", 1)[-1]
    where_said = (
        "the server this command started (--stdio)" if transport == "stdio" else "this process, which serves it"
    )
    assert status == 130
    assert stderr.endswith(f"toolkit: stopped waiting; task {task_id} ends with {where_said}\n"), stderr


# -- toolkit serve: a lifespan that fails, SIGTERM and the grace, the module's own HTTP app, prints at import ------

EDGES = str(ROOT / "tests" / "servers" / "serve_edges.py")
MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def edges_env(**settings: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("EDGES_")}
    return {**env, **{f"EDGES_{key.upper()}": value for key, value in settings.items()}}


def serve(*args: str, **settings: str) -> tuple[Running, str]:
    """`toolkit serve serve_edges.py --http --port 0 ARGS`, once it says where it serves: the process and its URL."""
    command = [sys.executable, "-m", "toolkit", "serve", EDGES, "--http", "--port", "0", *args]
    running = Running(command, env=edges_env(**settings), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    running.wait_for("/mcp\n")
    line = next(line for line in running.stderr.decode().splitlines() if line.startswith("toolkit: serving on "))
    return running, line.removeprefix("toolkit: serving on ")


def toolkit_lines(stderr: str) -> list[str]:
    """stderr without what the module prints as it loads (each worker process imports it)."""
    return [line for line in stderr.splitlines() if line != "edges: imported"]


def python(
    *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """`python ARGS` run to its end (stdin: `stdin`), its output as text."""
    return subprocess.run(
        [sys.executable, *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=TIMEOUT,
        check=False,
    )


FAILED = "toolkit: error: server 'edges' failed to start: RuntimeError: no database here"


@pytest.mark.parametrize(
    ("command", "status"),
    [
        (["-m", "toolkit", "serve", EDGES], 2),
        (["-m", "toolkit", "serve", EDGES, "--http", "--port", "0"], 2),
        (["-m", "toolkit", "serve", EDGES, "--http", "--port", "0", "--workers", "2"], 2),
        ([EDGES], 1),
        ([EDGES, "--http"], 1),
    ],
    ids=["serve-stdio", "serve-http", "serve-http-workers", "run-stdio", "run-http"],
)
def test_a_lifespan_that_fails_is_one_line_and_the_documented_status_in_every_mode(
    command: list[str], status: int
) -> None:
    run = python(*command, env=edges_env(fail="no database here"))
    assert (run.returncode, toolkit_lines(run.stderr)) == (status, [FAILED])
    # Only what the module printed (each worker imports it): never a protocol message, never "serving on".
    assert "jsonrpc" not in run.stdout
    assert "serving on" not in run.stdout


def handshake(http: httpx.Client, url: str) -> dict[str, str]:
    """A 2025-11-25 session whose client can elicit: the headers of its later requests."""
    params = {
        "protocolVersion": HANDSHAKE,
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "t", "version": "1"},
    }
    opened = http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}, headers=ACCEPT)
    assert opened.status_code == 200, opened.text
    headers = {**ACCEPT, "Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": HANDSHAKE}
    done = http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    assert done.status_code == 202
    return headers


def stopping_line(grace: str) -> str:
    return f"toolkit: stopping: calls in flight have {grace} s to answer (Ctrl-C or SIGTERM again stops at once)"


def stop_with_a_question_waiting(workers: str, grace: str, signals: int) -> tuple[int, list[str]]:
    """Serve, make a 2025-11-25 call whose question is never answered, then SIGTERM (a second time once the first
    is handled, with `signals=2`): the exit status and stderr's lines."""
    running, url = serve("--workers", workers, grace=grace)
    try:
        with httpx.Client(timeout=TIMEOUT) as http:
            headers = handshake(http, url)
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask", "arguments": {}}}
            with http.stream("POST", url, json=call, headers=headers) as stream:
                for line in stream.iter_lines():  # the SSE answer: the question comes, and is never answered
                    if "elicitation/create" in line:
                        break
                running.process.send_signal(signal.SIGTERM)
                if signals == 2:
                    running.wait_for(stopping_line(grace))  # the first is handled: the call has its grace
                    running.process.send_signal(signal.SIGTERM)
                status, stderr = running.wait()  # before the fix (workers): never ended, or after minutes
    finally:
        if running.process.poll() is None:
            running.process.kill()
    return status, toolkit_lines(stderr)


@posix_only
@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigterm_stops_serve_http_within_the_grace_even_with_a_question_unanswered(workers: str) -> None:
    status, lines = stop_with_a_question_waiting(workers, grace="1", signals=1)
    assert status in (0, -signal.SIGTERM)
    # Between the two, uvicorn says it cancelled the request still running once the grace was over.
    assert (lines[1], lines[-1]) == (stopping_line("1"), "toolkit: stopped"), lines


@posix_only
@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_second_sigterm_stops_serve_http_at_once(workers: str) -> None:
    status, lines = stop_with_a_question_waiting(workers, grace="600", signals=2)  # the call would get ten minutes
    assert status in (0, -signal.SIGTERM, -signal.SIGKILL)
    assert stopping_line("600") in lines


@pytest.mark.parametrize("target", [EDGES, f"{EDGES}:app"], ids=["file", "file:app"])
@pytest.mark.parametrize("workers", ["1", "2"])
def test_serve_http_serves_the_app_the_module_made_with_its_auth(target: str, workers: str, tmp_path: Path) -> None:
    command = [sys.executable, "-m", "toolkit", "serve", target, "--http", "--port", "0", "--workers", workers]
    running = Running(
        command,
        env=edges_env(app="secret", token="a-token-of-sixteen-characters", store=str(tmp_path / "sessions.db")),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    try:
        running.wait_for("/mcp\n")
        url = running.stderr.decode().split("toolkit: serving on ")[1].split()[0]
        discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}
        with httpx.Client(timeout=TIMEOUT) as http:
            anonymous = http.post(url, json=discover, headers=ACCEPT)
            known = http.post(
                url, json=discover, headers={**ACCEPT, "Authorization": "Bearer a-token-of-sixteen-characters"}
            )
    finally:
        running.process.terminate()
        running.wait()
    # Before: the bare server, without the module's auth=, and `FILE:app` "is a function that needs arguments".
    assert anonymous.status_code == 401
    assert known.status_code != 401


def test_serve_http_refuses_to_change_or_split_the_modules_own_app() -> None:
    def serve_app(*args: str, **settings: str) -> tuple[int, list[str]]:
        serving = ["-m", "toolkit", "serve", EDGES, "--http", "--port", "0", *args]
        run = python(*serving, env=edges_env(token="a-token-of-sixteen-characters", **settings))
        return run.returncode, toolkit_lines(run.stderr)

    prefix = f"toolkit: error: {EDGES!r} serves the app made by server.http_app() in the module"
    assert serve_app("--allowed-host", "mcp.example.com", app="secret") == (
        2,
        [f"{prefix}, with its own settings: give allowed_hosts= there, not --allowed-host"],
    )
    assert serve_app("--workers", "2", app="no secret") == (
        2,
        [
            f"{prefix}, which has no shared secret: its 2 workers could not trust each other's sessions; give it "
            "http_app(secret=...) (see the deploy docs, Keys), or serve it with one worker"
        ],
    )
    assert serve_app("--workers", "2", app="secret") == (
        2,
        [
            f"{prefix}, which has no shared session store: its 2 workers could not end sessions for each other nor "
            "tell a call that its question's answer reached another worker; give it "
            "http_app(backend=RedisBackend(URL)), or http_app(session_store=SqliteSessionStore(PATH)) (see the "
            "deploy docs, Several workers), or serve it with one worker"
        ],
    )


def test_other_commands_take_the_modules_app_for_its_server() -> None:
    env = edges_env(app="secret", token="a-token-of-sixteen-characters")
    run = python("-m", "toolkit", "call", f"{EDGES}:app", "add", "a=1", "b=2", env=env)
    assert (run.returncode, run.stdout, run.stderr) == (0, "3\n", "edges: imported\n")


def test_an_asgi_app_that_is_not_toolkits_is_named_as_such(tmp_path: Path) -> None:
    (tmp_path / "other.py").write_text("async def app(scope, receive, send):\n    pass\n")
    run = python("-m", "toolkit", "serve", "other.py:app", "--http", cwd=tmp_path)
    assert (run.returncode, run.stderr) == (
        2,
        "toolkit: error: 'other.py:app' is an ASGI app, not one made by server.http_app(): serve it with an ASGI "
        "server (uvicorn other:app), or name its toolkit.Server\n",
    )


def test_a_print_at_import_never_reaches_the_protocol_stream_of_toolkit_serve() -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    run = python("-m", "toolkit", "serve", EDGES, env=edges_env(), stdin=json.dumps(initialize) + "\n")
    replies = [json.loads(line) for line in run.stdout.splitlines()]  # before: "edges: imported" came first
    assert [reply["id"] for reply in replies] == [1]
    assert (run.returncode, run.stderr) == (0, "edges: imported\n")


@posix_only
def test_a_worker_that_dies_is_replaced_and_the_others_serve_meanwhile() -> None:
    running, url = serve("--workers", "2")
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}

    def call(name: str, arguments: dict[str, int]) -> httpx.Response:
        params = {"name": name, "arguments": arguments, "_meta": meta}
        headers = {**ACCEPT, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": name}
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        return httpx.post(url, json=message, headers=headers, timeout=TIMEOUT)

    try:
        victim = int(call("pid", {}).json()["result"]["content"][0]["text"])
        os.kill(victim, signal.SIGKILL)
        running.wait_for(f"toolkit: a worker process exited with status {-signal.SIGKILL}; starting another\n")
        answers = [call("add", {"a": 1, "b": 2}) for _ in range(10)]
        assert [answer.json()["result"]["content"][0]["text"] for answer in answers] == ["3"] * 10
    finally:
        running.process.terminate()
        status, stderr = running.wait()
    assert status in (0, -signal.SIGTERM)
    assert stderr.count("toolkit: serving on ") == 1


@posix_only
@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_at_the_terminal_lets_a_call_in_flight_answer(workers: str) -> None:
    # The terminal sends SIGINT to its whole foreground process group: here, a group of the server's own.
    command = [sys.executable, "-m", "toolkit", "serve", EDGES, "--http", "--port", "0", "--workers", workers]
    env = edges_env(grace="60")
    running = Running(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True)
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    params = {"name": "nap", "arguments": {"seconds": 1}, "_meta": {**meta, "progressToken": "p"}}
    headers = {**ACCEPT, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "nap"}
    events: list[str] = []
    try:
        running.wait_for("/mcp\n")
        url = running.stderr.decode().split("toolkit: serving on ")[1].split()[0]
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        with httpx.stream("POST", url, json=message, headers=headers, timeout=TIMEOUT) as stream:
            for line in stream.iter_lines():
                events.append(line)
                if "notifications/progress" in line:  # the nap has started
                    os.killpg(running.process.pid, signal.SIGINT)
        status, stderr = running.wait()
    finally:
        if running.process.poll() is None:
            running.process.kill()
    assert any('"text":"rested"' in line for line in events), events  # answered within the grace
    assert status in (0, 130, -signal.SIGINT)  # one process: uvicorn raises the SIGINT again once stopped
    assert toolkit_lines(stderr)[-1] == "toolkit: stopped"


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="waiting for a process that is not a child needs Linux")
def test_the_workers_stop_when_their_supervisor_is_killed() -> None:
    import select

    running, url = serve("--workers", "2")
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "pid", "_meta": meta}}
    headers = {**ACCEPT, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "pid"}
    pid = int(httpx.post(url, json=message, headers=headers, timeout=TIMEOUT).json()["result"]["content"][0]["text"])
    worker = os.pidfd_open(pid)  # readable once that process has ended
    try:
        running.process.kill()  # no chance to stop its workers: an OOM kill, a `kill -9`
        running.wait()
        readable, _, _ = select.select([worker], [], [], TIMEOUT)  # before: served on, orphaned, holding the port
    finally:
        with contextlib.suppress(ProcessLookupError):  # a worker left behind by a failure: not past this test
            signal.pidfd_send_signal(worker, signal.SIGKILL)
        os.close(worker)
    assert readable == [worker]
