"""Middleware: what an around-hook is given (`Request`), what it calls next (`CallNext`), and chaining hooks.

A middleware is an async function `(request, call_next) -> result`: it may read or change the request (a
`tools/call`'s arguments), answer without calling `call_next` (a result, a `ToolError`, a `ProtocolError`), or wrap
what `call_next` returns. A server runs its own around every request, and a tool's (`@tool(middleware=[...])`) around
that tool's calls (docs/middleware.md). The engine (`toolkit/_engine/middleware.py`) decides where they run; this
module knows nothing of servers, so that `@tool` can take middleware.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolkit._call.context import Context
from toolkit._errors import ToolError
from toolkit._identity import Identity
from toolkit._protocol.types import ToolDefinition

__all__ = ["CallNext", "Middleware", "Request", "ToolFilter", "chain", "middleware_problems"]


@dataclass
class Request:
    """One request as middleware sees it: the method, its params, the protocol revision, who calls, and for a
    `tools/call` the tool, its arguments and its Context.

    Pass `dataclasses.replace(request, arguments=...)` on (or set `request.arguments`) to call the tool with other
    arguments. Build one yourself to test a middleware alone (`Request("tools/call", arguments={"a": 1})`).
    """

    method: str
    """The JSON-RPC method: `"tools/call"`, `"tools/list"`, `"initialize"`, `"ping"`, ..."""
    params: dict[str, Any] = field(default_factory=dict)
    """The request's params, as the client sent them (to read: a tool's arguments are changed through `arguments`)."""
    version: str | None = None
    """The protocol revision it is served in (`"2025-11-25"`, `"2026-07-28"`, ...); None for `initialize`."""
    request_id: int | str = 0
    """The JSON-RPC id of the request."""
    identity: Identity | None = None
    """Who calls, as the HTTP app's token verifier established it (None without `auth=`, on stdio, in memory)."""
    tool: ToolDefinition | None = None
    """`tools/call`: the `ToolDefinition` of the tool called (its name: `request.tool.name`; `Question.tool` is a
    name). None for other methods; for a `tools/call` in server-wide `middleware`, None when the name is unknown, or
    hidden from this caller by `tool_filter`."""
    arguments: dict[str, Any] | None = None
    """`tools/call`: the arguments the tool is called with (replace them to call it with others); else None."""
    context: Context[Any] | None = None
    """`tools/call` in tool middleware: the call's Context when the tool takes one (or asks, `confirm=`), else None."""


CallNext = Callable[[Request], Awaitable[dict[str, Any]]]
"""The rest of the chain: the next middleware, or the method itself (the tool's call, for tool middleware)."""

Middleware = Callable[[Request, CallNext], Awaitable[dict[str, Any]]]
"""An around-hook: `async def hook(request: Request, call_next: CallNext) -> dict[str, Any]`.

It returns the request's result as a JSON object (for a `tools/call` in tool middleware, the `CallToolResult`:
`{"content": [...], "isError": ...}`). Raising `ToolError` answers a `tools/call` with a tool error (`isError`);
raising `ProtocolError` answers with that JSON-RPC error."""


ToolFilter = Callable[[ToolDefinition, Request], bool]
"""`Server(tool_filter=...)`: whether the caller of `request` may see the tool (in `tools/list`) and call it."""


def chain(hooks: Sequence[Middleware], last: CallNext, as_tool_error: bool) -> CallNext:
    """`hooks` around `last`, the first outermost. `as_tool_error`: a `ToolError` a hook raises is that hook's
    result, a tool error (`tools/call`); else it propagates (an internal error, as from any method)."""
    step = last
    for hook in reversed(hooks):
        step = functools.partial(_tool_step if as_tool_error else _step, hook, step)
    return step


async def _step(hook: Middleware, call_next: CallNext, request: Request) -> dict[str, Any]:
    return await hook(request, call_next)


async def _tool_step(hook: Middleware, call_next: CallNext, request: Request) -> dict[str, Any]:
    try:
        return await hook(request, call_next)
    except ToolError as exc:
        return {"content": [{"type": "text", "text": str(exc) or "the call was refused"}], "isError": True}


def middleware_problems(hooks: object, option: str = "middleware") -> list[str]:
    """What is wrong with a list of middleware, checked when it is given (a tool, a server)."""
    if hooks is None:
        return []
    if not isinstance(hooks, (list, tuple)):
        return [f"{option} must be a list of async functions (request, call_next), not {type(hooks).__name__}"]
    return [problem for index, hook in enumerate(hooks) if (problem := _hook_problem(hook, f"{option}[{index}]"))]


def _hook_problem(hook: object, where: str) -> str | None:
    """What is wrong with one hook: not callable, or not async (awaited per call, a plain function would fail every
    call with a TypeError). A callable object whose `__call__` is async (like `AuditLog`) is fine."""
    if not callable(hook):
        return f"{where} is not callable: {hook!r}"
    call = getattr(hook, "__call__", None)  # noqa: B004 - an object whose __call__ is async
    if not (inspect.iscoroutinefunction(hook) or inspect.iscoroutinefunction(call)):
        name = getattr(hook, "__qualname__", None) or repr(hook)
        return f"{where} ({name}) is not async: a middleware is an `async def` (or an object whose __call__ is)"
    return None
