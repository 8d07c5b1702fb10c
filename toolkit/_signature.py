"""A function's signature, read once: resolved annotations, parameters, and where their descriptions come from."""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, get_args, get_origin

import pydantic
import pydantic_core
from pydantic.fields import FieldInfo

from ._context import Context

__all__ = ["Param", "base64_bytes", "collect_params", "first_sentence", "in_class_body", "type_hints", "type_name"]


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


def type_hints(fn: Callable[..., Any], localns: Mapping[str, Any] | None, problems: list[str]) -> dict[str, Any]:
    """Resolve the annotations (string ones too); report each one that cannot be resolved."""
    local = dict(localns) if localns else None
    try:
        return typing.get_type_hints(fn, localns=local, include_extras=True)
    except Exception:
        pass
    # Resolve one by one, so that the error names every annotation that failed and keeps the others.
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


class _Probe:
    def __init__(self, annotations: dict[str, Any], globalns: dict[str, Any]) -> None:
        self.__annotations__ = annotations
        self.__globals__ = globalns


_UNRESOLVED = object()


def collect_params(
    parameters: list[inspect.Parameter], hints: dict[str, Any], docs: Mapping[str, str], problems: list[str]
) -> tuple[list[Param], str | None]:
    """The schema's parameters, and the name of the parameter that receives the Context (if any)."""
    params: list[Param] = []
    context: str | None = None
    for p in parameters:
        annotation = hints.get(p.name, _UNRESOLVED if p.annotation is not p.empty else p.empty)
        if p.kind is p.VAR_POSITIONAL or p.kind is p.VAR_KEYWORD:
            star = "*" if p.kind is p.VAR_POSITIONAL else "**"
            problems.append(f"parameter {star}{p.name}: variadic parameters cannot be described by a schema")
        elif p.kind is p.POSITIONAL_ONLY:
            problems.append(f"parameter {p.name}: positional-only parameters cannot be passed by name")
        elif annotation is p.empty:
            problems.append(f"parameter {p.name}: missing type annotation")
        elif annotation is _UNRESOLVED:
            pass  # already reported
        elif _is_context(annotation):
            context = p.name
        else:
            params.append(_param(p, annotation, docs.get(p.name)))
    names = {p.name for p in parameters}
    problems.extend(f"docstring documents {d!r}, which is not a parameter" for d in docs if d not in names)
    return params, context


def in_class_body(qualname: str) -> bool:
    parts = qualname.split(".")
    return len(parts) >= 2 and parts[-2] != "<locals>"


def _is_context(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, Context):
        return True
    origin = get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        args = [a for a in get_args(annotation) if a is not type(None)]
        return len(args) == 1 and _is_context(args[0])
    return False


def _param(p: inspect.Parameter, annotation: Any, doc: str | None) -> Param:
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
        annotation = _annotated(base64_bytes(base), kept)
    else:
        annotation = base64_bytes(annotation)
    if isinstance(default, FieldInfo):
        field = default
        description = field.description or description
        examples = field.examples
        factory = field.default_factory  # type: ignore[assignment]
        default = field.default if field.default is not pydantic_core.PydanticUndefined else p.empty
        if field.metadata:
            annotation = _annotated(annotation, field.metadata)
    return Param(p.name, annotation, default, factory, description or doc, examples)


def _annotated(annotation: Any, metadata: Sequence[Any]) -> Any:
    if not metadata:
        return annotation
    args = (annotation, *metadata)
    return typing.Annotated[args]


def type_name(annotation: Any) -> str:
    """A short, readable name for an annotation, for error messages."""
    if isinstance(annotation, type):
        return annotation.__name__
    return repr(annotation).replace("typing.", "").replace("collections.abc.", "")


def first_sentence(exc: BaseException) -> str:
    """pydantic's schema errors run to several paragraphs and a URL; the first sentence says what is wrong."""
    text = str(exc).strip()
    return text.splitlines()[0].split(". ")[0].rstrip(".") if text else type(exc).__name__
