"""Stdio servers forked from a warm process: a fresh process a test, without a fresh interpreter's start-up.

A stdio protocol test needs a server process of its own (its own state, pipes and exit status), not a new
interpreter: starting one and importing toolkit, pydantic and the event loops was half a second of processor time
under coverage, for each of hundreds of tests. So each test process (an xdist worker) starts this module once as a
process, the *zygote*, which imports all that and waits. For each server, the test sends it the script and its
arguments with three pipes and a status pipe (file descriptors over a Unix socket); the zygote forks, and the child
puts the pipes on its stdin, stdout and stderr and runs the script as `__main__`, as `python script.py args` would;
then the interpreter exits as usual (atexit, flushed streams, coverage saved: `patch = ["fork"]` in pyproject.toml
gives each child its own data file). The zygote reaps it and writes its exit status to the status pipe.

What only an interpreter started anew shows (start-up, imports, signals at the terminal, `python -m toolkit`) is
shown by the tests that start one: the CLI's process tests, every stdio test through toolkit's `Client` (which spawns
its server with `anyio.open_process`), `wire.stdio(..., fresh=True)`.
"""

from __future__ import annotations

import contextlib
import json
import os
import runpy
import selectors
import signal
import socket
import struct
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import anyio
import anyio.abc

from toolkit import Client, StreamTransport

_Handler = Callable[[int, FrameType | None], Any] | int | None  # what `signal.signal` takes and gives back
_FDS = 4  # the child's stdin, stdout and stderr, and the status pipe the zygote writes its exit to
_EXIT_SECONDS = 30.0  # how long a server may take to exit once its stdin is closed (only a hang fails)
_REQUEST = 1024 * 1024  # a request's most bytes: the script, its arguments, folder and environment, in JSON

#: What the zygote imports before it forks (what a test server's start-up costs): toolkit and what serving loads.
PRELOAD = (
    "argparse",
    "asyncio",
    "trio",
    "anyio._backends._asyncio",
    "anyio._backends._trio",
    "toolkit",
    "toolkit._transports.stdio",
    "toolkit._engine.connection",
)


# -- the zygote's side -------------------------------------------------------------------------------------------


def _serve(control: socket.socket) -> tuple[str, list[str]] | None:
    """Fork a child for each request on `control` and report each one's exit; returns in a child (its script and
    arguments), or None in the zygote once the test process has gone."""
    statuses: dict[int, int] = {}  # child pid -> the status pipe to write its exit to
    wakeup_read, wakeup_write = os.pipe()
    os.set_blocking(wakeup_write, False)
    signal.set_wakeup_fd(wakeup_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # the wake-up byte is all that is needed
    interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the test run, which stops the zygote
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ)
    selector.register(wakeup_read, selectors.EVENT_READ)
    while True:
        for key, _ in selector.select():
            if key.fileobj is control:
                message, fds, _, _ = socket.recv_fds(control, _REQUEST, _FDS)
                if not message:
                    return None
                pid = os.fork()
                if pid == 0:
                    _leave_zygote(interrupt, selector, [wakeup_read, wakeup_write, *statuses.values()])
                    return _become_child(control, fds, message)
                for fd in fds[:3]:
                    os.close(fd)
                statuses[pid] = fds[3]
                control.sendall(struct.pack("!i", pid))
            else:
                os.read(wakeup_read, 4096)
                _reap(statuses)


def _reap(statuses: dict[int, int]) -> None:
    """Write each ended child's exit status and processor seconds to its status pipe."""
    while statuses:
        pid, status, usage = os.wait4(-1, os.WNOHANG)
        if pid == 0:
            return
        code = os.waitstatus_to_exitcode(status)
        with contextlib.suppress(OSError):  # the test has gone: nobody to tell
            os.write(statuses[pid], f"{code} {usage.ru_utime + usage.ru_stime}\n".encode())
        os.close(statuses.pop(pid))


def _leave_zygote(interrupt: _Handler, selector: selectors.BaseSelector, fds: list[int]) -> None:
    """In a forked child: the signal handling a new interpreter has (its wake-up descriptor reset before the zygote's
    descriptors close, SIGCHLD as the default, Ctrl-C raising KeyboardInterrupt), none of the zygote's descriptors."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, interrupt)
    selector.close()
    for fd in fds:
        os.close(fd)


def _become_child(control: socket.socket, fds: list[int], message: bytes) -> tuple[str, list[str]]:
    """In the forked child: the pipes become stdin, stdout and stderr; the test's folder and environment apply."""
    control.close()
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
    for fd in fds:
        os.close(fd)
    request = json.loads(message)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    return request["script"], request["args"]


def _main() -> None:
    for name in PRELOAD:
        __import__(name)
    forked = _serve(socket.socket(fileno=int(sys.argv[1])))
    if forked is None:
        return
    script, args = forked
    sys.argv = [script, *args]
    sys.path[0] = str(Path(script).parent)
    runpy.run_path(script, run_name="__main__")


# -- the test's side ---------------------------------------------------------------------------------------------


class _Pipe:
    """An end of a pipe, non-blocking, waited on through the running event loop."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fd: int | None = fd

    async def aclose(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            anyio.notify_closing(fd)
            os.close(fd)


class _PipeReceive(_Pipe, anyio.abc.ByteReceiveStream):
    """The reading end of a pipe."""

    async def receive(self, max_bytes: int = 65536) -> bytes:
        while True:
            if self._fd is None:
                raise anyio.ClosedResourceError
            try:
                data = os.read(self._fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            if not data:
                raise anyio.EndOfStream
            return data


class _PipeSend(_Pipe, anyio.abc.ByteSendStream):
    """The writing end of a pipe."""

    async def send(self, item: bytes) -> None:
        view = memoryview(item)
        while view:
            if self._fd is None:
                raise anyio.ClosedResourceError
            try:
                view = view[os.write(self._fd, view) :]
            except BlockingIOError:
                await anyio.wait_writable(self._fd)
            except BrokenPipeError:
                raise anyio.BrokenResourceError from None


class ForkedProcess(anyio.abc.Process):
    """A server forked by the zygote, seen as `anyio.open_process` shows a process (what `wire.StdioPeer` reads)."""

    def __init__(self, zygote: _Zygote, pid: int, *, stdin: int, stdout: int, stderr: int, status: int) -> None:
        self._zygote = zygote  # the one that forked it, told of its processor seconds once it ends
        self._pid = pid
        self._stdin = _PipeSend(stdin)
        self._stdout = _PipeReceive(stdout)
        self._stderr = _PipeReceive(stderr)
        self._status = _PipeReceive(status)
        self._returncode: int | None = None

    @property
    def pid(self) -> int:
        return self._pid

    @property
    def returncode(self) -> int | None:
        return self._returncode

    @property
    def stdin(self) -> anyio.abc.ByteSendStream:
        return self._stdin

    @property
    def stdout(self) -> anyio.abc.ByteReceiveStream:
        return self._stdout

    @property
    def stderr(self) -> anyio.abc.ByteReceiveStream:
        return self._stderr

    async def wait(self) -> int:
        if self._returncode is None:
            report = b""
            with contextlib.suppress(anyio.EndOfStream):
                while not report.endswith(b"\n"):
                    report += await self._status.receive()
            code, processor_seconds = report.split()
            self._zygote.processor_seconds += float(processor_seconds)
            self._returncode = int(code)
            await self._status.aclose()
        return self._returncode

    def send_signal(self, sig: int) -> None:
        if self._returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    async def aclose(self) -> None:
        for stream in (self._stdin, self._stdout, self._stderr):
            await stream.aclose()
        with anyio.CancelScope(shield=True):
            await self.wait()


class _Zygote:
    """This test process's zygote, started at its first fork and stopped when this process exits."""

    def __init__(self) -> None:
        self._control: socket.socket | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self.processor_seconds = 0.0  # of the children reaped so far (resource.RUSAGE_CHILDREN never sees them)

    def _start(self) -> socket.socket:
        ours, theirs = socket.socketpair()
        self._process = subprocess.Popen(
            [sys.executable, __file__, str(theirs.fileno())], pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL
        )
        theirs.close()
        self._control = ours
        return ours

    def fork(self, script: str, args: Sequence[str]) -> ForkedProcess:
        request = json.dumps(
            {"script": script, "args": list(args), "cwd": os.getcwd(), "env": dict(os.environ)}
        ).encode()
        ends = [os.pipe() for _ in range(_FDS)]
        theirs = [ends[0][0], ends[1][1], ends[2][1], ends[3][1]]  # they read stdin, write the rest
        try:
            control = self._control or self._start()
            socket.send_fds(control, [request], theirs)
            pid = struct.unpack("!i", _receive_exactly(control, 4))[0]
        finally:
            for fd in theirs:
                os.close(fd)
        return ForkedProcess(self, pid, stdin=ends[0][1], stdout=ends[1][0], stderr=ends[2][0], status=ends[3][0])

    def stop(self) -> None:
        if self._control is not None and self._process is not None:
            self._control.close()
            self._process.wait()


def _receive_exactly(control: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = control.recv(size - len(data))
        if not chunk:
            raise RuntimeError("the zygote stopped (its stderr is the test run's)")
        data += chunk
    return data


_ZYGOTE = _Zygote()


def fork(command: Sequence[str]) -> ForkedProcess:
    """`command` (`[sys.executable, script, *args]`) as a process forked from this test process's zygote."""
    executable, script, *args = command
    assert executable == sys.executable, f"the zygote runs scripts on {sys.executable}, not {executable}"
    return _ZYGOTE.fork(script, args)


@asynccontextmanager
async def client(command: Sequence[str], **options: Any) -> AsyncIterator[Client]:
    """A `Client` over the pipes of `command` forked from the zygote (`Client.stdio` with a warm start); on exit, the
    server's stdin closes and it must exit with status 0. `options` are the `Client`'s."""
    async with fork(command) as process, anyio.create_task_group() as tg:
        stderr = bytearray()
        tg.start_soon(_drain, process.stderr, stderr)
        async with Client(StreamTransport(process.stdout, process.stdin), **options) as connected:
            yield connected
        await process.stdin.aclose()
        with anyio.fail_after(_EXIT_SECONDS):
            code = await process.wait()
        assert code == 0, f"the server exited with {code}; stderr:\n{stderr.decode(errors='replace')}"


async def _drain(stream: anyio.abc.ByteReceiveStream, into: bytearray) -> None:
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
        async for chunk in stream:
            into += chunk


def forked_processor_seconds() -> float:
    """The processor seconds of the forked servers reaped so far."""
    return _ZYGOTE.processor_seconds


def stop() -> None:
    """Stop the zygote (at the end of the test session)."""
    _ZYGOTE.stop()


if __name__ == "__main__":
    _main()
