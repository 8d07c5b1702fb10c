"""The JSON-RPC side of a client: send requests, match responses by id, hand notifications on."""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from ._jsonrpc import ProtocolError, decode, encode, is_valid_id
from ._transport import MessageError, Transport

__all__ = ["Peer"]

_CANCEL_NOTICE_SECONDS = 1.0

logger = logging.getLogger("toolkit.client")

OnNotification = Callable[[str, dict[str, Any]], Awaitable[None]]


class _Pending:
    __slots__ = ("done", "error", "result")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.result: Any = None
        self.error: dict[str, Any] | None = None


class Peer:
    """Requests out, responses matched back to them, notifications to `on_notification`.

    Made inside the event loop that uses it (anyio primitives bind to the loop that first uses them); `run()`
    must be running in a task for requests to complete.
    """

    def __init__(self, transport: Transport, on_notification: OnNotification) -> None:
        self.transport = transport
        self._on_notification = on_notification
        self._lock = anyio.Lock(fast_acquire=True)
        self._ids = itertools.count(1)
        self._pending: dict[Any, _Pending] = {}

    def next_id(self) -> int:
        return next(self._ids)

    async def send(self, message: dict[str, Any]) -> None:
        async with self._lock:  # requests come from many tasks; a transport's send is never entered twice at once
            await self.transport.send(encode(message))

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """Send a request and wait for its result.

        Leaving early (cancellation, a timeout around the call) sends `notifications/cancelled` for it.

        Raises:
            ProtocolError: the peer answered with an error, or the connection closed first.
        """
        request_id = next(self._ids)
        pending = self._pending[request_id] = _Pending()
        answered = False
        try:
            await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            await pending.done.wait()
            answered = True
        finally:
            if not answered:
                self._pending.pop(request_id, None)
                # Shielded, so that the notice goes out although the caller is being cancelled; bounded, so that a
                # peer which stopped reading cannot hold a timed-out caller forever (the notice is advisory).
                with anyio.move_on_after(_CANCEL_NOTICE_SECONDS, shield=True):
                    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                        await self.notify("notifications/cancelled", {"requestId": request_id})
        if pending.error is not None:
            error = pending.error
            raise ProtocolError(int(error.get("code", -32603)), str(error.get("message", "")), error.get("data"))
        return pending.result

    async def run(self) -> None:
        """Read until the connection closes, then fail every request still waiting."""
        while True:
            try:
                text = await self.transport.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                break
            except MessageError as exc:
                logger.warning("skipped a message from the server: %s", exc)
                continue
            try:
                message = decode(text)
            except ValueError:
                logger.warning("the server sent something that is not JSON: %.200s", text)
                continue
            for item in message if isinstance(message, list) else [message]:
                if isinstance(item, dict):
                    await self._on_message(item)
        for pending in self._pending.values():
            pending.error = {"code": -32000, "message": "the connection closed"}
            pending.done.set()

    async def _on_message(self, message: dict[str, Any]) -> None:
        if "method" not in message:
            request_id = message.get("id")
            pending = self._pending.pop(request_id, None) if is_valid_id(request_id) else None
            if pending is not None:
                pending.result = message.get("result")
                pending.error = message.get("error") if "error" in message else None
                pending.done.set()
            return
        if "id" in message:  # a request from the server: toolkit's client offers no client features
            error = {"code": -32601, "message": "Method not found"}
            await self.send({"jsonrpc": "2.0", "id": message["id"], "error": error})
            return
        params = message.get("params")
        await self._on_notification(str(message["method"]), params if isinstance(params, dict) else {})
