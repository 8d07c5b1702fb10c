"""A transport the client opens itself, for as long as it is connected: a server process, an HTTP endpoint."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from types import TracebackType

import anyio

from toolkit._transports.base import Transport

__all__ = ["OpenedTransport"]


class OpenedTransport:
    """A [`Transport`][toolkit.Transport] that exists inside `async with`: entering opens it, leaving closes it.

    `Client.stdio` starts a server process this way, and `Client.http` connects to an endpoint: `Client(transport)`
    enters a transport that is an async context manager, so each `async with client` opens a fresh one, and the
    client reads until it is closed (a process's last words, its exit status).

    Args:
        open: Makes the context manager that opens the connection and gives the transport to use.
        always_answers: Every request gets an answer on this wire (HTTP), so a slow answer is waited for; on a pipe
            a server may ignore a request it does not know, and silence means an older server.
    """

    def __init__(
        self, open: Callable[[], AbstractAsyncContextManager[Transport]], *, always_answers: bool = False
    ) -> None:
        self._open = open
        self.always_answers = always_answers
        self._stack: AsyncExitStack | None = None
        self._opened: Transport | None = None

    async def __aenter__(self) -> OpenedTransport:
        if self._stack is not None:
            raise RuntimeError("the transport is already open")
        async with AsyncExitStack() as stack:
            self._opened = await stack.enter_async_context(self._open())
            self._stack = stack.pop_all()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def send(self, message: str, /) -> None:
        if self._opened is None:
            raise anyio.ClosedResourceError
        await self._opened.send(message)

    async def receive(self) -> str:
        if self._opened is None:
            raise anyio.EndOfStream
        return await self._opened.receive()

    async def aclose(self) -> None:
        """Close what `async with` opened (stop the process, end the HTTP session); harmless when not open."""
        stack, self._stack = self._stack, None
        try:
            if stack is not None:
                await stack.aclose()
        finally:
            self._opened = None
