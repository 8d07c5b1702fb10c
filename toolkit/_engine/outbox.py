"""The messages of one connection on their way out (`Outbox`): in order, bounded, written by a task of their own."""

from __future__ import annotations

import functools
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

import anyio

from toolkit._transports.base import MessageKind, RoutingTransport

if TYPE_CHECKING:
    from toolkit._transports.base import Transport

__all__ = ["Outbox", "routes"]

logger = logging.getLogger("toolkit")

#: Whether a transport's type implements `RoutingTransport`: worked out once per type (a runtime protocol check is
#: slow, and HTTP makes a connection per request).
routes: Callable[[type], bool] = functools.cache(lambda kind: issubclass(kind, RoutingTransport))


class Outbox:
    """The messages of one connection on their way out, in order, bounded; a writer task hands them to the transport.

    Putting a message never waits for the peer to read, only for room, so the connection's reader goes on reading
    while the peer is slow (JSON-RPC lets a client write all its requests before it reads a reply) and stops only
    when the outbox is full. The bounds are high-water marks, so that a message of any size fits: the outbox holds
    at most `max_messages` messages, and `max_bytes` characters of JSON plus one message. Each message travels with
    the id of the request it relates to and its kind, for a `RoutingTransport`.
    """

    __slots__ = (
        "_empty",
        "_lock",
        "_max_bytes",
        "_max_messages",
        "_ready",
        "_room",
        "_send_related",
        "_size",
        "_transport",
        "_writing",
        "queued",
    )

    def __init__(self, transport: Transport, max_messages: int, max_bytes: int) -> None:
        self._transport = transport
        # The optional per-request route of the transport contract (`RoutingTransport`), checked once.
        self._send_related: Callable[[str, Any, MessageKind], Awaitable[None]] | None = (
            cast("RoutingTransport", transport).send_related if routes(type(transport)) else None
        )
        self.queued: deque[tuple[str, Any, MessageKind]] = deque()  # read-only outside: what waits, oldest first
        self._size = 0  # characters queued; a message counts until the transport has taken all of it
        self._max_messages = max_messages
        self._max_bytes = max_bytes
        self._writing = False  # a message is being handed to the transport (by the writer or by `send`)
        self._lock = anyio.Lock(fast_acquire=True)  # FIFO among the producers waiting for room
        self._ready: anyio.Event | None = None  # the writer waits for work
        self._room: anyio.Event | None = None  # producers and the reader wait for room
        self._empty: anyio.Event | None = None  # end of input waits for everything to be written

    @property
    def full(self) -> bool:
        """Whether it holds messages up to a bound: the reader stops reading until there is room (it looks only
        when something is `queued`)."""
        return len(self.queued) >= self._max_messages or self._size >= self._max_bytes

    async def wait_for_room(self) -> None:
        while self.full:
            if self._room is None:
                self._room = anyio.Event()
            await self._room.wait()

    async def put(self, text: str, related: Any, kind: MessageKind = MessageKind.MESSAGE) -> None:
        """Queue `text` behind everything put before it, once there is room (uncontended: without a checkpoint)."""
        async with self._lock:
            await self.wait_for_room()
            self.queued.append((text, related, kind))
            self._size += len(text)
            self._wake()

    async def send(self, text: str, related: Any, kind: MessageKind = MessageKind.MESSAGE) -> None:
        """Write `text` now if nothing is ahead of it, else `put` it: a task that may wait for the peer saves the
        writer a wake-up (a tenth of an in-memory call). Never from the connection's reader, nor from inside a
        cancel scope of a call (a cancelled write could leave half a line on a byte stream).
        """
        if self._writing or self.queued or self._lock.locked():
            await self.put(text, related, kind)
            return
        self._writing = True
        try:
            await self._write(text, related, kind)
        finally:
            self._writing = False
            if self.queued or self._empty is not None:
                self._wake()

    async def flush(self) -> None:
        """Wait until the transport has taken every message put so far, and those waiting for room."""
        while self.queued or self._writing or self._lock.locked():
            self._empty = anyio.Event()
            await self._empty.wait()

    async def run(self) -> None:
        """Hand the queued messages to the transport, one at a time, until cancelled."""
        queue = self.queued
        while True:
            while self._writing or not queue:
                self._ready = anyio.Event()
                await self._ready.wait()
            text, related, kind = queue[0]
            self._writing = True
            try:
                await self._write(text, related, kind)
            finally:
                self._writing = False
            queue.popleft()
            self._size -= len(text)
            if self._room is not None and not self.full:
                self._room.set()
                self._room = None
            self._wake()

    async def _write(self, text: str, related: Any, kind: MessageKind) -> None:
        try:
            if self._send_related is not None:
                await self._send_related(text, related, kind)
            else:
                await self._transport.send(text)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            logger.debug("dropped a message: the transport is closed")

    def _wake(self) -> None:
        if self.queued:
            if self._ready is not None and not self._writing:
                self._ready.set()
                self._ready = None
        elif self._empty is not None and not self._writing:
            self._empty.set()
            self._empty = None
