"""The handlers of the requests a server answers from its registry alone, whatever connection they came on:
`tools/call` (the pipeline, `pipeline.py`), `tools/list` (with tool search, its pinned tools and the search's two),
`server/discover`, MCP Apps' `resources/list` and `resources/read`, and the task methods.

Each is `handler(incoming)` (`pipeline.Incoming`). The connection adds the few that change or read its own state
(`initialize`, `logging/setLevel`, `ping`, `subscriptions/listen`) and routes each request to the
table of its era (`eras.py`).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from toolkit._definition.ui import speaks_apps

from . import methods
from .eras import Stamp, stamps
from .pipeline import Incoming, ToolCalls
from .visibility import filtered_payloads, shown_tools, tools_request, visibility

if TYPE_CHECKING:
    from .registry import Registry

__all__ = ["Handler", "RegistryHandlers"]

Handler = Callable[[Incoming], Awaitable[Any]]


class RegistryHandlers:
    """The registry's answers to the requests that need no connection state, as a method table (`table`)."""

    __slots__ = ("_stamps", "calls", "server")

    def __init__(self, server: Registry) -> None:
        self.server = server
        self.calls = ToolCalls(server)
        self._stamps = stamps(server.server_info)  # what each era's results carry of the server

    def table(self) -> dict[str, Handler]:
        """Each method's handler (with tool search on, `tools/list` lists through the search)."""
        return {
            "tools/call": self.calls.answer,
            "tools/list": self._searched_list if self.server.search is not None else self._tools_list,
            "server/discover": self._discover,
            "resources/list": self._resources_list,
            "resources/read": self._resources_read,
            "tasks/get": self._tasks_get,
            "tasks/update": self._tasks_update,
            "tasks/cancel": self._tasks_cancel,
            "tasks/list": self._tasks_list,
            "tasks/result": self._tasks_result,
        }

    async def _discover(self, incoming: Incoming) -> dict[str, Any]:
        return methods.discover(self.server, self._stamp(incoming), incoming.state)

    async def _tools_list(self, incoming: Incoming) -> str:
        server, state, params, stamp = self.server, incoming.state, incoming.params, self._stamp(incoming)
        apps = speaks_apps(state.client_capabilities)  # app-only tools are listed to MCP Apps hosts only
        if server.tool_filter is None:
            payloads = server.tool_payloads(state.version, apps)
            return methods.tools_page(server, params, state.version, stamp, payloads)
        request = tools_request("tools/list", incoming.id, params, state)
        shown = filtered_payloads(server, request, state.version, apps)
        return methods.tools_page(server, params, state.version, stamp, shown)

    async def _searched_list(self, incoming: Incoming) -> str:
        """`tools/list` with tool search on: the pinned tools this caller may see, and the search's two."""
        search, state, stamp = self.server.search, incoming.state, self._stamp(incoming)
        assert search is not None
        shown_to = visibility(self.server, "tools/list", incoming.id, state)
        listed = search.listed(incoming.params, state.version, shown_to)
        return methods.tools_page(self.server, incoming.params, state.version, stamp, listed)

    async def _resources_list(self, incoming: Incoming) -> str:
        shown = self._shown_pages("resources/list", incoming)
        return methods.resources_page(self.server, incoming.params, self._stamp(incoming), shown)

    async def _resources_read(self, incoming: Incoming) -> dict[str, Any]:
        shown = self._shown_pages("resources/read", incoming)
        return methods.read_resource(self.server, incoming.params, self._stamp(incoming), shown)

    def _shown_pages(self, method: str, incoming: Incoming) -> set[str] | None:
        """The pages of the tools a `tool_filter` shows this caller (None without a filter: every page): a hidden
        tool's page is as unknown to the caller as the tool."""
        if self.server.tool_filter is None:
            return None
        state = incoming.state
        request = tools_request(method, incoming.id, incoming.params, state)
        shown = shown_tools(self.server, request, speaks_apps(state.client_capabilities))
        return {tool.ui.uri for tool in shown.values() if tool.ui is not None}

    async def _tasks_get(self, incoming: Incoming) -> dict[str, Any]:
        state = incoming.state
        return self._completed(await self.server.tasks.get(incoming.params, state), incoming)

    async def _tasks_update(self, incoming: Incoming) -> dict[str, Any]:
        state = incoming.state
        return self._completed(await self.server.tasks.update(incoming.params, state), incoming)

    async def _tasks_cancel(self, incoming: Incoming) -> dict[str, Any]:
        state = incoming.state
        return self._completed(await self.server.tasks.cancel(incoming.params, state), incoming)

    def _completed(self, result: dict[str, Any], incoming: Incoming) -> dict[str, Any]:
        """A result as its era sends it (2026-07-28: `resultType` and the server's `serverInfo` in its `_meta`)."""
        return self._stamp(incoming).complete(result)

    def _stamp(self, incoming: Incoming) -> Stamp:
        """What the request's era's results carry of this server (each request here is in an era's method table)."""
        assert incoming.era is not None
        return self._stamps[incoming.era]

    async def _tasks_list(self, incoming: Incoming) -> dict[str, Any]:
        return await self.server.tasks.list(incoming.params, incoming.state)

    async def _tasks_result(self, incoming: Incoming) -> dict[str, Any]:
        # The task's questions are asked here, as requests related to this one (2025-11-25 tasks: input_required).
        ask = functools.partial(incoming.outlet.connection.request, related=incoming.id)
        return await self.server.tasks.result(incoming.params, incoming.state, ask)
