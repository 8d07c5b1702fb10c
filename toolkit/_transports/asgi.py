"""An httpx transport that runs an ASGI app in process and streams its responses.

httpx's own `ASGITransport` collects the whole body before it returns (it waits for `more_body=False`), so an
open SSE stream never reaches the client and the client cannot close it. This one runs the app in a task of its
own task group, hands each body chunk over as it is sent (one chunk waiting at most: a slow reader slows the app,
as over a socket) and tells the app `http.disconnect` when the client closes the response.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from types import TracebackType
from typing import Any

import anyio
import anyio.abc
import httpx

__all__ = ["StreamingASGITransport"]

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]


class _Body(httpx.AsyncByteStream):
    def __init__(self, chunks: anyio.abc.ObjectReceiveStream[bytes], gone: anyio.Event) -> None:
        self._chunks = chunks
        self._gone = gone

    # An iterator, not an async generator: a response left early (a client closing an SSE stream) then leaves no
    # unfinished generator for the event loop to collect (trio warns about those).
    def __aiter__(self) -> _Body:
        return self

    async def __anext__(self) -> bytes:
        try:
            return await self._chunks.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self._gone.set()
        await self._chunks.aclose()


class StreamingASGITransport(httpx.AsyncBaseTransport):
    """Serve httpx requests with an ASGI app in this process, streaming each response as the app writes it.

    Use it as the transport of an `httpx.AsyncClient` (which enters and leaves it): the app's tasks live in the
    transport's task group, so the client must be used inside `async with`. Works on asyncio and trio.

    Args:
        app: The ASGI application.
        client: The `(host, port)` the app sees as the client's address.
    """

    def __init__(self, app: Any, *, client: tuple[str, int] = ("127.0.0.1", 50000)) -> None:
        self.app: ASGIApp = app
        self.client = client
        self._tg: anyio.abc.TaskGroup | None = None

    async def __aenter__(self) -> StreamingASGITransport:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc: BaseException | None = None,
        tb: TracebackType | None = None,
    ) -> None:
        tg, self._tg = self._tg, None
        if tg is not None:
            tg.cancel_scope.cancel()
            # Not the block's exception: the task group would wrap it in an ExceptionGroup (see Client.__aexit__).
            await tg.__aexit__(None, None, None)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._tg is None:
            raise RuntimeError("use the httpx.AsyncClient of a StreamingASGITransport inside `async with`")
        call = _AsgiCall(await request.aread())
        self._tg.start_soon(call.run, self.app, _scope(request, self.client))
        try:
            await call.started.wait()
        except BaseException:  # the caller gave up before the response began: the client went away
            call.gone.set()
            call.chunks.close()
            raise
        return httpx.Response(call.status, headers=call.headers, stream=_Body(call.chunks, call.gone))


def _scope(request: httpx.Request, client: Any) -> dict[str, Any]:
    """The ASGI HTTP scope of an httpx request."""
    url = request.url
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": url.scheme,
        "path": url.path,
        "raw_path": url.raw_path.split(b"?", 1)[0],
        "query_string": url.query,
        "root_path": "",
        "headers": [(name.lower(), value) for name, value in request.headers.raw],
        "client": client,
        "server": (url.host, url.port or (443 if url.scheme == "https" else 80)),
    }


class _AsgiCall:
    """One request's run of the app: its `receive` and `send`, and the response's status, headers and body."""

    def __init__(self, body: bytes) -> None:
        self.body: bytes | None = body  # None once the app has read it
        self.send_chunk, self.chunks = anyio.create_memory_object_stream[bytes](0)
        self.started = anyio.Event()
        self.gone = anyio.Event()
        self.status = 500
        self.headers: list[tuple[bytes, bytes]] = []

    async def receive(self) -> dict[str, Any]:
        if self.body is not None:
            body, self.body = self.body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.headers = list(message.get("headers", []))
            self.started.set()
        elif message["type"] == "http.response.body" and not self.gone.is_set():
            data = message.get("body", b"")
            try:
                if data:
                    await self.send_chunk.send(data)
                if not message.get("more_body", False):
                    await self.send_chunk.aclose()
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass  # the client closed the response: like a socket server, drop what follows

    async def run(self, app: Any, scope: dict[str, Any]) -> None:
        try:
            await app(scope, self.receive, self.send)
        finally:
            await self.send_chunk.aclose()
            self.started.set()  # an app that never started its response: 500 without headers
            self.gone.set()  # the app is done: a watcher of its own disconnect never waits past the response
