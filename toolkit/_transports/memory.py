"""In-memory transport: two connected ends, for tests and embedding.

A deliberately small channel rather than anyio's memory object streams: one message hop is on the hot path
of every in-memory call, and the general streams pay for features (cloning, statistics, a checkpoint on
every operation) that a point-to-point pipe does not need.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import anyio
import anyio.lowlevel

from toolkit._events import event_class

from .base import INPROC_NETWORK

__all__ = ["MemoryTransport"]

# Yield to the event loop at least once every this many messages, so that a peer that floods the pipe
# cannot starve the other tasks.
_YIELD_EVERY = 32


class _Pipe:
    """One direction: a bounded queue of text messages with at most one waiting reader, any number of writers."""

    __slots__ = ("_new_event", "buffer", "closed", "limit", "readable", "ticks", "writable")

    def __init__(self, limit: int) -> None:
        self.buffer: deque[str] = deque()
        self.limit = limit
        self.closed = False
        self.readable: anyio.Event | None = None
        self.writable: anyio.Event | None = None
        self.ticks = 0
        # What makes the pipe's events, found on the first wait: a pair may be made before its event loop runs.
        self._new_event: Callable[[], anyio.Event] | None = None

    async def put(self, message: str) -> None:
        while len(self.buffer) >= self.limit and not self.closed:
            # Writers share one event: a client sends from many tasks at once, and each must be woken.
            if self.writable is None:
                self.writable = self._event()
            await self.writable.wait()
        if self.closed:
            raise anyio.BrokenResourceError
        self.buffer.append(message)
        if self.readable is not None:
            self.readable.set()
            self.readable = None
        await self._tick()

    async def get(self) -> str:
        while not self.buffer:
            if self.closed:
                raise anyio.EndOfStream
            self.readable = self._event()
            await self.readable.wait()
        message = self.buffer.popleft()
        if self.writable is not None:
            self.writable.set()
            self.writable = None
        await self._tick()
        return message

    def _event(self) -> anyio.Event:
        if self._new_event is None:
            self._new_event = event_class()
        return self._new_event()

    async def _tick(self) -> None:
        self.ticks += 1
        if self.ticks >= _YIELD_EVERY:
            self.ticks = 0
            await anyio.lowlevel.checkpoint()

    def close(self) -> None:
        self.closed = True
        for event in (self.readable, self.writable):
            if event is not None:
                event.set()
        self.readable = self.writable = None


class MemoryTransport:
    """One end of an in-memory connection. Messages are JSON text, exactly as on stdio."""

    network = INPROC_NETWORK  # what the server's spans say it is (`_transports/base.py`'s `Network`)

    def __init__(self, outgoing: _Pipe, incoming: _Pipe) -> None:
        self._out = outgoing
        self._in = incoming

    @classmethod
    def pair(cls, buffer: int = 64) -> tuple[MemoryTransport, MemoryTransport]:
        """Two connected transports: what one sends, the other receives.

        Args:
            buffer: How many messages may wait in each direction before `send` waits (backpressure).
        """
        if buffer < 1:
            raise ValueError("buffer must be at least 1")
        a_to_b, b_to_a = _Pipe(buffer), _Pipe(buffer)
        return cls(a_to_b, b_to_a), cls(b_to_a, a_to_b)

    async def send(self, message: str, /) -> None:
        await self._out.put(message)

    async def receive(self) -> str:
        return await self._in.get()

    async def aclose(self) -> None:
        """Close both directions: the peer's `receive` ends with `anyio.EndOfStream` once it has read all."""
        self._out.close()
        self._in.close()
