"""Sampling requests per revision and capability, the tool-use pairing rules, and reading the reply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest

from toolkit import (
    CallToolResult,
    ClientCapabilityError,
    ImageContent,
    ModelPreferences,
    SampleResult,
    SamplingMessage,
    TextContent,
    Tool,
    ToolResultContent,
    ToolUseContent,
    tool,
)
from toolkit._asking.sampling import sampling_params

SCHEMAS = Path(__file__).parents[1] / "mcp_schema"
SAMPLING: dict[str, Any] = {"sampling": {}}
WITH_TOOLS: dict[str, Any] = {"sampling": {"tools": {}}}


def check_request(params: dict[str, Any], version: str) -> None:
    schema = json.loads((SCHEMAS / f"{version}.json").read_text())
    defs = "$defs" if "$defs" in schema else "definitions"
    request = {"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": params}
    jsonschema.Draft202012Validator({**schema, "$ref": f"#/{defs}/CreateMessageRequest"}).validate(request)


@tool
def lookup(city: str) -> str:
    """Look a city up."""
    return city


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_a_prompt_becomes_one_user_message_in_every_revision(version: str) -> None:
    params = sampling_params(
        "What is the capital of France?",
        version,
        SAMPLING,
        max_tokens=100,
        system_prompt="Be brief.",
        temperature=0.2,
        stop_sequences=["\n\n"],
        model_preferences=["claude", "gpt"],
        metadata={"trace": "t1"},
    )
    assert params == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}],
        "maxTokens": 100,
        "systemPrompt": "Be brief.",
        "temperature": 0.2,
        "stopSequences": ["\n\n"],
        "modelPreferences": {"hints": [{"name": "claude"}, {"name": "gpt"}]},
        "metadata": {"trace": "t1"},
    }
    check_request(params, version)


def test_tools_in_sampling_need_2025_11_25_and_the_capability() -> None:
    conversation: list[str | dict[str, Any]] = [
        "Weather in Paris?",
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "u1", "name": "lookup", "input": {"city": "Paris"}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "toolUseId": "u1", "content": [{"type": "text", "text": "sun"}]}],
        },
    ]
    params = sampling_params(conversation, "2025-11-25", WITH_TOOLS, max_tokens=50, tools=[lookup], tool_choice="auto")
    check_request(params, "2025-11-25")
    assert params["tools"][0]["name"] == "lookup"
    assert params["toolChoice"] == {"mode": "auto"}
    with pytest.raises(ClientCapabilityError) as caught:
        sampling_params("x", "2025-11-25", SAMPLING, max_tokens=5, tools=[lookup])
    assert caught.value.required == {"sampling": {"tools": {}}}
    with pytest.raises(ValueError, match="2025-11-25"):
        sampling_params("x", "2025-06-18", WITH_TOOLS, max_tokens=5, tools=[lookup])


def test_tool_results_must_answer_every_tool_use_alone() -> None:
    uses = {"role": "assistant", "content": [{"type": "tool_use", "id": "u1", "name": "lookup", "input": {}}]}
    mixed = {
        "role": "user",
        "content": [
            {"type": "tool_result", "toolUseId": "u1", "content": []},
            {"type": "text", "text": "and also"},
        ],
    }
    with pytest.raises(ValueError, match="message 2: tool results must be the only content"):
        sampling_params(["q", uses, mixed], "2025-11-25", WITH_TOOLS, max_tokens=5)
    unanswered = {"role": "user", "content": {"type": "text", "text": "hm"}}
    with pytest.raises(ValueError, match="message 2: must answer each tool use"):
        sampling_params(["q", uses, unanswered], "2025-11-25", WITH_TOOLS, max_tokens=5)


def test_the_other_options_go_by_their_wire_names_and_an_unset_or_default_one_is_left_out() -> None:
    declared: dict[str, Any] = {"sampling": {"tools": {}, "context": {}}}
    params = sampling_params(
        "q",
        "2025-11-25",
        declared,
        max_tokens=9,
        system_prompt=None,
        include_context="thisServer",
        model_preferences=ModelPreferences(hints=[{"name": "m"}], cost_priority=0.5),
        tools=[{"name": "t", "inputSchema": {"type": "object"}}],
        tool_choice="none",
    )
    assert params == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "q"}}],
        "maxTokens": 9,
        "includeContext": "thisServer",
        "modelPreferences": {"hints": [{"name": "m"}], "costPriority": 0.5},
        "tools": [{"name": "t", "inputSchema": {"type": "object"}}],
        "toolChoice": {"mode": "none"},
    }
    check_request(params, "2025-11-25")
    # "none" is the default: not sent, so a client without sampling.context gets it too.
    plain = sampling_params("q", "2025-11-25", SAMPLING, max_tokens=9, include_context="none", model_preferences={})
    assert plain == {"messages": params["messages"], "maxTokens": 9, "modelPreferences": {}}
    with pytest.raises(ValueError, match="a sampling tool is"):
        sampling_params("q", "2025-11-25", declared, max_tokens=9, tools=[{"title": "no name"}])


def test_an_unknown_option_is_refused_at_run_time_too() -> None:
    with pytest.raises(TypeError, match="unknown sampling option temprature; the options are include_context, "):
        sampling_params("x", "2025-11-25", SAMPLING, max_tokens=5, temprature=0.5)  # type: ignore[call-arg]


def test_a_client_without_sampling_and_bad_arguments_are_refused() -> None:
    with pytest.raises(ClientCapabilityError) as caught:
        sampling_params("x", "2025-11-25", {}, max_tokens=5)
    assert caught.value.required == {"sampling": {}}
    with pytest.raises(ValueError, match="max_tokens"):
        sampling_params("x", "2025-11-25", SAMPLING, max_tokens=0)
    with pytest.raises(ValueError, match="at least one message"):
        sampling_params([], "2025-11-25", SAMPLING, max_tokens=5)
    with pytest.raises(ValueError, match="message 0"):
        sampling_params([{"role": "robot"}], "2025-11-25", SAMPLING, max_tokens=5)
    with pytest.raises(ValueError, match=r"sampling\.context"):
        sampling_params("x", "2025-11-25", SAMPLING, max_tokens=5, include_context="thisServer")
    audio = {"role": "user", "content": {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}}
    with pytest.raises(ValueError, match="audio"):
        sampling_params([audio], "2024-11-05", SAMPLING, max_tokens=5)


def test_replies_are_read_tolerantly() -> None:
    one = SampleResult.from_wire({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"})
    assert (one.text, one.model, one.stop_reason, one.role) == ("Paris", "m", None, "assistant")
    several = SampleResult.from_wire(
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "u", "name": "lookup", "input": {}},
            ],
            "model": "m",
            "stopReason": "toolUse",
        }
    )
    assert several.tool_uses == [ToolUseContent(id="u", name="lookup")]
    assert several.stop_reason == "toolUse"
    assert several.to_wire()["content"][1]["type"] == "tool_use"
    assert SampleResult.reply("hi").to_wire() == {
        "role": "assistant",
        "content": {"type": "text", "text": "hi"},
        "model": "toolkit-client",
        "stopReason": "endTurn",
    }
    assert SampleResult([TextContent(text="a"), TextContent(text="b")], "m").text == "a\nb"
    for bad in (None, {"content": {"type": "text", "text": "x"}}, {"model": "m", "content": {"type": "video"}}):
        with pytest.raises(ValueError, match="sampling result"):
            SampleResult.from_wire(bad)


def test_tool_uses_are_answered_with_results_the_rules_accept() -> None:
    """`run_tools` and `use.result` build what the follow-up request needs, valid against the 2025-11-25 schema."""

    @tool
    def fail() -> str:
        """Always fails."""
        raise ValueError("secret detail")

    reply = SampleResult(
        [
            ToolUseContent(id="a", name="lookup", input={"city": "Paris"}),
            ToolUseContent(id="b", name="lookup", input={"town": "Paris"}),
            ToolUseContent(id="c", name="fail"),
            ToolUseContent(id="d", name="invented"),
        ],
        "m",
        "toolUse",
    )
    offered: list[Tool[Any, Any]] = [lookup, fail]
    answers = anyio.run(reply.run_tools, offered)
    assert answers.role == "user"
    assert [(r.tool_use_id, r.is_error) for r in answers.blocks] == [("a", None), ("b", True), ("c", True), ("d", True)]
    assert answers.blocks[0].content == [TextContent(text="Paris")]
    assert answers.blocks[1].content[0].text.startswith("Invalid arguments for tool 'lookup'")
    assert answers.blocks[2].content == [TextContent(text="Error executing tool 'fail'")]  # no details leak
    assert answers.blocks[3].content == [TextContent(text="Unknown tool 'invented'; the tools are: fail, lookup")]
    conversation: list[str | SamplingMessage] = ["Where?", reply.message, answers]
    check_request(sampling_params(conversation, "2025-11-25", WITH_TOOLS, max_tokens=9, tools=[lookup]), "2025-11-25")

    use = reply.tool_uses[0]
    image = ImageContent(data="AA==", mime_type="image/png")
    assert use.result("18°C") == ToolResultContent(tool_use_id="a", content=[TextContent(text="18°C")])
    assert use.result(image, is_error=True) == ToolResultContent(tool_use_id="a", content=[image], is_error=True)
    assert use.result([image, TextContent(text="x")]).content == [image, TextContent(text="x")]
    structured = CallToolResult(content=[TextContent(text="{}")], structured_content={"t": 18})
    assert use.result(structured) == ToolResultContent(
        tool_use_id="a", content=[TextContent(text="{}")], structured_content={"t": 18}
    )
    asked = SampleResult.use_tool("lookup", {"city": "Rome"}, id="x")
    assert (asked.tool_uses, asked.stop_reason) == (
        [ToolUseContent(id="x", name="lookup", input={"city": "Rome"})],
        "toolUse",
    )
    assert SampleResult.use_tool("lookup").tool_uses[0].id.startswith("call_")
