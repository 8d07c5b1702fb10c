"""Tools made from methods: what works (bound methods, `@tool` in a class body, static methods, class methods bound to
their class) and what is refused at definition because no call could succeed (a method without its instance)."""

from typing import Any

import anyio
import pytest

from toolkit import CallToolResult, Client, Server, TextContent, Tool, ToolDefinitionError, tool


class Counter:
    def __init__(self, start: int = 0) -> None:
        self.value = start

    @tool
    def bump(self, by: int = 1) -> int:
        """Add to the counter."""
        self.value += by
        return self.value

    @tool
    async def peek(self) -> int:
        return self.value

    @tool
    @staticmethod
    def double(x: int) -> int:
        return 2 * x

    @staticmethod
    @tool
    def triple(x: int) -> int:
        return 3 * x

    @classmethod
    def describe(cls, prefix: str) -> str:
        return f"{prefix} {cls.__name__}"

    def plain(self, by: int) -> int:
        self.value += by
        return self.value


def test_a_method_tool_has_no_self_in_its_schema() -> None:
    assert Counter(0).bump.definition.input_schema == {
        "type": "object",
        "properties": {"by": {"type": "integer", "default": 1}},
        "additionalProperties": False,
    }
    assert Counter.bump.name == "bump"
    assert isinstance(Counter.__dict__["bump"], Tool)


@pytest.mark.anyio
async def test_method_tools_are_bound_per_instance() -> None:
    first, second = Counter(0), Counter(100)
    assert first.bump(2) == 2
    assert await first.bump.run({"by": 3}) == CallToolResult(content=[TextContent(text="5")])
    assert await second.bump.run({}) == CallToolResult(content=[TextContent(text="101")])
    assert await second.peek.run() == CallToolResult(content=[TextContent(text="101")])
    assert (first.value, second.value) == (5, 101)


async def call_all(server: Server, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    texts = []
    with anyio.fail_after(10):
        async with Client(server) as client:
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                assert not result.is_error, result.text
                texts.append(result.text)
    return texts


@pytest.mark.anyio
async def test_bound_methods_static_methods_and_class_methods_bound_to_their_class_are_served() -> None:
    counter = Counter(10)
    server = Server(
        "methods",
        tools=[counter.bump, Counter.double, Counter().triple, tool(Counter.describe), tool(counter.plain)],
    )
    assert [t.definition.input_schema.get("properties") for t in server.tools.values()] == [
        {"by": {"type": "integer", "default": 1}},
        {"x": {"type": "integer"}},
        {"x": {"type": "integer"}},
        {"prefix": {"type": "string"}},
        {"by": {"type": "integer"}},
    ]
    texts = await call_all(
        server,
        [
            ("bump", {"by": 5}),
            ("double", {"x": 4}),
            ("triple", {"x": 4}),
            ("describe", {"prefix": "a"}),
            ("plain", {"by": 1}),
        ],
    )
    assert texts == ["15", "8", "12", "a Counter", "16"]
    assert counter.value == 16


def test_tool_above_and_below_staticmethod_give_the_same_tool() -> None:
    assert isinstance(Counter.double, Tool)
    assert isinstance(Counter().double, Tool)
    assert Counter.double(4) == 8
    assert Counter.triple(4) == 12
    assert Counter.double.definition.input_schema == Counter.triple.definition.input_schema


def test_a_method_taken_from_its_class_is_refused_when_served() -> None:
    expected = (
        "a method cannot be served without an instance to call it on: decorate it with @tool in the class body (not "
        "@server.tool) and serve the bound method of an instance, server.add_tool(instance.bump) or "
        "Server(tools=[instance.bump]); or serve tool(instance.bump)"
    )
    with pytest.raises(ToolDefinitionError) as info:
        Server("methods", tools=[Counter.bump])
    assert (info.value.qualname, info.value.problems) == ("Counter.bump", [expected])
    server = Server("methods")
    with pytest.raises(ToolDefinitionError) as info:
        server.add_tool(tool(Counter.plain))
    assert info.value.qualname == "Counter.plain"
    assert info.value.problems == [expected.replace("bump", "plain")]
    assert dict(server.tools) == {}


def test_server_tool_on_a_method_in_a_class_body_is_a_definition_error() -> None:
    server = Server("methods")
    with pytest.raises(ToolDefinitionError) as info:

        class Shop:
            @server.tool
            def buy(self, item: str) -> str:
                return item

    assert info.value.qualname.endswith("Shop.buy")
    assert info.value.problems == [
        "a method cannot be served without an instance to call it on: decorate it with @tool in the class body (not "
        "@server.tool) and serve the bound method of an instance, server.add_tool(instance.buy) or "
        "Server(tools=[instance.buy]); or serve tool(instance.buy)"
    ]
    with pytest.raises(ToolDefinitionError) as info:

        class Catalog:
            @classmethod
            @server.tool
            def size(cls, kind: str) -> int:
                return 0

    assert info.value.problems == [
        "a method cannot be served without an instance to call it on: define it as a plain @classmethod and serve "
        "the method bound to its class, "
        f"server.add_tool(tool({info.value.qualname.rpartition('.')[0]}.size))"
    ]
    assert dict(server.tools) == {}


def test_server_tool_on_a_function_in_a_class_body_without_self_works_as_a_static_tool() -> None:
    server = Server("methods")

    class Maths:
        @server.tool
        @staticmethod
        def square(x: int) -> int:
            return x * x

    assert list(server.tools) == ["square"]
    assert Maths.square(3) == 9


def test_tool_above_classmethod_is_a_definition_error_that_says_what_works() -> None:
    with pytest.raises(ToolDefinitionError) as info:

        class Registry:
            @tool
            @classmethod
            def count(cls) -> int:
                return 0

    assert info.value.qualname.endswith("Registry.count")
    assert info.value.problems == [
        "@tool cannot wrap a classmethod: define the classmethod without @tool and make a tool of the method bound "
        f"to its class once the class exists, tool({info.value.qualname})"
    ]
