"""Tools that ask the client: the conformance suite's elicitation and sampling tools, and toolkit's own cases.

Served in memory by the tests (`build()`) and over stdio (`python hitl_server.py [trio]`), where the SDK's client
drives it too. The conformance tools keep the suite's names, keys and texts.
"""

from __future__ import annotations

import concurrent.futures
import enum
import sys
import threading
from typing import Annotated, Any, Literal

import anyio
from pydantic import BaseModel
from typing_extensions import TypedDict

from toolkit import (
    Choices,
    Context,
    ElicitResult,
    Form,
    Roots,
    SamplingMessage,
    Server,
    URLElicitationRequired,
    tool,
)

USER = Form(
    {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
)
NAME = Form({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
OK = Form({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})
COLOR = Form({"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]})
EMPTY: dict[str, Any] = {"type": "object", "properties": {}}


class Status(str, enum.Enum):
    ACTIVE = "active"
    INACTIVE = "inactive"
    PENDING = "pending"


class Defaults(BaseModel):
    name: str = "John Doe"
    age: int = 30
    score: float = 95.5
    status: Status = Status.ACTIVE
    verified: bool = True


class Enums(TypedDict):
    untitledSingle: Literal["option1", "option2", "option3"]
    titledSingle: Annotated[
        str, Choices({"value1": "First Option", "value2": "Second Option", "value3": "Third Option"})
    ]
    legacyEnum: Annotated[
        str, Choices({"opt1": "Option One", "opt2": "Option Two", "opt3": "Option Three"}, legacy=True)
    ]
    untitledMulti: list[Literal["option1", "option2", "option3"]]
    titledMulti: Annotated[
        list[str], Choices({"value1": "First Choice", "value2": "Second Choice", "value3": "Third Choice"})
    ]


WEATHER = {"Paris": "18°C, partly cloudy", "London": "15°C, rainy"}


@tool(read_only=True)
def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: City name.
    """
    return WEATHER.get(city, "no data")


def build() -> Server:
    server = Server("hitl", version="1.0.0")
    _scenario_questions(server)
    _scenario_input_rounds(server)
    _scenario_other_inputs(server)
    _questions_together_and_replayed(server)
    _confirmations_urls_and_waits(server)
    _cancelled_questions(server)
    _tools_in_sampling(server)
    return server


def _scenario_questions(server: Server) -> None:
    """The conformance scenarios' questions of either era: a form, forms with defaults and with choices, a sampling."""

    @server.tool
    async def test_elicitation(message: str, ctx: Context) -> str:
        """Ask the user for a username and an email, and say what they answered."""
        answer = await ctx.elicit(message, USER)
        return f"User response: {answer.action}, {answer.content}"

    @server.tool
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        """Ask a form whose every field has a default (SEP-1034)."""
        answer = await ctx.elicit("Please review and update the form fields with defaults", Defaults)
        return f"Elicitation completed: action={answer.action}, content={answer.content}"

    @server.tool
    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        """Ask a form of single and multiple choices, titled and untitled (SEP-1330)."""
        answer = await ctx.elicit("Please select options from the enum fields", Enums)
        return f"Elicitation completed: action={answer.action}, content={answer.content}"

    @server.tool
    async def test_sampling(prompt: str, ctx: Context) -> str:
        """Ask the client's model to answer `prompt`."""
        reply = await ctx.sample(prompt, max_tokens=100)
        return f"LLM response: {reply.text}"


def _scenario_input_rounds(server: Server) -> None:
    """The conformance scenarios' 2026-07-28 elicitations: input-required rounds and the state they carry."""

    @server.tool
    async def test_input_required_result_elicitation(ctx: Context) -> str:
        """Ask the user's name (2026-07-28: an input request keyed `user_name`)."""
        answer = await ctx.elicit("What is your name?", NAME, key="user_name")
        return f"Hello, {answer.data['name']}!" if answer.data else f"No name ({answer.action})"

    async def confirm(ctx: Context) -> str:
        """Ask for a confirmation, carried across rounds in the requestState (an altered one is refused)."""
        answer = await ctx.elicit("Please confirm", OK, key="confirm")
        return "state-ok" if answer.data and answer.data["ok"] else "not confirmed"

    server.tool(name="test_input_required_result_request_state")(confirm)
    server.tool(name="test_input_required_result_tampered_state")(confirm)

    @server.tool
    async def test_input_required_result_multi_round(ctx: Context) -> str:
        """Ask two questions, one round each."""
        name = await ctx.elicit("Step 1: What is your name?", NAME, key="step1")
        color = await ctx.elicit("Step 2: What is your favorite color?", COLOR, key="step2")
        if name.data is None or color.data is None:
            return "incomplete"
        return f"{name.data['name']} likes {color.data['color']}"


def _scenario_other_inputs(server: Server) -> None:
    """The conformance scenarios' other 2026-07-28 inputs: sampling, a missing capability, roots, several at once."""

    @server.tool
    async def test_input_required_result_sampling(ctx: Context) -> str:
        """Ask the client's model a question (an input request keyed `capital_question`)."""
        reply = await ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
        return f"The model says: {reply.text}"

    @server.tool
    async def test_missing_capability(ctx: Context) -> str:
        """Needs the client's model: a client that declared no sampling gets -32021 (2026-07-28)."""
        reply = await ctx.sample("Say hello", max_tokens=10)
        return reply.text

    @server.tool
    async def test_streaming_elicitation(ctx: Context) -> str:
        """Logs, then asks: over 2026-07-28 HTTP the stream carries the log and the input-required result only."""
        await ctx.info("about to ask")
        answer = await ctx.elicit("What is your name?", NAME, key="user_name")
        return f"Hello, {answer.data['name'] if answer.data else '?'}!"

    @server.tool
    async def test_input_required_result_capabilities(ctx: Context) -> str:
        """Ask the user if the client can elicit, else the client's model."""
        if ctx.can_elicit():
            answer = await ctx.elicit("What is your name?", NAME, key="user_name")
            return f"Hello, {answer.data['name'] if answer.data else '?'}!"
        reply = await ctx.sample("Generate a greeting", max_tokens=50, key="greeting")
        return reply.text

    @server.tool
    async def test_input_required_result_list_roots(ctx: Context) -> str:
        """Ask the client for its roots (2026-07-28: an input request keyed `client_roots`)."""
        roots = await ctx.list_roots(key="client_roots")
        return "Roots: " + ", ".join(f"{root.name} ({root.uri})" for root in roots)

    @server.tool
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
        """Ask the user, the client's model and the client's roots at once (one round of three input requests)."""
        async with ctx.together():
            name = ctx.elicit("What is your name?", NAME, key="user_name")
            greeting = ctx.sample("Generate a greeting", max_tokens=50, key="greeting")
            roots = ctx.list_roots(key="client_roots")
        who = name.data["name"] if name.data else name.action
        return f"{greeting.text}, {who}; roots: {', '.join(root.uri for root in roots)}"


def _questions_together_and_replayed(server: Server) -> None:
    """toolkit's cases: roots from a sync tool, questions asked together, code between questions (run again by
    replay in 2026-07-28, counted by `appends`)."""
    appended: list[str] = []

    @server.tool
    def sync_roots(ctx: Context) -> str:
        """A sync tool lists the roots without await, and reads their local paths."""
        return " ".join(str(path) for path in ctx.list_roots().paths)

    def released(details: ElicitResult[Any], ok: ElicitResult[Any], roots: Roots) -> str:
        appended.append("release")
        if not ok.accepted or details.data is None:
            return f"not released ({ok.action})"
        return f"released {details.data['name']} from {[str(p) for p in roots.paths]}"

    @server.tool
    def sync_release(ctx: Context) -> str:
        """A form, a confirmation and the roots, asked at once from a sync tool; runs only on yes."""
        with ctx.together():
            details = ctx.elicit("Release details?", NAME)
            ok = ctx.confirm("Publish the release?")
            roots = ctx.list_roots()
        return released(details, ok, roots)

    @server.tool
    async def release(ctx: Context) -> str:
        """The same from an async tool."""
        async with ctx.together():
            details = ctx.elicit("Release details?", NAME)
            ok = ctx.confirm("Publish the release?")
            roots = ctx.list_roots()
        return released(details, ok, roots)

    @server.tool
    async def two_questions(ctx: Context) -> str:
        """Ask A, append, ask B: documented to append once in the handshake era, twice in 2026-07-28."""
        first = await ctx.elicit("A?", EMPTY)
        appended.append("between")
        second = await ctx.elicit("B?", EMPTY)
        return f"{first.action} {second.action}"

    @server.tool
    def sync_two_questions(ctx: Context) -> str:
        """The same from a sync tool, which asks without await."""
        first = ctx.elicit("Sync A?", NAME)
        appended.append("sync")
        second = ctx.sample("Sync B?", max_tokens=5)
        return f"{first.data['name'] if first.data else first.action} {second.text}"

    @server.tool(read_only=True)
    def appends() -> int:
        """How many times the two-question tools ran the code between their questions."""
        return len(appended)


def _confirmations_urls_and_waits(server: Server) -> None:
    """Confirmation by `confirm=`, URL elicitation (asked, and raised), a question with progress, one that times out."""

    @server.tool(destructive=True, confirm="Delete {path}?")
    def delete_file(path: str) -> str:
        return f"deleted {path}"

    @server.tool(read_only=True, confirm=True)
    def peek(path: str) -> str:
        return f"peeked at {path}"

    @server.tool
    async def chatty_question(ctx: Context) -> str:
        """Progress and a log message while the question waits for its answer."""
        await ctx.report_progress(1, 2)
        await ctx.info("asking")
        answer = await ctx.elicit("Go on?", EMPTY)
        await ctx.report_progress(2, 2)
        return answer.action

    @server.tool
    async def slow_question(ctx: Context) -> str:
        """Waits for an answer with a short timeout of its own."""
        try:
            answer = await ctx.elicit("Quick?", EMPTY, timeout=0.2)
        except TimeoutError:
            return "timed out"
        return answer.action

    @server.tool
    async def connect_account(ctx: Context) -> str:
        answer = await ctx.elicit_url("Sign in to connect", "https://example.com/connect")
        return f"{answer.action} {answer.elicitation_id is not None}"

    @server.tool
    def pay(done: bool = False) -> str:
        if not done:
            raise URLElicitationRequired("Pay on the provider's page", "https://pay.example.com/checkout")
        return "paid"


def _cancelled_questions(server: Server) -> None:
    """Questions that a test cancels while they wait, from an async tool and from a sync one."""

    @server.tool
    async def ask_when_told(ctx: Context, seconds: float = 0) -> str:
        """Sleeps, then asks (a test cancels it while it waits)."""
        await anyio.sleep(seconds)
        return (await ctx.elicit("Still there?", EMPTY)).action

    sync_done = threading.Event()
    sync_ended: list[str] = []

    @server.tool
    def sync_ask_when_told(ctx: Context) -> str:
        """A sync tool's question (a test cancels the call while it waits): records how its thread got out, and
        that a question asked after that is refused at once."""
        try:
            answer = ctx.elicit("Still there, sync?", EMPTY)
        except concurrent.futures.CancelledError:
            sync_ended.append(f"cancelled (ctx.cancelled={ctx.cancelled})")
            try:
                ctx.elicit("Asked again after the cancellation", EMPTY)
            except concurrent.futures.CancelledError:
                sync_ended.append("refused")
            raise
        else:
            sync_ended.append(answer.action)
            return answer.action
        finally:
            sync_done.set()

    @server.tool
    async def sync_question_ended() -> str:
        """How `sync_ask_when_told` ended: waits (bounded) for its thread to get out of the question."""
        await anyio.to_thread.run_sync(sync_done.wait, 10)
        return ", ".join(sync_ended) or "still waiting"


def _tools_in_sampling(server: Server) -> None:
    """Tools in sampling (2025-11-25 and 2026-07-28): the client's model calls `get_weather`."""

    @server.tool
    async def weather_report(cities: str, ctx: Context) -> str:
        """Let the client's model call get_weather until it can answer, at most three rounds of tools."""
        conversation: list[str | SamplingMessage] = [f"What's the weather like in {cities}?"]
        for _ in range(3):
            reply = await ctx.sample(conversation, max_tokens=1000, tools=[get_weather], tool_choice="auto")
            if not reply.tool_uses:
                return reply.text
            conversation += [reply.message, await reply.run_tools([get_weather])]
        return (await ctx.sample(conversation, max_tokens=1000, tools=[get_weather], tool_choice="none")).text

    @server.tool
    def sync_weather_report(city: str, ctx: Context) -> str:
        """The same loop, once, from a sync tool: each tool use answered with `use.result(...)`."""
        question = f"What's the weather like in {city}?"
        reply = ctx.sample(question, max_tokens=1000, tools=[get_weather])
        answers = [use.result(get_weather(**use.input)) for use in reply.tool_uses]
        results = SamplingMessage(role="user", content=answers)
        return ctx.sample([question, reply.message, results], max_tokens=1000, tools=[get_weather]).text


if __name__ == "__main__":
    build().run(backend="trio" if sys.argv[1:] == ["trio"] else "asyncio")
