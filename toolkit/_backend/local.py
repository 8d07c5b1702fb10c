"""`LocalBackend`: the shared state of the workers of one machine (`base.Backend`), through a Unix socket, no Redis.

`toolkit serve --http --workers N` runs a `LocalHub` in its supervisor process (a thread with its own event loop)
and gives every worker a `LocalBackend` on the hub's socket. The hub keeps the state in a `MemoryBackend` (so the
semantics are the reference ones, tested once) and routes the messages: `send` to the worker whose `listen`
connection carries that worker's name, `broadcast` to all of them. A worker that dies closes its connection, and
the hub forgets its name at once, so `send` to it is False at once: nobody waits for an answer that cannot come.

On the wire, each request and each reply is one frame: a 4-byte big-endian length, then a JSON object; bytes travel
in base64. The hub checks every field of a request before it acts on it (a frame of the wrong shape gets an error
reply), and no failure of one request ends the hub: it is logged, and answered as an error. A request takes a
connection of its own from a small pool (no reply to match to its request, no task reading in the background);
`listen` holds one for as long as it listens. Every request is bounded by the backend's `timeout` (and by its wait,
for `since`): a hub that does not answer is a `BackendError`, never a hang.

Measured on the test machine: a `get` round trip takes about 0.13 ms (a worker and the hub in one process); a
2025-11-25 `tools/call` costs about 0.5 ms more than with no backend (`python -m benchmarks.fleet`, docs/deploy.md).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import logging
import math
import os
import socket
import struct
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

from toolkit._tasks.sqlite import SqliteTaskStore

from .base import BackendError, Events, Inbox, worker_name
from .memory import MemoryBackend

__all__ = ["LocalBackend", "LocalHub"]

_LENGTH = struct.Struct(">I")
_MAX_FRAME = 64 * 1024 * 1024  # a frame longer than this is a broken peer, not a message
_RETRY_SECONDS = 0.2  # how soon `listen` tries again when the hub is not there (yet, or any more)
_CHECK_SECONDS = 1.0  # how often the hub looks that its socket file is still there (`LocalHub._accept`)
_logger = logging.getLogger("toolkit")
_LOST = (OSError, anyio.EndOfStream, anyio.BrokenResourceError, anyio.IncompleteRead, anyio.ClosedResourceError)


class _Malformed(ValueError):
    """A request whose fields are not what its operation takes."""


def _text(request: dict[str, Any], name: str) -> str:
    value = request.get(name)
    if not isinstance(value, str):
        raise _Malformed(f"{name} must be a string")
    return value


def _encoded(request: dict[str, Any], name: str) -> bytes:
    try:
        return base64.b64decode(_text(request, name), validate=True)
    except binascii.Error:
        raise _Malformed(f"{name} must be base64") from None


def _number(request: dict[str, Any], name: str, *, least: float, strict: bool = False) -> float:
    """A finite number at least `least` (above it, when `strict`)."""
    value = request.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _Malformed(f"{name} must be a finite number")
    if value < least or (strict and value == least):
        raise _Malformed(f"{name} must be {'above' if strict else 'at least'} {least:g}")
    return value


def _whole(request: dict[str, Any], name: str) -> int:
    value = request.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _Malformed(f"{name} must be a whole number")
    return value


def _texts(request: dict[str, Any], name: str) -> list[str]:
    value = request.get(name)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _Malformed(f"{name} must be a list of strings")
    return value


class _Line:
    """One connection to the hub: the stream and its buffered reader."""

    __slots__ = ("reader", "stream")

    def __init__(self, stream: anyio.abc.ByteStream) -> None:
        self.stream = stream
        self.reader = BufferedByteReceiveStream(stream)

    async def write(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, separators=(",", ":")).encode()
        await self.stream.send(_LENGTH.pack(len(data)) + data)

    async def read(self) -> dict[str, Any]:
        (length,) = _LENGTH.unpack(await self.reader.receive_exactly(_LENGTH.size))
        if length > _MAX_FRAME:
            raise anyio.BrokenResourceError(f"a frame of {length} bytes")
        try:
            message = json.loads(await self.reader.receive_exactly(length))
        except ValueError:  # not JSON (UnicodeDecodeError included)
            message = None
        if not isinstance(message, dict):
            raise anyio.BrokenResourceError("a frame that is not a JSON object")
        return message


async def _connect(path: str) -> _Line:
    """A connection to the hub. Made with the socket module and handed to anyio as a plain stream socket (not
    `anyio.connect_unix`, whose asyncio streams can set the result of a cancelled future when a read is cancelled as
    data arrives: "InvalidStateError" from the event loop)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        sock.connect(path)  # local: at once, or an error (no hub; EAGAIN when its backlog is full)
    except OSError:
        sock.close()
        raise
    return _Line(await anyio.abc.SocketStream.from_socket(sock))


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _bytes(text: str) -> bytes:
    return base64.b64decode(text)


class LocalBackend:
    """The shared state of the workers of one machine, held by a `LocalHub` on the Unix socket `path`.

    `toolkit serve --http --workers N` makes the hub and hands each worker one of these by itself; nothing to set.

    Args:
        path: The hub's Unix socket.
        timeout: Seconds a request to the hub may take before it fails with `BackendError`.
        pool: Idle connections kept for the next requests (more are opened while many requests run at once).
    """

    __slots__ = ("_idle", "_listening", "_path", "_pid", "_pool", "_stopped", "_timeout", "_worker")

    def __init__(self, path: str, *, timeout: float = 5.0, pool: int = 16) -> None:
        self._path = path
        self._timeout = timeout
        self._pool = pool
        self._idle: list[_Line] = []
        self._listening: _Line | None = None  # `listen`'s connection, closed by `stop`
        self._stopped = False
        self._worker, self._pid = worker_name(), os.getpid()

    def task_store(self) -> SqliteTaskStore:
        """The tasks the workers of this machine share: a SQLite file beside the hub's socket, in the supervisor's
        private folder (what `toolkit serve --workers N` keeps tasks in, unless the server has a store)."""
        return SqliteTaskStore(os.path.join(os.path.dirname(self._path), "tasks.db"))

    @property
    def worker(self) -> str:
        # Lowercase letters and digits only: the name starts the ids of the questions this worker asks (AskTag).
        # Named again in a process forked after it was made: two workers never share a name.
        if self._pid != os.getpid():
            self._worker, self._pid = worker_name(), os.getpid()
            self._idle = []  # the parent's connections are the parent's
        return self._worker

    async def start(self) -> None:
        self._stopped = False  # connections are opened on first use: a hub not there yet fails a request, not this

    async def stop(self) -> None:
        self._stopped = True
        await self._drop_idle()
        if self._listening is not None:  # `listen` returns: this worker is gone for the others at once
            await anyio.aclose_forcefully(self._listening.stream)

    async def _drop_idle(self) -> None:
        idle, self._idle = self._idle, []
        for line in idle:
            await anyio.aclose_forcefully(line.stream)

    async def _call(self, request: dict[str, Any], wait: float = 0.0) -> Any:
        try:
            with anyio.fail_after(self._timeout + wait):
                reply = await self._exchange(request)
        except (TimeoutError, *_LOST) as exc:
            raise BackendError(f"the workers' local backend ({self._path}) did not answer: {exc!r}") from None
        if "error" in reply:
            raise BackendError(f"the workers' local backend refused {request['op']}: {reply['error']}")
        return reply.get("ok")

    async def _exchange(self, request: dict[str, Any]) -> dict[str, Any]:
        pooled = bool(self._idle)
        line = self._idle.pop() if pooled else await _connect(self._path)
        try:
            await line.write(request)
            reply = await line.read()
        except BaseException as exc:  # cancelled or broken mid-request: its reply must never meet another request
            await anyio.aclose_forcefully(line.stream)
            if pooled and isinstance(exc, _LOST):  # closed while idle (the hub restarted): so are the others
                await self._drop_idle()
                return await self._exchange(request)
            raise
        if len(self._idle) < self._pool:
            self._idle.append(line)
        else:
            await anyio.aclose_forcefully(line.stream)
        return reply

    async def put(self, key: str, value: str, ttl: float) -> None:
        await self._call({"op": "put", "key": key, "value": value, "ttl": ttl})

    async def get(self, *keys: str) -> list[str | None]:
        found: list[str | None] = await self._call({"op": "get", "keys": list(keys)})
        return found

    async def take(self, key: str, rate: float, capacity: float) -> float | None:
        wait: float | None = await self._call({"op": "take", "key": key, "rate": rate, "capacity": capacity})
        return wait

    async def send(self, worker: str, message: bytes) -> bool:
        return bool(await self._call({"op": "send", "worker": worker, "message": _b64(message)}))

    async def broadcast(self, message: bytes) -> None:
        await self._call({"op": "broadcast", "message": _b64(message)})

    async def append(self, stream: str, seq: int, frame: bytes, *, last: bool = False) -> None:
        await self._call({"op": "append", "stream": stream, "seq": seq, "frame": _b64(frame), "last": last})

    async def since(self, stream: str, after: int, wait: float = 0.0) -> Events:
        found = await self._call({"op": "since", "stream": stream, "after": after, "wait": wait}, wait)
        frames = [(seq, _bytes(frame)) for seq, frame in found["frames"]]
        return Events(frames, found["done"], found["known"])

    async def listen(
        self, inbox: Inbox, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        started = False
        while not self._stopped:  # until stopped; through the hub's restarts
            try:
                line = self._listening = await _connect(self._path)
            except OSError:
                await anyio.sleep(_RETRY_SECONDS)
                continue
            with contextlib.suppress(*_LOST):
                async with line.stream:
                    await line.write({"op": "listen", "worker": self.worker})
                    await line.read()  # the hub has this worker's name: `send` to it delivers from now on
                    if not started:
                        started = True
                        task_status.started()
                    while True:
                        await _deliver(inbox, _bytes((await line.read())["message"]))
            self._listening = None
            if not self._stopped:
                await anyio.sleep(_RETRY_SECONDS)


async def _deliver(inbox: Inbox, message: bytes) -> None:
    try:
        await inbox(message)
    except Exception:  # one bad message must not deafen the worker
        _logger.exception("toolkit: a message from another worker could not be handled")


def _unbound(path: str, exc: OSError) -> OSError:
    """`exc`, which binding the socket `path` raised, saying which file (an errno kept when there is one)."""
    said = f"the hub cannot bind its socket {path}: {exc.strerror or exc}"
    return OSError(exc.errno, said) if exc.errno else OSError(said)


def _identity(path: str) -> tuple[int, int] | None:
    """Which file is at `path` (device and inode), None when there is none."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return found.st_dev, found.st_ino


@contextlib.contextmanager
def _removed(path: str) -> Iterator[tuple[int, int] | None]:
    """The socket file just bound at `path` (`_identity`), removed at the end of the block if it is still there: a
    hub started again on the same path binds it anew."""
    bound = _identity(path)
    try:
        yield bound
    finally:
        if _identity(path) == bound:  # not a file that took its place
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)


class _Listener:
    """A worker's `listen` connection, as the hub holds it: pushes to it are written one at a time."""

    __slots__ = ("line", "lock")

    def __init__(self, line: _Line) -> None:
        self.line = line
        self.lock = anyio.Lock()

    async def push(self, message: str) -> bool:
        try:
            async with self.lock:
                await self.line.write({"message": message})
        except _LOST:
            return False
        return True


class LocalHub:
    """The hub of `LocalBackend`: serves the shared state on a Unix socket, in the process that supervises the
    workers (`serve`, until cancelled). The socket is made reachable by this user only; put it in a private folder
    (`toolkit serve` uses a fresh temporary one).

    Args:
        path: The Unix socket to create.
        events_ttl: Seconds a stream's SSE events are kept after its latest one (see `MemoryBackend`).
        max_events: Events kept per stream.
    """

    def __init__(self, path: str, *, events_ttl: float = 60.0, max_events: int = 1000) -> None:
        self.path = path
        self._state = MemoryBackend(events_ttl=events_ttl, max_events=max_events)
        self._listeners: dict[str, _Listener] = {}
        # Each operation reads its fields through the checks above, before it changes anything.
        self._ops: dict[str, Callable[[dict[str, Any]], Awaitable[Any]]] = {
            "put": lambda r: self._state.put(
                _text(r, "key"), _text(r, "value"), _number(r, "ttl", least=0, strict=True)
            ),
            "get": lambda r: self._state.get(*_texts(r, "keys")),
            "take": self._take,
            "send": self._send,
            "broadcast": self._broadcast,
            "append": self._append,
            "since": self._since,
        }

    async def serve(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Serve until cancelled; `task_status.started()` once workers can connect."""
        listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with listening:
            try:
                listening.bind(self.path)
            except OSError as exc:  # the error alone names no file
                raise _unbound(self.path, exc) from None
            with _removed(self.path) as bound:
                os.chmod(self.path, 0o600)  # this user only (and the supervisor's folder is private: 0700)
                listening.listen(1024)
                listening.setblocking(False)
                await self._accept(listening, bound, task_status)

    async def _accept(
        self, listening: socket.socket, bound: tuple[int, int] | None, task_status: anyio.abc.TaskStatus[None]
    ) -> None:
        """Serve each connection `listening` accepts, until its socket file is no longer the one this hub bound
        (`_identity`): removed or replaced (a /tmp cleaner, say), no worker could reach the hub, though it runs. It
        then fails (its connections closed), and `keep_serving` starts it again on a fresh socket, with its state."""
        async with anyio.create_task_group() as tg:
            task_status.started()
            while _identity(self.path) == bound:
                with anyio.move_on_after(_CHECK_SECONDS):  # looked at this often (accepts are rare: workers pool)
                    await anyio.wait_readable(listening)
                try:
                    conn, _ = listening.accept()
                except BlockingIOError:  # nobody there (the look above), or another wake-up took it
                    continue
                except OSError:  # out of file descriptors, say: the workers retry, and so does the hub
                    _logger.exception("toolkit: the workers' hub could not accept a connection")
                    await anyio.sleep(_RETRY_SECONDS)
                    continue
                tg.start_soon(self._serve_one, conn)
            tg.cancel_scope.cancel()
        raise OSError(f"the hub's socket {self.path} was removed")

    async def _serve_one(self, conn: socket.socket) -> None:
        try:
            stream = await anyio.abc.SocketStream.from_socket(conn)
        except BaseException:
            conn.close()
            raise
        line = _Line(stream)
        async with stream:
            try:
                while True:
                    request = await line.read()
                    if request.get("op") == "listen":
                        await self._hold(_text(request, "worker"), line)
                        return
                    await line.write(await self._answer(request))
            except (*_LOST, _Malformed):  # a peer that breaks the protocol loses its connection, nothing else
                pass
            except Exception:  # nor does anything else one connection meets end the hub
                _logger.exception("toolkit: the workers' hub dropped a connection")

    async def _answer(self, request: dict[str, Any]) -> dict[str, Any]:
        name = request.get("op")
        op = self._ops.get(name) if isinstance(name, str) else None
        if op is None:
            return {"error": f"unknown operation {name!r}"}
        try:
            return {"ok": await op(request)}
        except _Malformed as exc:  # a request of the wrong shape
            return {"error": f"{name}: {exc}"}
        except Exception as exc:  # a bug here fails this request, never the hub every worker needs
            _logger.exception("toolkit: the workers' hub failed a %s request", name)
            return {"error": f"{name} failed: {type(exc).__name__}"}

    async def _hold(self, worker: str, line: _Line) -> None:
        listener = self._listeners[worker] = _Listener(line)
        try:
            await line.write({"ok": None})
            await line.reader.receive()  # a listener never writes again: this returns (or raises) when it is gone
        finally:
            if self._listeners.get(worker) is listener:
                del self._listeners[worker]

    async def _take(self, request: dict[str, Any]) -> float | None:
        rate = _number(request, "rate", least=0, strict=True)
        return await self._state.take(_text(request, "key"), rate, _number(request, "capacity", least=1))

    async def _send(self, request: dict[str, Any]) -> bool:
        worker, message = _text(request, "worker"), _text(request, "message")
        _encoded(request, "message")
        listener = self._listeners.get(worker)
        return listener is not None and await listener.push(message)

    async def _broadcast(self, request: dict[str, Any]) -> None:
        message = _text(request, "message")
        _encoded(request, "message")
        for listener in list(self._listeners.values()):
            await listener.push(message)

    async def _append(self, request: dict[str, Any]) -> None:
        last = request.get("last", False)
        if not isinstance(last, bool):
            raise _Malformed("last must be true or false")
        stream, seq, frame = _text(request, "stream"), _whole(request, "seq"), _encoded(request, "frame")
        await self._state.append(stream, seq, frame, last=last)

    async def _since(self, request: dict[str, Any]) -> dict[str, Any]:
        stream, after = _text(request, "stream"), _whole(request, "after")
        found = await self._state.since(stream, after, _number(request, "wait", least=0))
        return {"frames": [[seq, _b64(frame)] for seq, frame in found.frames], "done": found.done, "known": found.known}
