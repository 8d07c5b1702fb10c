"""The client's side of asking: what a server's question looks like to a handler, and the answer it sends back.

The same handlers answer in both eras: a server-to-client request (handshake era) or an input request of an
`InputRequiredResult` (2026-07-28), which the client answers and retries with itself.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from toolkit._errors import ClientRequestError, ProtocolError
from toolkit._protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND
from toolkit._protocol.types import Root, SamplingMessage

from .answer import ElicitResult, Roots, SampleResult
from .sampling import messages_of

__all__ = [
    "ElicitRequest",
    "ElicitationHandler",
    "Handlers",
    "RootsOption",
    "SampleRequest",
    "SamplingHandler",
    "call_with_input",
]


@dataclass(frozen=True)
class ElicitRequest:
    """A server asks the user something (`elicitation/create`)."""

    message: str
    """What to show the user."""
    mode: Literal["form", "url"] = "form"
    requested_schema: dict[str, Any] | None = None
    """The form (form mode): a flat object schema of string, number, boolean and choice fields."""
    url: str | None = None
    """Where to send the user (URL mode). Show it in full, and open it only with the user's consent."""
    elicitation_id: str | None = None
    """The URL-mode elicitation's id (2025-11-25)."""
    key: str | None = None
    """The input request's key (2026-07-28), else `None`."""


@dataclass(frozen=True)
class SampleRequest:
    """A server asks the client's model for a completion (`sampling/createMessage`)."""

    messages: list[SamplingMessage]
    max_tokens: int
    system_prompt: str | None = None
    temperature: float | None = None
    stop_sequences: list[str] | None = None
    model_preferences: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: dict[str, Any] | None = None
    include_context: str | None = None
    metadata: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    """The params as sent."""
    key: str | None = None
    """The input request's key (2026-07-28), else `None`."""


ElicitationHandler = Callable[[ElicitRequest], ElicitResult[Any] | Awaitable[ElicitResult[Any]]]
"""Answers an elicitation: returns `ElicitResult.accept({...})`, `.decline()` or `.cancel()`, or raises
[`ClientRequestError`][toolkit.ClientRequestError] to answer with an error."""
SamplingHandler = Callable[[SampleRequest], SampleResult | str | Awaitable[SampleResult | str]]
"""Answers a sampling request: a [`SampleResult`][toolkit.SampleResult] or plain text; raise
`ClientRequestError(-1, "User rejected sampling request")` to refuse."""


RootLike = str | os.PathLike[str] | Root
RootsOption = Sequence[RootLike] | Callable[[], Sequence[RootLike] | Awaitable[Sequence[RootLike]]]
"""The client's roots: paths (made absolute), `file://` URIs or [`Root`][toolkit.Root]s (a lone path is one root);
or a function (sync or async) that returns them when the server asks."""


_Answerer = Callable[[Any, Mapping[str, Any], "str | None"], Awaitable[dict[str, Any]]]
"""Answers a server's request with a handler: `(handler, params, key)` to the result."""


@dataclass(frozen=True)
class Handlers:
    """How a client answers the server's questions: a handler per method, and the capabilities they declare.

    A capability is declared only with its handler: a server may rely on every capability declared.
    """

    elicitation: ElicitationHandler | None = None
    sampling: SamplingHandler | None = None
    elicitation_modes: Sequence[str] = ("form", "url")
    sampling_tools: bool = False
    roots: RootsOption | None = None

    def capabilities(self) -> dict[str, Any]:
        """What the client declares (`initialize`'s `capabilities`, 2026-07-28's `_meta`)."""
        capabilities: dict[str, Any] = {}
        if self.roots is not None:
            capabilities["roots"] = {}  # no `listChanged`: this client does not tell when they change
        if self.elicitation is not None:
            capabilities["elicitation"] = {mode: {} for mode in self.elicitation_modes}
        if self.sampling is not None:
            capabilities["sampling"] = {"tools": {}} if self.sampling_tools else {}
        return capabilities

    async def answer(self, method: str, params: Any, key: str | None = None) -> dict[str, Any]:
        """The result a client sends for a server's request (or, `key` given, a 2026-07-28 input request).

        Raises:
            ProtocolError: -32601 for a method without a handler, -32602 for malformed params or an undeclared
                elicitation mode (client/elicitation, Error Handling), -32603 when the handler fails; the code a
                handler's `ClientRequestError` gives.
        """
        if params is None:  # JSON-RPC's params may be left out: `roots/list` has none to send (the TypeScript SDK's)
            params = {}
        if not isinstance(params, Mapping):
            raise ProtocolError(INVALID_PARAMS, "Invalid params: params must be an object")
        handler, answer_with = self._answerer(method)
        try:
            return await answer_with(handler, params, key)
        except ClientRequestError as exc:
            raise ProtocolError(exc.code or INTERNAL_ERROR, exc.message) from None
        except ProtocolError:
            raise
        except Exception as exc:
            raise ProtocolError(INTERNAL_ERROR, f"the client's {method} handler failed: {type(exc).__name__}") from exc

    def _answerer(self, method: str) -> tuple[Any, _Answerer]:
        """The handler for `method`, and the function that answers with it.

        Raises:
            ProtocolError: -32601, no handler for `method` (the capability is not declared).
        """
        answerers: dict[str, tuple[Any, _Answerer]] = {
            "elicitation/create": (self.elicitation, self._elicit),
            "sampling/createMessage": (self.sampling, self._sample),
            "roots/list": (self.roots, self._list_roots),
        }
        found = answerers.get(method)
        if found is None or found[0] is None:  # an unknown method, or one this client has no handler for
            raise ProtocolError(METHOD_NOT_FOUND, f"Method not found: {method}")
        return found

    async def _elicit(self, handler: ElicitationHandler, params: Mapping[str, Any], key: str | None) -> dict[str, Any]:
        request = _elicit_request(params, self.elicitation_modes, key)
        answer = await _call(handler, request)
        if not isinstance(answer, ElicitResult):
            raise TypeError(f"an elicitation handler returns an ElicitResult, not {type(answer).__name__}")
        return answer.to_wire(form=request.mode == "form")

    @staticmethod
    async def _sample(handler: SamplingHandler, params: Mapping[str, Any], key: str | None) -> dict[str, Any]:
        reply = await _call(handler, _sample_request(params, key))
        if isinstance(reply, str):
            reply = SampleResult.reply(reply)
        if not isinstance(reply, SampleResult):
            raise TypeError(f"a sampling handler returns a SampleResult or a str, not {type(reply).__name__}")
        return reply.to_wire()

    @staticmethod
    async def _list_roots(roots: RootsOption, params: Mapping[str, Any], key: str | None) -> dict[str, Any]:
        listed = roots() if callable(roots) else roots
        if inspect.isawaitable(listed):
            listed = await listed
        if isinstance(listed, (str, os.PathLike, Root)):  # one root: a str is a sequence of its characters
            listed = [listed]
        return Roots(Root.of(where) for where in listed).to_wire()


async def _call(handler: Callable[[Any], Any], request: Any) -> Any:
    answer = handler(request)
    if inspect.isawaitable(answer) and not isinstance(answer, (ElicitResult, SampleResult)):
        answer = await answer
    return answer


def _elicit_request(params: Mapping[str, Any], modes: Sequence[str], key: str | None) -> ElicitRequest:
    mode = params.get("mode", "form")  # "Clients MUST treat requests without a mode field as form mode"
    message = params.get("message")
    if mode not in ("form", "url") or not isinstance(message, str):
        raise ProtocolError(INVALID_PARAMS, "Invalid params: an elicitation needs a message and a known mode")
    if mode not in modes:
        raise ProtocolError(INVALID_PARAMS, f"Invalid params: this client does not support {mode}-mode elicitation")
    if mode == "url":
        url = params.get("url")
        if not isinstance(url, str):
            raise ProtocolError(INVALID_PARAMS, "Invalid params: a URL-mode elicitation needs a url")
        elicitation_id = params.get("elicitationId")
        return ElicitRequest(
            message, "url", url=url, elicitation_id=elicitation_id if isinstance(elicitation_id, str) else None, key=key
        )
    schema = params.get("requestedSchema")
    if not isinstance(schema, Mapping):
        raise ProtocolError(INVALID_PARAMS, "Invalid params: a form-mode elicitation needs a requestedSchema")
    return ElicitRequest(message, "form", requested_schema=dict(schema), key=key)


def _sample_request(params: Mapping[str, Any], key: str | None) -> SampleRequest:
    max_tokens = params.get("maxTokens")
    messages = params.get("messages")
    if not isinstance(max_tokens, int) or not isinstance(messages, list):
        raise ProtocolError(INVALID_PARAMS, "Invalid params: sampling needs messages and maxTokens")
    try:
        parsed = messages_of(messages)
    except ValueError as exc:
        raise ProtocolError(INVALID_PARAMS, f"Invalid params: {exc}") from None

    def get(name: str, kind: type | tuple[type, ...]) -> Any:
        value = params.get(name)
        return value if isinstance(value, kind) else None

    return SampleRequest(
        parsed,
        max_tokens,
        system_prompt=get("systemPrompt", str),
        temperature=get("temperature", (int, float)),
        stop_sequences=get("stopSequences", list),
        model_preferences=get("modelPreferences", dict),
        tools=get("tools", list),
        tool_choice=get("toolChoice", dict),
        include_context=get("includeContext", str),
        metadata=get("metadata", dict),
        raw=dict(params),
        key=key,
    )


AnswerInput = Callable[[str, Any, str], Awaitable[dict[str, Any]]]
"""Answers one input request: `(method, params, key)` to its result (see `answer_request`)."""
_STATE_ONLY_BACKOFF = (0.05, 0.1, 0.2)  # seconds before retrying a result that asked for nothing: never a tight loop


async def call_with_input(
    send: Callable[[dict[str, Any]], Awaitable[Any]],
    params: dict[str, Any],
    answer: AnswerInput,
    *,
    max_rounds: int,
) -> Any:
    """Send a request and, while the server answers `input_required` (2026-07-28, basic/patterns/mrtr), answer its
    input requests and retry: the final result.

    Each retry carries the same params, this round's `inputResponses`, and the `requestState` exactly as received
    (none when the server sent none). Input requests are answered one at a time, in the server's order: people
    answer one question at a time, and scripts stay predictable.

    Raises:
        ProtocolError: the server asked for input more than `max_rounds` times, sent malformed input requests, or
            asked for what this client cannot answer (the handler's error, or -32601).
    """
    result = await send(params)
    rounds = 0
    while _asks_for_input(result):
        rounds += 1
        if rounds > max_rounds:
            raise ProtocolError(INTERNAL_ERROR, f"the server asked for input more than {max_rounds} times")
        requests = _input_requests(result)
        responses = {key: await answer(str(r.get("method")), r.get("params"), key) for key, r in requests.items()}
        if not responses:
            await anyio.sleep(_STATE_ONLY_BACKOFF[min(rounds, len(_STATE_ONLY_BACKOFF)) - 1])
        result = await send(_retry(params, responses, result))
    return result


def _asks_for_input(result: Any) -> bool:
    """Whether a result is an `InputRequiredResult`: the call goes on once its input requests are answered."""
    return isinstance(result, dict) and result.get("resultType") == "input_required"


def _input_requests(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The input requests of an `InputRequiredResult`, by key.

    Raises:
        ProtocolError: they are not an object of request objects.
    """
    requests = result.get("inputRequests") or {}
    if not isinstance(requests, dict) or not all(isinstance(r, dict) for r in requests.values()):
        raise ProtocolError(INTERNAL_ERROR, "the server sent malformed inputRequests")
    return requests


def _retry(params: dict[str, Any], responses: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """The params of the retry: the call's own, this round's answers, and the `requestState` as received."""
    retry = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
    if responses:
        retry["inputResponses"] = responses
    if "requestState" in result:
        retry["requestState"] = result["requestState"]
    return retry
