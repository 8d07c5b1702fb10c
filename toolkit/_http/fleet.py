"""What the workers of one HTTP app tell each other through its backend (`http_app(backend=...)` or
`Server(backend=...)`), so that any worker serves any request of a 2025-11-25 session behind a round-robin balancer:

- a session `DELETE` ended, and its log level (`logging/setLevel`): facts in the backend, read in one round trip
  with each request of the session (`facts`);
- the answer to a question a tool asked: the question's id starts with the asking worker's name (`AskTag`), and the
  worker that gets the answer sends it there (`answer`); when that worker is gone the client hears it at once;
- `notifications/cancelled` for a call this worker does not run: to every worker, the one running it acts;
- `tools/list_changed` after a run-time change on one worker: to every worker's GET streams and listeners.

Nothing here runs without a backend: the default app keeps all of it in its process, at no cost.
"""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectSendStream

from toolkit._backend.base import UNAVAILABLE, Backend, BackendError
from toolkit._protocol.jsonrpc import INTERNAL_ERROR

from .response import JSON, RETRY_LATER, Send, error_body, plain
from .sessions import UNSET, SessionId, SessionRecord, Sessions

if TYPE_CHECKING:
    from toolkit._engine.registry import Registry

__all__ = ["Fleet", "unavailable"]

logger = logging.getLogger("toolkit.http")

_QUEUED = 256  # tool-list changes waiting to be told (more in a burst are one change anyway)


async def unavailable(send: Send, request_id: Any, error: BackendError) -> None:
    """The request needed the shared backend, which did not answer: `503`, said plainly (never a hang, never a
    session served that may have ended); the client may try again."""
    body = error_body(request_id, INTERNAL_ERROR, UNAVAILABLE, str(error))
    await plain(send, 503, body, [JSON, RETRY_LATER])


class Fleet:
    """This worker's side of the backend: what it asks, what it tells, and what it hears."""

    __slots__ = ("_changes", "_server", "_sessions", "backend")

    def __init__(self, backend: Backend, server: Registry, sessions: Sessions[Any]) -> None:
        self.backend = backend
        self._server = server
        self._sessions = sessions
        self._changes: MemoryObjectSendStream[None] | None = None  # while running: tool-list changes to tell

    @property
    def worker(self) -> str:
        return self.backend.worker

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Start the backend and listen, until cancelled (in the app's lifespan)."""
        await self.backend.start()
        changes, told = anyio.create_memory_object_stream[None](_QUEUED)
        try:
            with changes, told:
                async with anyio.create_task_group() as tg:
                    await tg.start(self.backend.listen, self._hear)
                    tg.start_soon(self._tell_changes, told)
                    self._changes = changes
                    task_status.started()
        finally:
            self._changes = None
            with anyio.CancelScope(shield=True):
                await self.backend.stop()

    # -- sessions -------------------------------------------------------------------------------------

    async def facts(self, session: SessionId) -> tuple[bool, Any]:
        """Whether `session` was ended (on any worker), and its log level (`UNSET`: never set)."""
        ended, level = await self.backend.get("ended/" + session.nonce, "level/" + session.nonce)
        return ended is not None, json.loads(level) if level is not None else UNSET

    async def end(self, session: SessionId) -> None:
        """`DELETE`: ended for every worker's next request, and what runs of it on any worker stops now."""
        await self.backend.put("ended/" + session.nonce, "1", _ttl(session))
        await self.backend.broadcast(_pack("ended", session.nonce, None))

    async def set_level(self, nonce: str, level: Any) -> None:
        await self.backend.put("level/" + nonce, json.dumps(level), self._sessions.ttl)

    # -- SSE events ----------------------------------------------------------------------------------

    async def keep(self, stream: str, seq: int, frame: bytes, last: bool) -> None:
        """Keep a POST stream's event for a resumption on another worker (`sse.Mirror`). A backend that fails loses
        only that: the stream goes on here, and a resumption elsewhere says it does not have it."""
        try:
            await self.backend.append(stream, seq, frame, last=last)
        except BackendError as exc:
            logger.warning("could not keep an SSE event for other workers: %s", exc)

    # -- messages -------------------------------------------------------------------------------------

    async def answer(self, worker: str, nonce: str, message: dict[str, Any]) -> bool:
        """Send a client's answer to the worker whose call asked; False when that worker is gone."""
        return await self.backend.send(worker, _pack("answer", nonce, message))

    async def alive(self, worker: str) -> bool:
        """Whether `worker` still listens (a message it ignores: no session has the key "")."""
        return await self.backend.send(worker, _pack("ping", "", None))

    async def cancel(self, nonce: str, message: dict[str, Any]) -> None:
        """A `notifications/cancelled` for a call this worker does not run: to the worker that does."""
        await self.backend.broadcast(_pack("cancel", nonce, message))

    def tools_changed(self) -> None:
        """This worker's tool list changed (`Registry.set_tools`, perhaps on a worker thread): told to the others."""
        if self._changes is None:  # not running (no lifespan): nobody listens here either
            return
        try:
            self._changes.send_nowait(None)
        except anyio.WouldBlock:  # changes already waiting to be told: this one is among them
            pass
        except anyio.ClosedResourceError:  # stopping
            pass

    async def _tell_changes(self, told: anyio.abc.ObjectReceiveStream[None]) -> None:
        async for _ in told:
            try:
                await self.backend.broadcast(_pack("changed", self.worker, None))
            except BackendError:
                logger.warning("could not tell the other workers that the tool list changed", exc_info=True)

    async def _hear(self, data: bytes) -> None:
        """A message from another worker (or this one's broadcast). Nothing in it stops the listening: what cannot
        be read or acted on is logged and skipped."""
        try:
            kind, key, message = json.loads(data)
            if not isinstance(key, str):
                raise TypeError("not a key")
        except (ValueError, TypeError):
            logger.warning("skipped a malformed message from the backend: %r", data[:200])
            return
        try:
            self._act(kind, key, message)
        except Exception:
            logger.exception("could not act on a message from another worker: %r", data[:200])

    def _act(self, kind: str, key: str, message: Any) -> None:
        """Act on one message from another worker, by its kind: the tool list changed, a session ended, or (for a
        session this worker knows) an answer to one of its questions or a cancellation of one of its calls."""
        if kind == "changed":
            self._tools_changed(key)
            return
        if kind == "ended":
            self._sessions.forget(key)
            return
        record = self._sessions.known(key)
        if record is None or not isinstance(message, dict):
            return
        if kind == "answer":
            _deliver(record, message)
        elif kind == "cancel":
            _cancel(record, message)

    def _tools_changed(self, worker: str) -> None:
        """Another worker's tool list changed: this one's connections tell their clients (the worker that changed it
        told its own)."""
        if worker == self.worker:
            return
        for connection in list(self._server.connections):
            connection.tools_changed()


def _deliver(record: SessionRecord[Any], message: dict[str, Any]) -> None:
    """A client's answer, sent on by the worker that got it, to the call here that asked."""
    ask = message.get("id")
    if not isinstance(ask, str):
        return
    exchange = record.asks.pop(ask, None)
    if exchange is not None:
        exchange.deliver(message)


def _cancel(record: SessionRecord[Any], message: dict[str, Any]) -> None:
    """A `notifications/cancelled`, sent on by the worker that got it, to the call here it names."""
    request_id = (message.get("params") or {}).get("requestId")
    if not isinstance(request_id, (str, int)):
        return
    call = record.calls.get(request_id)
    if call is not None:
        call.end_input(message)


def _pack(kind: str, key: str, message: dict[str, Any] | None) -> bytes:
    return json.dumps([kind, key, message], separators=(",", ":")).encode()


def _ttl(session: SessionId) -> float:
    return max(1.0, session.expires - time.time() + 1)
