"""The client's answers to a server's questions: handlers, declared capabilities, error codes, scripted answers."""

from __future__ import annotations

from typing import Any

import pytest

from toolkit import ClientRequestError, ElicitRequest, ElicitResult, ProtocolError, SampleRequest, SampleResult
from toolkit._asking.handlers import Handlers
from toolkit.testing._scripts import Scripted

pytestmark = pytest.mark.anyio

FORM = {
    "mode": "form",
    "message": "Name?",
    "requestedSchema": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "n": {"type": "integer", "default": 2}},
        "required": ["name"],
    },
}
SAMPLE = {"messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}], "maxTokens": 5}


def accept_ada(request: ElicitRequest) -> ElicitResult[Any]:
    return ElicitResult.accept({"name": "Ada"})


def test_capabilities_are_declared_only_with_their_handlers() -> None:
    assert Handlers().capabilities() == {}
    assert Handlers(accept_ada).capabilities() == {"elicitation": {"form": {}, "url": {}}}
    assert Handlers(accept_ada, str, elicitation_modes=("form",), sampling_tools=True).capabilities() == {
        "elicitation": {"form": {}},
        "sampling": {"tools": {}},
    }


async def test_handlers_answer_in_the_spec_shape() -> None:
    answer = await Handlers(accept_ada, None).answer("elicitation/create", FORM)
    assert answer == {"action": "accept", "content": {"name": "Ada"}}

    async def reply(request: SampleRequest) -> str:
        return f"{request.messages[0].blocks[0].text}! ({request.max_tokens})"

    assert await Handlers(None, reply).answer("sampling/createMessage", SAMPLE) == {
        "role": "assistant",
        "content": {"type": "text", "text": "Hi! (5)"},
        "model": "toolkit-client",
        "stopReason": "endTurn",
    }
    url = {"mode": "url", "message": "Sign in", "url": "https://x.example", "elicitationId": "e1"}
    seen: list[ElicitRequest] = []

    def consent(request: ElicitRequest) -> ElicitResult[Any]:
        seen.append(request)
        return ElicitResult.accept()

    assert await Handlers(consent, None).answer("elicitation/create", url) == {"action": "accept"}
    assert (seen[0].mode, seen[0].url, seen[0].elicitation_id) == ("url", "https://x.example", "e1")


@pytest.mark.parametrize(
    ("method", "params", "code"),
    [
        ("roots/list", {}, -32601),
        ("sampling/createMessage", SAMPLE, -32601),  # no sampling handler
        ("elicitation/create", {"message": "x"}, -32602),  # form mode without a schema
        ("elicitation/create", {"mode": "url", "message": "x", "url": "https://a.b"}, -32602),  # undeclared mode
        ("elicitation/create", [1], -32602),
    ],
)
async def test_what_cannot_be_answered_gets_its_error_code(method: str, params: Any, code: int) -> None:
    with pytest.raises(ProtocolError) as caught:
        await Handlers(accept_ada, None, elicitation_modes=("form",)).answer(method, params)
    assert caught.value.code == code


async def test_a_handler_chooses_its_error_or_fails_with_internal_error() -> None:
    def reject(request: SampleRequest) -> SampleResult:
        raise ClientRequestError(-1, "User rejected sampling request")

    with pytest.raises(ProtocolError) as caught:
        await Handlers(None, reject).answer("sampling/createMessage", SAMPLE)
    assert (caught.value.code, caught.value.message) == (-1, "User rejected sampling request")

    def broken(request: ElicitRequest) -> ElicitResult[Any]:
        raise KeyError("oops")

    with pytest.raises(ProtocolError) as caught:
        await Handlers(broken, None).answer("elicitation/create", FORM)
    assert caught.value.code == -32603


async def test_scripts_answer_in_order_and_keep_what_they_could_not_answer() -> None:
    scripted = Scripted(["accept", {"name": "Bo"}, "decline"], ["one", SampleResult.reply("two", model="m")])
    ask = scripted.elicitation_handler
    sample = scripted.sampling_handler
    assert ask is not None
    assert sample is not None
    with pytest.raises(ProtocolError):  # accept with a required field that has no default
        await Handlers(ask, None).answer("elicitation/create", FORM)
    assert "required field 'name' has no default" in scripted.problems[0]
    second = await Handlers(ask, None).answer("elicitation/create", FORM)
    assert second == {"action": "accept", "content": {"name": "Bo"}}
    assert (await Handlers(ask, None).answer("elicitation/create", FORM))["action"] == "decline"
    with pytest.raises(ProtocolError):
        await Handlers(ask, None).answer("elicitation/create", FORM)
    assert "'Name?'" in scripted.problems[1]
    assert "the script has 3" in scripted.problems[1]
    replies = [await Handlers(None, sample).answer("sampling/createMessage", SAMPLE) for _ in "ab"]
    assert [r["content"]["text"] for r in replies] == ["one", "two"]
    assert [len(scripted.elicitations), len(scripted.samplings)] == [4, 2]
    scripted.reset()
    assert (scripted.elicitations, scripted.samplings, scripted.problems) == ([], [], [])
    assert Scripted(None, None).elicitation_handler is None


async def test_accept_fills_in_the_defaults() -> None:
    scripted = Scripted("accept", None)
    optional = {**FORM, "requestedSchema": {**FORM["requestedSchema"], "required": []}}  # type: ignore[dict-item]
    handler = scripted.elicitation_handler
    assert handler is not None
    answer = await Handlers(handler, None).answer("elicitation/create", optional)
    assert answer == {"action": "accept", "content": {"n": 2}}
