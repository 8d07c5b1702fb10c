"""Which tools a caller sees: all of them, unless the server has a `tool_filter` (`Server(tool_filter=...)`) or
the caller is no MCP Apps host (an app-only tool is callable by such hosts only, apps.mdx "Visibility"). A tool
hidden from a caller is unknown to it: not listed, not callable, its page not readable."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolkit._definition.middleware import Request
from toolkit._definition.ui import speaks_apps
from toolkit._identity import current_identity

if TYPE_CHECKING:
    from toolkit._definition.tool import Tool

    from .registry import Registry
    from .search import Shown
    from .session import SessionState

__all__ = ["filtered_payloads", "sees", "shown", "shown_tools", "tools_request", "visibility"]


def tools_request(method: str, request_id: Any, params: dict[str, Any], state: SessionState) -> Request:
    """The request as `tool_filter` sees it (`tools/list`, or a `tools/call` whose tool is looked up)."""
    return Request(method, dict(params), state.version, request_id, current_identity.get())


def shown(server: Registry, tool: Tool[Any, Any], request: Request) -> bool:
    """Whether the caller of `request` may see `tool` (always, without a `tool_filter`)."""
    return server.tool_filter is None or bool(server.tool_filter(tool.definition, request))


def shown_tools(server: Registry, request: Request, apps: bool = True) -> Mapping[str, Tool[Any, Any]]:
    """The tools the caller of `request` may see, in order (`apps` False: a client without MCP Apps, which sees no
    app-only tool)."""
    if server.tool_filter is None and apps:
        return server.tools
    return {name: tool for name, tool in server.tools.items() if sees(server, tool, request, apps)}


def sees(server: Registry, tool: Tool[Any, Any], request: Request, apps: bool) -> bool:
    """Whether a caller (an MCP Apps host or not: `apps`) may see `tool`: the one rule of listing, calling and
    searching."""
    if tool.app_only and not apps:
        return False
    return shown(server, tool, request)


def visibility(server: Registry, method: str, request_id: Any, state: SessionState | None) -> Shown:
    """Whether the caller of a request may see a tool, given the request's params (what `Search` takes): by the
    `tool_filter`, and no app-only tool for a client that is no MCP Apps host."""
    if state is None:
        return _everyone
    apps = speaks_apps(state.client_capabilities)
    if server.tool_filter is None:
        return _everyone if apps else _no_app_only
    session = state

    def visible(tool: Tool[Any, Any], params: dict[str, Any]) -> bool:
        return sees(server, tool, tools_request(method, request_id, params, session), apps)

    return visible


def _everyone(tool: Tool[Any, Any], params: dict[str, Any]) -> bool:
    return True


def _no_app_only(tool: Tool[Any, Any], params: dict[str, Any]) -> bool:
    return not tool.app_only


def filtered_payloads(server: Registry, request: Request, version: str, apps: bool = True) -> list[str]:
    """The prepared JSON of the tools the caller may see (`tools/list` with a `tool_filter`)."""
    payloads = server.tool_payloads(version)
    tools = server.tools.values()
    return [payload for tool, payload in zip(tools, payloads, strict=True) if sees(server, tool, request, apps)]
