"""`@tool` and `Tool`: decoration, definition errors, methods, argument validation, running and failing."""

import datetime as dt
import enum
import functools
import threading
from collections.abc import Callable
from typing import Annotated, Any, Literal, Optional

import anyio
import pytest
from pydantic import BaseModel, Field

from toolkit import (
    Audio,
    CallToolResult,
    Context,
    Image,
    Server,
    TextContent,
    Tool,
    ToolDefinitionError,
    ToolError,
    tool,
)


def wire(tool_obj: Tool[..., Any]) -> dict[str, Any]:
    return tool_obj.definition.model_dump(mode="json", by_alias=True, exclude_none=True)


def error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=text)], is_error=True)


def text(value: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=value)])


class Point(BaseModel):
    x: int
    y: int = 0


class Shade(enum.Enum):
    LIGHT = "light"
    DARK = "dark"


# --- decoration -------------------------------------------------------------------------------------


def test_calling_a_tool_calls_the_function_unchanged() -> None:
    @tool
    def add(a: int, b: int) -> int:
        return a + b

    @tool(read_only=True)
    async def echo(value: str) -> str:
        return value

    assert add(2, 3) == 5
    assert anyio.run(echo, "hi") == "hi"
    assert isinstance(add, Tool)
    assert add.__name__ == "add"
    assert add.__doc__ is None


def test_tool_name_comes_from_the_function_unless_given() -> None:
    @tool
    def search() -> None: ...

    @tool(name="files.search-v2")
    def search2() -> None: ...

    assert (search.name, search2.name) == ("search", "files.search-v2")
    assert (
        repr(search2)
        == "<Tool 'files.search-v2' of test_tool_name_comes_from_the_function_unless_given.<locals>.search2>"
    )


@pytest.mark.parametrize("name", ["", "has space", "slash/name", "é", "x" * 129])
def test_a_name_outside_sep_986_is_a_definition_error(name: str) -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        tool(name=name)(lambda: None)
    assert caught.value.problems == [
        f"name {name!r} must be 1-128 characters of A-Z, a-z, 0-9, '_', '.' or '-' (SEP-986)"
    ]


def test_a_128_character_name_is_accepted() -> None:
    assert tool(name="n" * 128)(lambda: None).name == "n" * 128


def test_every_signature_problem_is_reported_at_once_with_the_qualified_name() -> None:
    class Opaque:
        pass

    opaque_default = object()

    def broken(  # type: ignore[no-untyped-def]
        a,
        b: int,
        /,
        c: Opaque,
        *args: int,
        d: int = opaque_default,  # type: ignore[assignment]
        **kwargs: str,
    ) -> None:
        """Break every rule.

        Args:
            c: Documented.
            e: A typo: there is no parameter e.
        """

    with pytest.raises(ToolDefinitionError) as caught:
        tool(name="bad name", read_only=True, destructive=True, require_param_docs=True)(broken)
    qualname = "test_every_signature_problem_is_reported_at_once_with_the_qualified_name.<locals>.broken"
    assert caught.value.qualname == qualname
    assert caught.value.problems == [
        "name 'bad name' must be 1-128 characters of A-Z, a-z, 0-9, '_', '.' or '-' (SEP-986)",
        "read_only=True contradicts destructive=True",
        "parameter a: positional-only parameters cannot be passed by name",
        "parameter b: positional-only parameters cannot be passed by name",
        "parameter *args: variadic parameters cannot be described by a schema",
        "parameter **kwargs: variadic parameters cannot be described by a schema",
        "docstring documents 'e', which is not a parameter",
        "parameter d: no description",
        f"parameter c: type Opaque has no JSON schema: Unable to generate pydantic-core schema for {Opaque!r}",
        f"parameter d: default {opaque_default!r} is not JSON-serialisable",
    ]
    assert str(caught.value).startswith(f"cannot make a tool of {qualname}:\n  - name 'bad name' must be")


def test_unannotated_parameters_are_reported_alongside_other_problems() -> None:
    def untyped(a, b):  # type: ignore[no-untyped-def]
        pass

    with pytest.raises(ToolDefinitionError) as caught:
        tool(name="no way")(untyped)
    assert caught.value.problems[1:] == ["parameter a: missing type annotation", "parameter b: missing type annotation"]


def test_an_unresolvable_annotation_names_its_parameter_and_keeps_the_others() -> None:
    def lost(a: "Missing", b: "int", c: "Unknown") -> "str":  # type: ignore[name-defined]  # noqa: F821
        return ""

    with pytest.raises(ToolDefinitionError) as caught:
        tool(lost)
    assert caught.value.problems == [
        "parameter a: 'Missing' cannot be resolved: NameError: name 'Missing' is not defined",
        "parameter c: 'Unknown' cannot be resolved: NameError: name 'Unknown' is not defined",
    ]


def test_a_type_without_json_schema_is_a_definition_error_in_return_position_too() -> None:
    def produce() -> Callable[[], int]:
        return int

    with pytest.raises(ToolDefinitionError) as caught:
        tool(structured=True)(produce)
    assert caught.value.problems == [
        "return type Callable[[], int] has no JSON schema: Cannot generate a JsonSchema for core_schema.CallableSchema"
    ]


def test_structured_true_without_a_return_annotation_is_a_definition_error() -> None:
    def nothing():  # type: ignore[no-untyped-def]
        return 1

    with pytest.raises(ToolDefinitionError) as caught:
        tool(structured=True)(nothing)
    assert caught.value.problems == ["structured=True needs a return annotation describing JSON data"]


@pytest.mark.parametrize("annotation", [Image, list[Image], list[Image | TextContent], tuple[Image, Audio]])
def test_content_return_types_are_content_not_json_data_parametrized_generics_too(annotation: Any) -> None:
    # On Python 3.10 `list[Image]` passed for a class (`isinstance(list[Image], type)`) and got an output schema of
    # Image's fields.
    def media() -> None:
        return None

    media.__annotations__["return"] = annotation
    with pytest.raises(ToolDefinitionError) as caught:
        tool(structured=True)(media)
    assert caught.value.problems == ["structured=True needs a return annotation describing JSON data"]
    assert tool(media).definition.output_schema is None


def test_string_annotations_and_types_from_the_enclosing_function_resolve() -> None:
    class Local(BaseModel):
        n: int

    @tool
    def uses_strings(value: "Local", count: "int" = 1) -> "dict[str, Local]":
        return {"v": value}

    assert wire(uses_strings)["inputSchema"] == {
        "type": "object",
        "properties": {
            "value": {"properties": {"n": {"type": "integer"}}, "required": ["n"], "type": "object"},
            "count": {"type": "integer", "default": 1},
        },
        "required": ["value"],
        "additionalProperties": False,
    }


def test_annotations_map_to_hints_and_flags_left_as_none_are_omitted() -> None:
    @tool(title="Delete a file", destructive=True, idempotent=True)
    def delete(path: str) -> None: ...

    @tool
    def plain() -> None: ...

    assert wire(delete)["title"] == "Delete a file"
    assert wire(delete)["annotations"] == {"title": "Delete a file", "destructiveHint": True, "idempotentHint": True}
    assert "annotations" not in wire(plain)


Tag = Annotated[str, Field(description="A tag: lowercase words.")]


def test_an_alias_description_beats_the_docstring_whether_or_not_the_parameter_may_be_none() -> None:
    @tool
    def tag_note(tag: Tag, also: Tag | None = None, other: Optional[Tag] = None) -> str:  # noqa: UP045
        """Tag a note.

        Args:
            tag: Loses to the alias's description.
            also: Loses too (it kept the docstring's text before: two precedences).
            other: Loses too.
        """
        return tag

    properties = wire(tag_note)["inputSchema"]["properties"]

    assert {name: schema["description"] for name, schema in properties.items()} == {
        "tag": "A tag: lowercase words.",
        "also": "A tag: lowercase words.",
        "other": "A tag: lowercase words.",
    }


def test_description_comes_from_the_docstring_without_its_sections() -> None:
    @tool
    def google(city: str, days: int = 1) -> str:
        """Get the forecast.

        Uses the public weather service.

        Args:
            city: The city's name,
                as people write it.
            days: How many days.

        Returns:
            The forecast as text.
        """
        return ""

    @tool(docstring_style="numpy")
    def numpy(city: str) -> str:
        """Get the forecast.

        Parameters
        ----------
        city : str
            The city's name.
        """
        return ""

    @tool
    def sphinx(city: str) -> str:
        """Get the forecast.

        :param city: The city's name.
        :returns: The forecast.
        """
        return ""

    assert wire(google)["description"] == "Get the forecast.\n\nUses the public weather service."
    assert wire(google)["inputSchema"]["properties"] == {
        "city": {"type": "string", "description": "The city's name, as people write it."},
        "days": {"type": "integer", "description": "How many days.", "default": 1},
    }
    for other in (numpy, sphinx):
        assert wire(other)["description"] == "Get the forecast."
        assert wire(other)["inputSchema"]["properties"] == {
            "city": {"type": "string", "description": "The city's name."}
        }


def test_require_param_docs_accepts_descriptions_from_any_source() -> None:
    @tool(require_param_docs=True)
    def documented(
        a: Annotated[int, "From Annotated."], b: int = Field(1, description="From Field."), c: int = 2
    ) -> None:
        """Do it.

        Args:
            c: From the docstring.
        """

    assert [p["description"] for p in wire(documented)["inputSchema"]["properties"].values()] == [
        "From Annotated.",
        "From Field.",
        "From the docstring.",
    ]


def test_the_order_of_union_and_literal_members_is_kept_per_tool() -> None:
    @tool
    def first(a: int | str, b: Literal[1, 2], c: list[float | str]) -> None: ...

    @tool
    def second(a: str | int, b: Literal[2, 1], c: list[str | float]) -> None: ...

    assert wire(second)["inputSchema"] == {
        "type": "object",
        "properties": {
            "a": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "b": {"enum": [2, 1], "type": "integer"},
            "c": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "number"}]}},
        },
        "required": ["a", "b", "c"],
        "additionalProperties": False,
    }
    assert wire(first)["inputSchema"]["properties"]["a"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}


@pytest.mark.anyio
async def test_callable_objects_and_partials_are_described_by_their_signatures() -> None:
    class Scale:
        """Scale a number."""

        def __call__(self, x: int, *, factor: float = 2.0) -> float:
            return x * factor

    class Echo:
        async def __call__(self, text: str) -> str:
            return text

    def repeat(text: str, times: int) -> str:
        """Repeat a text.

        Args:
            text: What to repeat.
            times: How often.
        """
        return text * times

    scale = tool(name="scale")(Scale())
    echo = tool(name="echo")(Echo())
    twice = tool(name="twice")(functools.partial(repeat, times=2))

    assert [wire(t) for t in (scale, echo, twice)] == [
        {
            "name": "scale",
            "description": "Scale a number.",
            "inputSchema": {
                "type": "object",
                "properties": {"x": {"type": "integer"}, "factor": {"type": "number", "default": 2.0}},
                "required": ["x"],
                "additionalProperties": False,
            },
        },
        {
            "name": "echo",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
                "additionalProperties": False,
            },
        },
        {
            "name": "twice",
            "description": "Repeat a text.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "text": {"type": "string", "description": "What to repeat."},
                    "times": {"type": "integer", "description": "How often.", "default": 2},
                },
                "required": ["text"],
                "additionalProperties": False,
            },
        },
    ]
    assert await scale.run({"x": 3}) == text("6.0")
    assert await echo.run({"text": "hi"}) == text("hi")
    assert await twice.run({"text": "ab"}) == text("abab")


# --- running ----------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_sync_tools_run_on_a_worker_thread_and_async_tools_on_the_event_loop() -> None:
    caller = threading.get_ident()

    @tool
    def sync_thread() -> bool:
        return threading.get_ident() != caller

    @tool
    async def async_thread() -> bool:
        return threading.get_ident() == caller

    assert await sync_thread.run({}) == text("true")
    assert await async_thread.run({}) == text("true")


@pytest.mark.anyio
async def test_a_sync_tool_made_with_run_in_thread_false_runs_on_the_event_loop() -> None:
    caller = threading.get_ident()

    @tool(run_in_thread=False)
    def on_loop(a: int) -> bool:
        return threading.get_ident() == caller and a == 1

    @tool(run_in_thread=False)
    def fails() -> None:
        raise ToolError("no luck")

    assert await on_loop.run({"a": "1"}) == text("true")
    assert await on_loop.run({}) == error("Invalid arguments for tool 'on_loop':\n- a: missing required argument")
    assert await fails.run() == error("no luck")


@pytest.mark.anyio
async def test_arguments_are_validated_and_coerced_to_the_annotated_types() -> None:
    seen: dict[str, Any] = {}

    @tool
    def record(
        *,
        count: int,
        when: dt.date,
        shade: Shade,
        point: Point,
        data: bytes,
        tags: set[str],
        limit: Optional[int] = None,  # noqa: UP045
    ) -> None:
        seen.update(count=count, when=when, shade=shade, point=point, data=data, tags=tags, limit=limit)

    arguments = {
        "count": "3",
        "when": "2025-11-25",
        "shade": "dark",
        "point": {"x": 1},
        "data": "aGk=",
        "tags": ["a", "a"],
        "limit": None,
    }
    assert await record.run(arguments) == CallToolResult(content=[])
    assert seen == {
        "count": 3,
        "when": dt.date(2025, 11, 25),
        "shade": Shade.DARK,
        "point": Point(x=1),
        "data": b"hi",
        "tags": {"a"},
        "limit": None,
    }


@pytest.mark.anyio
async def test_invalid_arguments_give_one_readable_line_per_problem() -> None:
    @tool
    def place(name: str, point: Point, size: Annotated[int, Field(ge=1)] = 1) -> None: ...

    result = await place.run({"point": {"x": "left", "y": 2}, "size": 0, "colour": "red"})
    assert result == error(
        "Invalid arguments for tool 'place':\n"
        "- name: missing required argument\n"
        '- point.x: Input should be a valid integer, unable to parse string as an integer (got "left")\n'
        "- size: Input should be greater than or equal to 1 (got 0)\n"
        "- colour: unexpected argument (expected one of: name, point, size)"
    )


@pytest.mark.anyio
async def test_an_argument_name_with_a_typo_gets_a_hint() -> None:
    @tool
    def search(query: str, limit: int = 10) -> None: ...

    result = await search.run({"quer": "cats", "limit": 3})
    assert result == error(
        "Invalid arguments for tool 'search':\n"
        "- query: missing required argument\n"
        "- quer: unexpected argument; did you mean 'query'? (expected one of: query, limit)"
    )


@pytest.mark.anyio
@pytest.mark.parametrize(("arguments", "shown"), [([1, 2], "[1,2]"), ("text", '"text"'), (3, "3")])
async def test_arguments_that_are_not_an_object_are_an_error_result(arguments: Any, shown: str) -> None:
    @tool
    def anything(a: int = 0) -> None: ...

    result = await anything.run(arguments)
    assert result == error(f"Invalid arguments for tool 'anything':\n- arguments must be a JSON object, got {shown}")


@pytest.mark.anyio
async def test_missing_arguments_mean_an_empty_object() -> None:
    @tool
    def defaults(a: int = 4) -> int:
        return a

    assert await defaults.run() == text("4")
    assert await defaults.run(None) == text("4")


@pytest.mark.anyio
@pytest.mark.parametrize("optional_style", ["compact", "faithful"])
async def test_an_explicit_null_is_accepted_for_an_optional_parameter_in_either_style(optional_style: Any) -> None:
    @tool(optional_style=optional_style)
    def maybe(limit: int | None = None) -> str:
        return repr(limit)

    assert await maybe.run({"limit": None}) == text("None")
    assert await maybe.run({"limit": 2}) == text("2")


@pytest.mark.anyio
async def test_a_default_factory_gives_each_call_a_fresh_value() -> None:
    @tool
    def collect(item: str, into: list[str] = Field(default_factory=list)) -> list[str]:  # noqa: B008
        into.append(item)
        return into

    assert await collect.run({"item": "a"}) == text('["a"]')
    assert await collect.run({"item": "b"}) == text('["b"]')


@pytest.mark.anyio
async def test_context_is_injected_and_a_given_context_is_passed_through() -> None:
    received: list[Context | None] = []

    @tool
    async def needs(ctx: Context) -> None:
        received.append(ctx)

    @tool
    def maybe(value: int, ctx: Context | None = None) -> None:
        received.append(ctx)

    given = Context()
    await needs.run({}, context=given)
    await needs.run({})
    await maybe.run({"value": 1}, context=given)
    assert received[0] is given
    assert isinstance(received[1], Context)
    assert received[1] is not given
    assert received[2] is given
    assert await needs.run({"ctx": None}) == error(
        "Invalid arguments for tool 'needs':\n- ctx: unexpected argument (expected one of: )"
    )


# --- failing ----------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_tool_error_text_is_sent_as_an_error_result() -> None:
    @tool
    def refuse(reason: str) -> None:
        raise ToolError(reason)

    assert await refuse.run({"reason": "No such city: Atlantis"}) == error("No such city: Atlantis")
    assert await refuse.run({"reason": ""}) == error("tool 'refuse' failed")


@pytest.mark.anyio
async def test_other_exceptions_give_a_generic_message_naming_the_tool(caplog: pytest.LogCaptureFixture) -> None:
    @tool
    async def crash() -> None:
        raise RuntimeError("password=hunter2")

    @tool(show_error_details=True)
    def crash_loudly() -> None:
        raise RuntimeError("disk full")

    assert await crash.run({}) == error("Error executing tool 'crash'")
    assert await crash_loudly.run({}) == error("Error executing tool 'crash_loudly': RuntimeError: disk full")
    assert [r.getMessage() for r in caplog.records] == [
        "tool 'crash' raised RuntimeError",
        "tool 'crash_loudly' raised RuntimeError",
    ]
    assert caplog.records[0].exc_info is not None


@pytest.mark.anyio
@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, SystemExit])
async def test_base_exceptions_raised_by_a_tool_become_error_results(exc_type: type[BaseException]) -> None:
    @tool(show_error_details=True)
    def stop() -> None:
        raise exc_type("stop")

    @tool(show_error_details=True)
    async def stop_async() -> None:
        raise exc_type("stop")

    assert await stop.run({}) == error(f"Error executing tool 'stop': {exc_type.__name__}: stop")
    assert await stop_async.run({}) == error(f"Error executing tool 'stop_async': {exc_type.__name__}: stop")


@pytest.mark.anyio
async def test_an_exception_whose_message_cannot_be_made_is_still_reported() -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise ValueError("no")

    @tool(show_error_details=True)
    def odd() -> None:
        raise Unprintable

    @tool
    def odd_tool_error() -> None:
        raise type("Weird", (ToolError,), {"__str__": Unprintable.__str__})()

    assert await odd.run({}) == error(
        "Error executing tool 'odd': Unprintable: <Unprintable whose message cannot be shown>"
    )
    assert await odd_tool_error.run({}) == error("<Weird whose message cannot be shown>")


@pytest.mark.anyio
async def test_cancellation_propagates_out_of_a_running_tool() -> None:
    @tool
    async def forever() -> None:
        await anyio.sleep_forever()

    reached = False
    with anyio.CancelScope() as scope:
        scope.cancel()
        await forever.run({})
        reached = True
    assert scope.cancelled_caught
    assert not reached


def test_an_option_left_out_takes_its_default_and_an_unknown_option_is_a_type_error() -> None:
    def add(a: int) -> int:
        return a

    made = tool(title="Add")(add)
    assert (made.show_error_details, made.confirms, made.lint_ignore) == (False, False, {})
    assert wire(made)["annotations"] == {"title": "Add"}
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'nme' \(did you mean 'name'\?\)$"):
        tool(nme="add")  # type: ignore[call-overload]
    with pytest.raises(
        TypeError, match=r"arguments 'nme' \(did you mean 'name'\?\), 'raed_only' \(did you mean 'read_only'\?\)$"
    ):
        tool(nme="add", raed_only=True)  # type: ignore[call-overload]


def test_server_tool_refuses_an_unknown_option_when_called_not_when_applied() -> None:
    server = Server("s")
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'nme' \(did you mean 'name'\?\)$"):
        server.tool(nme="add")  # type: ignore[call-overload]
    with pytest.raises(
        TypeError, match=r"arguments 'nme' \(did you mean 'name'\?\), 'raed_only' \(did you mean 'read_only'\?\)$"
    ):
        server.tool(nme="add", raed_only=True)  # type: ignore[call-overload]
    assert dict(server.tools) == {}
