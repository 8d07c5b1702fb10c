"""The transport contract: move one JSON-RPC message, as text, at a time."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["Transport"]


@runtime_checkable
class Transport(Protocol):
    """Moves JSON-RPC messages between two peers, one message (a JSON text) per call.

    A transport does no JSON work of its own: it frames, sends and receives text. Implement these three
    methods to serve toolkit over anything (a socket, a pipe, a websocket).
    """

    async def send(self, message: str, /) -> None:
        """Send one message. Concurrent calls must not interleave; toolkit never makes them."""
        ...

    async def receive(self) -> str:
        """Wait for the next message.

        Raises:
            anyio.EndOfStream: the peer is done; no more messages will come.
            MessageError: one message could not be read (too large, not UTF-8); the next one may be fine.
        """
        ...

    async def aclose(self) -> None:
        """Release the transport's resources. Calling it twice is harmless."""
        ...
