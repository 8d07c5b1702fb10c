"""What a client speaks over, opened for as long as it is connected: a transport it opens itself (a server process, an
HTTP endpoint), any transport given, or a toolkit server in memory."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.abc

from toolkit._transports.base import Transport
from toolkit._transports.memory import MemoryTransport

if TYPE_CHECKING:
    from toolkit._engine.registry import AnyLifespan

__all__ = ["OpenedTransport", "Servable", "open_target"]


class Servable(Protocol):
    """What `Client(server)` uses of a toolkit [`Server`][toolkit.Server] in memory: its lifespan and one connection.

    A protocol, not the class: the client sits below the server facade, which mounts other servers through it
    (`Server.mount`)."""

    def running(self, *, lifespan: AnyLifespan | None = None) -> AbstractAsyncContextManager[Any]: ...

    async def serve(self, transport: Transport) -> None: ...


async def open_target(
    target: Servable | Transport, lifespan: AnyLifespan | None, stack: AsyncExitStack
) -> tuple[Transport, anyio.abc.TaskGroup]:
    """The transport to speak to `target` over, and the task group the client reads in, both left by `stack`.

    Raises:
        TypeError: a `lifespan` for a target that is not a toolkit server.
    """
    if isinstance(target, Transport):
        if lifespan is not None:
            raise TypeError("lifespan= replaces the lifespan of a toolkit Server; a server elsewhere runs its own")
        tg = await stack.enter_async_context(anyio.create_task_group())
        # The transport is closed before the tasks stop: until then the client reads (a process's last words and
        # its exit status; a server blocked writing to its stdout never exits).
        stack.callback(tg.cancel_scope.cancel)
        if isinstance(target, AbstractAsyncContextManager):
            await stack.enter_async_context(target)
        else:
            stack.push_async_callback(target.aclose)
        return target, tg
    # A toolkit Server, in memory: its lifespan is entered here, in the task that opens the client, so that the
    # same task leaves it; the server is stopped at once on exit (no grace for calls nobody waits for).
    await stack.enter_async_context(target.running(lifespan=lifespan))
    tg = await stack.enter_async_context(anyio.create_task_group())
    transport, theirs = MemoryTransport.pair()
    tg.start_soon(target.serve, theirs)
    stack.push_async_callback(transport.aclose)
    stack.callback(tg.cancel_scope.cancel)
    return transport, tg


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
