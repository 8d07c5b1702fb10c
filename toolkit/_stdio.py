"""Newline-delimited JSON over byte streams: stdio for servers, pipes for clients, and any socket.

MCP's stdio framing: one UTF-8 JSON message per line, no embedded newlines. Reading and writing use
non-blocking file descriptors and the event loop's readiness, so no message takes a thread hop.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Protocol

import anyio
import anyio.to_thread

from ._transport import MessageError

__all__ = ["DEFAULT_MAX_MESSAGE_SIZE", "StdioTransport", "StreamTransport", "spawn_stdio"]

DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024
_CHUNK = 65536


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
            newline = self._buffer.find(b"\n", self._scanned)
            if newline >= 0:
                line = bytes(self._buffer[:newline])
                del self._buffer[: newline + 1]
                self._scanned = 0
                if self._discarding:
                    self._discarding = False
                    continue
                text = self._text(line)
                if text is not None:
                    return text
                continue
            if self._eof:
                if self._buffer and not self._discarding:
                    line = bytes(self._buffer)
                    self._buffer.clear()
                    text = self._text(line)
                    if text is not None:
                        return text
                raise anyio.EndOfStream
            self._scanned = len(self._buffer)
            if len(self._buffer) > self._max:
                self._buffer.clear()
                self._scanned = 0
                if not self._discarding:
                    self._discarding = True
                    raise MessageError(f"message larger than {self._max} bytes", -32600)
            try:
                chunk = await self._reader.receive(_CHUNK)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                self._eof = True
                continue
            self._buffer += chunk

    def _text(self, line: bytes) -> str | None:
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line.strip():
            return None
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError:
            raise MessageError("message is not valid UTF-8", -32700) from None

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
            data = await anyio.to_thread.run_sync(os.read, self.fd, max_bytes, abandon_on_cancel=True)
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


@asynccontextmanager
async def spawn_stdio(
    command: Sequence[str], env: Mapping[str, str] | None = None, cwd: str | os.PathLike[str] | None = None
) -> AsyncIterator[StreamTransport]:
    """Start a server process and speak to it over its stdin and stdout.

    On exit, the stdio way: close its stdin, wait, then terminate, then kill (spec: basic/transports).
    `env` is added to the current environment; the child's stderr is inherited.
    """
    import subprocess  # only clients spawn servers: a server process never loads it

    environment = {**os.environ, **env} if env is not None else None
    process = await anyio.open_process(
        list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None, env=environment, cwd=cwd
    )
    try:
        assert process.stdout is not None
        assert process.stdin is not None
        yield StreamTransport(process.stdout, process.stdin)
    finally:
        with anyio.CancelScope(shield=True):
            if process.stdin is not None:
                await process.stdin.aclose()
            with anyio.move_on_after(2):
                await process.wait()
            if process.returncode is None:
                process.terminate()
                with anyio.move_on_after(2):
                    await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
            await process.aclose()
