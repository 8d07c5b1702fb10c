"""What a client hears of the server's tool list changing: `notifications/tools/list_changed`, and in 2026-07-28 the
`subscriptions/listen` stream that carries it (server/tools), held open while the client is connected."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

import anyio
import anyio.abc

from toolkit._errors import ConnectionClosedError, MessageError, ProtocolError

from .progress import maybe_await

__all__ = ["ToolChanges"]

logger = logging.getLogger("toolkit.client")


class _Request(Protocol):
    def __call__(self, method: str, params: dict[str, Any], *, stream: bool = False) -> Awaitable[Any]: ...


class ToolChanges:
    """The client's side of a changing tool list.

    Args:
        on_changed: The client's `on_tools_changed` option: called each time the server says its list changed.
        forget: Forgets what the client learned of the tools (their output schemas), to list them again when needed.
    """

    def __init__(self, on_changed: Callable[[], Awaitable[None] | None] | None, forget: Callable[[], None]) -> None:
        self._on_changed = on_changed
        self._forget = forget
        self._acknowledged: anyio.Event | None = None

    @property
    def heard(self) -> bool:
        """Whether anyone listens for changes (`on_tools_changed` was given): in 2026-07-28 a stream is opened then."""
        return self._on_changed is not None

    async def changed(self, params: dict[str, Any]) -> None:
        """`notifications/tools/list_changed`: forget the tools, and tell `on_tools_changed`."""
        self._forget()
        if self._on_changed is not None:
            await maybe_await(self._on_changed())

    async def acknowledged(self, params: dict[str, Any]) -> None:
        """`notifications/subscriptions/acknowledged`: the stream is open."""
        if self._acknowledged is not None:
            self._acknowledged.set()

    async def listen(
        self,
        request: _Request,
        server_capabilities: Mapping[str, Any],
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """2026-07-28: hold a `subscriptions/listen` stream open when the server's tools say `listChanged`; `started`
        once the server acknowledged it (or refused it)."""
        tools = server_capabilities.get("tools") if isinstance(server_capabilities, Mapping) else None
        if not isinstance(tools, dict) or not tools.get("listChanged"):
            task_status.started()
            return
        acknowledged = self._acknowledged = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._hold, request, acknowledged)
            await acknowledged.wait()
            task_status.started()

    async def _hold(self, request: _Request, acknowledged: anyio.Event) -> None:
        """The stream: open until the client closes (leaving `async with` cancels it, which sends
        notifications/cancelled) or the server ends it with notifications/cancelled (at the end of its input)."""
        try:
            await request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, stream=True)
        except ConnectionClosedError:
            pass  # the calls waiting, and every later one, say so
        except (ProtocolError, MessageError) as exc:
            logger.warning("the server refused subscriptions/listen: %s", exc)
        finally:
            acknowledged.set()
