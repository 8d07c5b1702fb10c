"""`@tool` and `Tool`: a function plus everything MCP needs to know about it, derived once."""

from __future__ import annotations

import copy
import functools
import inspect
import logging
import re
import sys
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, Literal, TypeVar, overload

import anyio.to_thread
import pydantic
import pydantic_core
from pydantic.fields import FieldInfo
from pydantic_core import core_schema
from typing_extensions import Concatenate, ParamSpec, Self, get_args, get_origin

from ._content import to_json_text, unstructured_result
from ._context import Context
from ._docstrings import DocstringStyle, parse_docstring
from ._errors import ToolDefinitionError, ToolError
from ._schema import TypeInfo, inline_defs, is_object_like, type_info
from ._types import CONTENT_TYPES, CallToolResult, Icon, TextContent, ToolAnnotations, ToolDefinition

__all__ = ["Tool", "tool"]

P = ParamSpec("P")
P2 = ParamSpec("P2")
R = TypeVar("R")
T = TypeVar("T")

logger = logging.getLogger("toolkit")

NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
OptionalStyle = Literal["compact", "faithful"]


class _Options(typing.NamedTuple):
    name: str | None = None
    title: str | None = None
    description: str | None = None
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None
    icons: Sequence[Icon | Mapping[str, Any]] | None = None
    meta: Mapping[str, Any] | None = None
    structured: bool | None = None
    docstring_style: DocstringStyle | None = None
    require_param_docs: bool = False
    inline_defs: bool = True
    optional_style: OptionalStyle = "compact"
    show_error_details: bool = False


class _Param(typing.NamedTuple):
    name: str
    annotation: Any
    default: Any
    factory: Callable[[], Any] | None
    description: str | None
    examples: list[Any] | None


class Tool(Generic[P, R]):
    """A function made into an MCP tool by [`@tool`][toolkit.tool].

    Calling it calls the function unchanged. [`definition`][toolkit.Tool.definition] is what clients see, and
    [`run`][toolkit.Tool.run] is what a server does on `tools/call`.
    """

    fn: Callable[..., Any]
    """The decorated function."""
    definition: ToolDefinition
    """The tool as `tools/list` sends it."""
    output_schema: dict[str, Any] | None
    """The JSON schema of the return value before any `{"result": ...}` wrapping (any type)."""
    wraps_result: bool
    """True when `structuredContent` wraps a non-object value as `{"result": value}`."""
    show_error_details: bool
    """Send exception details to the client instead of a generic message."""

    def __init__(self, fn: Callable[P, R], options: _Options, localns: Mapping[str, Any] | None = None) -> None:
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]
        self.fn = fn
        self._instance: object = None
        self._build(fn, options, localns)

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
        bound._instance = instance  # noqa: SLF001
        return bound

    def __repr__(self) -> str:
        return f"<Tool {self.name!r} of {self.fn.__qualname__}>"

    async def run(self, arguments: Mapping[str, Any] | None = None, context: Context | None = None) -> CallToolResult:
        """Validate `arguments`, run the function and convert what it returns.

        Sync functions run on a worker thread; async ones are awaited. Never raises for a failing call: argument
        errors, [`ToolError`][toolkit.ToolError] and other exceptions become results with `is_error=True`.

        Args:
            arguments: The call's arguments, as a client sends them.
            context: The request's context; a detached one is made when not given.
        """
        try:
            kwargs = self._validator.validate_python(arguments if arguments is not None else {})
        except pydantic_core.ValidationError as exc:
            return _error_result(self._describe_validation_error(exc))
        if self._context_param is not None:
            kwargs[self._context_param] = context if context is not None else Context()
        if self._instance is not None:
            call: Callable[..., Any] = functools.partial(self.fn, self._instance)
        else:
            call = self.fn
        try:
            if self._is_async:
                value = await call(**kwargs)
            else:
                value = await anyio.to_thread.run_sync(functools.partial(call, **kwargs), abandon_on_cancel=True)
        except ToolError as exc:
            return _error_result(_safe_str(exc) or f"tool {self.name!r} failed")
        except BaseException as exc:
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                raise
            return self._exception_result(exc)
        try:
            return self._convert(value)
        except Exception as exc:
            logger.warning("tool %r returned a value that cannot be sent: %s", self.name, _safe_str(exc))
            return _error_result(f"tool {self.name!r} returned a value that cannot be sent: {_safe_str(exc)}")

    def _exception_result(self, exc: BaseException) -> CallToolResult:
        logger.error("tool %r raised %s", self.name, type(exc).__name__, exc_info=exc)
        if self.show_error_details:
            return _error_result(f"Error executing tool {self.name!r}: {type(exc).__name__}: {_safe_str(exc)}")
        return _error_result(f"Error executing tool {self.name!r}")

    def _describe_validation_error(self, exc: pydantic_core.ValidationError) -> str:
        lines = [f"Invalid arguments for tool {self.name!r}:"]
        for err in exc.errors(include_url=False):
            loc = ".".join(str(part) for part in err["loc"])
            kind = err["type"]
            if kind == "missing" and len(err["loc"]) == 1:
                lines.append(f"- {loc}: missing required argument")
            elif kind == "extra_forbidden" and len(err["loc"]) == 1:
                lines.append(f"- {loc}: unexpected argument (expected one of: {', '.join(self._param_names)})")
            elif kind in ("model_type", "dict_type") and not err["loc"]:
                lines.append(f"- arguments must be a JSON object, got {_brief(err['input'])}")
            else:
                lines.append(f"- {loc}: {err['msg']} (got {_brief(err['input'])})")
        return "\n".join(lines)

    # -- deriving ----------------------------------------------------------------------------------

    def _build(self, fn: Callable[..., Any], opts: _Options, localns: Mapping[str, Any] | None) -> None:
        qualname = getattr(fn, "__qualname__", repr(fn))
        problems: list[str] = []
        name = opts.name if opts.name is not None else getattr(fn, "__name__", "")
        if not NAME_PATTERN.match(name):
            problems.append(f"name {name!r} must be 1-128 characters of A-Z, a-z, 0-9, '_', '.' or '-' (SEP-986)")
        if opts.read_only and opts.destructive:
            problems.append("read_only=True contradicts destructive=True")

        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError) as exc:
            raise ToolDefinitionError(qualname, [f"no signature: {exc}"]) from None
        try:
            hints = typing.get_type_hints(fn, localns=dict(localns) if localns else None, include_extras=True)
        except Exception as exc:
            hints = {}
            problems.append(f"annotations cannot be resolved: {type(exc).__name__}: {exc}")

        doc = parse_docstring(fn.__doc__, opts.docstring_style)
        parameters = list(signature.parameters.values())
        self._is_method = bool(parameters) and parameters[0].name in ("self", "cls") and _in_class_body(qualname)
        if self._is_method:
            parameters = parameters[1:]

        self._context_param: str | None = None
        params: list[_Param] = []
        for p in parameters:
            if p.kind is p.VAR_POSITIONAL or p.kind is p.VAR_KEYWORD:
                star = "*" if p.kind is p.VAR_POSITIONAL else "**"
                problems.append(f"parameter {star}{p.name}: variadic parameters cannot be described by a schema")
                continue
            if p.kind is p.POSITIONAL_ONLY:
                problems.append(f"parameter {p.name}: positional-only parameters cannot be passed by name")
                continue
            if p.name not in hints:
                if hints or not problems:
                    problems.append(f"parameter {p.name}: missing type annotation")
                continue
            annotation = hints[p.name]
            if _is_context(annotation):
                self._context_param = p.name
                continue
            params.append(_param(p, annotation, doc.params.get(p.name), problems))

        names = {p.name for p in params} | ({self._context_param} if self._context_param else set())
        for documented in doc.params:
            if documented not in names:
                problems.append(f"docstring documents {documented!r}, which is not a parameter")
        if opts.require_param_docs:
            problems.extend(f"parameter {p.name}: no description" for p in params if not p.description)

        input_schema, validator = _input_schema(params, opts, problems)
        return_annotation = hints.get("return", inspect.Signature.empty)
        self._convert, self.output_schema, self.wraps_result, output_schema = _output(
            name, return_annotation, opts.structured, opts.inline_defs, problems
        )
        if problems:
            raise ToolDefinitionError(qualname, problems)

        annotations = None
        flags = (opts.read_only, opts.destructive, opts.idempotent, opts.open_world)
        if any(flag is not None for flag in flags) or opts.title is not None:
            annotations = ToolAnnotations(
                title=opts.title,
                read_only_hint=opts.read_only,
                destructive_hint=opts.destructive,
                idempotent_hint=opts.idempotent,
                open_world_hint=opts.open_world,
            )
        description = opts.description if opts.description is not None else doc.description
        self.definition = ToolDefinition(
            name=name,
            title=opts.title,
            description=description or None,
            input_schema=input_schema,
            output_schema=output_schema,
            annotations=annotations,
            icons=[icon if isinstance(icon, Icon) else Icon.model_validate(icon) for icon in opts.icons]
            if opts.icons is not None
            else None,
            meta=dict(opts.meta) if opts.meta is not None else None,
        )
        self._validator = validator
        self._param_names = [p.name for p in params]
        self._is_async = inspect.iscoroutinefunction(fn)
        self.show_error_details = opts.show_error_details


def _in_class_body(qualname: str) -> bool:
    parts = qualname.split(".")
    return len(parts) >= 2 and parts[-2] != "<locals>"


def _is_context(annotation: Any) -> bool:
    if annotation is Context:
        return True
    origin = get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        args = [a for a in get_args(annotation) if a is not type(None)]
        return len(args) == 1 and args[0] is Context
    return False


def _b64(annotation: Any) -> Any:
    """Arguments arrive as JSON, so `bytes` parameters take base64 text."""
    if annotation is bytes:
        return pydantic.Base64Bytes
    origin = get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return typing.Union[tuple(_b64(a) for a in get_args(annotation))]  # noqa: UP007
    if origin in (list, set, frozenset) and get_args(annotation):
        return origin[_b64(get_args(annotation)[0])]
    return annotation


def _param(p: inspect.Parameter, annotation: Any, doc: str | None, problems: list[str]) -> _Param:
    description: str | None = None
    examples: list[Any] | None = None
    default: Any = p.default
    factory: Callable[[], Any] | None = None
    if get_origin(annotation) is typing.Annotated:
        base, *metadata = get_args(annotation)
        kept: list[Any] = []
        for item in metadata:
            if isinstance(item, str):
                description = item
                continue
            if isinstance(item, FieldInfo) and item.description:
                description = item.description
            kept.append(item)
        annotation = typing.Annotated[(_b64(base), *kept)] if kept else _b64(base)
    else:
        annotation = _b64(annotation)
    if isinstance(default, FieldInfo):
        field = default
        description = field.description or description
        examples = field.examples
        factory = field.default_factory  # type: ignore[assignment]
        default = field.default if field.default is not pydantic_core.PydanticUndefined else p.empty
        if field.metadata:
            annotation = typing.Annotated[(annotation, *field.metadata)]
    return _Param(p.name, annotation, default, factory, description or doc, examples)


def _input_schema(
    params: list[_Param], opts: _Options, problems: list[str]
) -> tuple[dict[str, Any], pydantic_core.SchemaValidator]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    defs: dict[str, Any] = {}
    fields: dict[str, core_schema.TypedDictField] = {}
    for p in params:
        try:
            info: TypeInfo = type_info(p.annotation)
        except Exception as exc:
            problems.append(f"parameter {p.name}: type {_type_name(p.annotation)} has no JSON schema ({exc})")
            continue
        schema = info.schema()
        _merge_defs(schema, defs)
        inner: core_schema.CoreSchema = info.core_schema
        if p.description:
            schema["description"] = p.description
        if p.examples is not None:
            schema["examples"] = p.examples
        if p.default is inspect.Parameter.empty and p.factory is None:
            required.append(p.name)
            fields[p.name] = core_schema.typed_dict_field(inner, required=True)
        else:
            if p.factory is not None:
                inner = core_schema.with_default_schema(inner, default_factory=p.factory)
            else:
                inner = core_schema.with_default_schema(inner, default=p.default)
                if p.default is None and opts.optional_style == "compact" and _drop_null(schema):
                    pass  # not required, so the null branch and `default: null` add nothing a client needs
                else:
                    try:
                        schema["default"] = pydantic_core.to_jsonable_python(p.default)
                    except Exception:
                        problems.append(f"parameter {p.name}: default {p.default!r} is not JSON-serialisable")
            fields[p.name] = core_schema.typed_dict_field(inner, required=False)
        properties[p.name] = schema
    root: dict[str, Any] = {"type": "object"}
    if properties:
        root["properties"] = properties
    if required:
        root["required"] = required
    root["additionalProperties"] = False
    if defs:
        root["$defs"] = defs
        if opts.inline_defs:
            root = inline_defs(root)
    validator = pydantic_core.SchemaValidator(core_schema.typed_dict_schema(fields, extra_behavior="forbid"))
    return root, validator


def _drop_null(schema: dict[str, Any]) -> bool:
    """Turn `anyOf [T, null]` into `T`. False when the schema has no null branch to drop."""
    branches = schema.get("anyOf")
    if not isinstance(branches, list) or {"type": "null"} not in branches:
        return False
    rest = [b for b in branches if b != {"type": "null"}]
    del schema["anyOf"]
    if len(rest) == 1 and isinstance(rest[0], dict):
        merged = {**rest[0], **schema}
        schema.clear()
        schema.update(merged)
    else:
        schema["anyOf"] = rest
    schema.pop("default", None)
    return True


def _merge_defs(schema: dict[str, Any], into: dict[str, Any]) -> None:
    """Move `schema`'s `$defs` into `into`, renaming a definition whose name is taken by a different one."""
    local = schema.pop("$defs", None)
    if not local:
        return
    renames: dict[str, str] = {}
    for name, definition in local.items():
        target = name
        n = 2
        while target in into and into[target] != definition:
            target = f"{name}{n}"
            n += 1
        if target != name:
            renames[name] = target
    if renames:
        text = to_json_text({"s": schema, "d": local})
        for old, new in renames.items():
            text = text.replace(f'"#/$defs/{old}"', f'"#/$defs/{new}"')
        loaded = pydantic_core.from_json(text)
        schema.clear()
        schema.update(loaded["s"])
        local = {renames.get(k, k): v for k, v in loaded["d"].items()}
    into.update(local)


def _output(
    name: str, annotation: Any, structured: bool | None, inline: bool, problems: list[str]
) -> tuple[Callable[[Any], CallToolResult], dict[str, Any] | None, bool, dict[str, Any] | None]:
    """Choose the return-value converter and the output schema: (convert, raw schema, wraps, wire schema)."""
    no_schema = annotation is inspect.Signature.empty or annotation is None or annotation is type(None)
    if structured is False or no_schema or _is_content_type(annotation):
        if structured:
            problems.append("structured=True needs a return annotation describing JSON data")
        allow = structured is not False

        def convert_plain(value: Any) -> CallToolResult:
            return unstructured_result(value, allow_structured=allow)

        return convert_plain, None, False, None
    if structured is None and not is_object_like(annotation):

        def convert_unstructured(value: Any) -> CallToolResult:
            return unstructured_result(value, allow_structured=False)

        return convert_unstructured, None, False, None
    try:
        info = type_info(annotation, "serialization")
    except Exception as exc:
        problems.append(f"return type {_type_name(annotation)} has no JSON schema ({exc})")
        return unstructured_result_any, None, False, None
    raw = info.schema()
    if inline and "$defs" in raw:
        raw = inline_defs(raw)
    wraps = raw.get("type") != "object"
    wire = {"type": "object", "properties": {"result": raw}, "required": ["result"]} if wraps else raw
    if wraps and "$defs" in raw:
        wire = {"$defs": raw["$defs"], **wire}
        wire["properties"] = {"result": {k: v for k, v in raw.items() if k != "$defs"}}
    adapter = info.adapter

    def convert_structured(value: Any) -> CallToolResult:
        if isinstance(value, CallToolResult):
            return value
        try:
            data = adapter.dump_python(adapter.validate_python(value), mode="json")
        except pydantic.ValidationError as exc:
            problems_text = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors(include_url=False)
            )
            logger.error("tool %r returned a value that does not match its output schema: %s", name, problems_text)
            return _error_result(f"tool {name!r} returned a value that does not match its output schema")
        text = to_json_text(data)
        return CallToolResult(content=[TextContent(text=text)], structured_content={"result": data} if wraps else data)

    return convert_structured, raw, wraps, wire


def unstructured_result_any(value: Any) -> CallToolResult:
    return unstructured_result(value, allow_structured=True)


def _is_content_type(annotation: Any) -> bool:
    from ._content import Audio, Image

    plain = (*CONTENT_TYPES, CallToolResult, Image, Audio)
    if isinstance(annotation, type):
        return issubclass(annotation, plain)
    origin = get_origin(annotation)
    if origin in (list, typing.Union, types.UnionType, tuple):
        args = [a for a in get_args(annotation) if a is not Ellipsis]
        return bool(args) and all(_is_content_type(a) for a in args)
    return False


def _type_name(annotation: Any) -> str:
    return getattr(annotation, "__qualname__", None) or repr(annotation)


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


def _error_result(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=text)], is_error=True)


# -- the decorator -----------------------------------------------------------------------------------


@overload
def tool(fn: Callable[P, R], /) -> Tool[P, R]: ...
@overload
def tool(
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    read_only: bool | None = None,
    destructive: bool | None = None,
    idempotent: bool | None = None,
    open_world: bool | None = None,
    icons: Sequence[Icon | Mapping[str, Any]] | None = None,
    meta: Mapping[str, Any] | None = None,
    structured: bool | None = None,
    docstring_style: DocstringStyle | None = None,
    require_param_docs: bool = False,
    inline_defs: bool = True,
    optional_style: OptionalStyle = "compact",
    show_error_details: bool = False,
) -> Callable[[Callable[P, R]], Tool[P, R]]: ...
def tool(fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
    """Make a function an MCP tool.

    Use it bare (`@tool`) or with keyword-only options (`@tool(read_only=True)`). Everything is derived here,
    once: a signature problem raises [`ToolDefinitionError`][toolkit.ToolDefinitionError] listing every
    problem, naming the function.

    Args:
        name: The tool's name; defaults to the function's name. Must match `^[A-Za-z0-9_.-]{1,128}$`.
        title: A human-readable title (also sent as `annotations.title`).
        description: Overrides the docstring's summary and body.
        read_only: `readOnlyHint`: the tool does not change its environment.
        destructive: `destructiveHint`: the tool may destroy data (spec default when omitted: true).
        idempotent: `idempotentHint`: calling twice with the same arguments has no further effect.
        open_world: `openWorldHint`: the tool reaches outside systems (spec default when omitted: true).
        icons: Icons for clients to display.
        meta: The definition's `_meta`.
        structured: `None` (auto) gives an `outputSchema` for object-like return types; `True` for any type
            (wrapping non-objects as `{"result": ...}`); `False` never.
        docstring_style: `"google"`, `"numpy"` or `"sphinx"`; detected when not given.
        require_param_docs: Make a parameter without a description a definition error.
        inline_defs: Inline `$defs` (default; recursive types keep theirs). `False` keeps every `$defs`.
        optional_style: `"compact"` (default) describes `x: T | None = None` as an optional `T`;
            `"faithful"` keeps `anyOf [T, null]` with `default: null`.
        show_error_details: Send exception types and messages to the client (off: a generic message).
    """
    localns = _caller_locals()
    opts = _Options(**options)
    if fn is not None:
        return Tool(fn, opts, localns)

    def decorate(func: Callable[P, R]) -> Tool[P, R]:
        return Tool(func, opts, localns)

    return decorate


def _caller_locals() -> Mapping[str, Any] | None:
    """Locals of the scope that applied `@tool`, so that types defined in a function body resolve."""
    frame = sys._getframe(2)  # noqa: SLF001
    if frame.f_code.co_name == "<module>":
        return None
    return frame.f_locals


