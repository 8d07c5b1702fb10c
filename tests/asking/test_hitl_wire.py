"""Asking the client, message by message, with a raw peer: every server message is checked against the official
schema of its revision (tests/wire.py), in memory and over stdio."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import servers
import wire

pytestmark = pytest.mark.anyio

SERVER = servers.HITL
FORM_ONLY: dict[str, Any] = {"elicitation": {}}
EVERYTHING: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}, "sampling": {}}
USER_SCHEMA = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}


@asynccontextmanager
async def connect(transport: str, backend: str) -> AsyncIterator[wire.Peer]:
    if transport == "memory":
        async with wire.memory(servers.hitl()) as peer:
            yield peer
    else:
        async with wire.stdio([sys.executable, str(SERVER), backend]) as peer:
            yield peer


@pytest.fixture(params=["memory", "stdio"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def reply(request: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


async def test_a_form_is_a_request_of_the_servers_own(transport: str, anyio_backend: str) -> None:
    async with connect(transport, anyio_backend) as peer:
        await peer.initialize(capabilities=FORM_ONLY)
        await peer.start_call("test_elicitation", {"message": "Who?"})
        asked = await peer.receive()
        assert asked == {
            "jsonrpc": "2.0",
            "id": asked["id"],  # the server's own id space
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "Who?", "requestedSchema": USER_SCHEMA},
        }
        await peer.send({"jsonrpc": "2.0", "id": 987654, "result": {"action": "cancel"}})  # unknown id: ignored
        await peer.send(reply(asked, {"action": "accept", "content": {"username": "u", "email": "e@x.io"}}))
        answer = await peer.receive()
    assert answer["result"]["content"] == [
        {"type": "text", "text": "User response: accept, {'username': 'u', 'email': 'e@x.io'}"}
    ]


async def test_2025_06_18_gets_no_mode_and_no_url_mode(transport: str, anyio_backend: str) -> None:
    async with connect(transport, anyio_backend) as peer:
        await peer.initialize("2025-06-18", capabilities={"elicitation": {}})
        await peer.start_call("test_elicitation", {"message": "Who?"})
        asked = await peer.receive()
        assert asked["params"] == {"message": "Who?", "requestedSchema": USER_SCHEMA}
        await peer.send(reply(asked, {"action": "decline"}))
        assert (await peer.receive())["result"]["content"][0]["text"] == "User response: decline, None"
        multi = await peer.call("test_elicitation_sep1330_enums")  # multi-select fields: not in 2025-06-18
        assert multi["result"]["isError"] is True
        assert "multi-select" in multi["result"]["content"][0]["text"]
        url = await peer.call("connect_account")
        assert url["result"]["isError"] is True


async def test_sampling_in_2024_11_05(transport: str, anyio_backend: str) -> None:
    async with connect(transport, anyio_backend) as peer:
        await peer.initialize("2024-11-05", capabilities={"sampling": {}})
        await peer.start_call("test_sampling", {"prompt": "Hi"})
        asked = await peer.receive()
        assert asked["method"] == "sampling/createMessage"
        assert asked["params"] == {
            "messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}],
            "maxTokens": 100,
        }
        await peer.send(reply(asked, {"role": "assistant", "content": {"type": "text", "text": "Yo"}, "model": "m"}))
        assert (await peer.receive())["result"]["content"][0]["text"] == "LLM response: Yo"


async def test_batched_responses_of_2025_03_26(anyio_backend: str) -> None:
    async with connect("memory", anyio_backend) as peer:
        await peer.initialize("2025-03-26", capabilities={"sampling": {}})
        await peer.start_call("test_sampling", {"prompt": "Hi"})
        asked = await peer.receive()
        await peer.send([reply(asked, {"role": "assistant", "content": {"type": "text", "text": "Yo"}, "model": "m"})])
        assert (await peer.receive())["result"]["content"][0]["text"] == "LLM response: Yo"


@pytest.mark.parametrize("tool", ["ask_when_told", "sync_ask_when_told"])
async def test_a_cancelled_call_cancels_its_question(transport: str, anyio_backend: str, tool: str) -> None:
    async with connect(transport, anyio_backend) as peer:
        await peer.initialize(capabilities=FORM_ONLY)
        await peer.start_call(tool, id=7)
        asked = await peer.receive()
        await peer.notify("notifications/cancelled", {"requestId": 7})
        notice = await peer.receive()
        assert notice["method"] == "notifications/cancelled"
        assert notice["params"]["requestId"] == asked["id"]
        await peer.send(reply(asked, {"action": "accept"}))  # late: ignored
        assert (await peer.request("ping"))["result"] == {}  # no response to the cancelled call came first


async def test_an_error_answer_and_a_malformed_one_fail_the_call_readably(transport: str, anyio_backend: str) -> None:
    async with connect(transport, anyio_backend) as peer:
        await peer.initialize(capabilities=EVERYTHING)
        await peer.start_call("test_sampling", {"prompt": "Hi"})
        asked = await peer.receive()
        await peer.send(
            {"jsonrpc": "2.0", "id": asked["id"], "error": {"code": -1, "message": "User rejected sampling request"}}
        )
        failed = (await peer.receive())["result"]
        assert failed["isError"] is True
        assert "User rejected sampling request" in failed["content"][0]["text"]
        await peer.start_call("test_elicitation", {"message": "?"}, id=2)
        asked = await peer.receive()
        await peer.send(reply(asked, {"action": "maybe"}))
        malformed = (await peer.receive())["result"]
        assert malformed["isError"] is True
        assert "malformed" in malformed["content"][0]["text"]


async def test_end_of_input_while_a_question_waits(anyio_backend: str) -> None:
    # Over stdio: the memory transport has no half-close, so nothing could be read after it.
    async with connect("stdio", anyio_backend) as peer:
        await peer.initialize(capabilities=FORM_ONLY)
        await peer.start_call("ask_when_told")
        await peer.receive()
        await peer.close_input()
        [answer] = [m for m in await peer.rest() if m.get("id") == 1]
    assert answer["result"]["isError"] is True  # at once, not after the shutdown grace


async def test_url_elicitation_required_error(transport: str, anyio_backend: str) -> None:
    async with connect(transport, anyio_backend) as peer:
        await peer.initialize(capabilities=EVERYTHING)
        response = await peer.call("pay")
    error = response["error"]
    assert error["code"] == -32042
    [elicitation] = error["data"]["elicitations"]
    assert set(elicitation) == {"mode", "message", "url", "elicitationId"}


async def test_a_completed_url_elicitation_is_announced_to_its_client_only(anyio_backend: str) -> None:
    async with connect("memory", anyio_backend) as peer:
        await peer.initialize(capabilities=EVERYTHING)
        await peer.start_call("connect_account")
        asked = await peer.receive()
        assert asked["params"]["mode"] == "url"
        await peer.send(reply(asked, {"action": "accept"}))
        assert (await peer.receive())["result"]["content"][0]["text"] == "accept True"
        server = peer.server
        assert server is not None
        elicitation_id = asked["params"]["elicitationId"]
        assert server.elicitation_complete(elicitation_id) is True
        assert await peer.receive() == {
            "jsonrpc": "2.0",
            "method": "notifications/elicitation/complete",
            "params": {"elicitationId": elicitation_id},
        }
        assert server.elicitation_complete(elicitation_id) is False  # once
        assert server.elicitation_complete("unknown") is False


# -- 2026-07-28 --------------------------------------------------------------------------------------------


def modern(name: str, capabilities: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
    meta = wire.meta()
    meta[wire.CAPABILITIES_KEY] = capabilities if capabilities is not None else EVERYTHING
    return {"name": name, "_meta": meta, **params}


async def test_the_2026_rounds(transport: str, anyio_backend: str) -> None:
    async with connect(transport, anyio_backend) as peer:
        first = await peer.result("tools/call", modern("test_input_required_result_multi_round"))
        assert first["resultType"] == "input_required"
        assert first["inputRequests"] == {
            "step1": {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "Step 1: What is your name?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}},
                        "required": ["name"],
                    },
                },
            }
        }
        name = {"step1": {"action": "accept", "content": {"name": "Ada"}}}
        second = await peer.result(
            "tools/call",
            modern("test_input_required_result_multi_round", inputResponses=name, requestState=first["requestState"]),
        )
        assert list(second["inputRequests"]) == ["step2"]
        assert second["requestState"] != first["requestState"]
        color = {"step2": {"action": "accept", "content": {"color": "red"}}}  # only this round's answer
        done = await peer.result(
            "tools/call",
            modern("test_input_required_result_multi_round", inputResponses=color, requestState=second["requestState"]),
        )
        assert done["content"] == [{"type": "text", "text": "Ada likes red"}]


async def test_2026_states_and_answers_that_cannot_be_used(transport: str, anyio_backend: str) -> None:
    tool = "test_input_required_result_request_state"
    async with connect(transport, anyio_backend) as peer:
        first = await peer.result("tools/call", modern(tool))
        state = first["requestState"]
        ok = {"confirm": {"action": "accept", "content": {"ok": True}}}
        tampered = await peer.request("tools/call", modern(tool, inputResponses=ok, requestState=state + "-TAMPERED"))
        assert tampered["error"]["code"] == -32602
        other = await peer.request(
            "tools/call", modern("test_input_required_result_elicitation", inputResponses=ok, requestState=state)
        )
        assert other["error"]["code"] == -32602  # a state bound to another tool
        null = await peer.request("tools/call", modern(tool, inputResponses=None))
        assert null["error"]["code"] == -32602
        missing = await peer.result("tools/call", modern(tool, inputResponses={"wrong_key": {"action": "accept"}}))
        assert missing["resultType"] == "input_required"
        malformed = await peer.result("tools/call", modern(tool, inputResponses={"confirm": 12345}))
        assert malformed["resultType"] == "input_required"  # an answer that is not a result is asked again
        assert list(malformed["inputRequests"]) == ["confirm"]
        extra = {**ok, "unknown_extra_key": {"x": 1}, "another_unexpected": 2}
        done = await peer.result("tools/call", modern(tool, inputResponses=extra))  # no state: matching key taken
        assert done["content"][0]["text"] == "state-ok"
        done = await peer.result("tools/call", modern(tool, inputResponses=ok, requestState=state))
        assert done["content"][0]["text"] == "state-ok"


async def test_2026_missing_capabilities_are_32021(transport: str, anyio_backend: str) -> None:
    async with connect(transport, anyio_backend) as peer:
        response = await peer.request("tools/call", modern("test_sampling", {}, arguments={"prompt": "x"}))
        assert response["error"]["code"] == -32021
        assert response["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}
        only_sampling = await peer.result(
            "tools/call", modern("test_input_required_result_capabilities", {"sampling": {}})
        )
        assert list(only_sampling["inputRequests"]) == ["greeting"]
        assert only_sampling["inputRequests"]["greeting"]["method"] == "sampling/createMessage"
        url = await peer.request("tools/call", modern("connect_account", FORM_ONLY))
        assert url["error"]["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}


async def test_2026_url_required_is_an_input_request(transport: str, anyio_backend: str) -> None:
    async with connect(transport, anyio_backend) as peer:
        first = await peer.result("tools/call", modern("pay"))
        assert first["inputRequests"] == {
            "url_required": {
                "method": "elicitation/create",
                "params": {
                    "mode": "url",
                    "message": "Pay on the provider's page",
                    "url": "https://pay.example.com/checkout",
                },
            }
        }
        again = await peer.result(
            "tools/call",
            modern("pay", inputResponses={"url_required": {"action": "accept"}}, requestState=first["requestState"]),
        )
        assert again["resultType"] == "input_required"  # the tool checks again on each retry


WITH_TOOLS: dict[str, Any] = {"sampling": {"tools": {}}}
TOOL_USE = {
    "role": "assistant",
    "content": {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}},
    "model": "m",
    "stopReason": "toolUse",
}
TOOL_RESULT = {
    "role": "user",
    "content": {
        "type": "tool_result",
        "toolUseId": "call_1",
        "content": [{"type": "text", "text": "18°C, partly cloudy"}],
    },
}
QUESTION = {"role": "user", "content": {"type": "text", "text": "What's the weather like in Paris?"}}
ASSISTANT = {"role": "assistant", "content": TOOL_USE["content"]}
MILD = {"role": "assistant", "content": {"type": "text", "text": "Mild."}, "model": "m"}


async def test_tools_in_sampling_on_the_wire_in_2025_11_25(transport: str, anyio_backend: str) -> None:
    async with connect(transport, anyio_backend) as peer:
        await peer.initialize(capabilities=WITH_TOOLS)
        await peer.start_call("weather_report", {"cities": "Paris"})
        first = await peer.receive()
        assert first["params"]["messages"] == [QUESTION]
        assert (first["params"]["toolChoice"], first["params"]["tools"][0]["name"]) == ({"mode": "auto"}, "get_weather")
        await peer.send(reply(first, TOOL_USE))
        second = await peer.receive()
        assert second["params"]["messages"] == [QUESTION, ASSISTANT, TOOL_RESULT]
        await peer.send(reply(second, MILD))
        assert (await peer.receive())["result"]["content"] == [{"type": "text", "text": "Mild."}]


async def test_tools_in_sampling_as_input_requests_in_2026(transport: str, anyio_backend: str) -> None:
    arguments = {"arguments": {"cities": "Paris"}}
    async with connect(transport, anyio_backend) as peer:
        first = await peer.result("tools/call", modern("weather_report", WITH_TOOLS, **arguments))
        assert first["inputRequests"]["sampling1"]["params"]["messages"] == [QUESTION]
        use = {"sampling1": TOOL_USE}
        second = await peer.result(
            "tools/call",
            modern("weather_report", WITH_TOOLS, inputResponses=use, requestState=first["requestState"], **arguments),
        )
        asked = second["inputRequests"]["sampling2"]["params"]
        assert asked["messages"] == [QUESTION, ASSISTANT, TOOL_RESULT]
        text = {"sampling2": MILD}
        done = await peer.result(
            "tools/call",
            modern("weather_report", WITH_TOOLS, inputResponses=text, requestState=second["requestState"], **arguments),
        )
        assert done["content"] == [{"type": "text", "text": "Mild."}]
        refused = await peer.request("tools/call", modern("weather_report", {"sampling": {}}, **arguments))
        assert refused["error"]["data"] == {"requiredCapabilities": {"sampling": {"tools": {}}}}


# -- roots, and several questions at once (issue 21 §3) ----------------------------------------------------

ROOTS = {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}
ALL_THREE: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}
GREETING = {"role": "assistant", "content": {"type": "text", "text": "Hello there!"}, "model": "m"}


async def test_roots_are_a_request_of_the_servers_own_in_the_handshake_era(transport: str, anyio_backend: str) -> None:
    async with connect(transport, anyio_backend) as peer:
        await peer.initialize(capabilities={"roots": {"listChanged": True}})
        await peer.start_call("test_input_required_result_list_roots")
        asked = await peer.receive()
        assert asked == {"jsonrpc": "2.0", "id": asked["id"], "method": "roots/list", "params": {}}
        await peer.send(reply(asked, ROOTS))
        answer = await peer.receive()
        assert answer["result"]["content"] == [{"type": "text", "text": "Roots: Test Root (file:///test/root)"}]
        await peer.start_call("sync_roots", id=2)
        asked = await peer.receive()
        await peer.send(reply(asked, {"roots": [{"uri": "https://example.com/not-a-file"}]}))
        malformed = await peer.receive()
        assert malformed["result"]["isError"] is True
        assert "must start with file://" in malformed["result"]["content"][0]["text"]


async def test_without_roots_the_tool_is_told_so(transport: str, anyio_backend: str) -> None:
    async with connect(transport, anyio_backend) as peer:
        await peer.initialize(capabilities=FORM_ONLY)
        refused = await peer.call("test_input_required_result_list_roots")
        assert refused["result"]["isError"] is True
        assert "did not declare roots" in refused["result"]["content"][0]["text"]
        modern_refused = await peer.request("tools/call", modern("test_input_required_result_list_roots", FORM_ONLY))
        assert modern_refused["error"]["code"] == -32021
        assert modern_refused["error"]["data"] == {"requiredCapabilities": {"roots": {}}}


async def test_questions_asked_together_are_sent_at_once_and_answered_in_any_order(
    transport: str, anyio_backend: str
) -> None:
    async with connect(transport, anyio_backend) as peer:
        await peer.initialize(capabilities=ALL_THREE)
        await peer.start_call("test_input_required_result_multiple_inputs")
        asked = {message["method"]: message for message in await peer.receive_many(3)}  # all three before any answer
        assert sorted(asked) == ["elicitation/create", "roots/list", "sampling/createMessage"]
        await peer.send(reply(asked["roots/list"], ROOTS))
        await peer.send(reply(asked["sampling/createMessage"], GREETING))
        await peer.send(reply(asked["elicitation/create"], {"action": "accept", "content": {"name": "Alice"}}))
        answer = await peer.receive()
    assert answer["result"]["content"] == [{"type": "text", "text": "Hello there!, Alice; roots: file:///test/root"}]


async def test_questions_asked_together_are_one_2026_round(transport: str, anyio_backend: str) -> None:
    tool = "test_input_required_result_multiple_inputs"
    async with connect(transport, anyio_backend) as peer:
        first = await peer.result("tools/call", modern(tool, ALL_THREE))
        assert first["resultType"] == "input_required"
        assert {key: request["method"] for key, request in first["inputRequests"].items()} == {
            "user_name": "elicitation/create",
            "greeting": "sampling/createMessage",
            "client_roots": "roots/list",
        }
        assert first["inputRequests"]["client_roots"] == {"method": "roots/list", "params": {}}
        # A client that answers only some: the round asks again for the rest, and keeps what was answered.
        partly = {"user_name": {"action": "accept", "content": {"name": "Alice"}}, "client_roots": ROOTS}
        second = await peer.result(
            "tools/call", modern(tool, ALL_THREE, inputResponses=partly, requestState=first["requestState"])
        )
        assert list(second["inputRequests"]) == ["greeting"]
        done = await peer.result(
            "tools/call",
            modern(tool, ALL_THREE, inputResponses={"greeting": GREETING}, requestState=second["requestState"]),
        )
        assert done["content"] == [{"type": "text", "text": "Hello there!, Alice; roots: file:///test/root"}]
        everything = {**partly, "greeting": GREETING}
        at_once = await peer.result(
            "tools/call", modern(tool, ALL_THREE, inputResponses=everything, requestState=first["requestState"])
        )
        assert at_once["content"] == done["content"]
