"""The upstream's questions (elicitation, sampling, roots) asked of the client that made the call, in that client's
era, whatever era the upstream speaks: a 2026-07-28 client answers a 2025-11-25 upstream's live requests in
input-required rounds, a 2025-11-25 client answers a 2026-07-28 upstream's input requests live."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolkit import Client, Context, ElicitRequest, ElicitResult, SampleRequest, SampleResult, Server

pytestmark = pytest.mark.anyio

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def asking_upstream(calls: list[str]) -> Server:
    upstream = Server("asking")

    @upstream.tool
    async def interview(ctx: Context) -> str:
        """Ask a name, then the model, then the roots."""
        calls.append("interview")
        name = await ctx.elicit("Your name?", NAME)
        assert name.data is not None
        sampled = await ctx.sample(f"A greeting for {name.data['name']}", max_tokens=20)
        roots = await ctx.list_roots()
        return f"{sampled.text} ({len(list(roots))} root)"

    return upstream


@pytest.mark.parametrize("upstream_era", ["2026-07-28", "handshake"])
@pytest.mark.parametrize("client_era", ["2026-07-28", "handshake"])
async def test_the_upstreams_questions_are_answered_by_the_client_in_its_own_era(
    upstream_era: Any, client_era: Any, tmp_path: Path
) -> None:
    asked: list[str] = []
    calls: list[str] = []

    def elicit(request: ElicitRequest) -> ElicitResult[Any]:
        asked.append(request.message)
        return ElicitResult.accept({"name": "Ada"})

    def sample(request: SampleRequest) -> SampleResult:
        asked.append(str(request.messages[0].content.text))  # type: ignore[union-attr]
        return SampleResult.reply("Hello, Ada")

    gateway = Server("gateway")
    gateway.mount(asking_upstream(calls), protocol=upstream_era)
    async with Client(
        gateway, protocol=client_era, elicitation_handler=elicit, sampling_handler=sample, roots=[tmp_path]
    ) as client:
        result = await client.call_tool("interview")
    assert not result.is_error, result.text
    assert result.text == "Hello, Ada (1 root)"
    assert asked == ["Your name?", "A greeting for Ada"]
    # A live question (2025-11-25 on both sides) is answered inside the one upstream call; each round of 2026-07-28
    # on one side runs the upstream's tool again (3 questions: 4 runs), the answers so far replayed; with rounds on
    # both sides, each downstream round runs the upstream's rounds so far again (1 + 2 + 3 + 4).
    runs = {"handshake": {"handshake": 1, "2026-07-28": 4}, "2026-07-28": {"handshake": 4, "2026-07-28": 10}}
    assert len(calls) == runs[upstream_era][client_era]


async def test_a_question_the_client_cannot_answer_fails_the_call_with_a_tool_error() -> None:
    gateway = Server("gateway")
    gateway.mount(asking_upstream([]), protocol="handshake")
    async with Client(gateway, protocol="handshake") as client:
        result = await client.call_tool("interview")
    assert result.is_error
