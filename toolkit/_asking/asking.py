"""How a running tool asks the client: live requests (handshake era) or replayed answers (2026-07-28).

One `Asker` per call, made by the connection only for a call whose tool asks (a call that never asks pays
nothing). It knows the revision and what the client declared, checks every question against them ("Servers
**MUST NOT** send elicitation requests with modes that are not supported by the client"), and hands the question
to the channel of the era: a server-to-client request, or the round's `Replay`.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import contextvars
import functools
import math
import string
import threading
import urllib.parse
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypedDict, TypeVar

import anyio
import anyio.from_thread

from toolkit._errors import (
    ClientCapabilityError,
    ClientRequestError,
    ConnectionClosedError,
    ProtocolError,
    URLElicitationRequired,
)
from toolkit._identity import current_identity
from toolkit._protocol.jsonrpc import MISSING_CLIENT_CAPABILITY, URL_ELICITATION_REQUIRED
from toolkit._protocol.revisions import rules_of
from toolkit._seal import Sealer

from .answer import Answer, ElicitResult, Roots, SampleResult, fill, pending, unanswered
from .around import Question, QuestionMiddleware, ask_through
from .elicitation import Form, empty_form, form_of, parse_answer
from .mrtr import Replay, Suspend, bind_for, input_required, open_round
from .sampling import SampleOptions, sampling_params

if TYPE_CHECKING:
    import anyio.lowlevel

__all__ = [
    "AskedCall",
    "Asker",
    "AskingConnection",
    "AskingServer",
    "CallThread",
    "ConfirmFallback",
    "Deadline",
    "SendRequest",
    "call_deadline",
    "confirm_call",
    "confirm_problems",
    "confirm_text",
    "elicitation_modes",
]

A = TypeVar("A", bound=Answer)
T = TypeVar("T")


class Deadline:
    """A call's timeout (`timeout=`), stopped while the call waits for its client's answer to a question, so that
    it counts the tool's own running time in both eras (in 2026-07-28 each round is a request of its own, and the
    client answers between them). Several questions asked at once stop it once."""

    __slots__ = ("_left", "_waiting", "scope")

    def __init__(self, scope: anyio.CancelScope) -> None:
        self.scope = scope
        self._left = 0.0
        self._waiting = 0

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Around a wait for the client's answer: the time it takes is not the tool's."""
        if self._waiting == 0:
            self._left = self.scope.deadline - anyio.current_time()
            self.scope.deadline = math.inf
        self._waiting += 1
        try:
            yield
        finally:
            self._waiting -= 1
            if self._waiting == 0:
                self.scope.deadline = anyio.current_time() + self._left


call_deadline: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar("toolkit_deadline", default=None)
"""The timeout of the call running (set by the engine's timeout), else None."""

SendRequest = Callable[[str, dict[str, Any], "float | None"], Awaitable[Any]]
"""Sends a server-to-client request (method, params, timeout) and returns the client's result.

Raises `ClientRequestError` for an error reply, `TimeoutError` when the timeout passes."""

ConfirmFallback = Literal["auto", "refuse", "run"]
_FIRST_ELICITATION = "2025-06-18"
_FIRST_URL_MODE = "2025-11-25"


def elicitation_modes(capabilities: Mapping[str, Any]) -> frozenset[str]:
    """The elicitation modes a client declared. client/elicitation: "an empty capabilities object is equivalent to
    declaring support for `form` mode only"; `{url: {}}` alone is URL mode only."""
    declared = capabilities.get("elicitation")
    if not isinstance(declared, Mapping):
        return frozenset()
    modes = {mode for mode in ("form", "url") if isinstance(declared.get(mode), Mapping)}
    return frozenset(modes or {"form"})


class Asker:
    """The questions of one call: checked against the client's capabilities, sent through this era's channel.

    Args:
        call: The call: its tool and raw arguments, its revision, and what the client declared (at `initialize`, or
            in this request's `_meta`).
        channel: The connection's server-to-client request (handshake era), or the round's recorded answers
            (2026-07-28).
        server: The server's `client_request_timeout` (for a question without its own) and `confirm_fallback`.
        on_url: Told the id of each URL-mode elicitation sent (2025-11-25), for its completion notification.
    """

    __slots__ = (
        "_call",
        "_cancelled",
        "_scopes",
        "_server",
        "_timeout",
        "_together",
        "capabilities",
        "confirm_fallback",
        "hooks",
        "missing",
        "on_url",
        "replay",
        "send",
        "task",
        "version",
    )

    def __init__(
        self,
        call: AskedCall,
        channel: SendRequest | Replay,
        server: AskingServer,
        on_url: Callable[[str], None] | None = None,
    ) -> None:
        self._call = call
        self._server = server
        self.version = call["version"]
        capabilities = call["capabilities"]
        self.confirm_fallback = server.confirm_fallback
        self.on_url = on_url
        self.capabilities = capabilities
        self.replay = channel if isinstance(channel, Replay) else None
        self.send = None if isinstance(channel, Replay) else channel
        self._timeout = server.client_request_timeout
        self._scopes: set[anyio.CancelScope] = set()
        self._cancelled = False
        self._together: list[tuple[_Question[Any], Answer]] | None = None  # the questions of a `together()` block
        self.hooks = server.question_middleware
        self.missing: dict[str, Any] | None = None
        """What the client lacked for a question of this call (`requiredCapabilities`), once one was refused."""
        self.task: Literal["before", "begun"] | None = None
        """A task tool's questions before its `ctx.begin_task()` (2026-07-28): `"before"` while the tool runs in its
        request (its questions are that request's rounds), `"begun"` once it reached `begin_task()`."""

    # -- the lifecycle: started before the tool runs, finished with its result ------------------------------

    @classmethod
    def start(cls, server: AskingServer, connection: AskingConnection, related: Any, call: AskedCall) -> Asker:
        """The asking of a `tools/call` whose tool may ask: live requests through `connection` (handshake era), or this
        round's replay (2026-07-28, with the answers of the requestState and `inputResponses`, verified first).

        Raises:
            ProtocolError: -32602 for a requestState that fails verification, or an `inputResponses` not an object.
        """
        if rules_of(call["version"]).questions_are_results:
            params = call["params"]
            replay = open_round(server.sealer, params, lambda: _bind(server, call), server.max_message_size)
            return cls(call, replay or Replay(), server)

        async def send(method: str, params: dict[str, Any], wait: float | None) -> Any:
            return await _ask_client(connection, method, params, wait, related)

        def on_url(elicitation_id: str) -> None:
            server.track_elicitation(elicitation_id, connection=connection)

        return cls(call, send, server, on_url)

    def finish(self, wire: dict[str, Any]) -> dict[str, Any]:
        """What the call answers: its result, or the round's `InputRequiredResult` (2026-07-28).

        Raises:
            ProtocolError: -32021 (2026-07-28) when the call failed for a capability the client did not declare.
        """
        replay, server = self.replay, self._server
        if replay is not None and replay.pending:
            return input_required(replay, server.sealer, _bind(server, self._call), server.request_state_ttl)
        if replay is not None and self.missing is not None and wire.get("isError"):
            # basic/index: "the server **MUST** return a `MissingRequiredClientCapabilityError` (-32021)".
            names, tool = ", ".join(_capability_names(self.missing)), self._call["tool"]
            raise ProtocolError(
                MISSING_CLIENT_CAPABILITY,
                f"Server requires the {names} capability for this request (tool {tool!r} asks the client)",
                {"requiredCapabilities": self.missing},
            )
        return wire

    def url_required(self, exc: URLElicitationRequired) -> dict[str, Any]:
        """The result of a tool that cannot go on until a URL flow completes (client/elicitation,
        URLElicitationRequiredError), for `finish` in 2026-07-28 (an input request, or a capability error).

        Raises:
            ProtocolError: -32042 (2025-11-25), listing the URL elicitation.
        """
        try:
            check_url(exc.url)
            self._require_elicitation("url")
        except (ValueError, ClientCapabilityError) as problem:
            return {"content": [{"type": "text", "text": str(problem)}], "isError": True}
        params, _ = url_params(exc.message, exc.url, self.version)
        if self.replay is not None:
            # Not recorded: each retry runs the tool again, and the tool checks again whether the flow completed.
            self.replay.ask_later("url_required", "elicitation/create", params)
            return {"content": [], "isError": True}
        raise ProtocolError(
            URL_ELICITATION_REQUIRED, "This request requires more information.", {"elicitations": [params]}
        )

    # -- what the client can do -----------------------------------------------------------------------

    def can_elicit(self, mode: str = "form") -> bool:
        floor = _FIRST_URL_MODE if mode == "url" else _FIRST_ELICITATION
        return self.version >= floor and mode in elicitation_modes(self.capabilities)

    def can_sample(self, *, tools: bool = False) -> bool:
        sampling = self.capabilities.get("sampling")
        if not isinstance(sampling, Mapping):
            return False
        return not tools or (self.version >= "2025-11-25" and isinstance(sampling.get("tools"), Mapping))

    def can_list_roots(self) -> bool:
        return isinstance(self.capabilities.get("roots"), Mapping)

    def _require_elicitation(self, mode: str) -> None:
        if self.can_elicit(mode):
            return
        floor = _FIRST_URL_MODE if mode == "url" else _FIRST_ELICITATION
        if self.version < floor:
            reason = f"protocol {self.version} cannot ask the user ({mode}-mode elicitation arrived in {floor})"
        else:
            reason = f"the client cannot ask the user (it did not declare {mode}-mode elicitation)"
        raise self.refused(ClientCapabilityError(reason, {"elicitation": {mode: {}}}))

    def refused(self, error: ClientCapabilityError) -> ClientCapabilityError:
        """Remember what the client lacked (2026-07-28 answers -32021 with it), and return `error` to raise."""
        self.missing = error.required
        return error

    # -- questions --------------------------------------------------------------------------------------

    def elicit(
        self, ctx_thread: CallThread, message: str, schema: Any, key: str | None, timeout: float | None
    ) -> ElicitResult[Any]:
        form = form_of(schema)
        self._require_elicitation("form")
        try:
            params = form.params(message, self.version)
        except ValueError as exc:
            raise self.refused(ClientCapabilityError(str(exc), {"elicitation": {"form": {}}})) from None
        return self._ask(ctx_thread, _Question("elicitation/create", params, key, timeout, _form_answer(form)))

    def elicit_url(
        self, ctx_thread: CallThread, message: str, url: str, key: str | None, timeout: float | None
    ) -> ElicitResult[None]:
        check_url(url)
        self._require_elicitation("url")
        params, elicitation_id = url_params(message, url, self.version)  # checked by _require_elicitation
        if elicitation_id is not None and self.on_url is not None:
            self.on_url(elicitation_id)  # so that Server.elicitation_complete reaches this client, and only it

        def finish(raw: Any) -> ElicitResult[None]:
            action, _ = _parsed(raw)
            return ElicitResult(action, elicitation_id=elicitation_id)

        return self._ask(ctx_thread, _Question("elicitation/create", params, key, timeout, finish))

    def sample(
        self, ctx_thread: CallThread, messages: Any, key: str | None, timeout: float | None, options: SampleOptions
    ) -> SampleResult:
        try:
            params = sampling_params(messages, self.version, self.capabilities, **options)
        except ClientCapabilityError as exc:
            raise self.refused(exc) from None
        return self._ask(
            ctx_thread, _Question("sampling/createMessage", params, key, timeout, _sample_answer), SampleResult
        )

    def list_roots(self, ctx_thread: CallThread, key: str | None, timeout: float | None) -> Roots:
        if not self.can_list_roots():
            raise self.refused(
                ClientCapabilityError("the client cannot list its roots (it did not declare roots)", {"roots": {}})
            )
        return self._ask(ctx_thread, _Question("roots/list", {}, key, timeout, _roots_answer), Roots)

    def _ask(self, where: CallThread, question: _Question[A], kind: type[Answer] = ElicitResult) -> A:
        """Ask `question`: its answer (a replay's, or the client's, awaited or waited for on a worker thread)."""
        if question.timeout is None:
            question.timeout = self._timeout
        method, params, finish = question.method, question.params, question.finish
        if self._together is not None:
            waiting: A = unanswered(kind)  # type: ignore[assignment]
            self._together.append((question, waiting))
            return waiting
        if self.replay is not None and not self.hooks:
            # Pure bookkeeping, no waiting: the same on the loop and on a sync tool's worker thread.
            return finish(self.replay.answer(method.partition("/")[0], method, params, question.key))
        raw = self._answer(question)

        async def ask() -> A:
            answer: A = question.finish(await raw())
            return answer

        if threading.get_ident() != where.loop_thread:
            return self._from_thread(where, ask, method)
        self._refuse_on_loop(where)
        answer: A = pending(kind, self._on_loop(ask, method))  # type: ignore[assignment]
        return answer

    def _answer(self, question: _Question[Any], together: bool = False) -> Callable[[], Awaitable[Any]]:
        """How the raw answer to `question` is had: the client's (live, or replayed in 2026-07-28) through the
        question middleware."""
        replay, send = self.replay, self._sender() if self.replay is None else None
        if send is not None and not self.hooks:
            return functools.partial(send, question.method, question.params, question.timeout)

        async def raw(asked: Question) -> Any:
            if send is not None:
                return await send(asked.method, asked.params, question.timeout)
            assert replay is not None
            kind = asked.method.partition("/")[0]
            return replay.answer(kind, asked.method, asked.params, asked.key, together=together)

        tool, identity = self._call["tool"], current_identity.get()
        asked = Question(question.method, question.params, tool, self.version, identity, question.key)
        return functools.partial(ask_through, self.hooks, asked, raw)

    def _sender(self) -> SendRequest:
        if self.send is None:
            raise ClientCapabilityError("this call cannot ask the client anything", {})
        return self.send

    def _refuse_on_loop(self, where: CallThread) -> None:
        if where.on_loop:
            raise RuntimeError(
                "a sync tool made with run_in_thread=False runs on the event loop and cannot wait for the client: "
                "make the tool async (and await the call), or let it run in a worker thread"
            )

    async def _guarded(self, ask: Callable[[], Awaitable[T]]) -> tuple[T] | None:
        """`ask`, unless the call is over; None once `cancel()` stopped it (a sync tool's thread cannot be)."""
        with anyio.CancelScope() as scope:
            if not self._cancelled:  # else the call is over: nothing more is sent for it
                self._scopes.add(scope)
                try:
                    return (await ask(),)
                finally:
                    self._scopes.discard(scope)
        return None

    async def _on_loop(self, ask: Callable[[], Awaitable[T]], what: str) -> T:
        done = await self._guarded(ask)
        if done is None:
            raise _call_cancelled(what)
        return done[0]

    def _from_thread(self, where: CallThread, ask: Callable[[], Awaitable[T]], what: str) -> T:
        """Run `ask` on the loop for a sync tool's worker thread, and wait; stopped by `cancel()`."""
        # Refused here, in the thread, once the call is over: the loop may be ending, and a thread that waited on it
        # then would wait forever (and hold its place in the pool).
        done = None if self._cancelled else anyio.from_thread.run(self._guarded, ask, token=where.token)
        if done is None:
            raise _call_cancelled(what)
        return done[0]

    # -- several questions at once ------------------------------------------------------------------------

    def begin_together(self) -> None:
        if self._together is not None:
            raise RuntimeError("ctx.together() blocks do not nest")
        self._together = []

    def drop_together(self) -> None:
        """The block failed: its questions are not asked."""
        self._together = None

    def end_together(self, where: CallThread) -> Coroutine[Any, Any, None] | None:
        """Ask the block's questions, all at once: answered in any order (handshake era), or one round with an input
        request each (2026-07-28). Done on return (a sync tool's worker thread, or a replay), else a coroutine that
        an async tool awaits."""
        asked, self._together = self._together or [], None
        if not asked:
            return None
        if self.replay is not None and not self.hooks:
            self._replay_together(asked)
            return None

        async def ask_all() -> None:
            if self.replay is not None:
                await self._replay_together_through(asked)
                return
            answers = await _send_all([self._answer(question) for question, _ in asked], [q for q, _ in asked])
            for (_, waiting), answer in zip(asked, answers, strict=True):
                fill(waiting, answer)

        what = ", ".join(sorted({question.method for question, _ in asked}))
        if threading.get_ident() != where.loop_thread:
            self._from_thread(where, ask_all, what)
            return None
        self._refuse_on_loop(where)
        return self._on_loop(ask_all, what)

    def _replay_together(self, asked: list[tuple[_Question[Any], Answer]]) -> None:
        assert self.replay is not None
        unanswered_yet = False
        for question, waiting in asked:
            try:
                raw = self.replay.answer(
                    question.method.partition("/")[0], question.method, question.params, question.key, together=True
                )
            except Suspend:
                unanswered_yet = True  # asked in this round's result, with the others still unanswered
                continue
            fill(waiting, question.finish(raw))
        if unanswered_yet:
            raise Suspend

    async def _replay_together_through(self, asked: list[tuple[_Question[Any], Answer]]) -> None:
        """`_replay_together` with question middleware around each answer."""
        unanswered_yet = False
        for question, waiting in asked:
            try:
                raw = await self._answer(question, together=True)()
            except Suspend:
                unanswered_yet = True
                continue
            fill(waiting, question.finish(raw))
        if unanswered_yet:
            raise Suspend

    def cancel(self) -> None:
        """Stop every question a sync tool is waiting for, and refuse later ones: its call was cancelled (the thread
        cannot be)."""
        self._cancelled = True
        for scope in list(self._scopes):
            scope.cancel()


class _Question(Generic[A]):
    """One question: what to send, and how to read the answer."""

    __slots__ = ("finish", "key", "method", "params", "timeout")

    def __init__(
        self, method: str, params: dict[str, Any], key: str | None, timeout: float | None, finish: Callable[[Any], A]
    ) -> None:
        self.method = method
        self.params = params
        self.key = key
        self.timeout = timeout
        self.finish = finish


async def _send_all(raws: Sequence[Callable[[], Awaitable[Any]]], questions: Sequence[_Question[Any]]) -> list[Any]:
    """Send every question at once (each `raws[i]()` asks `questions[i]`) and read each answer as it comes; the first
    failure (in the questions' order) is raised once all have ended, so no answer is left waiting on a request nobody
    reads."""
    answers: list[Any] = [None] * len(questions)
    failures: list[BaseException | None] = [None] * len(questions)

    async def one(index: int, question: _Question[Any]) -> None:
        try:
            answers[index] = question.finish(await raws[index]())
        except Exception as exc:
            failures[index] = exc

    async with anyio.create_task_group() as tg:
        for index, question in enumerate(questions):
            tg.start_soon(one, index, question)
    for failure in failures:
        if failure is not None:
            raise failure
    return answers


def _call_cancelled(method: str) -> concurrent.futures.CancelledError:
    """What a sync tool's question raises once its call is cancelled: what a thread sees when the future it waits on
    is cancelled. (The event loop's own cancellation exception means nothing on a worker thread, and trio's cannot be
    made outside trio.) A `BaseException` would be kinder to `except Exception`, but this is the one threads know."""
    return concurrent.futures.CancelledError(f"the tool call was cancelled while it asked the client ({method})")


class CallThread:
    """Where a call's tool runs, as the Context knows it: the loop's thread, a token to reach it, on the loop."""

    __slots__ = ("loop_thread", "on_loop", "token")

    def __init__(self, loop_thread: int, token: anyio.lowlevel.EventLoopToken | None, on_loop: bool) -> None:
        self.loop_thread = loop_thread
        self.token = token
        self.on_loop = on_loop


def _parsed(raw: Any) -> tuple[Any, dict[str, Any] | None]:
    try:
        return parse_answer(raw)
    except ValueError as exc:
        raise ClientRequestError(0, f"the client's answer to the elicitation is malformed: {exc}") from None


def _form_answer(form: Form[Any]) -> Callable[[Any], ElicitResult[Any]]:
    def finish(raw: Any) -> ElicitResult[Any]:
        action, content = _parsed(raw)
        if action != "accept":
            return ElicitResult(action)
        return ElicitResult("accept", form.validate(content if content is not None else {}), content=content)

    return finish


def _roots_answer(raw: Any) -> Roots:
    try:
        return Roots.from_wire(raw)
    except ValueError as exc:
        raise ClientRequestError(0, f"the client's roots/list result is malformed: {exc}") from None


def _sample_answer(raw: Any) -> SampleResult:
    try:
        return SampleResult.from_wire(raw)
    except ValueError as exc:
        raise ClientRequestError(0, f"the client's sampling result is malformed: {exc}") from None


def check_url(url: str) -> None:
    """client/elicitation: "The `url` parameter **MUST** contain a valid URL."

    Raises:
        ValueError: `url` has no scheme or no host.
    """
    parts = urllib.parse.urlsplit(url)
    if not parts.scheme or not parts.netloc:
        raise ValueError(f"elicit_url needs an absolute URL with a scheme and a host, not {url!r}")


def url_params(message: str, url: str, version: str) -> tuple[dict[str, Any], str | None]:
    """URL-mode params and the elicitation id, in the eras that have one (2025-11-25: 2026-07-28 dropped it)."""
    params: dict[str, Any] = {"mode": "url", "message": message, "url": url}
    if not rules_of(version).elicitation_ids:
        return params, None
    elicitation_id = uuid.uuid4().hex  # "must be unique within the context of the server"
    params["elicitationId"] = elicitation_id
    return params, elicitation_id


# -- the lifecycle of one call's asking ---------------------------------------------------------------------


class AskingServer(Protocol):
    """What asking needs of the server (its registry): its name, its sealer and limits, and who sent a URL flow."""

    name: str
    sealer: Sealer
    max_message_size: int
    client_request_timeout: float | None
    confirm_fallback: ConfirmFallback
    request_state_ttl: float
    question_middleware: tuple[QuestionMiddleware, ...]

    def track_elicitation(self, elicitation_id: str, *, connection: Any) -> None: ...


class AskingConnection(Protocol):
    """What asking needs of the connection a call is served on: it sends the client requests (handshake era)."""

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        related: Any = None,
        timeout: float | None = None,  # noqa: ASYNC109 - the connection's signature
    ) -> Any: ...


class AskedCall(TypedDict):
    """The call whose asking starts: its tool, its raw arguments, its params, and what its client declared."""

    tool: str
    arguments: Any
    params: Mapping[str, Any]
    version: str
    capabilities: Mapping[str, Any]


def _bind(server: AskingServer, call: AskedCall) -> dict[str, str]:
    """What the call's requestState is bound to, made only when a round is opened or ended (2026-07-28)."""
    return bind_for(server.name, call["tool"], call["arguments"])


async def _ask_client(
    connection: AskingConnection, method: str, params: dict[str, Any], wait: float | None, related: Any
) -> Any:
    """A question to the client (elicitation, sampling): its result; an error answer fails the tool readably.

    Raises:
        ClientRequestError: the client answered with an error, or its input ended first.
        TimeoutError: no answer within `wait` seconds.
    """
    deadline = call_deadline.get()
    try:
        with deadline.paused() if deadline is not None else contextlib.nullcontext():
            return await connection.request(method, params, related=related, timeout=wait)
    except ConnectionClosedError:  # a ToolError: the call fails readably, and it is no bug of the tool's
        raise ClientRequestError(0, "the client's input ended before it answered") from None
    except ProtocolError as exc:
        raise ClientRequestError(exc.code, exc.message) from None


def _capability_names(required: Mapping[str, Any], prefix: str = "") -> list[str]:
    names: list[str] = []
    for name, sub in required.items():
        inner = _capability_names(sub, f"{prefix}{name}.") if isinstance(sub, Mapping) and sub else []
        names.extend(inner or [f"{prefix}{name}"])
    return names


# -- @tool(confirm=...) -----------------------------------------------------------------------------------


def confirm_problems(confirm: bool | str, parameters: Sequence[str]) -> list[str]:
    """What is wrong with a `confirm=` template, checked when the tool is defined."""
    if isinstance(confirm, bool):
        return []
    if not isinstance(confirm, str) or not confirm.strip():
        return ["confirm must be True or a message such as 'Delete {path}?'"]
    if "confirm" in parameters:
        return ["a confirming tool cannot have a parameter named 'confirm' (the confirmation's input request key)"]
    problems: list[str] = []
    try:
        fields = [name for _, name, _, _ in string.Formatter().parse(confirm) if name is not None]
    except ValueError as exc:
        return [f"confirm message {confirm!r} is not a valid format string: {exc}"]
    for name in fields:
        if name not in parameters:
            problems.append(f"confirm message names {{{name}}}, which is not a parameter of the tool")
    return problems


def confirm_text(confirm: bool | str, arguments: Mapping[str, Any], name: str) -> str:
    """The question to ask: the template formatted with the validated arguments, or one made from the call."""
    if isinstance(confirm, str):
        return confirm.format_map(arguments)  # values are not re-parsed: they cannot inject format syntax
    shown = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
    if len(shown) > 200:
        shown = shown[:197] + "..."
    return f"Allow {name} to run with {shown}?" if shown else f"Allow {name} to run?"


async def confirm_call(asker: Asker, where: CallThread, message: str, name: str, *, destructive: bool) -> str | None:
    """Ask the user to confirm a call: None to run it, else the error text to answer with.

    A client that cannot ask gets what the server's `confirm_fallback` says: the call runs, or it is refused with a
    tool error (`isError`, which the model reads: lint's TK501) in both eras. Not the -32021 a tool's own question
    gets in 2026-07-28 (`Asker.refused`): the refusal is the server's policy, not a question the client failed to
    take, so one test holds in both eras (issue 37).

    Raises:
        ClientCapabilityError: the client cannot ask and the fallback says refuse.
    """
    if not asker.can_elicit("form"):
        fallback = asker.confirm_fallback
        if fallback == "run" or (fallback == "auto" and not destructive):
            return None
        raise ClientCapabilityError(
            f"{name} runs only once the user confirms, and the client cannot ask the user "
            "(it did not declare form-mode elicitation)",
            {"elicitation": {"form": {}}},
        )
    answer = await asker.elicit(where, message, empty_form(), "confirm", None)
    if answer.accepted:
        return None
    if answer.declined:
        return f"The user declined to run {name}."
    return f"The user cancelled {name} without deciding; nothing was done."
