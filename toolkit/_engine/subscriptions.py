"""The `subscriptions/listen` streams of one connection (2026-07-28): what a client listens for (tool list changes,
the tasks extension's task statuses), each stream until the client cancels its request or its input ends."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import anyio

from toolkit._errors import ProtocolError
from toolkit._protocol.jsonrpc import INVALID_PARAMS
from toolkit._protocol.meta import SUBSCRIPTION_KEY

if TYPE_CHECKING:
    from .pipeline import Incoming
    from .tasks import Tasks

__all__ = ["Subscriptions"]


class Subscriptions:
    """A connection's subscriptions: `listeners` (the ids of the requests that listen for tool list changes) and
    `closing` (set at the end of input: every stream then ends, telling its client so)."""

    __slots__ = ("_tasks", "closing", "listeners")

    def __init__(self, tasks: Tasks) -> None:
        self._tasks = tasks
        self.listeners: set[Any] = set()
        self.closing = anyio.Event()

    async def listen(self, incoming: Incoming) -> None:
        """Serve one `subscriptions/listen` request: acknowledge what is agreed, then stream until the client
        cancels it or its input ends (`closing`)."""
        request_id, state = incoming.id, incoming.state
        notify = functools.partial(incoming.outlet.notify, related=request_id)
        wanted = incoming.params.get("notifications")
        if not isinstance(wanted, dict):
            raise ProtocolError(INVALID_PARAMS, "Invalid params: notifications must be an object")
        agreed: dict[str, Any] = {"toolsListChanged": True} if wanted.get("toolsListChanged") is True else {}
        if "taskIds" in wanted:  # the tasks extension: the caller's tasks among those named (-32021 without it)
            agreed["taskIds"] = await self._tasks.watchable(wanted["taskIds"], state)
        meta = {SUBSCRIPTION_KEY: request_id}
        try:
            # Registered before the acknowledgement is written, so that no change between the two is missed; the
            # acknowledgement still goes first, as it enters the (FIFO) outbox before any change notice can.
            if agreed.get("toolsListChanged"):
                self.listeners.add(request_id)
            acknowledged = {"notifications": agreed, "_meta": meta}
            await notify("notifications/subscriptions/acknowledged", acknowledged)
            # The stream stays open until the client cancels the request (this task is then cancelled) or its
            # input ends. Of the two endings the spec documents, a `SubscriptionsListenResult` or
            # `notifications/cancelled` for the listen request's id, end of input gets the notification: on stdio
            # the schema gives it to servers for exactly this (CancelledNotification), and the stream did not wind
            # down, it was cut short because the client went away (docs/protocol.md).
            async with anyio.create_task_group() as tg:
                if agreed.get("taskIds"):
                    tasks = functools.partial(notify, "notifications/tasks")
                    tg.start_soon(self._tasks.watch, agreed["taskIds"], meta, tasks)
                await self.closing.wait()
                tg.cancel_scope.cancel()
        finally:
            self.listeners.discard(request_id)
        await notify(
            "notifications/cancelled",
            {"requestId": request_id, "reason": "the server's input ended", "_meta": {SUBSCRIPTION_KEY: request_id}},
        )
