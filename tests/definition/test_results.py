"""What a tool returns, as the client receives it: content blocks, structured content, and conversion errors."""

import base64
import dataclasses
from pathlib import Path
from typing import Any, Optional

import anyio
import pytest
import wire as raw_wire
from pydantic import BaseModel
from typing_extensions import TypedDict

from toolkit import (
    Audio,
    AudioContent,
    CallToolResult,
    Client,
    ContentBlock,
    EmbeddedResource,
    Image,
    ImageContent,
    ResourceLink,
    Server,
    TextContent,
    TextResourceContents,
    Tool,
    tool,
)

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 8
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt "


class Weather(BaseModel):
    city: str
    celsius: float


class Totals(TypedDict):
    count: int


@dataclasses.dataclass
class Pair:
    left: int
    right: int


def wire(result: CallToolResult) -> dict[str, Any]:
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def call(tool_obj: Tool[..., Any]) -> dict[str, Any]:
    return wire(await tool_obj.run({}))


async def served(tool_obj: Tool[..., Any], arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a server sends for one call of the tool (2025-11-25, the revision `run` shows), read off the wire."""
    async with raw_wire.memory(Server("served", tools=[tool_obj])) as peer:
        await peer.initialize()
        result: dict[str, Any] = await peer.result("tools/call", {"name": tool_obj.name, "arguments": arguments or {}})
    return result


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# --- without an output schema -----------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain text", {"content": [{"type": "text", "text": "plain text"}], "isError": False}),
        (None, {"content": [], "isError": False}),
        (42, {"content": [{"type": "text", "text": "42"}], "isError": False}),
        ([1, "a", None], {"content": [{"type": "text", "text": '[1,"a",null]'}], "isError": False}),
        (b"\x00\xff", {"content": [{"type": "text", "text": '"AP8="'}], "isError": False}),
        (
            {"a": 1, "b": [True, 1.5]},
            {
                "content": [{"type": "text", "text": '{"a":1,"b":[true,1.5]}'}],
                "structuredContent": {"a": 1, "b": [True, 1.5]},
                "isError": False,
            },
        ),
        (
            Weather(city="Oslo", celsius=-3.5),
            {
                "content": [{"type": "text", "text": '{"city":"Oslo","celsius":-3.5}'}],
                "structuredContent": {"city": "Oslo", "celsius": -3.5},
                "isError": False,
            },
        ),
        (
            Pair(1, 2),
            {
                "content": [{"type": "text", "text": '{"left":1,"right":2}'}],
                "structuredContent": {"left": 1, "right": 2},
                "isError": False,
            },
        ),
    ],
    ids=["str", "none", "int", "list", "bytes", "dict", "model", "dataclass"],
)
async def test_an_unannotated_return_value_is_converted_by_its_kind(value: Any, expected: dict[str, Any]) -> None:
    @tool
    def give():  # type: ignore[no-untyped-def]
        return value

    assert await call(give) == expected


@pytest.mark.anyio
async def test_a_non_object_return_annotation_gives_json_text_without_structured_content() -> None:
    @tool
    def numbers() -> list[int]:
        return [1, 2]

    @tool(structured=False)
    def weather() -> Weather:
        return Weather(city="Oslo", celsius=1)

    assert numbers.definition.output_schema is None
    assert weather.definition.output_schema is None
    assert await call(numbers) == {"content": [{"type": "text", "text": "[1,2]"}], "isError": False}
    assert await call(weather) == {
        "content": [{"type": "text", "text": '{"city":"Oslo","celsius":1.0}'}],
        "isError": False,
    }


@pytest.mark.anyio
async def test_content_blocks_pass_through_alone_or_in_a_list() -> None:
    link = ResourceLink(uri="file:///tmp/report.pdf", name="report.pdf", mime_type="application/pdf")
    embedded = EmbeddedResource(resource=TextResourceContents(uri="memo://1", text="hello", mime_type="text/plain"))

    @tool
    def one() -> TextContent:
        return TextContent(text="hi")

    @tool
    def many() -> list[TextContent | ResourceLink | EmbeddedResource | Image]:
        return [TextContent(text="see"), link, embedded, Image(data=PNG)]

    assert one.definition.output_schema is None
    assert many.definition.output_schema is None
    assert await call(one) == {"content": [{"type": "text", "text": "hi"}], "isError": False}
    assert await call(many) == {
        "content": [
            {"type": "text", "text": "see"},
            {
                "type": "resource_link",
                "uri": "file:///tmp/report.pdf",
                "name": "report.pdf",
                "mimeType": "application/pdf",
            },
            {"type": "resource", "resource": {"uri": "memo://1", "mimeType": "text/plain", "text": "hello"}},
            {"type": "image", "data": b64(PNG), "mimeType": "image/png"},
        ],
        "isError": False,
    }


@pytest.mark.anyio
async def test_a_returned_call_tool_result_passes_through_unchanged() -> None:
    made = CallToolResult(content=[TextContent(text="custom")], structured_content={"city": "x"}, is_error=True)

    @tool
    def raw() -> CallToolResult:
        return made

    @tool
    def typed() -> Weather:
        return made  # type: ignore[return-value]

    # Equal, not the same object: `run` is the public view of what the server sends (one result path).
    assert await raw.run({}) == made
    assert await typed.run({}) == made


# --- images and audio -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("media", "expected"),
    [
        (Image(data=PNG), ImageContent(data=b64(PNG), mime_type="image/png")),
        (Image(data=JPEG), ImageContent(data=b64(JPEG), mime_type="image/jpeg")),
        (Image(data=b"GIF89a..."), ImageContent(data=b64(b"GIF89a..."), mime_type="image/gif")),
        (Image(data=b"RIFF\0\0\0\0WEBPVP8 "), ImageContent(data=b64(b"RIFF\0\0\0\0WEBPVP8 "), mime_type="image/webp")),
        (Image(data=b"<svg xmlns=''/>"), ImageContent(data=b64(b"<svg xmlns=''/>"), mime_type="image/svg+xml")),
        (Image(data=b"???", mime_type="image/x-custom"), ImageContent(data=b64(b"???"), mime_type="image/x-custom")),
        (Image(data=b"???"), ImageContent(data=b64(b"???"), mime_type="application/octet-stream")),
    ],
    ids=["png", "jpeg", "gif", "webp", "svg", "given", "unknown"],
)
def test_image_detects_its_mime_type_from_the_bytes(media: Image, expected: ImageContent) -> None:
    assert media.to_content() == expected


@pytest.mark.parametrize(
    ("data", "mime"),
    [
        (WAV, "audio/wav"),
        (b"ID3\x04", "audio/mpeg"),
        (b"\xff\xfb\x90", "audio/mpeg"),
        (b"OggS", "audio/ogg"),
        (b"fLaC", "audio/flac"),
    ],
)
def test_audio_detects_its_mime_type_from_the_bytes(data: bytes, mime: str) -> None:
    assert Audio(data=data).to_content() == AudioContent(data=b64(data), mime_type=mime)


def test_images_and_audio_from_a_path_use_the_bytes_then_the_file_extension(tmp_path: Path) -> None:
    (tmp_path / "photo.bin").write_bytes(JPEG)
    (tmp_path / "chart.png").write_bytes(b"not really a png")
    (tmp_path / "clip.mp3").write_bytes(b"\x00\x00")
    assert Image(path=tmp_path / "photo.bin").to_content() == ImageContent(data=b64(JPEG), mime_type="image/jpeg")
    assert Image(path=str(tmp_path / "chart.png")).to_content() == ImageContent(
        data=b64(b"not really a png"), mime_type="image/png"
    )
    assert Audio(path=tmp_path / "clip.mp3").to_content() == AudioContent(data=b64(b"\x00\x00"), mime_type="audio/mpeg")


def test_image_and_audio_take_exactly_one_source_of_bytes() -> None:
    with pytest.raises(ValueError, match=r"^Image takes exactly one of data= or path=$"):
        Image()
    with pytest.raises(ValueError, match=r"^Audio takes exactly one of data= or path=$"):
        Audio(data=b"x", path="x.wav")
    with pytest.raises(TypeError, match=r"^Image\(data=...\) takes bytes; use path= for a file$"):
        Image(data="photo.png")  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_a_tool_returning_image_or_audio_sends_the_content_block(tmp_path: Path) -> None:
    (tmp_path / "tone.wav").write_bytes(WAV)

    @tool
    def picture() -> Image:
        return Image(data=PNG)

    @tool
    def sound() -> Audio:
        return Audio(path=tmp_path / "tone.wav")

    assert await call(picture) == {
        "content": [{"type": "image", "data": b64(PNG), "mimeType": "image/png"}],
        "isError": False,
    }
    assert await call(sound) == {
        "content": [{"type": "audio", "data": b64(WAV), "mimeType": "audio/wav"}],
        "isError": False,
    }


# --- with an output schema --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_object_like_returns_send_structured_content_and_its_compact_json() -> None:
    @tool
    def weather() -> Weather:
        return Weather(city="Oslo", celsius=2)

    @tool
    def totals() -> Totals:
        return {"count": 3}

    @tool
    def pair() -> Pair:
        return Pair(1, 2)

    @tool
    def mapping() -> dict[str, float]:
        return {"a": 1}

    assert weather.output_schema == weather.definition.output_schema  # not wrapped: the schema is sent as is
    assert await call(weather) == {
        "content": [{"type": "text", "text": '{"city":"Oslo","celsius":2.0}'}],
        "structuredContent": {"city": "Oslo", "celsius": 2.0},
        "isError": False,
    }
    assert await call(totals) == {
        "content": [{"type": "text", "text": '{"count":3}'}],
        "structuredContent": {"count": 3},
        "isError": False,
    }
    assert (await call(pair))["structuredContent"] == {"left": 1, "right": 2}
    assert (await call(mapping))["structuredContent"] == {"a": 1.0}


@pytest.mark.anyio
async def test_structured_true_wraps_a_non_object_value_as_result() -> None:
    @tool(structured=True)
    def count() -> int:
        return 7

    @tool(structured=True)
    def maybe() -> Weather | None:
        return None

    assert count.output_schema != count.definition.output_schema  # wrapped as {"result": ...}, below
    assert count.output_schema == {"type": "integer"}
    assert count.definition.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    assert await call(count) == {
        "content": [{"type": "text", "text": "7"}],
        "structuredContent": {"result": 7},
        "isError": False,
    }
    assert await call(maybe) == {
        "content": [{"type": "text", "text": "null"}],
        "structuredContent": {"result": None},
        "isError": False,
    }


@pytest.mark.anyio
async def test_a_return_value_that_does_not_match_the_output_schema_is_a_tool_error() -> None:
    @tool
    def wrong() -> Weather:
        return {"city": "Oslo", "celsius": "cold"}  # type: ignore[return-value]

    @tool(structured=True)
    def not_a_number() -> int:
        return "many"  # type: ignore[return-value]

    assert await call(wrong) == {
        "content": [
            {
                "type": "text",
                "text": "tool 'wrong' returned a value that does not match its output schema: celsius: Input should be "
                "a valid number, unable to parse string as a number",
            }
        ],
        "isError": True,
    }
    assert await call(not_a_number) == {
        "content": [
            {
                "type": "text",
                "text": "tool 'not_a_number' returned a value that does not match its output schema: value: Input "
                "should be a valid integer, unable to parse string as an integer",
            }
        ],
        "isError": True,
    }


@pytest.mark.anyio
async def test_a_value_that_cannot_be_made_json_is_a_clear_tool_error() -> None:
    @tool
    def opaque():  # type: ignore[no-untyped-def]
        return object()

    @tool
    def unreadable_image() -> Image:
        return Image(path="/nonexistent/toolkit-test.png")

    assert await call(opaque) == {
        "content": [
            {
                "type": "text",
                "text": "tool 'opaque' returned a value that cannot be sent: Unable to serialize unknown type: "
                "<class 'object'>",
            }
        ],
        "isError": True,
    }
    result = await unreadable_image.run({})
    assert result.is_error
    assert result.text.startswith("tool 'unreadable_image' returned a value that cannot be sent: [Errno 2]")


@pytest.mark.anyio
@pytest.mark.parametrize(
    "value",
    ["text", "", 7, -2.5, float("inf"), True, None, [1, 2], {"a": 1}, TextContent(text="t"), Pair(1, 2), 10**30],
    ids=["str", "empty", "int", "float", "inf", "bool", "none", "list", "dict", "block", "dataclass", "bigint"],
)
async def test_the_servers_wire_shortcut_sends_what_run_returns(value: Any) -> None:
    @tool
    def plain():  # type: ignore[no-untyped-def]
        return value

    @tool(run_in_thread=False)
    def fast():  # type: ignore[no-untyped-def]
        return value

    @tool(structured=True)
    async def checked() -> int:
        return value  # type: ignore[no-any-return]

    for tool_obj in (plain, fast, checked):
        assert await served(tool_obj) == wire(await tool_obj.run({}))
    assert await served(plain, {"x": 1}) == wire(await plain.run({"x": 1}))


@pytest.mark.anyio
@pytest.mark.parametrize(
    "value",
    [
        Weather(city="Oslo", celsius=-3.5),
        {"city": "Oslo", "celsius": 1},
        {"city": "Oslo"},
        None,
        CallToolResult(content=[TextContent(text="own")], structured_content={"x": 1}, is_error=True),
        float("nan"),
    ],
    ids=["model", "dict", "mismatch", "none", "result", "nan"],
)
async def test_the_servers_wire_shortcut_sends_what_run_returns_for_structured_results(value: Any) -> None:
    @tool
    def weather() -> Weather:
        return value  # type: ignore[no-any-return]

    @tool
    def optional() -> Optional[Weather]:  # noqa: UP045 - the typing spelling, on purpose
        return value  # type: ignore[no-any-return]

    @tool(structured=True)
    def number() -> float:
        return value  # type: ignore[no-any-return]

    @tool
    def mapping() -> dict[str, Any]:
        return value  # type: ignore[no-any-return]

    for tool_obj in (weather, optional, number, mapping):
        assert await served(tool_obj) == wire(await tool_obj.run({}))


# --- the one rule: the annotation gives the output schema, the value gives structured content without one ------

W = {"city": "Oslo", "celsius": 2.5}
W_TEXT = '{"city":"Oslo","celsius":2.5}'
W_SCHEMA = {
    "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
    "required": ["city", "celsius"],
    "title": "Weather",
    "type": "object",
}


def _oslo() -> Weather:
    return Weather(city="Oslo", celsius=2.5)


@tool
def unannotated():  # type: ignore[no-untyped-def]
    return _oslo()


@tool
def any_type() -> Any:
    return _oslo()


@tool
def model() -> Weather:
    return _oslo()


@tool
def optional_model() -> Optional[Weather]:  # noqa: UP045 - the typing spelling, on purpose
    return _oslo()


@tool
def model_or_none() -> Weather | None:
    return None


@tool
def bare_dict() -> dict:  # type: ignore[type-arg]
    return {"city": "Oslo"}


@tool
def model_from_dict() -> dict[str, Any]:
    return _oslo()  # type: ignore[return-value]


@tool
def models() -> list[Weather]:
    return [_oslo()]


@tool(structured=True)
def models_structured() -> list[Weather]:
    return [_oslo()]


@tool
def model_or_pair() -> Weather | Pair:
    return _oslo()


@tool(structured=False)
def model_unstructured() -> Weather:
    return _oslo()


@tool
def dict_from_int() -> int:
    return 3


MODELS_STRUCTURED = (
    models_structured,
    {"type": "object", "properties": {"result": {"type": "array", "items": W_SCHEMA}}, "required": ["result"]},
    {"content": [{"type": "text", "text": f"[{W_TEXT}]"}], "structuredContent": {"result": [W]}, "isError": False},
)
RULE = [
    (unannotated, None, {"content": [{"type": "text", "text": W_TEXT}], "structuredContent": W, "isError": False}),
    (any_type, None, {"content": [{"type": "text", "text": W_TEXT}], "structuredContent": W, "isError": False}),
    (model, W_SCHEMA, {"content": [{"type": "text", "text": W_TEXT}], "structuredContent": W, "isError": False}),
    (optional_model, None, {"content": [{"type": "text", "text": W_TEXT}], "structuredContent": W, "isError": False}),
    (model_or_none, None, {"content": [], "isError": False}),
    (
        bare_dict,
        {"additionalProperties": True, "type": "object"},
        {
            "content": [{"type": "text", "text": '{"city":"Oslo"}'}],
            "structuredContent": {"city": "Oslo"},
            "isError": False,
        },
    ),
    (
        model_from_dict,
        {"additionalProperties": True, "type": "object"},
        {
            "content": [
                {
                    "type": "text",
                    "text": "tool 'model_from_dict' returned a value that does not match its output schema: value: "
                    "Input should be a valid dictionary",
                }
            ],
            "isError": True,
        },
    ),
    (models, None, {"content": [{"type": "text", "text": f"[{W_TEXT}]"}], "isError": False}),
    MODELS_STRUCTURED,
    (model_or_pair, None, {"content": [{"type": "text", "text": W_TEXT}], "structuredContent": W, "isError": False}),
    (model_unstructured, None, {"content": [{"type": "text", "text": W_TEXT}], "isError": False}),
    (dict_from_int, None, {"content": [{"type": "text", "text": "3"}], "isError": False}),
]


@pytest.mark.anyio
@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
async def test_structured_content_follows_one_rule_for_every_annotation(protocol: str) -> None:
    """With an outputSchema every result carries matching structuredContent (the client checks it); without one, a
    value whose JSON is an object is structuredContent whatever the annotation says."""
    server = Server("rule", tools=[t for t, _, _ in RULE])
    with anyio.fail_after(10):
        async with Client(server, protocol=protocol) as client:  # type: ignore[arg-type]
            definitions = {d.name: d.output_schema for d in await client.list_tools()}
            got = [(definitions[t.name], wire(await client.call_tool(t.name))) for t, _, _ in RULE]
    expected: list[tuple[Any, Any]] = [(schema, result) for _, schema, result in RULE]
    if protocol == "2026-07-28":
        # The revision where outputSchema and structuredContent may be any JSON (SEP-2106): a wrapped value is sent
        # bare, and a return type that is not an object gives its own schema and the bare value too.
        listed = {"type": "array", "items": W_SCHEMA}
        as_listed = {"content": [{"type": "text", "text": f"[{W_TEXT}]"}], "structuredContent": [W], "isError": False}
        pair = {
            "type": "object",
            "title": "Pair",
            "properties": {"left": {"type": "integer"}, "right": {"type": "integer"}},
        }
        expected[RULE.index(MODELS_STRUCTURED)] = (listed, as_listed)
        expected[[t for t, _, _ in RULE].index(models)] = (listed, as_listed)
        expected[[t for t, _, _ in RULE].index(model_or_pair)] = (
            {"anyOf": [W_SCHEMA, {**pair, "required": ["left", "right"]}]},
            {"content": [{"type": "text", "text": W_TEXT}], "structuredContent": W, "isError": False},
        )
        expected[[t for t, _, _ in RULE].index(dict_from_int)] = (
            {"type": "integer"},
            {"content": [{"type": "text", "text": "3"}], "structuredContent": 3, "isError": False},
        )
    assert got == expected


@tool
def count() -> int:
    return 3


@tool
def names() -> list[str]:
    return ["ada", "grace"]


@tool
def title() -> str:
    return "Notes"


@tool
def maybe_count() -> int | None:
    return None


@tool
def blocks() -> list[Any]:
    return [TextContent(text="a chart:"), Image(data=PNG, mime_type="image/png")]


@tool
def typed_blocks() -> list[ContentBlock]:
    return [TextContent(text="a chart:"), ImageContent(data=base64.b64encode(PNG).decode(), mime_type="image/png")]


@pytest.mark.anyio
@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
async def test_a_value_that_is_not_an_object_gets_its_own_schema_and_goes_bare_in_2026_07_28_alone(
    protocol: str,
) -> None:
    """SEP-2106: in 2026-07-28 `outputSchema` may be any JSON Schema and `structuredContent` any JSON value; the
    handshake era allows objects alone there, so its clients get the value as text, as before. A string stays text
    (it is its text already), a type that admits null gets no schema (null could not be told from none), and nor does
    one that holds `Any` (`list[Any]`: what it holds decides, content blocks included)."""
    server = Server("bare", tools=[count, names, title, maybe_count, blocks, typed_blocks])
    with anyio.fail_after(10):
        async with Client(server, protocol=protocol) as client:  # type: ignore[arg-type]
            listed = {
                d.name: d.model_dump(mode="json", by_alias=True, exclude_none=True) for d in await client.list_tools()
            }
            results = {name: wire(await client.call_tool(name)) for name in listed}

    modern = protocol == "2026-07-28"
    version = "2026-07-28" if modern else "2025-11-25"
    for name, listed_tool in listed.items():
        raw_wire.validate(listed_tool, "Tool", version)
        sent = {**results[name], "resultType": "complete"} if modern else results[name]  # the Client drops it
        raw_wire.validate(sent, "CallToolResult", version)
    schemas = {name: tool.get("outputSchema") for name, tool in listed.items()}
    strings = {"type": "array", "items": {"type": "string"}}
    assert schemas == {
        "count": {"type": "integer"} if modern else None,
        "names": strings if modern else None,
        "title": None,
        "maybe_count": None,
        "blocks": None,
        "typed_blocks": None,
    }
    structured = {"count": 3, "names": ["ada", "grace"]} if modern else {}
    chart = {
        "content": [
            {"type": "text", "text": "a chart:"},
            {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"},
        ],
        "isError": False,
    }
    assert results == {
        "count": {"content": [{"type": "text", "text": "3"}], **_given(structured, "count"), "isError": False},
        "names": {
            "content": [{"type": "text", "text": '["ada","grace"]'}],
            **_given(structured, "names"),
            "isError": False,
        },
        "title": {"content": [{"type": "text", "text": "Notes"}], "isError": False},
        "maybe_count": {"content": [], "isError": False},
        "blocks": chart,
        "typed_blocks": chart,
    }


def _given(structured: dict[str, Any], name: str) -> dict[str, Any]:
    return {"structuredContent": structured[name]} if name in structured else {}
