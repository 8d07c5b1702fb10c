"""In-memory transport: two connected ends over anyio memory streams, for tests and embedding."""

from __future__ import annotations

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

__all__ = ["MemoryTransport"]


class MemoryTransport:
    """One end of an in-memory connection. Messages are JSON text, exactly as on stdio."""

    def __init__(self, send: MemoryObjectSendStream[str], receive: MemoryObjectReceiveStream[str]) -> None:
        self._send = send
        self._receive = receive

    @classmethod
    def pair(cls, buffer: int = 64) -> tuple[MemoryTransport, MemoryTransport]:
        """Two connected transports: what one sends, the other receives.

        Args:
            buffer: How many messages may wait in each direction before `send` waits (backpressure).
        """
        a_send, b_receive = anyio.create_memory_object_stream[str](buffer)
        b_send, a_receive = anyio.create_memory_object_stream[str](buffer)
        return cls(a_send, a_receive), cls(b_send, b_receive)

    async def send(self, message: str, /) -> None:
        try:
            await self._send.send(message)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            raise anyio.BrokenResourceError from None

    async def receive(self) -> str:
        try:
            return await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise anyio.EndOfStream from None

    async def aclose(self) -> None:
        self._send.close()
        self._receive.close()
