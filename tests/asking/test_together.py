"""`ctx.together()`: several questions asked at once, its edges (misuse, failures, a block after a question of its
own), through the real client in memory, in both eras, on asyncio and trio."""

from __future__ import annotations

import concurrent.futures
import threading
from typing import Any

import anyio
import pytest

from toolkit import (
    Client,
    ClientRequestError,
    Context,
    ElicitRequest,
    ElicitResult,
    SampleRequest,
    SampleResult,
    Server,
    tool,
)

pytestmark = pytest.mark.anyio
ERAS = pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
EMPTY: dict[str, Any] = {"type": "object", "properties": {}}
TIMEOUT = 30


@tool
async def awaits_inside(ctx: Context) -> str:
    async with ctx.together():
        await ctx.confirm("Too soon?")
    return "unreachable"


@tool
async def plain_with_in_async(ctx: Context) -> str:
    with ctx.together():
        ctx.confirm("Wrong block?")
    return "unreachable"


@tool
def nested(ctx: Context) -> str:
    with ctx.together(), ctx.together():
        ctx.confirm("Nested?")
    return "unreachable"


@tool
def fails_inside(ctx: Context) -> str:
    with ctx.together():
        ctx.confirm("Never asked?")
        raise ValueError("the block failed")


@tool
def empty_block(ctx: Context) -> str:
    with ctx.together():
        pass
    return "nothing asked"


@tool
async def reads_too_soon(ctx: Context) -> str:
    async with ctx.together():
        answer = ctx.confirm("Read now?")
        return answer.action


@tool
async def one_then_two(ctx: Context) -> str:
    """A question of its own, then two together: three rounds at most in 2026-07-28, two here."""
    first = await ctx.confirm("First?")
    async with ctx.together():
        second = ctx.confirm("Second?")
        reply = ctx.sample("Third?", max_tokens=5)
    return f"{first.action} {second.action} {reply.text}"


@tool
def one_fails(ctx: Context) -> str:
    with ctx.together():
        ok = ctx.confirm("Fine?")
        ctx.sample("Refused?", max_tokens=5)
    return ok.action


SERVER = Server(
    "together",
    tools=[
        awaits_inside,
        plain_with_in_async,
        nested,
        fails_inside,
        empty_block,
        reads_too_soon,
        one_then_two,
        one_fails,
    ],
    show_error_details=True,
)


class User:
    def __init__(self) -> None:
        self.asked: list[str] = []

    def elicit(self, request: ElicitRequest) -> ElicitResult[Any]:
        self.asked.append(request.message)
        return ElicitResult.accept()

    def sample(self, request: SampleRequest) -> SampleResult:
        self.asked.append(str(request.messages[0].blocks[0].text))
        if request.messages[0].blocks[0].text == "Refused?":
            raise ClientRequestError(-1, "User rejected sampling request")
        return SampleResult.reply("yes")


def client(protocol: str, user: User, **options: Any) -> Client:
    return Client(SERVER, protocol=protocol, elicitation_handler=user.elicit, sampling_handler=user.sample, **options)  # type: ignore[arg-type]


@ERAS
@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("awaits_inside", "is asked together with the others of its `ctx.together()` block"),
        ("plain_with_in_async", "in an async tool, ask together with `async with ctx.together():`"),
        ("nested", "ctx.together() blocks do not nest"),
        ("fails_inside", "ValueError: the block failed"),
        ("reads_too_soon", "read its answer after the block"),
    ],
)
async def test_misuse_fails_the_call_clearly_and_asks_nothing(
    anyio_backend: str, protocol: str, name: str, problem: str
) -> None:
    user = User()
    with anyio.fail_after(TIMEOUT):
        async with client(protocol, user) as connected:
            result = await connected.call_tool(name)
    assert result.is_error
    assert problem in result.text
    assert user.asked == []


@ERAS
async def test_an_empty_block_asks_nothing(anyio_backend: str, protocol: str) -> None:
    user = User()
    async with client(protocol, user) as connected:
        result = await connected.call_tool("empty_block")
    assert (result.text, user.asked) == ("nothing asked", [])


@ERAS
async def test_a_block_after_a_question_of_its_own(anyio_backend: str, protocol: str) -> None:
    user = User()
    # 2026-07-28: one round for the first question, one for the two asked together, then the result.
    async with client(protocol, user, max_input_rounds=2) as connected:
        result = await connected.call_tool("one_then_two")
    assert result.text == "accept accept yes"
    assert sorted(user.asked) == ["First?", "Second?", "Third?"]
    assert user.asked[0] == "First?"


async def test_a_question_that_fails_fails_the_block_once_the_others_are_answered(anyio_backend: str) -> None:
    user = User()
    async with client("handshake", user) as connected:
        result = await connected.call_tool("one_fails")
    assert result.is_error
    assert "User rejected sampling request" in result.text
    assert sorted(user.asked) == ["Fine?", "Refused?"]


ended: list[str] = []
done = threading.Event()


@tool
def sync_waits_together(ctx: Context) -> str:
    try:
        with ctx.together():
            ctx.confirm("Still there?")
            ctx.confirm("And there?")
    except concurrent.futures.CancelledError:
        ended.append(f"cancelled (ctx.cancelled={ctx.cancelled})")
        raise
    finally:
        done.set()
    return "answered"


@tool
async def how_it_ended() -> str:
    await anyio.to_thread.run_sync(done.wait, TIMEOUT)
    return ", ".join(ended) or "still waiting"


async def test_cancelling_a_sync_tools_questions_asked_together_releases_its_thread(anyio_backend: str) -> None:
    ended.clear()
    done.clear()
    waiting = anyio.Event()
    asked: list[str] = []

    async def never(request: ElicitRequest) -> ElicitResult[Any]:
        asked.append(request.message)
        if len(asked) == 2:
            waiting.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    server = Server("cancel", tools=[sync_waits_together, how_it_ended])
    with anyio.fail_after(TIMEOUT):
        async with Client(server, protocol="handshake", elicitation_handler=never) as connected:
            async with anyio.create_task_group() as tg:
                tg.start_soon(connected.call_tool, "sync_waits_together")
                await waiting.wait()  # both questions are out before either is answered
                tg.cancel_scope.cancel()
            assert (await connected.call_tool("how_it_ended")).text == "cancelled (ctx.cancelled=True)"
    assert sorted(asked) == ["And there?", "Still there?"]
