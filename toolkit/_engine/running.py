"""Running one tool call, whoever serves it (a connection, a task, HTTP in the request's task): straight to the
tool's own path (`call_tool`) when nothing wraps it, else through the server's `tool_middleware` and the tool's own,
with the timeout and the result size limit innermost.

The decision is one attribute read per call (`Tool.wrapped`, `CallHost.wraps_tools`, both set once), so a server
without tool middleware runs none of this (tests/test_hops.py).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import pydantic

from toolkit._asking.asking import Deadline, call_deadline
from toolkit._definition.middleware import Middleware, Request, chain
from toolkit._definition.tool import CallSettings, call_tool, error_wire
from toolkit._identity import current_identity
from toolkit._protocol.jsonrpc import encode
from toolkit._protocol.revisions import rules_of
from toolkit._protocol.types import CallToolResult

from .eras import ERAS

if TYPE_CHECKING:
    from toolkit._call.context import Context
    from toolkit._definition.tool import Tool

    from .session import SessionState

__all__ = ["CallHost", "CallRequest", "call_settings", "checked_call", "run_call"]

logger = logging.getLogger("toolkit")


class CallHost(Protocol):
    """What running a call reads of its server (the registry): the wrapping options, set once."""

    call_settings: Mapping[str, CallSettings]
    wraps_tools: bool
    tool_middleware: tuple[Middleware, ...]
    tool_timeout: float | None
    max_result_bytes: int | None
    abandoned_calls: int


class CallRequest(Protocol):
    """The request a call answers, as running it reads it: its revision (`state.version`), and, for middleware only
    (`Request`'s fields), its id and params. A served request (`pipeline.Incoming`), or a task's run."""

    @property
    def id(self) -> Any: ...

    @property
    def params(self) -> dict[str, Any]: ...

    @property
    def state(self) -> SessionState: ...


def call_settings(show_error_details: bool, strict_arguments: bool) -> Mapping[str, CallSettings]:
    """How a server runs its tools' calls in each revision it speaks (`CallHost.call_settings`), worked out once."""
    return {
        version: CallSettings(version, show_error_details, strict_arguments) for era in ERAS for version in era.versions
    }


async def run_call(
    host: CallHost,
    tool: Tool[Any, Any],
    arguments: Mapping[str, Any] | None,
    context: Callable[[], Context] | None,
    request: CallRequest,
) -> dict[str, Any]:
    """The wire result of one call of `tool` with `arguments` for `request`'s revision: the tool's own path, or the
    wrapped one when the server or the tool wraps its calls (middleware, a timeout, a result size limit). `context`
    makes the call's Context, called only if the tool takes one."""
    settings = host.call_settings[request.state.version]
    if not (tool.wrapped or host.wraps_tools):
        return await call_tool(tool, arguments, context, settings)
    wrapped = Request(
        "tools/call",
        request.params,
        settings.version,
        request.id,
        current_identity.get(),
        tool.definition,
        dict(arguments) if arguments is not None else None,
        context() if tool.may_ask and context is not None else None,
    )
    return await _wrapped(host, tool, wrapped, settings)


async def _wrapped(host: CallHost, tool: Tool[Any, Any], request: Request, settings: CallSettings) -> dict[str, Any]:
    """One call through the server's `tool_middleware` and the tool's own, the timeout and the result size limit
    innermost (the tool's own, else the server's)."""
    timeout = tool.timeout if tool.timeout is not None else host.tool_timeout
    limit = tool.max_result_bytes if tool.max_result_bytes is not None else host.max_result_bytes

    async def last(request: Request) -> dict[str, Any]:
        call = call_tool(tool, request.arguments, request.context, settings)
        wire = await (call if timeout is None else _timed(host, tool, call, timeout))
        return wire if limit is None else _limited(tool, wire, limit)

    hooks = host.tool_middleware + tool.middleware
    if not hooks:
        return await last(request)
    return checked_call(await chain(hooks, last, as_tool_error=True)(request), request.version)


def checked(result: Any) -> dict[str, Any]:
    """What a middleware returned, if it is a result (a JSON object); a bug of the middleware's otherwise, answered
    with an internal error rather than no answer at all.

    Raises:
        TypeError: it is not a dict.
    """
    if type(result) is not dict:
        raise TypeError(f"a middleware returned {type(result).__name__}, not the result (a dict)")
    return result


def checked_call(result: Any, version: str | None) -> dict[str, Any]:
    """What a middleware returned for a `tools/call`, if it is a `CallToolResult` (or, server-wide in 2026-07-28,
    the round's `InputRequiredResult`, or the `CreateTaskResult` of a call made a task): a copy, which the caller
    may complete with the era's envelope while the middleware keeps its own (a cache's entry) unchanged.

    Raises:
        TypeError: it is not a result (answered with an internal error, logged).
    """
    result = checked(result)
    if not _answers_otherwise(result):
        problem = _call_problem(result, version)
        if problem is not None:
            raise TypeError(f"a middleware returned {problem}, not the result (a CallToolResult)")
    return dict(result)


def _answers_otherwise(result: dict[str, Any]) -> bool:
    """Whether `result` answers a call with something else than its `CallToolResult`: the round's questions, or the
    task the call was made (2026-07-28's `resultType: "task"`, 2025-11-25's `{"task": ...}`)."""
    if result.get("resultType") in ("input_required", "task"):
        return True
    return type(result.get("task")) is dict and "content" not in result


def _call_problem(result: dict[str, Any], version: str | None) -> str | None:
    """What makes `result` no `CallToolResult` of `version`, or None."""
    if type(result.get("content")) is not list:
        return "a dict without a list of content blocks"
    if "isError" in result and type(result["isError"]) is not bool:
        return f"isError {result['isError']!r} (not a bool)"
    structured = result.get("structuredContent")
    if type(structured) not in (dict, type(None)) and not (version and rules_of(version).bare_structured):
        return f"structuredContent of type {type(structured).__name__} (not an object)"
    try:
        CallToolResult.model_validate(result, strict=True)
    except pydantic.ValidationError as exc:
        return f"an invalid result ({exc.error_count()} problem(s), first: {exc.errors()[0]['msg']})"
    return None


async def _timed(
    host: CallHost, tool: Tool[Any, Any], call: Awaitable[dict[str, Any]], seconds: float
) -> dict[str, Any]:
    """`call`'s result, or a timeout's error result once `seconds` passed.

    The call is cancelled at the deadline. A sync tool's thread cannot be stopped: it is abandoned (it runs on, its
    result dropped) and counted in `host.abandoned_calls`. An async tool that swallows or shields the cancellation
    is waited for (structured concurrency leaves no coroutine behind); its result is dropped all the same.
    """
    with anyio.move_on_after(seconds) as scope:
        token = call_deadline.set(Deadline(scope))  # stopped while the client answers a question (asking.py)
        try:
            wire = await call
        finally:
            call_deadline.reset(token)
    if not scope.cancel_called:
        return wire
    if tool.runs_in_thread:
        host.abandoned_calls += 1
        logger.warning("tool %r timed out after %g s; its worker thread runs on, abandoned", tool.name, seconds)
    return error_wire(f"tool {tool.name!r} timed out after {seconds:g} s")


def _limited(tool: Tool[Any, Any], wire: dict[str, Any], limit: int) -> dict[str, Any]:
    """`wire`, or an error result when its JSON is larger than `limit` bytes: never a truncated result (half a
    result would not match the tool's output schema, nor say what is missing)."""
    size = len(encode(wire).encode())
    if size <= limit:
        return wire
    logger.warning("tool %r returned %d bytes, over its limit of %d: answered with an error", tool.name, size, limit)
    return error_wire(
        f"tool {tool.name!r} returned a result of {size:,} bytes, more than the {limit:,} bytes allowed "
        "(max_result_bytes): nothing of it was sent"
    )
