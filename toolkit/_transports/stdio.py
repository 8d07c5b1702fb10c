"""Newline-delimited JSON over byte streams: stdio for servers, pipes for clients, and any socket.

MCP's stdio framing: one UTF-8 JSON message per line, no embedded newlines. Reading and writing use
non-blocking file descriptors and the event loop's readiness, so no message takes a thread hop.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import stat
import sys
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Protocol, TypeVar

import anyio
import anyio.abc
import anyio.from_thread
import anyio.lowlevel
import pydantic_core

from toolkit._errors import ConnectionClosedError, MessageError
from toolkit._protocol.jsonrpc import INVALID_REQUEST, PARSE_ERROR

from .base import DEFAULT_MAX_MESSAGE_SIZE, PIPE_NETWORK

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "DEFAULT_SHUTDOWN_TIMEOUT",
    "StdioTransport",
    "StreamTransport",
    "on_a_daemon_thread",
    "read_head",
    "spawn_stdio",
]

T = TypeVar("T")

_CHUNK = 65536
_HELD_STDERR = 65536
_STDERR_TAIL = 4096
_EXIT_WAIT_SECONDS = 2.0
#: How long `spawn_stdio` waits for a server to exit after closing its stdin, before terminating it: a toolkit
#: server's default `shutdown_grace` (5 s) for the calls still running, and a second for its lifespan's cleanup.
DEFAULT_SHUTDOWN_TIMEOUT = 6.0


def read_head(data: bytes | bytearray | str) -> dict[str, Any]:
    """The top-level members at the start of a JSON object that cannot be read whole (too large, or not UTF-8).

    For a reply, `jsonrpc` and `id` come first in practice, so the request it answers can be failed at once. Only
    the first 64 KiB are parsed; the last member found is dropped, since it may be the one cut short.
    """
    if not isinstance(data, str):
        data = bytes(data[:_CHUNK]).decode("utf-8", "replace")
    try:
        value = pydantic_core.from_json(data[:_CHUNK], allow_partial=True)
    except ValueError:
        return {}
    if not isinstance(value, dict):
        return {}
    members = list(value.items())[:-1]
    return dict(members)


class ByteReader(Protocol):
    async def receive(self, max_bytes: int = ...) -> bytes: ...


class ByteWriter(Protocol):
    async def send(self, item: bytes, /) -> None: ...


class StreamTransport:
    """A [`Transport`][toolkit.Transport] over any pair of anyio byte streams, framed as MCP's stdio.

    Use it for pipes and sockets: `StreamTransport(stream, stream)` for a TCP connection from
    `anyio.connect_tcp`, for example.

    Args:
        reader: Where bytes come from (`receive(max_bytes)` raising `anyio.EndOfStream` at the end).
        writer: Where bytes go (`send(data)`).
        max_message_size: Longer lines are skipped, never held whole in memory, and reported with a
            [`MessageError`][toolkit.MessageError].
    """

    network = PIPE_NETWORK  # what the server's spans say it is (`_transports/base.py`'s `Network`)

    def __init__(
        self, reader: ByteReader, writer: ByteWriter, *, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._max = max_message_size
        self._buffer = bytearray()
        self._scanned = 0
        self._discarding = False
        self._eof = False

    async def send(self, message: str, /) -> None:
        await self._writer.send(message.encode() + b"\n")

    async def receive(self) -> str:
        while True:
            line = self._next_line()
            if line is not None:
                text = self._text(line)
                if text is not None:
                    return text
                continue  # a blank line
            if self._eof:
                text = self._rest()
                if text is not None:
                    return text
                raise anyio.EndOfStream
            self._bound()
            try:
                chunk = await self._reader.receive(_CHUNK)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                self._eof = True
                continue
            self._buffer += chunk

    def _next_line(self) -> bytes | None:
        """The next whole line in the buffer (None: none yet), past the end of a message that was too large."""
        while (newline := self._buffer.find(b"\n", self._scanned)) >= 0:
            line = bytes(self._buffer[:newline])
            del self._buffer[: newline + 1]
            self._scanned = 0
            if self._discarding:
                self._discarding = False
                continue
            if newline > self._max:  # came whole in one read: as over the limit as one read in many
                raise MessageError(f"message larger than {self._max} bytes", INVALID_REQUEST, head=read_head(line))
            return line
        return None

    def _rest(self) -> str | None:
        """At end of input, the last message if it has no newline."""
        if not self._buffer or self._discarding:
            return None
        line = bytes(self._buffer)
        self._buffer.clear()
        return self._text(line)

    def _bound(self) -> None:
        """Before reading more: a partial line over the limit is dropped (and its message refused once)."""
        self._scanned = len(self._buffer)
        if len(self._buffer) > self._max:
            head = read_head(self._buffer) if not self._discarding else {}
            self._buffer.clear()
            self._scanned = 0
            if not self._discarding:
                self._discarding = True
                raise MessageError(f"message larger than {self._max} bytes", INVALID_REQUEST, head=head)

    def _text(self, line: bytes) -> str | None:
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line.strip():
            return None
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError:
            raise MessageError("message is not valid UTF-8", PARSE_ERROR, head=read_head(line)) from None

    async def aclose(self) -> None:
        for stream in (self._writer, self._reader):
            close = getattr(stream, "aclose", None)
            if close is not None:
                with contextlib.suppress(Exception):  # closing a broken pipe or socket: nothing left to do
                    await close()


class _FdStream:
    """Async reads and writes on a file descriptor, through the event loop where the fd can be polled."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        mode = os.fstat(fd).st_mode
        self._pollable = sys.platform != "win32" and (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode))
        self._was_blocking = os.get_blocking(fd) if self._pollable else True
        if self._pollable:
            os.set_blocking(fd, False)

    async def receive(self, max_bytes: int = _CHUNK) -> bytes:
        if not self._pollable:  # regular files and terminals cannot be polled
            data = await _read_on_a_thread(self.fd, max_bytes)
        else:
            while True:
                try:
                    data = os.read(self.fd, max_bytes)
                    break
                except BlockingIOError:
                    await anyio.wait_readable(self.fd)
        if not data:
            raise anyio.EndOfStream
        return data

    async def send(self, item: bytes, /) -> None:
        view = memoryview(item)
        while view:
            try:
                written = os.write(self.fd, view)
            except BlockingIOError:
                await anyio.wait_writable(self.fd)
                continue
            except (BrokenPipeError, ConnectionResetError):
                raise anyio.BrokenResourceError from None
            view = view[written:]

    def restore(self) -> None:
        if self._pollable:
            with contextlib.suppress(OSError):
                os.set_blocking(self.fd, self._was_blocking)


async def _read_on_a_thread(fd: int, max_bytes: int) -> bytes:
    return await on_a_daemon_thread(lambda: os.read(fd, max_bytes))


async def on_a_daemon_thread(read: Callable[[], T]) -> T:
    """`read()` (a blocking read of a terminal, a file) on a daemon thread of its own; cancelling abandons the thread.

    Neither anyio's worker threads, which are not daemons on asyncio (one left blocked reading a terminal after
    Ctrl-C would keep the process alive until a key is pressed), nor the tools' pool, whose threads count as tool
    calls still running. One thread a read is cheap next to what it waits for (a file's 64 KiB, a person typing).
    `read` must not hold a lock the interpreter takes at exit (the buffer of `sys.stdin`): read file descriptors.
    """
    token = anyio.lowlevel.current_token()
    done = anyio.Event()
    outcome: list[T] = []
    failure: list[Exception] = []

    def run() -> None:
        try:
            outcome.append(read())
        except Exception as exc:
            failure.append(exc)
        with contextlib.suppress(Exception):  # the event loop has finished: nobody is waiting any more
            anyio.from_thread.run_sync(done.set, token=token)

    threading.Thread(target=run, name="toolkit-stdin", daemon=True).start()
    await done.wait()
    if failure:
        raise failure[0]
    return outcome[0]


class StdioTransport(StreamTransport):
    """The server's end of MCP's stdio transport: messages in on stdin, out on stdout.

    From the moment it opens, file descriptor 1 points at stderr, so nothing a tool or library prints (`print`,
    `sys.stdout.buffer.write`, C extensions, child processes) can corrupt the protocol stream; messages go out
    through a private duplicate of the original stdout. Closing the transport closes that duplicate and leaves
    fd 1 on stderr, so what a thread the tools left running prints later cannot reach the client either.
    """

    def __init__(self, *, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        self._out_fd = os.dup(1)
        os.dup2(2, 1)
        self._in = _FdStream(0)
        self._out = _FdStream(self._out_fd)
        self._closed = False
        super().__init__(self._in, self._out, max_message_size=max_message_size)

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._in.restore()
        self._out.restore()
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os.close(self._out_fd)


class _HeldStderr:
    """A server process's stderr, copied to ours once the server has sent its first message.

    Until then it is held back (up to 64 KiB, then copying starts), so that a server which fails at start is
    reported in one error that quotes it ([`ConnectionClosedError.stderr`][toolkit.ConnectionClosedError]), rather
    than by its traceback followed by an error.
    """

    def __init__(self) -> None:
        self.held = bytearray()
        self.tail = b""  # the last lines once copying, for the error that says how the process ended
        self.live = False
        self.reported = False
        self.done = anyio.Event()
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    async def copy(self, stream: anyio.abc.ByteReceiveStream) -> None:
        try:
            async for chunk in stream:
                if self.live:
                    self._write(chunk)
                    self.tail = (self.tail + chunk)[-_STDERR_TAIL:]
                else:
                    self.held += chunk
                    if len(self.held) > _HELD_STDERR:
                        self.release()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        finally:
            self.done.set()

    def release(self) -> None:
        """Copy what was held back, and from now on everything as it comes."""
        if not self.live:
            self.live = True
            held, self.held = bytes(self.held), bytearray()
            if held and not self.reported:
                self._write(held)

    def _write(self, data: bytes) -> None:
        with contextlib.suppress(OSError, ValueError):  # our own stderr closed: nowhere left to say it
            sys.stderr.write(self._decoder.decode(data))
            sys.stderr.flush()


class _ProcessTransport(StreamTransport):
    """The client's end of a server process: at the end of its output, says how the process ended."""

    def __init__(
        self, process: anyio.abc.Process, stderr: _HeldStderr, *, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    ) -> None:
        assert process.stdout is not None
        assert process.stdin is not None
        super().__init__(process.stdout, process.stdin, max_message_size=max_message_size)
        self._process = process
        self._stderr = stderr

    async def receive(self) -> str:
        try:
            text = await super().receive()
        except anyio.EndOfStream:
            raise await self._ended() from None
        self._stderr.release()
        return text

    async def _ended(self) -> ConnectionClosedError:
        # The output ends a moment before the process does: wait (bounded) for its exit status and last words.
        with anyio.move_on_after(_EXIT_WAIT_SECONDS):
            await self._process.wait()
            await self._stderr.done.wait()
        code = self._process.returncode
        if code is None:
            what = "the server process closed its stdout"
        elif code < 0:
            what = f"the server process was killed by signal {-code}"
        else:
            what = f"the server process exited with status {code}"
        held = ""
        if self._stderr.live:
            last = self._stderr.tail.decode("utf-8", "replace")
        else:
            self._stderr.reported = True
            held = last = self._stderr.held.decode("utf-8", "replace")
        lines = [line.strip() for line in last.splitlines() if line.strip()]
        if lines:
            what += "; its stderr ended with: " + " | ".join(lines[-3:])
        return ConnectionClosedError(what, returncode=code, stderr=held)


@asynccontextmanager
async def spawn_stdio(
    command: Sequence[str],
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    *,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT,
) -> AsyncIterator[StreamTransport]:
    """Start a server process and speak to it over its stdin and stdout.

    On exit, the stdio way: close its stdin, wait up to `shutdown_timeout` seconds, then terminate, wait two
    more, then kill (spec: basic/transports).
    `env` is added to the current environment. The child's stderr is copied to ours (held back until its first
    message, see `_HeldStderr`); the end of its stdout raises `ConnectionClosedError` saying how it ended.
    """
    import subprocess  # only clients spawn servers: a server process never loads it

    environment = {**os.environ, **env} if env is not None else None
    process = await anyio.open_process(
        list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment, cwd=cwd
    )
    stderr = _HeldStderr()
    try:
        async with anyio.create_task_group() as tg:
            assert process.stderr is not None
            tg.start_soon(stderr.copy, process.stderr)
            try:
                yield _ProcessTransport(process, stderr, max_message_size=max_message_size)
            finally:
                with anyio.CancelScope(shield=True):
                    await _stop(process, shutdown_timeout)
                    # The process is gone; what it wrote last is still in the pipe (or a grandchild holds it open).
                    with anyio.move_on_after(_EXIT_WAIT_SECONDS):
                        await stderr.done.wait()
                tg.cancel_scope.cancel()
    finally:
        stderr.release()
        with anyio.CancelScope(shield=True):
            await process.aclose()


async def _stop(process: anyio.abc.Process, exit_wait: float) -> None:
    if process.stdin is not None:
        with contextlib.suppress(Exception):  # closing a broken pipe: nothing left to do
            await process.stdin.aclose()
    with anyio.move_on_after(exit_wait):
        await process.wait()
    if process.returncode is None:
        process.terminate()
        with anyio.move_on_after(_EXIT_WAIT_SECONDS):
            await process.wait()
    if process.returncode is None:
        process.kill()
        await process.wait()
