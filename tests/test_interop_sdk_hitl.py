"""The official `mcp` SDK client answers toolkit's questions: `elicitation_callback` and `sampling_callback`, in
`mode="legacy"` (server-to-client requests, 2025-11-25) and `"2026-07-28"` (input requests, the SDK retries),
against tests/servers/hitl_server.py over stdio and over Streamable HTTP (`toolkit serve --http` on uvicorn, the
SDK's `streamable_http_client`). Without callbacks: a tool error (legacy), -32021 (2026). `list_roots_callback` answers
`ctx.list_roots()`, alone and among questions asked together."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp
import mcp_types as t
import pytest
import servers
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from served import Served

pytestmark = pytest.mark.anyio

SERVER = servers.HITL
MODES = pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
TIMEOUT = 30


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@asynccontextmanager
async def sdk_client(mode: str, transport: str, **options: Any) -> AsyncIterator[mcp.Client]:
    if transport == "stdio":
        with anyio.fail_after(TIMEOUT):
            params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
            async with mcp.Client(params, mode=mode, **options) as client:
                yield client
        return
    served = Served(Path(f"{SERVER}:build"))  # a fresh process: the side-effect counter starts at 0
    try:
        with anyio.fail_after(TIMEOUT):
            async with mcp.Client(streamable_http_client(served.url), mode=mode, **options) as client:
                yield client
    finally:
        served.close()


class Callbacks:
    def __init__(self, *answers: t.ElicitResult) -> None:
        self.answers = list(answers)
        self.asked: list[t.ElicitRequestParams] = []
        self.sampled: list[t.CreateMessageRequestParams] = []

    async def elicit(self, context: ClientRequestContext, params: t.ElicitRequestParams) -> t.ElicitResult:
        self.asked.append(params)
        return self.answers.pop(0)

    async def sample(
        self, context: ClientRequestContext, params: t.CreateMessageRequestParams
    ) -> t.CreateMessageResult:
        self.sampled.append(params)
        return t.CreateMessageResult(
            role="assistant", content=t.TextContent(type="text", text="from the SDK"), model="m", stop_reason="endTurn"
        )

    def options(self) -> dict[str, Any]:
        return {"elicitation_callback": self.elicit, "sampling_callback": self.sample}


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, t.TextContent))


@MODES
async def test_the_sdk_answers_forms_samples_and_confirmations(mode: str, transport: str) -> None:
    callbacks = Callbacks(
        t.ElicitResult(action="accept", content={"username": "sdk", "email": "sdk@example.com"}),
        t.ElicitResult(action="accept"),
        t.ElicitResult(action="decline"),
        t.ElicitResult(action="accept", content={"name": "Ada"}),
        t.ElicitResult(action="accept", content={"color": "blue"}),
    )
    async with sdk_client(mode, transport, **callbacks.options()) as client:
        form = await client.call_tool("test_elicitation", {"message": "Who?"})
        sampled = await client.call_tool("test_sampling", {"prompt": "Hi"})
        confirmed = await client.call_tool("delete_file", {"path": "/tmp/x"})
        declined = await client.call_tool("delete_file", {"path": "/tmp/y"})
        rounds = await client.call_tool("test_input_required_result_multi_round", {})
    assert text(form) == "User response: accept, {'username': 'sdk', 'email': 'sdk@example.com'}"
    assert text(sampled) == "LLM response: from the SDK"
    assert (confirmed.is_error, text(confirmed)) == (False, "deleted /tmp/x")
    assert (declined.is_error, text(declined)) == (True, "The user declined to run delete_file.")
    assert text(rounds) == "Ada likes blue"
    assert [p.message for p in callbacks.asked] == [
        "Who?",
        "Delete /tmp/x?",
        "Delete /tmp/y?",
        "Step 1: What is your name?",
        "Step 2: What is your favorite color?",
    ]
    assert callbacks.sampled[0].max_tokens == 100


@MODES
async def test_the_sdk_sees_the_side_effect_rule(mode: str, transport: str) -> None:
    callbacks = Callbacks(t.ElicitResult(action="accept"), t.ElicitResult(action="accept"))
    async with sdk_client(mode, transport, **callbacks.options()) as client:
        assert text(await client.call_tool("two_questions", {})) == "accept accept"
        appends = text(await client.call_tool("appends", {}))
    assert appends == ("1" if mode == "legacy" else "2")


async def test_without_callbacks_legacy_gets_a_tool_error(transport: str) -> None:
    async with sdk_client("legacy", transport) as client:
        result = await client.call_tool("test_elicitation", {"message": "?"})
    assert result.is_error
    assert "did not declare form-mode elicitation" in text(result)


async def test_without_callbacks_2026_gets_32021(transport: str) -> None:
    async with sdk_client("2026-07-28", transport) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("test_sampling", {"prompt": "?"})
    assert caught.value.error.code == -32021
    assert caught.value.error.data == {"requiredCapabilities": {"sampling": {}}}


class WeatherModel:
    """An SDK `sampling_callback` that calls get_weather, then answers from the tool results it is sent."""

    def __init__(self) -> None:
        self.sampled: list[t.CreateMessageRequestParams] = []

    async def sample(
        self, context: ClientRequestContext, params: t.CreateMessageRequestParams
    ) -> t.CreateMessageResultWithTools:
        self.sampled.append(params)
        last = params.messages[-1].content_as_list
        results = [block for block in last if isinstance(block, t.ToolResultContent)]
        if results:
            answer = "; ".join(r.content[0].text for r in results if isinstance(r.content[0], t.TextContent))
            return t.CreateMessageResultWithTools(
                role="assistant", content=t.TextContent(type="text", text=answer), model="m", stop_reason="endTurn"
            )
        use = t.ToolUseContent(type="tool_use", id="call_1", name="get_weather", input={"city": "Paris"})
        return t.CreateMessageResultWithTools(role="assistant", content=[use], model="m", stop_reason="toolUse")


@MODES
async def test_the_sdk_model_calls_a_tool_in_sampling(mode: str, transport: str) -> None:
    model = WeatherModel()
    tools = t.SamplingCapability(tools=t.SamplingToolsCapability())
    async with sdk_client(mode, transport, sampling_callback=model.sample, sampling_capabilities=tools) as client:
        result = await client.call_tool("weather_report", {"cities": "Paris"})
    assert (result.is_error, text(result)) == (False, "18°C, partly cloudy")
    first, second = model.sampled
    assert [tool.name for tool in first.tools or []] == ["get_weather"]
    assert [m.role for m in second.messages] == ["user", "assistant", "user"]
    [answered] = second.messages[2].content_as_list
    assert isinstance(answered, t.ToolResultContent)
    assert answered.tool_use_id == "call_1"


async def test_an_sdk_client_without_sampling_tools_gets_a_tool_error(transport: str) -> None:
    model = WeatherModel()
    async with sdk_client("legacy", transport, sampling_callback=model.sample) as client:
        result = await client.call_tool("weather_report", {"cities": "Paris"})
    assert result.is_error
    assert "did not declare sampling.tools" in text(result)
    assert model.sampled == []


# -- roots, and several questions at once (issue 21 §3) ------------------------------------------------------------


async def list_roots(context: ClientRequestContext) -> t.ListRootsResult:
    return t.ListRootsResult(roots=[t.Root(uri="file:///sdk/project", name="Project")])


@MODES
async def test_the_sdk_lists_its_roots(mode: str, transport: str) -> None:
    async with sdk_client(mode, transport, list_roots_callback=list_roots) as client:
        listed = await client.call_tool("test_input_required_result_list_roots", {})
        paths = await client.call_tool("sync_roots", {})
    assert text(listed) == "Roots: Project (file:///sdk/project)"
    assert text(paths) == "/sdk/project"


@MODES
async def test_the_sdk_answers_questions_asked_together(mode: str, transport: str) -> None:
    callbacks = Callbacks(t.ElicitResult(action="accept", content={"name": "Alice"}))
    async with sdk_client(mode, transport, list_roots_callback=list_roots, **callbacks.options()) as client:
        result = await client.call_tool("test_input_required_result_multiple_inputs", {})
    assert text(result) == "from the SDK, Alice; roots: file:///sdk/project"
    assert [p.message for p in callbacks.asked] == ["What is your name?"]
    assert [p.messages[0].content_as_list[0].text for p in callbacks.sampled] == ["Generate a greeting"]  # type: ignore[union-attr]
