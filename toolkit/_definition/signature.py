"""A function's signature, read once: resolved annotations, parameters, and where their descriptions come from."""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeGuard, get_args, get_origin

import pydantic
import pydantic_core
from pydantic.fields import FieldInfo

from toolkit._markers import ContextMarker

if TYPE_CHECKING:
    import ast

__all__ = [
    "NOTIFYING",
    "TELLING",
    "Arg",
    "Param",
    "base64_bytes",
    "cache_key",
    "collect_params",
    "context_uses",
    "first_sentence",
    "in_class_body",
    "signature_args",
    "type_hints",
    "type_name",
]

_EMPTY: Any = inspect.Parameter.empty
_POSITIONAL_ONLY = inspect.Parameter.POSITIONAL_ONLY
_POSITIONAL_OR_KEYWORD = inspect.Parameter.POSITIONAL_OR_KEYWORD
_VAR_POSITIONAL = inspect.Parameter.VAR_POSITIONAL
_KEYWORD_ONLY = inspect.Parameter.KEYWORD_ONLY
_VAR_KEYWORD = inspect.Parameter.VAR_KEYWORD


def base64_bytes(annotation: Any) -> Any:
    """Arguments arrive as JSON, so `bytes` parameters take base64 text."""
    if annotation is bytes:
        return pydantic.Base64Bytes
    origin = get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return typing.Union[tuple(base64_bytes(a) for a in get_args(annotation))]  # noqa: UP007
    if origin in (list, set, frozenset) and get_args(annotation):
        return origin[base64_bytes(get_args(annotation)[0])]
    return annotation


class Param(typing.NamedTuple):
    """One tool parameter, as the signature, `Annotated` metadata, `Field` and docstring describe it."""

    name: str
    annotation: Any
    default: Any
    """`inspect.Parameter.empty` when the parameter is required."""
    factory: Callable[[], Any] | None
    description: str | None
    examples: list[Any] | None


def cache_key(annotation: Any, *extra: object) -> tuple[object, ...] | None:
    """A key under which `annotation`'s derived data may be memoised; None when it cannot be.

    Typing objects compare unions and literals as sets (`int | str == str | int`), but their order shows in the
    schema (`anyOf`, `enum`) and decides ties in validation, so the key holds the `repr` too, which keeps it.
    """
    try:
        key = (annotation, repr(annotation), *extra)
        hash(key)
    except Exception:  # unhashable metadata inside Annotated, or a repr that fails
        return None
    return key


class Arg(typing.NamedTuple):
    """One parameter of a signature, as `inspect.Parameter` gives it (annotation not resolved)."""

    name: str
    kind: int
    """An `inspect.Parameter` kind."""
    default: Any
    """`inspect.Parameter.empty` when there is none."""
    annotated: bool


def signature_args(fn: Callable[..., Any]) -> list[Arg]:
    """The parameters of `fn`, as `inspect.signature` lists them.

    A plain function is read from its code object directly, as `inspect.signature` itself does, without building
    `Parameter` and `Signature` objects (a quarter of the cost of defining a tool was spent there). Anything
    else (wrapped functions, partials, callable objects, an explicit `__signature__`) goes through `inspect`.

    Raises:
        TypeError: `fn` has no signature.
        ValueError: `fn` has no signature.
    """
    if type(fn) is not types.FunctionType or hasattr(fn, "__wrapped__") or hasattr(fn, "__signature__"):
        return [
            Arg(p.name, p.kind, p.default, p.annotation is not _EMPTY)
            for p in inspect.signature(fn).parameters.values()
        ]
    return _code_args(fn)


def _code_args(fn: types.FunctionType) -> list[Arg]:
    """A plain function's parameters, read from its code object: in the order `inspect.signature` gives them."""
    code = fn.__code__
    names = code.co_varnames
    annotations = fn.__annotations__
    keyword_defaults = fn.__kwdefaults__ or {}
    args = _positional_args(fn)
    index = code.co_argcount + code.co_kwonlyargcount  # the variadic parameters' names follow the named ones
    if code.co_flags & inspect.CO_VARARGS:
        args.append(Arg(names[index], _VAR_POSITIONAL, _EMPTY, names[index] in annotations))
        index += 1
    for name in names[code.co_argcount : code.co_argcount + code.co_kwonlyargcount]:
        args.append(Arg(name, _KEYWORD_ONLY, keyword_defaults.get(name, _EMPTY), name in annotations))
    if code.co_flags & inspect.CO_VARKEYWORDS:
        args.append(Arg(names[index], _VAR_KEYWORD, _EMPTY, names[index] in annotations))
    return args


def _positional_args(fn: types.FunctionType) -> list[Arg]:
    """A plain function's positional parameters (positional-only ones first), the last ones with its defaults."""
    code = fn.__code__
    names = code.co_varnames
    defaults = fn.__defaults__ or ()
    first_default = code.co_argcount - len(defaults)
    return [
        Arg(
            names[i],
            _POSITIONAL_ONLY if i < code.co_posonlyargcount else _POSITIONAL_OR_KEYWORD,
            defaults[i - first_default] if i >= first_default else _EMPTY,
            names[i] in fn.__annotations__,
        )
        for i in range(code.co_argcount)
    ]


def type_hints(fn: Callable[..., Any], localns: Mapping[str, Any] | None, problems: list[str]) -> dict[str, Any]:
    """Resolve the annotations (string ones too); report each one that cannot be resolved."""
    if type(fn) is types.FunctionType and all(_resolved(value) for value in fn.__annotations__.values()):
        # Nothing to resolve: what get_type_hints returns for these, at a fraction of the cost.
        return {key: type(None) if value is None else value for key, value in fn.__annotations__.items()}
    local = dict(localns) if localns else None
    annotated = _annotations_holder(fn)
    try:
        return typing.get_type_hints(annotated, localns=local, include_extras=True)
    except Exception:
        return _hints_one_by_one(annotated, local, problems)


def _annotations_holder(fn: Callable[..., Any]) -> Any:
    """What holds a callable's annotations: a callable object's are its class's `__call__`'s, a partial's its
    function's."""
    if isinstance(fn, functools.partial):
        return fn.func
    if not isinstance(fn, (types.FunctionType, types.MethodType, type)):
        return getattr(type(fn), "__call__", fn)  # noqa: B004 - the method itself, not a test for callability
    return fn


def _hints_one_by_one(fn: Any, local: dict[str, Any] | None, problems: list[str]) -> dict[str, Any]:
    """Resolve the annotations one by one, so that the error names every annotation that failed and keeps the
    others."""
    hints: dict[str, Any] = {}
    for key, annotation in getattr(fn, "__annotations__", {}).items():
        probe = _Probe({key: annotation}, getattr(fn, "__globals__", {}))
        try:
            hints.update(typing.get_type_hints(probe, localns=local, include_extras=True))
        except Exception as exc:
            what = "return annotation" if key == "return" else f"parameter {key}"
            problems.append(f"{what}: {annotation!r} cannot be resolved: {type(exc).__name__}: {exc}")
            hints[key] = _UNRESOLVED
    return hints


def _resolved(annotation: Any) -> bool:
    """True when `annotation` holds no string or forward reference, so that `get_type_hints` returns it as is."""
    if type(annotation) is type or annotation is None:
        return True
    if isinstance(annotation, (str, typing.ForwardRef)):
        return False
    if isinstance(annotation, (list, tuple)):  # the parameter list of a Callable
        return all(_resolved(item) for item in annotation)
    origin = get_origin(annotation)
    if origin is typing.Literal:
        return True  # its strings are values, not references
    args = get_args(annotation)
    if origin is typing.Annotated:
        return _resolved(args[0])  # the metadata is never resolved
    return all(_resolved(arg) for arg in args)


class _Probe:
    def __init__(self, annotations: dict[str, Any], globalns: dict[str, Any]) -> None:
        self.__annotations__ = annotations
        self.__globals__ = globalns


_UNRESOLVED = object()
_UNREAD = object()


def collect_params(
    parameters: list[Arg], hints: dict[str, Any], docs: Mapping[str, str], problems: list[str]
) -> tuple[list[Param], str | None]:
    """The schema's parameters, and the name of the parameter that receives the Context (if any)."""
    params: list[Param] = []
    context: str | None = None
    for p in parameters:
        annotation = hints.get(p.name, _UNREAD if p.annotated else _EMPTY)
        if not _usable(p, annotation, problems):
            continue
        prepared = _prepared(annotation)
        if prepared is None:
            context = p.name
        else:
            params.append(_param(p, prepared, docs.get(p.name)))
    problems.extend(_strays(docs, {p.name for p in parameters}))
    return params, context


def _usable(p: Arg, annotation: Any, problems: list[str]) -> bool:
    """Whether a parameter can be passed by name and has a resolved annotation; what it lacks goes to `problems`."""
    if p.kind in (_VAR_POSITIONAL, _VAR_KEYWORD):
        star = "*" if p.kind == _VAR_POSITIONAL else "**"
        problems.append(f"parameter {star}{p.name}: variadic parameters cannot be described by a schema")
    elif p.kind == _POSITIONAL_ONLY:
        problems.append(f"parameter {p.name}: positional-only parameters cannot be passed by name")
    elif annotation is _EMPTY:
        problems.append(f"parameter {p.name}: missing type annotation")
    elif annotation is _UNREAD:
        problems.append(f"parameter {p.name}: the signature has an annotation the function's do not have")
    else:
        return annotation is not _UNRESOLVED  # one that could not be resolved is reported already
    return False


def _strays(docs: Mapping[str, str], names: set[str]) -> list[str]:
    """A problem for each parameter the docstring documents that the signature does not have."""
    import difflib  # only a tool with a stray docstring parameter needs it: not imported at start (issue 40)

    problems: list[str] = []
    for documented in docs:
        if documented not in names:
            close = difflib.get_close_matches(documented, sorted(names), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            problems.append(f"docstring documents {documented!r}, which is not a parameter{hint}")
    return problems


# What a Context offers that needs nothing of the call's asking: notifications, and what the call knows.
TELLING = frozenset(
    {
        "report_progress", "log", "debug", "info", "warning", "error",
        "request_id", "client_info", "protocol_version", "lifespan_context", "identity", "cancelled",
        "show_error_details",
    }
)  # fmt: skip
# And what neither asks the client nor closes the response: the above, and what the client declared it can do (read
# from the call's asking, so a tool that reads it is given one).
NOTIFYING = TELLING | {"client_capabilities", "can_elicit", "can_sample", "can_list_roots"}
# What asks the client, confirms or closes the response (and reads the capabilities): a name the compiled code itself
# uses counts as a use whatever the source read from disk says (it may have changed since the function was compiled).
_ASKING = frozenset(
    {
        "elicit", "elicit_url", "sample", "confirm", "list_roots", "together", "begin_task", "close_sse_stream",
        "client_capabilities", "can_elicit", "can_sample", "can_list_roots",
    }
)  # fmt: skip
_OPAQUE = frozenset({"locals", "vars", "eval", "exec", "globals"})


def context_uses(fn: Callable[..., Any], param: str) -> frozenset[str] | None:
    """The members of its Context parameter `param` that `fn`'s own source reads (`ctx.<member>`); None when the
    Context is used any other way (handed on as an argument, bound to a variable, returned: what receives it might
    ask) or when that cannot be told: no source, a wrapper (`__wrapped__`), `param` not one of the function's own
    parameters, `locals()` and the like. Read once per tool, by whoever needs it (`Tool.only_notifies`,
    `Tool.asks`)."""
    tree = _own_source(fn, param)
    if tree is None:
        return None
    uses = _member_reads(tree, param)
    if uses is None:
        return None
    return frozenset(uses | (_code_names(fn.__code__) & _ASKING))


def _own_source(fn: Callable[..., Any], param: str) -> ast.Module | None:
    """The parsed source of a function whose own parameter `param` is; None for a wrapper, another's parameter, or
    a function whose source cannot be read."""
    import ast  # deferred: only servers that need the answer read a tool's source
    import textwrap

    code = getattr(fn, "__code__", None)
    if hasattr(fn, "__wrapped__") or code is None:
        return None
    if param not in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]:
        return None
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None


def _member_reads(tree: ast.Module, param: str) -> set[str] | None:
    """The members of `param` the code reads (`param.<member>`); None when it uses `param` any other way, or uses
    `locals()` and the like."""
    import ast

    uses: set[str] = set()
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.Name) or (child.id != param and child.id not in _OPAQUE):
                continue
            if child.id in _OPAQUE or not isinstance(node, ast.Attribute) or not isinstance(child.ctx, ast.Load):
                return None
            uses.add(node.attr)
    return uses


def _code_names(code: Any) -> set[str]:
    """Every name a compiled function and the functions nested in it use (attributes, globals)."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _code_names(const)
    return names


def in_class_body(qualname: str) -> bool:
    parts = qualname.split(".")
    return len(parts) >= 2 and parts[-2] != "<locals>"


def _is_context(annotation: Any) -> bool:
    """`Context`, `Context[AppState]` or either `| None`: recognised by its marker base (`toolkit._markers`)."""
    if isinstance(annotation, type) and issubclass(annotation, ContextMarker):
        return True
    origin = get_origin(annotation)
    if isinstance(origin, type) and issubclass(origin, ContextMarker):  # Context[AppState]
        return True
    if origin is typing.Union or origin is types.UnionType:
        args = [a for a in get_args(annotation) if a is not type(None)]
        return len(args) == 1 and _is_context(args[0])
    return False


def _param(p: Arg, prepared: tuple[Any, str | None], doc: str | None) -> Param:
    examples: list[Any] | None = None
    default: Any = p.default
    factory: Callable[[], Any] | None = None
    annotation, description = prepared
    if isinstance(default, FieldInfo):
        field = default
        description = field.description or description
        examples = field.examples
        factory = field.default_factory  # type: ignore[assignment]
        default = field.default if field.default is not pydantic_core.PydanticUndefined else _EMPTY
        if field.metadata:
            annotation = _annotated(annotation, field.metadata)
    return Param(p.name, annotation, default, factory, description or doc, examples)


# Bounded like `schema.py`'s type cache, and for the same reason: the keys keep their annotations alive.
_PREPARED: dict[tuple[object, ...], tuple[Any, str | None] | None] = {}
_PREPARED_SIZE = 1024


def _prepared(annotation: Any) -> tuple[Any, str | None] | None:
    """`_prepare(annotation)`, memoised, or None for the Context parameter."""
    key = cache_key(annotation)
    if key is not None and key in _PREPARED:
        return _PREPARED[key]
    prepared = None if _is_context(annotation) else _prepare(annotation)
    if key is not None:
        if len(_PREPARED) >= _PREPARED_SIZE:
            del _PREPARED[next(iter(_PREPARED))]
        _PREPARED[key] = prepared
    return prepared


def _prepare(annotation: Any) -> tuple[Any, str | None]:
    """The annotation to validate with (`bytes` as base64, description strings dropped) and its description."""
    description: str | None = None
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
        return _annotated(base64_bytes(base), kept), description
    if get_origin(annotation) in (typing.Union, types.UnionType):
        # `Tag | None` says what `Tag` says (an alias with a description): the same precedence as `tag: Tag`, code
        # over the docstring, whether or not the parameter may be None.
        described = {_prepare(arg)[1] for arg in get_args(annotation) if get_origin(arg) is typing.Annotated} - {None}
        description = described.pop() if len(described) == 1 else None
    return base64_bytes(annotation), description


def _annotated(annotation: Any, metadata: Sequence[Any]) -> Any:
    if not metadata:
        return annotation
    args = (annotation, *metadata)
    return typing.Annotated[args]


def is_class(annotation: object) -> TypeGuard[type[Any]]:
    """A class, not a parametrized generic such as `list[int]` or `collections.abc.Callable[[], int]`: on Python
    3.10 those pass `isinstance(..., type)` (their `__class__` is forwarded to the origin's; 3.11 stopped that), so
    that `list[Image]` would be taken for the class `list`, and named `list`."""
    return isinstance(annotation, type) and not isinstance(annotation, types.GenericAlias)


def type_name(annotation: Any) -> str:
    """A short, readable name for an annotation, for error messages."""
    if is_class(annotation):
        return annotation.__name__
    return repr(annotation).replace("typing.", "").replace("collections.abc.", "")


def first_sentence(exc: BaseException) -> str:
    """pydantic's schema errors run to several paragraphs and a URL; the first sentence says what is wrong."""
    text = str(exc).strip()
    return text.splitlines()[0].split(". ")[0].rstrip(".") if text else type(exc).__name__
