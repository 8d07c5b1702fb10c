"""Return values to content blocks: `Image` and `Audio` helpers and the generic conversion."""

from __future__ import annotations

import base64
import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args, get_origin

import pydantic
import pydantic_core

from toolkit._errors import OutputMismatchError
from toolkit._protocol.types import CONTENT_TYPES, AudioContent, CallToolResult, ImageContent, TextContent

from .schema import OutputSchema, is_object_like, output_schema
from .signature import first_sentence, is_class, type_name

__all__ = [
    "Audio",
    "Image",
    "bare_output",
    "bare_wire",
    "converter",
    "scalar_text",
    "structured_converter",
    "to_json_text",
    "unstructured_result",
    "wire_converter",
]

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"ID3", "audio/mpeg"),
    (b"\xff\xfb", "audio/mpeg"),
    (b"\xff\xf3", "audio/mpeg"),
    (b"\xff\xf2", "audio/mpeg"),
    (b"OggS", "audio/ogg"),
    (b"fLaC", "audio/flac"),
)


def _sniff(data: bytes) -> str | None:
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "audio/wav"
    if data.lstrip()[:5] in (b"<svg ", b"<?xml"):
        return "image/svg+xml"
    return None


@dataclass(frozen=True)
class _Media:
    data: bytes | None = None
    path: str | Path | None = None
    mime_type: str | None = None

    def __post_init__(self) -> None:
        if (self.data is None) == (self.path is None):
            raise ValueError(f"{type(self).__name__} takes exactly one of data= or path=")
        if self.data is not None and not isinstance(self.data, (bytes, bytearray, memoryview)):
            raise TypeError(f"{type(self).__name__}(data=...) takes bytes; use path= for a file")

    def _load(self, default: str) -> tuple[str, str]:
        raw = bytes(self.data) if self.data is not None else Path(self.path).read_bytes()  # type: ignore[arg-type]
        mime = self.mime_type or _sniff(raw)
        if mime is None and self.path is not None:
            import mimetypes  # only a file whose bytes say no type needs it (its tables load on first use)

            mime = mimetypes.guess_type(str(self.path))[0]
        return base64.b64encode(raw).decode("ascii"), mime or default


class Image(_Media):
    """An image to return from a tool, from bytes or a file; the MIME type is detected when not given.

    Example:
        ```python
        from toolkit import Image, tool

        @tool
        def logo() -> Image:
            return Image(data=b"\\x89PNG\\r\\n\\x1a\\n...")
        ```
    """

    def to_content(self) -> ImageContent:
        """The `ImageContent` block for this image."""
        data, mime = self._load("application/octet-stream")
        return ImageContent(data=data, mime_type=mime)


class Audio(_Media):
    """Audio to return from a tool, from bytes or a file; the MIME type is detected when not given."""

    def to_content(self) -> AudioContent:
        """The `AudioContent` block for this audio."""
        data, mime = self._load("application/octet-stream")
        return AudioContent(data=data, mime_type=mime)


def to_json_text(value: Any) -> str:
    """Compact JSON, as the text mirror of structured content."""
    return pydantic_core.to_json(value, serialize_unknown=False, inf_nan_mode="null", bytes_mode="base64").decode()


def scalar_text(value: Any) -> str | None:
    """The text block's text for a `str`, `int`, `float` or `bool` return value; None for any other type."""
    kind = type(value)
    if kind is str:
        return value  # type: ignore[no-any-return]
    if kind is int or kind is float or kind is bool:
        return pydantic_core.to_json(value, inf_nan_mode="null").decode()
    return None


def _block(value: Any) -> Any:
    if isinstance(value, CONTENT_TYPES):
        return value
    if isinstance(value, (Image, Audio)):
        return value.to_content()
    return None


def _blocks(value: Any) -> list[Any] | None:
    """Content blocks for a string, a block, or a non-empty list of blocks; None for anything else."""
    if isinstance(value, str):
        return [TextContent(text=value)]
    block = _block(value)
    if block is not None:
        return [block]
    if isinstance(value, (list, tuple)) and value:
        blocks = [_block(item) for item in value]
        if all(b is not None for b in blocks):
            return blocks
    return None


def unstructured_result(value: Any, *, allow_structured: bool) -> CallToolResult:
    """Convert a return value for a tool that has no output schema.

    `str` is one text block, `None` no content, content blocks (alone or in a list) pass through, an
    object-like value gives `structuredContent` (when allowed) plus its JSON as text, anything else is JSON text.

    Raises:
        pydantic_core.PydanticSerializationError: the value cannot be turned into JSON.
    """
    text = scalar_text(value)
    if text is not None:
        return CallToolResult(content=[TextContent(text=text)])
    if value is None:
        return CallToolResult(content=[])
    if isinstance(value, CallToolResult):
        return value
    blocks = _blocks(value)
    if blocks is not None:
        return CallToolResult(content=blocks)
    jsonable = pydantic_core.to_jsonable_python(value, inf_nan_mode="null", bytes_mode="base64")
    text = to_json_text(jsonable)
    if allow_structured and isinstance(jsonable, dict):
        return CallToolResult(content=[TextContent(text=text)], structured_content=jsonable)
    return CallToolResult(content=[TextContent(text=text)])


def structured_converter(adapter: pydantic.TypeAdapter[Any], *, wraps: bool) -> Callable[[Any], CallToolResult]:
    """Convert a return value of a tool that has an output schema: validate it, then dump it once.

    The value becomes `structuredContent` (as `{"result": value}` when `wraps`) plus its compact JSON as text.
    A returned `CallToolResult` passes through.

    Raises:
        OutputMismatchError: the value does not match the schema (so it is never sent as if it did).
    """

    def convert(value: Any) -> CallToolResult:
        if isinstance(value, CallToolResult):
            return value
        data, text = _checked(adapter, value)
        return CallToolResult(content=[TextContent(text=text)], structured_content={"result": data} if wraps else data)

    return convert


def _checked(adapter: pydantic.TypeAdapter[Any], value: Any) -> tuple[Any, str]:
    """The value validated against the output schema and dumped to JSON data, and that data as compact JSON."""
    try:
        data = adapter.dump_python(adapter.validate_python(value), mode="json")
    except pydantic.ValidationError as exc:
        raise _mismatch(exc) from None
    return data, to_json_text(data)


def _mismatch(exc: pydantic.ValidationError) -> OutputMismatchError:
    problems = "; ".join(
        f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors(include_url=False)
    )
    return OutputMismatchError(problems)


def bare_wire(output: OutputSchema) -> Callable[[Any], dict[str, Any]]:
    """2026-07-28's wire result of a tool whose return type is not an object (`bare_output`): the value validated,
    as `structuredContent` and as its compact JSON text. One function a call, as the plain path of the other era.

    Raises:
        OutputMismatchError: the value does not match the output schema.
        pydantic_core.PydanticSerializationError: the value cannot be turned into JSON.
    """
    validate, dump = output.adapter.validate_python, output.adapter.dump_python

    def bare(value: Any) -> dict[str, Any]:
        if isinstance(value, CallToolResult):
            return _dump(value)
        try:
            data = dump(validate(value), mode="json")
        except pydantic.ValidationError as exc:
            raise _mismatch(exc) from None
        # `to_json_text`, inlined (the hop figure); then what CallToolResult's dump does: NaN and infinities are null
        text = pydantic_core.to_json(data, serialize_unknown=False, inf_nan_mode="null", bytes_mode="base64").decode()
        data = pydantic_core.to_jsonable_python(data, inf_nan_mode="null")
        return {"content": [{"type": "text", "text": text}], "structuredContent": data, "isError": False}

    return bare


def wire_converter(
    convert: Callable[[Any], CallToolResult], output: OutputSchema | None
) -> Callable[[Any], dict[str, Any]]:
    """`convert`'s result already dumped to its wire form (`model_dump(mode="json", by_alias=True,
    exclude_none=True)`), built directly, without the models, for scalars and for structured results.

    Raises:
        OutputMismatchError: the value does not match the output schema.
        pydantic_core.PydanticSerializationError: the value cannot be turned into JSON.
    """
    if output is None:

        def plain(value: Any) -> dict[str, Any]:
            # `scalar_text`, inlined: this runs on every call of most tools.
            kind = type(value)
            if kind is str:
                text = value
            elif kind is int or kind is float or kind is bool:
                text = pydantic_core.to_json(value, inf_nan_mode="null").decode()
            else:
                return _dump(convert(value))
            return {"content": [{"type": "text", "text": text}], "isError": False}

        return plain
    adapter, wraps = output.adapter, output.wraps

    def structured(value: Any) -> dict[str, Any]:
        if isinstance(value, CallToolResult):
            return _dump(value)
        data, text = _checked(adapter, value)
        # What CallToolResult's own dump would do to the data: NaN and infinities become null.
        data = pydantic_core.to_jsonable_python(data, inf_nan_mode="null")
        wire: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
        if wraps:
            wire["structuredContent"] = {"result": data}
        elif data is not None:
            wire["structuredContent"] = data
        wire["isError"] = False
        return wire

    return structured


def _dump(result: CallToolResult) -> dict[str, Any]:
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


def converter(
    annotation: Any, structured: bool | None, *, inline: bool, problems: list[str]
) -> tuple[Callable[[Any], CallToolResult], OutputSchema | None, OutputSchema | None]:
    """Choose the return-value converter and, for structured results, the output schema; and the output schema
    2026-07-28 alone gets (`bare_output`).

    The one rule (docs/tools.md, Results): an annotation that always describes a JSON object (or
    `structured=True`) gives an `outputSchema`, and then every result carries `structuredContent` that matches
    it. Without an output schema, the value decides: one whose JSON is an object is sent as `structuredContent`
    too, whatever the annotation says (`Any`, `Model | None`, none at all), so the same value gives the same
    result. `structured=False` sends none. In 2026-07-28, whose `structuredContent` may be any JSON value
    (SEP-2106), a return type that is not an object (`int`, `list[str]`) gives its own schema and the bare value
    too. Problems (a return type without a JSON schema) are appended to `problems`.
    """
    if structured is False or _describes_no_data(annotation):
        return _without_schema(structured, problems), None, None
    if structured is None and not is_object_like(annotation):
        return _plain_or_structured, None, bare_output(annotation, inline=inline)
    try:
        output = output_schema(annotation, inline=inline)
    except Exception as exc:
        problems.append(f"return type {type_name(annotation)} has no JSON schema: {first_sentence(exc)}")
        return _plain, None, None
    return structured_converter(output.adapter, wraps=output.wraps), output, None


def _describes_no_data(annotation: Any) -> bool:
    """No return annotation, `None`, or a content type: no JSON data for a schema to describe."""
    if annotation is inspect.Signature.empty or annotation is None or annotation is type(None):
        return True
    return _is_content_type(annotation)


def _without_schema(structured: bool | None, problems: list[str]) -> Callable[[Any], CallToolResult]:
    """The converter of a return type without an output schema: plain content for `structured=False`, else content
    and, for a value whose JSON is an object, `structuredContent` (`structured=True` there is a problem)."""
    if structured:
        problems.append("structured=True needs a return annotation describing JSON data")
    if structured is False:
        return _plain
    return _plain_or_structured


def bare_output(annotation: Any, *, inline: bool) -> OutputSchema | None:
    """The output schema 2026-07-28 alone gets for a return type that is not an object (SEP-2106: `outputSchema`
    may be any JSON Schema, `structuredContent` any JSON value): its own schema, never wrapped; 2025-11-25 allows
    only objects there, so its clients get the value as text, as before.

    None for a string (its text block is the value already: a long text is not sent twice), for a type that admits
    null (a null `structuredContent` cannot be told from none), for a type that says nothing of some part of the
    value (`Any`, `list[Any]`: it may hold content blocks), and for one with no JSON schema (its value decides, as
    without an annotation).
    """
    try:
        output = output_schema(annotation, inline=inline)
    except Exception:
        return None
    raw = output.raw
    if raw.get("type") == "string" or _admits_null(raw) or _holds_any(raw):
        return None
    return OutputSchema(output.adapter, raw, raw, False)


def _holds_any(schema: dict[str, Any]) -> bool:
    """Whether some part of the value is `Any` (an empty schema: `list[Any]`): what it holds decides at run time,
    content blocks included (a list of text, images and resources is the result's content, not a JSON value)."""
    if not schema:
        return True
    parts = [schema.get("items"), schema.get("additionalProperties")]
    parts += [*(schema.get("anyOf") or ()), *(schema.get("oneOf") or ()), *(schema.get("prefixItems") or ())]
    return any(isinstance(part, dict) and _holds_any(part) for part in parts)


def _admits_null(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    members = schema.get("anyOf") or schema.get("oneOf") or ()
    return any(isinstance(m, dict) and _admits_null(m) for m in members)


def _plain(value: Any) -> CallToolResult:
    return unstructured_result(value, allow_structured=False)


def _plain_or_structured(value: Any) -> CallToolResult:
    return unstructured_result(value, allow_structured=True)


def _is_content_type(annotation: Any) -> bool:
    plain = (*CONTENT_TYPES, CallToolResult, Image, Audio)
    if is_class(annotation):
        return issubclass(annotation, plain)
    origin = get_origin(annotation)
    if origin is typing.Annotated:  # ContentBlock: the union of the content types, with its discriminator
        return _is_content_type(get_args(annotation)[0])
    if origin in (list, typing.Union, types.UnionType, tuple):
        args = [a for a in get_args(annotation) if a is not Ellipsis]
        return bool(args) and all(_is_content_type(a) for a in args)
    return False
