"""The upstream's questions (elicitation, sampling, roots) asked of the client that made the call, in that client's
era, whatever era the upstream speaks: a 2026-07-28 client answers a 2025-11-25 upstream's live requests in
input-required rounds, a 2025-11-25 client answers a 2026-07-28 upstream's input requests live."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
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


class Opaque:
    """A toolkit server the gateway can only connect to (a `Servable` with no registry): its calls go over the
    protocol, as those of a server written with another SDK do, not in process."""

    def __init__(self, server: Server) -> None:
        self.running = server.running
        self.serve = server.serve
        self.name = server.name


def declining_upstream(seen: list[str], *, then_hang: bool = False) -> Server:
    """A 2025-11-25 upstream whose `greet` asks a name (`kind="elicitation"`) or the model (`"sampling"`), and notes
    what it got (the answer's action, `error`) and whether it was cancelled; `then_hang`: it waits until cancelled
    when it got no name."""
    upstream = Server("declining")

    @upstream.tool
    async def greet(kind: str, ctx: Context) -> str:
        """Ask, then greet."""
        try:
            if kind == "sampling":
                try:
                    sampled = await ctx.sample("A greeting", max_tokens=20)
                except Exception:
                    seen.append("error")
                    raise
                seen.append("reply")
                return sampled.text
            answer = await ctx.elicit("Your name?", NAME)
            seen.append(answer.action)
            if answer.data is None and then_hang:
                await anyio.sleep_forever()
            return f"hello {answer.data['name']}" if answer.data is not None else "no name"
        except anyio.get_cancelled_exc_class():
            seen.append("cancelled")
            raise

    return upstream


@pytest.mark.parametrize(("kind", "declined"), [("elicitation", "cancel"), ("sampling", "error")])
async def test_a_question_that_goes_to_a_2026_client_as_a_round_is_declined_upstream_and_its_call_ends_by_itself(
    kind: str, declined: str
) -> None:
    # docs/gateway.md, "What a 2026-07-28 client sees": a 2025-11-25 upstream's call that asks is not cancelled (an
    # answer and a cancellation sent together may cross the call's end); its question is declined and the call
    # left to end by itself, its result dropped, before the client gets its round.
    seen: list[str] = []

    def elicit(request: ElicitRequest) -> ElicitResult[Any]:
        return ElicitResult.accept({"name": "Ada"})

    def sample(request: SampleRequest) -> SampleResult:
        return SampleResult.reply("Hello, Ada")

    gateway = Server("gateway")
    gateway.mount(Opaque(declining_upstream(seen)), protocol="handshake")
    async with Client(gateway, protocol="2026-07-28", elicitation_handler=elicit, sampling_handler=sample) as client:
        result = await client.call_tool("greet", {"kind": kind})
    assert not result.is_error, result.text
    assert result.text == ("hello Ada" if kind == "elicitation" else "Hello, Ada")
    answered = "accept" if kind == "elicitation" else "reply"
    assert seen == [declined, answered]  # the first run ended by itself: never cancelled


async def test_an_upstream_call_that_does_not_end_after_its_question_was_declined_is_cancelled_after_a_grace() -> None:
    # The bound on a declined call (docs/gateway.md: `DECLINED_GRACE`, 5 s): one still running then is cancelled,
    # and the client gets its round all the same.
    seen: list[str] = []
    gateway = Server("gateway")
    gateway.mount(Opaque(declining_upstream(seen, then_hang=True)), protocol="handshake")
    with anyio.fail_after(30):
        async with Client(
            gateway, protocol="2026-07-28", elicitation_handler=lambda _: ElicitResult.accept({"name": "Ada"})
        ) as client:
            result = await client.call_tool("greet", {"kind": "elicitation"})
    assert result.text == "hello Ada"
    assert seen[0] == "cancel"
    assert sorted(seen[1:]) == ["accept", "cancelled"]  # the hanging run was cancelled; the retry answered
