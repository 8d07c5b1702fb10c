"""Tools that ask (elicitation, sampling, confirmation) through the real client, in both eras, in memory, over stdio
and over Streamable HTTP (the ASGI app in process), on asyncio and trio. The server is tests/servers/hitl_server.py,
unchanged for every transport."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import servers
import zygote

from toolkit import (
    Client,
    ClientRequestError,
    ElicitRequest,
    ElicitResult,
    LogMessage,
    ProtocolError,
    Root,
    SampleRequest,
    SampleResult,
    StreamingASGITransport,
    TextContent,
    ToolResultContent,
    ToolUseContent,
)

pytestmark = pytest.mark.anyio

SERVER = servers.HITL
ERAS = pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
TIMEOUT = 30
NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


build_server = servers.hitl


@pytest.fixture(params=["memory", "stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@asynccontextmanager
async def connect(transport: str, backend: str, protocol: str, **options: Any) -> AsyncIterator[Client]:
    options["protocol"] = protocol
    with anyio.fail_after(TIMEOUT):
        if transport == "http":
            app = build_server().http_app()
            async with (
                httpx.AsyncClient(transport=StreamingASGITransport(app), base_url="http://127.0.0.1:8000") as http,
                Client.http("http://127.0.0.1:8000/mcp", http_client=http, **options) as client,
            ):
                yield client
            return
        if transport == "memory":
            async with Client(build_server(), **options) as client:
                yield client
            return
        async with zygote.client([sys.executable, str(SERVER), backend], **options) as client:
            yield client


class Answers:
    """A client's handlers that answer from lists and record every request."""

    def __init__(self, *elicitations: ElicitResult[Any], replies: tuple[str, ...] = ()) -> None:
        self.elicitations = list(elicitations)
        self.replies = list(replies)
        self.asked: list[ElicitRequest] = []
        self.sampled: list[SampleRequest] = []

    def elicit(self, request: ElicitRequest) -> ElicitResult[Any]:
        self.asked.append(request)
        return self.elicitations.pop(0)

    def sample(self, request: SampleRequest) -> SampleResult:
        self.sampled.append(request)
        return SampleResult.reply(self.replies.pop(0), model="test-model")

    def handlers(self) -> dict[str, Any]:
        return {"elicitation_handler": self.elicit, "sampling_handler": self.sample}


@ERAS
async def test_a_form_is_asked_and_its_answer_returned(transport: str, anyio_backend: str, protocol: str) -> None:
    answers = Answers(ElicitResult.accept({"username": "testuser", "email": "test@example.com"}))
    async with connect(transport, anyio_backend, protocol, **answers.handlers()) as client:
        result = await client.call_tool("test_elicitation", {"message": "Who are you?"})
    assert result.text == "User response: accept, {'username': 'testuser', 'email': 'test@example.com'}"
    assert [(r.message, r.mode) for r in answers.asked] == [("Who are you?", "form")]
    assert answers.asked[0].requested_schema == {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    assert answers.asked[0].key == (None if protocol == "handshake" else "elicitation1")


@ERAS
async def test_defaults_and_titled_choices_reach_the_client(transport: str, anyio_backend: str, protocol: str) -> None:
    answers = Answers(
        ElicitResult.accept({"name": "Jane Smith", "age": 25, "score": 88.0, "status": "inactive", "verified": False}),
        ElicitResult.accept(
            {
                "untitledSingle": "option1",
                "titledSingle": "value2",
                "legacyEnum": "opt3",
                "untitledMulti": ["option1"],
                "titledMulti": ["value1", "value3"],
            }
        ),
    )
    async with connect(transport, anyio_backend, protocol, **answers.handlers()) as client:
        defaults = await client.call_tool("test_elicitation_sep1034_defaults")
        enums = await client.call_tool("test_elicitation_sep1330_enums")
    assert defaults.text.startswith("Elicitation completed: action=accept, content={'name': 'Jane Smith'")
    assert "'titledMulti': ['value1', 'value3']" in enums.text
    properties = answers.asked[0].requested_schema["properties"]  # type: ignore[index]
    assert {name: prop["default"] for name, prop in properties.items()} == {
        "name": "John Doe",
        "age": 30,
        "score": 95.5,
        "status": "active",
        "verified": True,
    }
    titled = answers.asked[1].requested_schema["properties"]["titledSingle"]  # type: ignore[index]
    assert titled == {
        "type": "string",
        "oneOf": [
            {"const": "value1", "title": "First Option"},
            {"const": "value2", "title": "Second Option"},
            {"const": "value3", "title": "Third Option"},
        ],
    }


@ERAS
async def test_sampling_asks_the_clients_model(transport: str, anyio_backend: str, protocol: str) -> None:
    answers = Answers(replies=("This is a test response from the client",))
    async with connect(transport, anyio_backend, protocol, **answers.handlers()) as client:
        result = await client.call_tool("test_sampling", {"prompt": "Say hi"})
    assert result.text == "LLM response: This is a test response from the client"
    [request] = answers.sampled
    assert (request.max_tokens, request.messages[0].role, request.messages[0].blocks[0].text) == (100, "user", "Say hi")


@ERAS
async def test_two_questions_with_a_side_effect_between_them_behave_as_documented(
    transport: str, anyio_backend: str, protocol: str
) -> None:
    answers = Answers(ElicitResult.accept(), ElicitResult.decline())
    async with connect(transport, anyio_backend, protocol, **answers.handlers()) as client:
        result = await client.call_tool("two_questions")
        appended = await client.call_tool("appends")
    assert result.text == "accept decline"
    assert [r.message for r in answers.asked] == ["A?", "B?"]  # each question reaches the user once
    # docs/human-in-the-loop.md: code before a question runs again in each later round of 2026-07-28.
    assert appended.text == ("1" if protocol == "handshake" else "2")


@ERAS
async def test_a_sync_tool_asks_without_await(transport: str, anyio_backend: str, protocol: str) -> None:
    answers = Answers(ElicitResult.accept({"name": "Ada"}), replies=("from the model",))
    async with connect(transport, anyio_backend, protocol, **answers.handlers()) as client:
        result = await client.call_tool("sync_two_questions")
    assert result.text == "Ada from the model"


@ERAS
@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        (ElicitResult.accept(), (False, "deleted /tmp/x")),
        (ElicitResult.decline(), (True, "The user declined to run delete_file.")),
        (ElicitResult.cancel(), (True, "The user cancelled delete_file without deciding; nothing was done.")),
    ],
)
async def test_a_confirming_tool_runs_only_on_accept(
    transport: str, anyio_backend: str, protocol: str, answer: ElicitResult[Any], outcome: tuple[bool, str]
) -> None:
    answers = Answers(answer)
    async with connect(transport, anyio_backend, protocol, **answers.handlers()) as client:
        result = await client.call_tool("delete_file", {"path": "/tmp/x"})
    assert (result.is_error, result.text) == outcome
    [asked] = answers.asked
    assert (asked.message, asked.requested_schema) == ("Delete /tmp/x?", {"type": "object", "properties": {}})
    assert asked.key == (None if protocol == "handshake" else "confirm")


async def test_without_elicitation_a_destructive_tool_is_refused_and_a_read_only_one_runs(
    transport: str, anyio_backend: str
) -> None:
    async with connect(transport, anyio_backend, "handshake") as client:
        refused = await client.call_tool("delete_file", {"path": "/tmp/x"})
        peeked = await client.call_tool("peek", {"path": "/tmp/x"})
        asked = await client.call_tool("test_elicitation", {"message": "?"})
        sampled = await client.call_tool("test_sampling", {"prompt": "?"})
    assert refused.is_error
    assert "delete_file runs only once the user confirms" in refused.text
    assert (peeked.is_error, peeked.text) == (False, "peeked at /tmp/x")
    assert asked.is_error
    assert "did not declare form-mode elicitation" in asked.text
    assert sampled.is_error
    assert "sampling capability" in sampled.text


@ERAS
async def test_without_elicitation_a_confirm_tool_gives_the_same_tool_error_in_both_eras(
    transport: str, anyio_backend: str, protocol: str
) -> None:
    # `confirm=` refused by the server's confirm_fallback: a result the model reads (lint's TK501), never -32021.
    async with connect(transport, anyio_backend, protocol) as client:
        refused = await client.call_tool("delete_file", {"path": "/tmp/x"})
    assert (refused.is_error, refused.text) == (
        True,
        "delete_file runs only once the user confirms, and the client cannot ask the user (it did not declare "
        "form-mode elicitation)",
    )


async def test_without_the_capability_a_2026_call_fails_with_32021(transport: str, anyio_backend: str) -> None:
    async with connect(transport, anyio_backend, "2026-07-28") as client:
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("test_elicitation", {"message": "?"})
        missing: dict[str, Any] = {"requiredCapabilities": {"elicitation": {"form": {}}}}
        assert (caught.value.code, caught.value.data) == (-32021, missing)
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("test_sampling", {"prompt": "?"})
        assert (caught.value.code, caught.value.data) == (-32021, {"requiredCapabilities": {"sampling": {}}})
        peeked = await client.call_tool("peek", {"path": "/tmp/x"})
    assert peeked.text == "peeked at /tmp/x"


async def test_a_tool_adapts_to_what_the_client_declared(transport: str, anyio_backend: str) -> None:
    answers = Answers(replies=("Hello from the model",))
    async with connect(transport, anyio_backend, "2026-07-28", sampling_handler=answers.sample) as client:
        result = await client.call_tool("test_input_required_result_capabilities")
    assert result.text == "Hello from the model"
    assert answers.sampled[0].key == "greeting"


@ERAS
async def test_progress_and_logs_flow_while_a_question_waits(transport: str, anyio_backend: str, protocol: str) -> None:
    logs: list[LogMessage] = []
    progress: list[float] = []
    answers = Answers(ElicitResult.accept())
    async with connect(transport, anyio_backend, protocol, on_log=logs.append, **answers.handlers()) as client:
        await client.set_logging_level("info")

        def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append(done)

        result = await client.call_tool("chatty_question", progress=on_progress)
    assert result.text == "accept"
    assert [log.data for log in logs if log.data == "asking"]  # at least once (2026-07-28: once per round)
    assert progress[-1] == 2


async def test_a_question_left_unanswered_times_out_and_the_client_is_told(transport: str, anyio_backend: str) -> None:
    cancelled = anyio.Event()

    async def never(request: ElicitRequest) -> ElicitResult[Any]:
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()  # the server's notifications/cancelled stopped the handler
        raise AssertionError("unreachable")

    async with connect(transport, anyio_backend, "handshake", elicitation_handler=never) as client:
        result = await client.call_tool("slow_question")
        with anyio.fail_after(TIMEOUT):
            await cancelled.wait()
    assert result.text == "timed out"


@pytest.mark.parametrize(
    ("tool", "then", "outcome"),
    [
        ("ask_when_told", "appends", "0"),  # the connection goes on
        # A sync tool's thread is released: its question raises, and a question asked after it is refused at once.
        ("sync_ask_when_told", "sync_question_ended", "cancelled (ctx.cancelled=True), refused"),
    ],
)
async def test_cancelling_the_call_cancels_its_question(
    transport: str, anyio_backend: str, tool: str, then: str, outcome: str
) -> None:
    asked: list[ElicitRequest] = []
    waiting = anyio.Event()
    cancelled = anyio.Event()

    async def wait(request: ElicitRequest) -> ElicitResult[Any]:
        asked.append(request)
        waiting.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()  # the server's notifications/cancelled for this elicitation stopped the handler
        raise AssertionError("unreachable")

    async with connect(transport, anyio_backend, "handshake", elicitation_handler=wait) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, tool)
            await waiting.wait()
            tg.cancel_scope.cancel()
        with anyio.fail_after(TIMEOUT):
            await cancelled.wait()
        assert (await client.call_tool(then)).text == outcome
    assert len(asked) == 1


@ERAS
async def test_a_client_error_fails_the_call_readably(transport: str, anyio_backend: str, protocol: str) -> None:
    def reject(request: SampleRequest) -> SampleResult:
        raise ClientRequestError(-1, "User rejected sampling request")

    async with connect(transport, anyio_backend, protocol, sampling_handler=reject) as client:
        if protocol == "handshake":
            result = await client.call_tool("test_sampling", {"prompt": "?"})
            assert result.is_error
            assert "User rejected sampling request" in result.text
        else:
            # 2026-07-28: the client answers input requests itself; its handler's error ends the call there.
            with pytest.raises(ProtocolError) as caught:
                await client.call_tool("test_sampling", {"prompt": "?"})
            assert caught.value.code == -1


@ERAS
async def test_url_mode_elicitation(transport: str, anyio_backend: str, protocol: str) -> None:
    answers = Answers(ElicitResult.accept())
    async with connect(transport, anyio_backend, protocol, **answers.handlers()) as client:
        result = await client.call_tool("connect_account")
    assert result.text == f"accept {protocol == 'handshake'}"  # 2026-07-28 has no elicitationId
    [asked] = answers.asked
    assert (asked.mode, asked.url, asked.message) == ("url", "https://example.com/connect", "Sign in to connect")
    assert (asked.elicitation_id is not None) == (protocol == "handshake")


async def test_url_elicitation_required_is_32042_in_2025_11_25(transport: str, anyio_backend: str) -> None:
    async with connect(transport, anyio_backend, "handshake", elicitation_handler=Answers().elicit) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("pay")
        assert (await client.call_tool("pay", {"done": True})).text == "paid"
    assert caught.value.code == -32042
    [elicitation] = caught.value.data["elicitations"]
    assert elicitation["mode"] == "url"
    assert elicitation["url"] == "https://pay.example.com/checkout"
    assert isinstance(elicitation["elicitationId"], str)


async def test_url_elicitation_required_asks_again_each_round_in_2026(transport: str, anyio_backend: str) -> None:
    answers = Answers(ElicitResult.accept(), ElicitResult.accept())
    async with connect(transport, anyio_backend, "2026-07-28", max_input_rounds=2, **answers.handlers()) as client:
        with pytest.raises(ProtocolError, match="more than 2 times"):
            await client.call_tool("pay")
    assert [(r.key, r.url) for r in answers.asked] == [("url_required", "https://pay.example.com/checkout")] * 2


async def test_the_2026_multi_round_scenario() -> None:
    answers = Answers(ElicitResult.accept({"name": "Ada"}), ElicitResult.accept({"color": "green"}))
    async with Client(build_server(), protocol="2026-07-28", **answers.handlers()) as client:
        result = await client.call_tool("test_input_required_result_multi_round")
    assert result.text == "Ada likes green"
    assert [r.key for r in answers.asked] == ["step1", "step2"]


# -- tools in sampling (client/sampling, "Sampling with Tools") ------------------------------------------------


class WeatherModel:
    """The client's model for the weather tools: it calls get_weather for each city the question names (in
    parallel, one tool use each), then answers from the tool results it is sent."""

    def __init__(self) -> None:
        self.requests: list[SampleRequest] = []

    def sample(self, request: SampleRequest) -> SampleResult:
        self.requests.append(request)
        last = request.messages[-1].blocks
        results = [block for block in last if isinstance(block, ToolResultContent)]
        if results:
            return SampleResult.reply("; ".join(r.content[0].text for r in results), model="weather-model")  # type: ignore[union-attr]
        question = last[0].text
        uses = [ToolUseContent(id=f"call_{c}", name="get_weather", input={"city": c}) for c in ("Paris", "London")]
        return SampleResult([use for use in uses if use.input["city"] in question], "weather-model", "toolUse")


GET_WEATHER = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "inputSchema": {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "City name."}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "annotations": {"readOnlyHint": True},
}


async def ask_weather(
    transport: str, backend: str, protocol: str, tool: str, **arguments: Any
) -> tuple[Any, WeatherModel]:
    model = WeatherModel()
    async with connect(transport, backend, protocol, sampling_handler=model.sample, sampling_tools=True) as client:
        return await client.call_tool(tool, arguments), model


@ERAS
async def test_a_tool_runs_the_models_tool_uses_and_gets_the_final_text(
    transport: str, anyio_backend: str, protocol: str
) -> None:
    result, model = await ask_weather(transport, anyio_backend, protocol, "weather_report", cities="Paris and London")
    assert (result.is_error, result.text) == (False, "18°C, partly cloudy; 15°C, rainy")
    first, second = model.requests  # each question reaches the model once, in 2026-07-28 too
    assert (first.tools, first.tool_choice, first.max_tokens) == ([GET_WEATHER], {"mode": "auto"}, 1000)
    assert [m.role for m in second.messages] == ["user", "assistant", "user"]
    assert second.messages[1].blocks == [
        ToolUseContent(id="call_Paris", name="get_weather", input={"city": "Paris"}),
        ToolUseContent(id="call_London", name="get_weather", input={"city": "London"}),
    ]
    assert second.messages[2].blocks == [
        ToolResultContent(tool_use_id="call_Paris", content=[TextContent(text="18°C, partly cloudy")]),
        ToolResultContent(tool_use_id="call_London", content=[TextContent(text="15°C, rainy")]),
    ]
    assert second.raw["messages"][2]["content"][0] == {
        "type": "tool_result",
        "toolUseId": "call_Paris",
        "content": [{"type": "text", "text": "18°C, partly cloudy"}],
    }
    assert second.tools == [GET_WEATHER]


@ERAS
async def test_a_sync_tool_answers_tool_uses_with_results_it_builds(
    transport: str, anyio_backend: str, protocol: str
) -> None:
    result, model = await ask_weather(transport, anyio_backend, protocol, "sync_weather_report", city="London")
    assert result.text == "15°C, rainy"
    assert [len(r.messages) for r in model.requests] == [1, 3]


async def test_a_client_without_sampling_tools_is_never_sent_tools(transport: str, anyio_backend: str) -> None:
    model = WeatherModel()
    async with connect(transport, anyio_backend, "handshake", sampling_handler=model.sample) as client:
        refused = await client.call_tool("weather_report", {"cities": "Paris"})
    async with connect(transport, anyio_backend, "2026-07-28", sampling_handler=model.sample) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("weather_report", {"cities": "Paris"})
    assert refused.is_error
    assert refused.text == "the client cannot sample with tools (it did not declare sampling.tools)"
    assert (caught.value.code, caught.value.data) == (-32021, {"requiredCapabilities": {"sampling": {"tools": {}}}})
    assert model.requests == []


# -- roots, and several questions at once (issue 21 §3) ----------------------------------------------------------


@ERAS
async def test_the_clients_roots_reach_async_and_sync_tools(
    transport: str, anyio_backend: str, protocol: str, tmp_path: Path
) -> None:
    roots = [tmp_path, "file:///srv/shared%20data", Root(uri="file:///opt/app", name="App")]
    async with connect(transport, anyio_backend, protocol, roots=roots) as client:
        listed = await client.call_tool("test_input_required_result_list_roots")
        paths = await client.call_tool("sync_roots")
    assert listed.text == (
        f"Roots: {tmp_path.name} ({tmp_path.as_uri()}), None (file:///srv/shared%20data), App (file:///opt/app)"
    )
    assert paths.text == f"{tmp_path} /srv/shared data /opt/app"


@ERAS
async def test_roots_from_a_function_are_listed_when_asked(transport: str, anyio_backend: str, protocol: str) -> None:
    asked: list[str] = []

    async def current() -> list[str]:
        asked.append("now")
        return ["file:///work"]

    async with connect(transport, anyio_backend, protocol, roots=current) as client:
        result = await client.call_tool("sync_roots")
    assert (result.text, asked) == ("/work", ["now"])


async def test_without_roots_a_tool_that_lists_them_is_refused(transport: str, anyio_backend: str) -> None:
    async with connect(transport, anyio_backend, "handshake") as client:
        refused = await client.call_tool("sync_roots")
    assert refused.is_error
    assert "did not declare roots" in refused.text
    async with connect(transport, anyio_backend, "2026-07-28") as client:
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("sync_roots")
    assert (caught.value.code, caught.value.data) == (-32021, {"requiredCapabilities": {"roots": {}}})


class Release:
    """The user and the roots of the release tools: in the handshake era the form's answer waits until the
    confirmation has been asked too, which only questions sent together allow."""

    def __init__(self, protocol: str, confirm: ElicitResult[Any]) -> None:
        self.protocol = protocol
        self.confirm = confirm
        self.confirm_asked = anyio.Event()
        self.asked: list[ElicitRequest] = []

    async def elicit(self, request: ElicitRequest) -> ElicitResult[Any]:
        self.asked.append(request)
        if request.message == "Publish the release?":
            self.confirm_asked.set()
            return self.confirm
        if self.protocol == "handshake":
            with anyio.fail_after(TIMEOUT):
                await self.confirm_asked.wait()  # answered after a question asked later: in any order
        return ElicitResult.accept({"name": "v1.2"})


@ERAS
@pytest.mark.parametrize("tool", ["release", "sync_release"])
async def test_a_form_a_confirmation_and_the_roots_are_asked_at_once(
    transport: str, anyio_backend: str, protocol: str, tool: str
) -> None:
    user = Release(protocol, ElicitResult.accept())
    # One round in 2026-07-28: a client allowed a single round of input gets the result.
    options: dict[str, Any] = {"roots": ["file:///repo"], "elicitation_handler": user.elicit, "max_input_rounds": 1}
    async with connect(transport, anyio_backend, protocol, **options) as client:
        result = await client.call_tool(tool)
        appended = await client.call_tool("appends")
    assert result.text == "released v1.2 from ['/repo']"
    keys = (None, None) if protocol == "handshake" else ("elicitation2", "elicitation1")  # by position
    assert sorted((r.message, r.requested_schema, r.key) for r in user.asked) == [
        ("Publish the release?", {"type": "object", "properties": {}}, keys[0]),
        ("Release details?", NAME_FORM, keys[1]),
    ]
    assert appended.text == "1"  # the code after the block ran once: the round ended at the block, in both eras


@ERAS
async def test_a_declined_confirmation_among_questions_asked_together(
    transport: str, anyio_backend: str, protocol: str
) -> None:
    user = Release(protocol, ElicitResult.decline())
    async with connect(
        transport, anyio_backend, protocol, roots=["file:///repo"], elicitation_handler=user.elicit
    ) as client:
        result = await client.call_tool("sync_release")
    assert result.text == "not released (decline)"


@ERAS
async def test_one_round_of_three_kinds_of_question(transport: str, anyio_backend: str, protocol: str) -> None:
    answers = Answers(ElicitResult.accept({"name": "Alice"}), replies=("Hello there!",))
    options: dict[str, Any] = {"roots": ["file:///test/root"], "max_input_rounds": 1, **answers.handlers()}
    async with connect(transport, anyio_backend, protocol, **options) as client:
        result = await client.call_tool("test_input_required_result_multiple_inputs")
    assert result.text == "Hello there!, Alice; roots: file:///test/root"
    assert [(r.key, r.message) for r in answers.asked] == [
        (None if protocol == "handshake" else "user_name", "What is your name?")
    ]
