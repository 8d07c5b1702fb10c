"""`@tool` and `Tool`: a function plus everything MCP needs to know about it, derived once."""

from __future__ import annotations

import copy
import functools
import inspect
import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Concatenate, Generic, Literal, NamedTuple, TypeVar, overload

import anyio.lowlevel
import pydantic_core
from pydantic_core import core_schema
from typing_extensions import ParamSpec, Self, Unpack

from toolkit._asking.asking import confirm_text
from toolkit._asking.mrtr import Suspend
from toolkit._call.context import Context, bind_to_loop, confirm, mark_cancelled
from toolkit._call.threads import run_sync
from toolkit._errors import OutputMismatchError, ToolDefinitionError, ToolError, URLElicitationRequired
from toolkit._profiles.function_calling import envelope
from toolkit._protocol.meta import UI_FLAT_URI_KEY, UI_KEY
from toolkit._protocol.revisions import shape_result
from toolkit._protocol.types import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    MODERN_VERSION,
    CallToolResult,
    Icon,
    ToolDefinition,
)

from .content import bare_wire, converter, to_json_text, wire_converter
from .docstrings import parse_docstring
from .middleware import Middleware
from .options import ToolOptions, annotations_of, option_problems, with_defaults
from .schema import OutputSchema, input_schema, json_string_params
from .signature import (
    NOTIFYING,
    TELLING,
    Arg,
    Param,
    collect_params,
    context_uses,
    in_class_body,
    signature_args,
    type_hints,
)

if TYPE_CHECKING:  # `_profiles` (about 3 ms of import) loads when a tool is first adapted
    from toolkit._profiles.adapter import AdaptedTool
    from toolkit._profiles.profiles import Profile

__all__ = [
    "CallSettings",
    "Forward",
    "Tool",
    "ToolOptions",
    "argument_problem",
    "call_tool",
    "caller_locals",
    "check_bound",
    "error_wire",
    "forwarded",
    "tool",
]

P = ParamSpec("P")
P2 = ParamSpec("P2")
R = TypeVar("R")
T = TypeVar("T")

logger = logging.getLogger("toolkit")

#: What `schema_dialect=True` puts in `$schema`: JSON Schema 2020-12, the dialect MCP assumes when none is named.
SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


class Tool(Generic[P, R]):
    """A function made into an MCP tool by [`@tool`][toolkit.tool].

    Calling it calls the function unchanged. [`definition`][toolkit.Tool.definition] is what clients see, and
    [`run`][toolkit.Tool.run] is what a server does on `tools/call`.
    """

    fn: Callable[..., Any]
    """The decorated function."""
    __name__: str
    __qualname__: str
    __wrapped__: Callable[..., Any]
    definition: ToolDefinition
    """The tool as `tools/list` sends it."""
    output_schema: dict[str, Any] | None
    """The JSON schema of the return value before any `{"result": ...}` wrapping (any type)."""
    show_error_details: bool
    """Send exception details to the client instead of a generic message."""
    may_ask: bool
    """A call may ask the client something (elicitation, sampling): the tool takes a Context, or confirms its calls."""
    confirms: bool
    """Each call is confirmed by the user before the function runs (`confirm=`)."""
    lint_ignore: Mapping[str, str]
    """The `toolkit lint` findings silenced for this tool: code to the reason (`lint_ignore=`)."""
    middleware: tuple[Middleware, ...]
    """The tool's own middleware (`middleware=`), run inside the server's, around each call of this tool."""
    timeout: float | None
    """Seconds a call may run before it is cancelled (`timeout=`); None: the server's `tool_timeout`."""
    max_result_bytes: int | None
    """The largest result a call may send, in bytes of JSON (`max_result_bytes=`); None: the server's."""
    runs_in_thread: bool
    """The function runs on a worker thread (a sync function, unless `run_in_thread=False`)."""
    wrapped: bool
    """The tool has middleware, a timeout or a result size limit of its own (its calls go through them)."""
    forwards: bool
    """Another server answers its calls (a mounted server's tool, `Server.mount`): no function of this process's."""

    def __init__(
        self, fn: Callable[P, R], options: Mapping[str, Any] | None = None, localns: Mapping[str, Any] | None = None
    ) -> None:
        if isinstance(fn, classmethod):
            raise ToolDefinitionError(
                fn.__func__.__qualname__,
                [
                    "@tool cannot wrap a classmethod: define the classmethod without @tool and make a tool of the "
                    f"method bound to its class once the class exists, tool({fn.__func__.__qualname__})"
                ],
            )
        if isinstance(fn, staticmethod):  # `@tool` above `@staticmethod`: a plain function, as below it
            fn = fn.__func__
        functools.update_wrapper(self, fn)
        self.fn = fn
        self._instance: object = None
        self._target: Callable[..., Any] = fn  # what a call calls: `fn`, or `fn` bound to `_instance`
        self._adapted: dict[str, AdaptedTool] = {}
        self._build(fn, with_defaults(options or {}), localns)

    @property
    def name(self) -> str:
        """The tool's name."""
        return self.definition.name

    # -- calling -----------------------------------------------------------------------------------

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if self._instance is not None:
            return self.fn(self._instance, *args, **kwargs)  # type: ignore[no-any-return]
        return self.fn(*args, **kwargs)  # type: ignore[no-any-return]

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Self: ...
    @overload
    def __get__(self: Tool[Concatenate[T, P2], R], instance: T, owner: type | None = None) -> Tool[P2, R]: ...
    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None or not self._is_method:
            return self
        bound = copy.copy(self)
        bound._instance = instance
        bound._target = functools.partial(self.fn, instance)
        return bound

    def __repr__(self) -> str:
        return f"<Tool {self.name!r} of {self.fn.__qualname__}>"

    async def run(self, arguments: Mapping[str, Any] | None = None, context: Context | None = None) -> CallToolResult:
        """Validate `arguments`, run the function and convert what it returns.

        Sync functions run on a worker thread (unless the tool was made with `run_in_thread=False`); async ones
        are awaited. Never raises for a failing call: argument errors, [`ToolError`][toolkit.ToolError] and other
        exceptions become results with `is_error=True`. The result is the model of exactly what a server sends
        for this call (in the newest handshake revision): both come from one conversion.

        Args:
            arguments: The call's arguments, as a client sends them.
            context: The request's context; a detached one is made when not given.
        """
        details = context.show_error_details if context is not None else False
        try:
            wire = await call_tool(self, arguments, context, CallSettings(LATEST_HANDSHAKE_VERSION, details))
        except URLElicitationRequired as exc:  # no server here to turn it into the protocol's answer
            wire = error_wire(_safe_str(exc))
        return CallToolResult.model_validate(wire)

    @functools.cached_property
    def only_notifies(self) -> bool:
        """The tool takes a Context and, as far as its own source shows, only notifies with it (progress, logs) or
        reads what it knows: it never asks the client, confirms, or closes its response (`signature.context_uses`,
        which cannot tell whenever the Context is handed on). Worked out on first use: reading a tool's source is
        for the servers that need the answer (a 2025-11-25 HTTP session serves such a call in its request's task)."""
        uses = self._context_uses
        return uses is not None and not self.confirms and uses <= NOTIFYING

    @functools.cached_property
    def asks(self) -> bool:
        """A call needs the machinery of asking the client (`may_ask`), unless the tool's source shows it only
        notifies or reads what the call knows, not even the client's capabilities (those come from the asking).
        Worked out on a tool's first call; its calls then skip starting and finishing an asking they never use
        (unless they go through middleware, which is handed the Context and may ask with it)."""
        if not self.may_ask:
            return False
        uses = self._context_uses
        return self.confirms or uses is None or not uses <= TELLING

    @functools.cached_property
    def _context_uses(self) -> frozenset[str] | None:
        """What the tool's own source reads of its Context, or None (no Context, or it cannot tell)."""
        param = self._context_param
        return context_uses(self.fn, param) if param is not None else None

    def _call_in_thread(self, kwargs: dict[str, Any]) -> Any:
        try:
            return self._target(**kwargs)
        except ToolError:
            raise
        except BaseException as exc:
            # Carried back wrapped: asyncio would throw a GeneratorExit (or SystemExit) coming out of a worker
            # thread into the awaiting coroutines, and a StopIteration cannot cross a coroutine at all (PEP 479).
            raise _RaisedInThread(exc) from None

    def _conversion_error(self, exc: Exception) -> str:
        if isinstance(exc, OutputMismatchError):
            logger.error("tool %r returned a value that does not match its output schema: %s", self.name, exc)
            return f"tool {self.name!r} returned a value that does not match its output schema: {exc}"
        logger.error("tool %r returned a value that cannot be sent: %s", self.name, _safe_str(exc))
        return f"tool {self.name!r} returned a value that cannot be sent: {_safe_str(exc)}"

    def _exception_text(self, exc: BaseException, details: bool) -> str:
        logger.error("tool %r raised %s", self.name, type(exc).__name__, exc_info=exc)
        if details:
            return f"Error executing tool {self.name!r}: {type(exc).__name__}: {_safe_str(exc)}"
        return f"Error executing tool {self.name!r}"

    def _describe_validation_error(
        self, exc: pydantic_core.ValidationError, notes: Mapping[str, str] | None = None
    ) -> str:
        """The text of an `isError` result for arguments that failed validation: one line per error. `notes` say
        why a top-level argument was refused instead of pydantic's message (a JSON string that was not parsed)."""
        lines = [f"Invalid arguments for tool {self.name!r}:"]
        lines += [self._error_line(err, notes or {}) for err in exc.errors(include_url=False)]
        return "\n".join(lines)

    def _error_line(self, err: pydantic_core.ErrorDetails, notes: Mapping[str, str]) -> str:
        """One validation error as a line: an argument's note, a missing or unexpected argument, or pydantic's text."""
        loc = ".".join(str(part) for part in err["loc"])
        top = len(err["loc"]) == 1  # an argument itself, not a part of one
        kind = err["type"]
        if top and loc in notes:
            return f"- {loc}: {notes[loc]}"
        if top and kind == "missing":
            return f"- {loc}: missing required argument"
        if top and kind == "extra_forbidden":
            return self._unexpected(loc)
        if not err["loc"] and kind in ("model_type", "dict_type"):
            return f"- arguments must be a JSON object, got {_brief(err['input'])}"
        return f"- {loc}: {err['msg']} (got {_brief(err['input'])})"

    def _unexpected(self, name: str) -> str:
        """The line for an argument the tool does not take, with the closest parameter's name."""
        # A typo is the usual cause. difflib loads on this error path only: `import toolkit` stays light.
        import difflib

        close = difflib.get_close_matches(name, self._param_names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return f"- {name}: unexpected argument{hint} (expected one of: {', '.join(self._param_names)})"

    # -- provider profiles (toolkit/_profiles/) ---------------------------------------------------

    def adapted(self, profile: str | Profile) -> AdaptedTool:
        """The definition adapted to a [schema profile](profiles.md), with every problem of the original.

        Computed once per profile and kept: a server with `schema_profile` prepares it when the tool is added.

        Raises:
            ValueError: there is no such profile.
        """
        name = profile if isinstance(profile, str) else profile.name
        found = self._adapted.get(name)
        if found is None:
            from toolkit._profiles.adapter import adapt  # deferred: most servers never adapt a tool

            found = self._adapted[name] = adapt(
                self.definition.model_dump(mode="json", by_alias=True, exclude_none=True), profile
            )
        return found

    def definition_for(self, profile: str | Profile) -> dict[str, Any]:
        """The tool as that provider's function-calling definition, its schema adapted to the profile.

        `"openai"`/`"openai-strict"` give a Chat Completions tool, `"anthropic"`/`"anthropic-strict"` a Messages
        API tool, `"gemini"` a function declaration, `"claude-desktop"` the MCP definition. Arguments the model
        sends for it go through [`call_from`][toolkit.Tool.call_from].

        Raises:
            ValueError: there is no such profile.
        """
        return copy.deepcopy(envelope(self.adapted(profile)))

    def arguments_from(self, profile: str | Profile, arguments: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        """Arguments shaped by the profile's schema, mapped back to the tool's own (not yet validated).

        For `openai-strict`, an optional parameter the model had to send as `null` is left out, so that its
        default applies; nothing else changes shape.
        """
        plan = self.adapted(profile).restore
        if plan is None or not isinstance(arguments, dict):
            return arguments
        restored: Mapping[str, Any] = plan.apply(arguments)
        return restored

    async def call_from(
        self, profile: str | Profile, arguments: Mapping[str, Any] | None, context: Context | None = None
    ) -> CallToolResult:
        """Run the tool on a provider's tool call: arguments mapped back, then as [`run`][toolkit.Tool.run] does.

        Args:
            profile: The profile the definition was made with (`definition_for`).
            arguments: The call's arguments, parsed from the provider's JSON.
            context: The request's context; a detached one is made when not given.
        """
        return await self.run(self.arguments_from(profile, arguments), context)

    def call_from_sync(
        self, profile: str | Profile, arguments: Mapping[str, Any] | None, context: Context | None = None
    ) -> CallToolResult:
        """[`call_from`][toolkit.Tool.call_from] for synchronous code, with the same arguments: runs it on a new
        event loop (asyncio).

        Raises:
            RuntimeError: called from inside a running event loop (await `call_from` there).
        """
        return anyio.run(self.call_from, profile, arguments, context)

    # -- deriving ----------------------------------------------------------------------------------

    def _build(self, fn: Callable[..., Any], opts: ToolOptions, localns: Mapping[str, Any] | None) -> None:
        qualname = getattr(fn, "__qualname__", repr(fn))
        name = opts["name"] if opts["name"] is not None else getattr(fn, "__name__", "")
        problems = _name_problems(name, opts)
        self._is_async = _is_coroutine_function(fn)
        parameters = self._parameters(fn, qualname)
        hints = type_hints(fn, localns, problems)
        doc = parse_docstring(_documented(fn).__doc__, opts["docstring_style"])
        params, self._context_param = collect_params(parameters, hints, doc.params, problems)
        if opts["require_param_docs"]:
            problems.extend(_undocumented(params))
        schema, validator = input_schema(
            params, inline=opts["inline_defs"], optional_style=opts["optional_style"], problems=problems
        )
        returns = hints.get("return", inspect.Signature.empty)
        self._convert, output, bare = converter(
            returns, opts["structured"], inline=opts["inline_defs"], problems=problems
        )
        problems.extend(option_problems(opts, [p.name for p in params], self._is_async))
        if problems:
            raise ToolDefinitionError(qualname, problems)
        schema = _final_schema(schema, opts)
        self.definition = _definition(name, doc.description, schema, output, opts)
        self._validator = validator
        self._param_names = [p.name for p in params]
        self._json_params = json_string_params(schema)
        self._results(output, bare)
        self._in_thread = opts["run_in_thread"] and not self._is_async
        self._behaviour(fn, opts)

    def _results(self, output: OutputSchema | None, bare: OutputSchema | None) -> None:
        """What the return annotation gives: the schema of the value, and the conversion of a value to each era's
        result (`output`: the `outputSchema` every era lists; `bare`: the one only 2026-07-28 lists)."""
        self.output_schema = _value_schema(output, bare)
        self.bare_output = bare is not None
        """Only 2026-07-28 lists `output_schema` (a return type that is not an object: `content.bare_output`)."""
        wraps = output is not None and output.wraps  # structuredContent is {"result": value}
        wire = wire_converter(self._convert, output)
        # 2026-07-28's result, where it differs: the bare value as structuredContent too
        self._wire = wire  # and for a revision the table does not know
        self._wires = _wires(wire, wire if bare is None else bare_wire(bare), wraps)

    def _behaviour(self, fn: Callable[..., Any], opts: ToolOptions) -> None:
        """What the options say of how a call runs (asking, middleware, limits, its page, tasks), kept as attributes."""
        self.show_error_details = opts["show_error_details"]
        self._confirm = opts["confirm"]
        self.may_ask = self._context_param is not None or opts["confirm"] is not False
        self.confirms = opts["confirm"] is not False
        self.lint_ignore = MappingProxyType(dict(opts["lint_ignore"] or {}))
        self.middleware = tuple(opts["middleware"] or ())
        self.timeout, self.max_result_bytes = opts["timeout"], opts["max_result_bytes"]
        self.runs_in_thread = self._in_thread
        self.ui = opts["ui"]
        """The tool's MCP App (`ui=`): the page a host renders for its results, or None."""
        visibility = opts["visibility"]
        self.app_only = visibility is not None and "model" not in visibility
        """Only the app may call the tool (`visibility=["app"]`): clients without MCP Apps neither list nor call it."""
        self.task = opts["task"]
        """Whether a call may run as a task (`"optional"`), must (`"required"`), or never (None)."""
        code = getattr(fn, "__code__", None)
        self.asks_before_task = self.task is not None and code is not None and "begin_task" in code.co_names
        """The tool calls `ctx.begin_task()`: its questions before it are asked before the task is made."""
        self.wrapped = bool(self.middleware) or self.timeout is not None or self.max_result_bytes is not None
        self.forwards = False
        # MCP's destructiveHint defaults to true: only a tool that says otherwise counts as not destructive.
        self._destructive = not (opts["read_only"] or opts["destructive"] is False)

    def _parameters(self, fn: Callable[..., Any], qualname: str) -> list[Arg]:
        """The signature's parameters, without `self`/`cls` of a method defined in a class body (`_is_method`)."""
        try:
            parameters = signature_args(fn)
        except (TypeError, ValueError) as exc:
            raise ToolDefinitionError(qualname, [f"no signature: {exc}"]) from None
        self._is_method = bool(parameters) and parameters[0].name in ("self", "cls") and in_class_body(qualname)
        return parameters[1:] if self._is_method else parameters


def _is_coroutine_function(fn: Callable[..., Any]) -> bool:
    """A coroutine function, or an object whose `__call__` is one."""
    call = getattr(fn, "__call__", None)  # noqa: B004 - an object whose __call__ is async
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)


def _documented(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The function whose docstring describes the tool: a partial's function, not `functools.partial`'s own."""
    if isinstance(fn, functools.partial):
        return fn.func
    return fn


def _undocumented(params: list[Param]) -> list[str]:
    """A problem for each parameter without a description (`require_param_docs=True`)."""
    return [f"parameter {p.name}: no description" for p in params if not p.description]


def _value_schema(output: OutputSchema | None, bare: OutputSchema | None) -> dict[str, Any] | None:
    """The JSON schema of the return value itself, before any `{"result": ...}` wrapping; None without one."""
    if output is not None:
        return output.raw
    if bare is not None:
        return bare.raw
    return None


Wire = Callable[[Any], dict[str, Any]]
"""A conversion of what a tool returned to the wire result of one revision."""


def _wires(wire: Wire, modern: Wire, wraps_result: bool) -> dict[str, Wire]:
    """The conversion of a value to each revision's result, by revision. 2025-11-25's result is `wire`'s; older
    revisions drop what they lack of it (`shape_result`), and 2026-07-28 has its own (`modern`), unwrapping a
    non-object structured result."""
    wires: dict[str, Wire] = {version: functools.partial(_shaped, wire, version, wraps_result) for version in _OLDER}
    wires[LATEST_HANDSHAKE_VERSION] = wire
    wires[MODERN_VERSION] = functools.partial(_shaped, modern, MODERN_VERSION, True) if wraps_result else modern
    return wires


_OLDER = HANDSHAKE_VERSIONS[1:]
"""The handshake revisions before the newest: their results are shaped from its."""


def _shaped(wire: Wire, version: str, wraps_result: bool, value: Any) -> dict[str, Any]:
    """A value converted by `wire`, then shaped for `version`."""
    return shape_result(wire(value), version, wraps_result)


def _name_problems(name: str, opts: ToolOptions) -> list[str]:
    """What is wrong with the tool's name, and with hints that contradict each other."""
    problems: list[str] = []
    if not NAME_PATTERN.match(name):
        problems.append(f"name {name!r} must be 1-128 characters of A-Z, a-z, 0-9, '_', '.' or '-' (SEP-986)")
    if opts["read_only"] and opts["destructive"]:
        problems.append("read_only=True contradicts destructive=True")
    return problems


def _final_schema(schema: dict[str, Any], opts: ToolOptions) -> dict[str, Any]:
    """The `inputSchema` as sent: the derived one, `input_schema_extra` added, the dialect named if asked."""
    if opts["input_schema_extra"] is not None:
        schema = {**schema, **json.loads(json.dumps(opts["input_schema_extra"]))}  # a private copy
    if opts["schema_dialect"]:
        schema = {"$schema": SCHEMA_DIALECT, **schema}
    return schema


def _definition(
    name: str, documented: str, schema: dict[str, Any], output: OutputSchema | None, opts: ToolOptions
) -> ToolDefinition:
    """The definition `tools/list` sends (`documented`: the docstring's description, unless `description=`)."""
    icons = opts["icons"]
    description = opts["description"] if opts["description"] is not None else documented
    return ToolDefinition(
        name=name,
        title=opts["title"],
        description=description or None,
        input_schema=schema,
        output_schema=output.wire if output else None,
        annotations=annotations_of(opts),
        icons=[icon if isinstance(icon, Icon) else Icon.model_validate(icon) for icon in icons]
        if icons is not None
        else None,
        meta=_meta(opts),
        execution={"taskSupport": opts["task"]} if opts["task"] is not None else None,
    )


def _meta(opts: ToolOptions) -> dict[str, Any] | None:
    """The definition's `_meta`: the one given, and MCP Apps' `ui` (`resourceUri`, `visibility`) from `ui=` and
    `visibility=`. The deprecated flat `ui/resourceUri` is written too, as the official SDKs write it: hosts built
    before the nested form read only that key, and hosts that read the nested one ignore it (docs/apps.md)."""
    meta = dict(opts["meta"]) if opts["meta"] is not None else {}
    ui: dict[str, Any] = {}
    if opts["ui"] is not None:
        ui["resourceUri"] = meta[UI_FLAT_URI_KEY] = opts["ui"].uri
    if opts["visibility"] is not None:
        ui["visibility"] = list(opts["visibility"])
    if ui:
        meta[UI_KEY] = ui
    return meta if meta or opts["meta"] is not None else None


class CallSettings(NamedTuple):
    """How a server runs its tools' calls on one connection: what `call_tool` takes besides the call itself."""

    version: str
    """The protocol revision the result is shaped for."""
    show_error_details: bool = False
    """Send exception details to the client (the server's setting; a tool's own adds to it)."""
    strict_arguments: bool = False
    """Never parse an object or array argument sent as a JSON string."""


async def call_tool(
    tool: Tool[Any, Any],
    arguments: Mapping[str, Any] | None,
    context: Context | Callable[[], Context] | None,
    settings: CallSettings,
) -> dict[str, Any]:
    """Run one `tools/call`: validate the arguments once, call the function, convert the value once to the wire
    result for `settings.version` (a new dict: the caller may add to it). The one path of every result, `Tool.run`'s
    too.

    Unless `settings.strict_arguments`, an object or array argument sent as a JSON string is parsed and validated
    again (`json_string_params`); only on the error path, so a call whose arguments fit pays nothing for it.

    `context` is the request's Context, or a function that makes it, called only if the tool takes one. Never
    raises for a failing call: bad arguments, a failing tool and a value that cannot be sent are `isError` results.
    Cancellation propagates.
    """
    try:
        kwargs = tool._validator.validate_python(arguments if arguments is not None else {})
    except pydantic_core.ValidationError as exc:
        kwargs, problem = _validate_json_strings(tool, arguments, exc, settings.strict_arguments)
        if problem is not None:
            return error_wire(problem)
    ctx = None
    if tool.may_ask:  # takes a Context, or confirms its calls
        ctx, refusal = await _prepare(tool, kwargs, context)
        if refusal is not None:
            return error_wire(refusal)
    try:
        if tool._in_thread:
            value = await run_sync(tool._call_in_thread, kwargs)
        elif tool._is_async:
            value = await tool._target(**kwargs)
        else:
            value = tool._target(**kwargs)
    except BaseException as exc:
        return error_wire(await _failure(tool, exc, ctx, settings.show_error_details))
    try:
        # 2025-11-25's result as converted, an older revision's without what it lacks, 2026-07-28's own (`_wires`)
        return tool._wires.get(settings.version, tool._wire)(value)
    except Exception as exc:
        return error_wire(tool._conversion_error(exc))


def argument_problem(tool: Tool[Any, Any], arguments: Mapping[str, Any], *, strict: bool) -> str | None:
    """The error text a call of `tool` with `arguments` answers with before its function runs (as `call_tool`
    validates them), or None when they fit. `toolkit call` asks before it has a task made for a call that would fail."""
    try:
        tool._validator.validate_python(arguments)
    except pydantic_core.ValidationError as exc:
        return _validate_json_strings(tool, arguments, exc, strict)[1]
    return None


def _validate_json_strings(
    tool: Tool[Any, Any], arguments: Mapping[str, Any] | None, exc: pydantic_core.ValidationError, strict: bool
) -> tuple[dict[str, Any], str | None]:
    """Validate again with each JSON string parsed where the schema asks for an object or array: the arguments, or
    the error text (which says why a string that was not parsed could not be)."""
    if strict or not tool._json_params or not isinstance(arguments, Mapping):
        return {}, tool._describe_validation_error(exc)
    decoded = dict(arguments)
    notes: dict[str, str] = {}
    strings = {name: kinds for name, kinds in tool._json_params.items() if isinstance(arguments.get(name), str)}
    for name, kinds in strings.items():
        parsed, note = _parsed_json(arguments[name], kinds)
        if note is None:
            decoded[name] = parsed
        else:
            notes[name] = note
    if len(notes) == len(strings):
        return {}, tool._describe_validation_error(exc, notes)  # nothing parsed: the first error stands
    try:
        return tool._validator.validate_python(decoded), None
    except pydantic_core.ValidationError as again:
        return {}, tool._describe_validation_error(again, notes)


def _parsed_json(text: str, kinds: frozenset[str]) -> tuple[Any, str | None]:
    """The value a JSON string argument holds, when it is of one of the JSON `kinds`; else why it is refused."""
    expected = " or ".join(f"an {kind}" for kind in sorted(kinds))
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError) as error:
        return None, f"expected {expected}, got a string that is not valid JSON ({_first_line(error)})"
    if _JSON_KINDS.get(type(parsed)) not in kinds:
        return None, f"expected {expected}, got a string (its JSON is not {expected})"
    return parsed, None


_JSON_KINDS: dict[type, str] = {dict: "object", list: "array"}


def _first_line(error: BaseException) -> str:
    return str(error).partition("\n")[0][:200]


async def _failure(tool: Tool[Any, Any], exc: BaseException, ctx: Context | None, show_error_details: bool) -> str:
    """The error text for what the function raised; re-raises what is not a failure: a cancellation, a question
    that ends the call (-32042, or a round of 2026-07-28)."""
    if isinstance(exc, (URLElicitationRequired, Suspend)):
        raise exc  # the call's answer says so, not its error text
    if isinstance(exc, ToolError):
        return _safe_str(exc) or f"tool {tool.name!r} failed"
    if isinstance(exc, _RaisedInThread):
        exc = exc.raised
        if isinstance(exc, Suspend):  # a sync tool's question without an answer yet
            raise exc from None
    elif isinstance(exc, anyio.get_cancelled_exc_class()):
        if ctx is not None:
            mark_cancelled(ctx)  # a sync tool's thread runs on: let it see that it may stop
        # Re-raised here when the call really is cancelled; a CancelledError the tool raised itself
        # (an asyncio library's timeout, say) is a failure like any other, not the end of the connection.
        await anyio.lowlevel.checkpoint_if_cancelled()
    return tool._exception_text(exc, tool.show_error_details or show_error_details)


async def _prepare(
    tool: Tool[Any, Any], kwargs: dict[str, Any], context: Context | Callable[[], Context] | None
) -> tuple[Context, str | None]:
    """The call's Context, passed in if the tool takes one, and the refusal of an unconfirmed call (`confirm=`)."""
    ctx = context if isinstance(context, Context) else Context() if context is None else context()
    if tool._confirm is not False:
        refusal = await _confirmation(tool, kwargs, ctx)
        if refusal is not None:
            return ctx, refusal
    if tool._context_param is None:
        return ctx, None
    kwargs[tool._context_param] = ctx
    if not tool._is_async:
        bind_to_loop(ctx, in_thread=tool._in_thread)
    return ctx, None


async def _confirmation(tool: Tool[Any, Any], kwargs: dict[str, Any], ctx: Context) -> str | None:
    """Ask the user to confirm this call (`confirm=`): None to run it, else the error text to answer with."""
    arguments = {k: v for k, v in kwargs.items() if k != tool._context_param}
    message = confirm_text(tool._confirm, arguments, tool.definition.title or tool.name)
    try:
        return await confirm(ctx, message, tool.name, destructive=tool._destructive)
    except ToolError as exc:  # the client cannot ask, and the server's policy refuses
        return _safe_str(exc)


def error_wire(text: str) -> dict[str, Any]:
    """A tool error result (`isError: true`) whose one text block is `text`."""
    return {"content": [{"type": "text", "text": text}], "isError": True}


def check_bound(tool: Tool[Any, Any]) -> None:
    """Refuse to serve a method that has no instance (or class) to call it with: every call would fail.

    Raises:
        ToolDefinitionError: `tool` was made from a method in a class body and taken from the class, not an instance
            (`Server(tools=[SomeClass.method])`), or made by `@server.tool` in a class body.
    """
    if not tool._is_method or tool._instance is not None:
        return
    qualname = tool.fn.__qualname__
    owner, _, name = qualname.rpartition(".")
    if signature_args(tool.fn)[0].name == "cls":
        fix = (
            "define it as a plain @classmethod and serve the method bound to its class, "
            f"server.add_tool(tool({owner}.{name}))"
        )
    else:
        fix = (
            "decorate it with @tool in the class body (not @server.tool) and serve the bound method of an instance, "
            f"server.add_tool(instance.{name}) or Server(tools=[instance.{name}]); or serve tool(instance.{name})"
        )
    raise ToolDefinitionError(qualname, [f"a method cannot be served without an instance to call it on: {fix}"])


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return f"<{type(exc).__name__} whose message cannot be shown>"


def _brief(value: Any) -> str:
    try:
        text = to_json_text(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 80 else text[:77] + "..."


class _RaisedInThread(Exception):
    def __init__(self, raised: BaseException) -> None:
        super().__init__()
        self.raised = raised


# -- tools served by forwarding (a mounted server's, `Server.mount`) --------------------------------------

Forward = Callable[[dict[str, Any], Context], Awaitable[dict[str, Any]]]
"""What a forwarded tool's call runs: the call's arguments (a JSON object) and its Context to the wire result."""


def forwarded(
    definition: ToolDefinition, forward: Forward, *, task: Literal["optional", "required"] | None = None
) -> Tool[..., Any]:
    """A tool whose calls another server answers (`Server.mount`): `definition` is sent as given, the arguments go on
    as one JSON object (the upstream checks them against its own schema), and the wire result `forward` returns is
    sent as it is. Everything else a call goes through (middleware, timeouts, the filter, tasks) is a local tool's."""
    made: Tool[..., Any] = Tool(forward, {"name": definition.name, "task": task})
    schema = definition.output_schema
    # A 2026-07-28 upstream may declare any JSON Schema and send any JSON value (SEP-2106): only 2026-07-28 lists such
    # a schema, and a 2025-11-25 client gets the result without a structuredContent its revision cannot carry.
    made.bare_output = schema is not None and schema.get("type") != "object"
    made.definition = definition.model_copy(update={"output_schema": None}) if made.bare_output else definition
    made.output_schema = schema
    made._validator = _AS_ARGUMENTS
    made._param_names = []
    made._json_params = {}
    made._wire = _without_bare_structured
    made._wires = _wires(_without_bare_structured, _sent_as_is, False)
    made.forwards = True
    return made


def _as_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"arguments": arguments}


def _sent_as_is(value: dict[str, Any]) -> dict[str, Any]:
    return value


def _without_bare_structured(value: dict[str, Any]) -> dict[str, Any]:
    """A forwarded result for a 2025-11-25 client: structuredContent only when it is an object."""
    if "structuredContent" not in value or isinstance(value["structuredContent"], dict):
        return value
    return {key: item for key, item in value.items() if key != "structuredContent"}


# Any JSON object, handed on whole as `arguments`: a forwarded tool's arguments are its upstream's to check.
_AS_ARGUMENTS = pydantic_core.SchemaValidator(
    core_schema.no_info_after_validator_function(
        _as_arguments, core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema())
    )
)


# -- the decorator -----------------------------------------------------------------------------------


@overload
def tool(fn: Callable[P, R], /) -> Tool[P, R]: ...
@overload
def tool(**options: Unpack[ToolOptions]) -> Callable[[Callable[P, R]], Tool[P, R]]: ...
def tool(fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
    """Make a function an MCP tool.

    Use it bare (`@tool`) or with keyword-only options (`@tool(read_only=True)`). Everything is derived here,
    once: a signature problem raises [`ToolDefinitionError`][toolkit.ToolDefinitionError] listing every
    problem, naming the function.

    Keyword Args:
        name (str | None): The tool's name; defaults to the function's name. Must match `^[A-Za-z0-9_.-]{1,128}$`.
        title (str | None): A human-readable title (also sent as `annotations.title`).
        description (str | None): Overrides the docstring's summary and body.
        read_only (bool | None): `readOnlyHint`: the tool does not change its environment.
        destructive (bool | None): `destructiveHint`: the tool may destroy data (spec default when omitted: true).
        idempotent (bool | None): `idempotentHint`: calling twice with the same arguments has no further effect.
        open_world (bool | None): `openWorldHint`: the tool reaches outside systems (spec default when omitted: true).
        icons (Sequence[Icon | Mapping[str, Any]] | None): Icons for clients to display.
        meta (Mapping[str, Any] | None): The definition's `_meta`. Keys follow the spec's format (`name` or
            `com.example/name`); prefixes whose second label is `modelcontextprotocol` or `mcp` are MCP's.
        structured (bool | None): `None` (auto) gives an `outputSchema` for return types that are always JSON
            objects (models, dataclasses, TypedDicts, `dict`); without one, a value whose JSON is an object is
            still sent as `structuredContent`. `True` gives any type a schema (wrapping non-objects as
            `{"result": ...}`); `False` sends neither schema nor `structuredContent`.
        docstring_style (DocstringStyle | None): `"google"`, `"numpy"` or `"sphinx"`; detected when not given.
        require_param_docs (bool): Make a parameter without a description a definition error.
        inline_defs (bool): Inline `$defs` (default; recursive types keep theirs). `False` keeps every `$defs`.
        schema_dialect (bool): Name the dialect in the `inputSchema`: `"$schema":
            "https://json-schema.org/draft/2020-12/schema"` (MCP's default dialect, so off by default).
        input_schema_extra (Mapping[str, Any] | None): JSON Schema keywords added as written to the `inputSchema`'s
            root (`allOf`, `if`/`then`/`else`, ...): advertised, not enforced (calls are validated against the
            signature). Cannot set what toolkit derives (`type`, `properties`, `required`, `$defs`, ...).
        optional_style (OptionalStyle): `"compact"` (default) describes `x: T | None = None` as an optional `T`;
            `"faithful"` keeps `anyOf [T, null]` with `default: null`.
        show_error_details (bool): Send exception types and messages to the client (off: a generic message).
        run_in_thread (bool): Run a sync function on a worker thread (default), so that it cannot block the
            event loop. `False` calls it on the event loop: for trivial CPU-only functions, or thread-affine ones.
        confirm (bool | str): Ask the user to confirm each call before the function runs (through elicitation):
            `True`, or the question, formatted with the call's arguments (`"Delete {path}?"`); it runs only on
            accept. For clients that cannot elicit, see `Server(confirm_fallback=...)` and [HITL](human-in-the-loop.md).
        lint_ignore (Mapping[str, str] | None): `toolkit lint` findings that do not apply to this tool: each code
            with the reason, as `{"TK301": "paths are resolved inside the sandbox"}` ([lint](lint.md)); not sent.
        middleware (Sequence[Middleware] | None): Around-hooks for this tool's calls, run inside the server's
            (`Server(middleware=..., tool_middleware=...)`), the first outermost: see [middleware](middleware.md).
        timeout (float | None): Seconds a call may run before it is cancelled and answered with a tool error saying
            so; overrides `Server(tool_timeout=...)` for this tool (see [timeouts](middleware.md#timeouts)).
        max_result_bytes (int | None): The largest result a call may send (bytes of JSON); a larger one is
            answered with a tool error instead; overrides `Server(max_result_bytes=...)`.
        task ("optional" | "required" | None): Run calls as MCP tasks when the client speaks tasks (`"required"`:
            only as tasks); default never. See [tasks](tasks.md).
        ui (UI | None): The tool's [MCP App](apps.md): a [`UI`][toolkit.UI] page hosts render with its results.
        visibility (Sequence[str] | None): `["app"]`: only the tool's app may call it, never the model (apps.md).
    """
    localns = caller_locals()
    opts = with_defaults(options)  # an unknown option fails here, before a function is given
    if fn is not None:
        return Tool(fn, opts, localns)

    def decorate(func: Callable[P, R]) -> Tool[P, R]:
        return Tool(func, opts, localns)

    return decorate


def caller_locals(depth: int = 2) -> Mapping[str, Any] | None:
    """Locals of the scope that applied `@tool`, so that types defined in a function body resolve.

    `depth` counts frames above this one: 2 is the caller of the function that calls this. Frames come from
    `inspect.currentframe()` (public; on a Python without frame support it gives None, and so does this: types
    then resolve in the function's module, as for a module-level tool).
    """
    frame = inspect.currentframe()
    for _ in range(depth):
        frame = frame.f_back if frame is not None else None
    if frame is None or frame.f_code.co_name == "<module>":
        return None
    return frame.f_locals
