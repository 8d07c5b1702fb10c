"""Multi-round-trip calls (2026-07-28, basic/patterns/mrtr): a tool body that asks goes on by replay.

A revision without server-to-client requests asks the client by answering `tools/call` with an
`InputRequiredResult`; the client retries the call with `inputResponses` and the `requestState` it was given. A
retry may reach another process (issue 14 serves one server from several workers), and the spec lets clients never
retry, so toolkit keeps nothing between rounds: **every round runs the tool body from the start**, and each question
(`ctx.elicit`, `ctx.sample`) returns the answer recorded for it, in order. The first question without an answer
ends the round. Answers recorded so far travel in the sealed `requestState`; the SDK's driver sends only the last
round's answers, so the state must carry the earlier ones.

The rule for tool authors, in docs/human-in-the-loop.md: code before a question runs again in each later round;
keep it idempotent, and do side effects after the last question.

A question is identified by its key (`key=`, or `elicitation1`, `sampling2`: kind and position) and a digest of what
it asks (method and params, the message included: the user answered that text). A recorded answer whose question
changed (non-deterministic code, a redeploy) is dropped from there on, and the question asked again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from toolkit._errors import ProtocolError
from toolkit._identity import current_identity
from toolkit._protocol.jsonrpc import INVALID_PARAMS
from toolkit._seal import Sealer, SealError, digest

__all__ = ["Replay", "Suspend", "bind_for", "input_required", "open_round"]

PURPOSE = b"toolkit/request-state/v1"


class Suspend(BaseException):
    """A question of this round has no answer yet: the round ends with an `InputRequiredResult`.

    A `BaseException`, like cancellation, so that a tool's `except Exception` around `ctx.elicit` does not swallow
    it; if a tool swallows it anyway, the round still ends with the question, which the replay keeps.
    """


class Replay:
    """One round's answers: those recorded in earlier rounds (in order) and those the client sent with this retry."""

    __slots__ = ("_asked", "_keys", "_log", "_position", "_responses", "pending", "pending_digests")

    def __init__(
        self,
        log: list[dict[str, Any]] | None = None,
        asked: dict[str, str] | None = None,
        responses: Mapping[str, Any] | None = None,
    ) -> None:
        self._log = list(log or ())
        self._asked = asked  # None: the retry carried no requestState
        self._responses = dict(responses or {})
        self._position = 0
        self._keys: set[str] = set()
        self.pending: dict[str, dict[str, Any]] = {}
        """The input requests this round ends with, by key."""
        self.pending_digests: dict[str, str] = {}

    def answered(self) -> list[Any]:
        """The answers recorded so far, in the order the questions were asked (a task replays them)."""
        return [entry["r"] for entry in self._log if "r" in entry]

    def answer(
        self, kind: str, method: str, params: dict[str, Any], key: str | None = None, *, together: bool = False
    ) -> Any:
        """The client's raw answer to this question, recorded or sent now.

        `together`: the question is one of several asked at once (`ctx.together()`); unanswered, it keeps its place
        in the record (an entry without an answer), so that the answers after it keep theirs.

        Raises:
            Suspend: nobody has answered it yet (it is recorded as pending).
            RuntimeError: the key was used twice in one execution (input request keys are unique per request).
        """
        position = self._position
        self._position += 1
        key = self._claim(key if key is not None else f"{kind}{position + 1}")
        q = digest({"k": key, "m": method, "p": params}, 16)
        place = self._recorded(position, key, q)
        if place is not None and "r" in place:
            return place["r"]
        raw = self._sent(key, q)
        if raw is not None:
            if place is None:
                self._log.append({"k": key, "q": q, "r": raw})
            else:
                place["r"] = raw
            return raw
        if together and place is None:
            self._log.append({"k": key, "q": q})
        self.pending[key] = {"method": method, "params": params}
        self.pending_digests[key] = q
        raise Suspend

    def _claim(self, key: str) -> str:
        """`key`, taken for this execution's question.

        Raises:
            RuntimeError: a question of this execution has it already.
        """
        if key in self._keys:
            raise RuntimeError(f"two questions of one tool call use the key {key!r}: give each its own key=")
        self._keys.add(key)
        return key

    def _recorded(self, position: int, key: str, q: str) -> dict[str, Any] | None:
        """The record of the question at `position` (an answer, or a place kept by questions asked together), or
        None: there is none, or the question changed, and then what the user answered after it no longer applies."""
        if position >= len(self._log):
            return None
        entry = self._log[position]
        if entry.get("k") == key and entry.get("q") == q:
            return entry
        del self._log[position:]
        return None

    def _sent(self, key: str, q: str) -> dict[str, Any] | None:
        """The answer the client sent with this retry for question `key` (digest `q`), or None."""
        raw = self._responses.get(key)
        # An answer that is not an object (a result) is no answer: the question is asked again.
        if not isinstance(raw, dict):
            return None
        # Without a requestState an answer for a matching key is taken (MRTR: extra params are ignored, and a client
        # may answer before it is asked); with one, only answers to what that state says was asked.
        if self._asked is not None and self._asked.get(key) != q:
            return None
        return raw

    def ask_later(self, key: str, method: str, params: dict[str, Any]) -> None:
        """Ask `method` in this round's result without recording its answer (URL-required: each retry re-checks)."""
        self.pending[key] = {"method": method, "params": params}

    def state(self) -> dict[str, Any]:
        """What the next round needs: the answers so far and what this round asked."""
        return {"log": self._log, "ask": self.pending_digests}


def bind_for(server_name: str, tool_name: str, arguments: Any) -> dict[str, str]:
    """What a requestState is bound to: this server, this tool, these (raw) arguments, and, over HTTP with `auth=`,
    the caller: mrtr says servers SHOULD bind it to "the authenticated principal, rejecting state presented by a
    different principal" (another user's state is refused as tampered state is). The sealer keeps only a keyed
    digest of these, so the subject cannot be read from the state."""
    bind = {"srv": server_name, "tool": tool_name, "args": digest(arguments if arguments is not None else {})}
    identity = current_identity.get()
    if identity is not None:
        bind["sub"] = identity.subject
    return bind


def open_round(
    sealer: Sealer, params: Mapping[str, Any], bind: Callable[[], Mapping[str, str]], max_size: int
) -> Replay | None:
    """The replay for a `tools/call`, or None when the call carries neither `inputResponses` nor `requestState`
    (`bind` gives what the state is bound to, called only for a state to open).

    Raises:
        ProtocolError: -32602 for a requestState that fails verification (tampered, expired, for another call or
            another server's key) or an `inputResponses` that is not an object (MRTR: protocol errors).
    """
    token = params.get("requestState")
    if "inputResponses" not in params and token is None:
        return None
    responses = params.get("inputResponses", {})
    if not isinstance(responses, dict):
        raise ProtocolError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
    if token is None:
        return Replay(None, None, responses)
    state = _opened(sealer, token, bind(), max_size)
    if not isinstance(state, dict):
        return Replay([], {}, responses)
    log, asked = state.get("log"), state.get("ask")
    return Replay(log if isinstance(log, list) else [], asked if isinstance(asked, dict) else {}, responses)


def _opened(sealer: Sealer, token: Any, bind: Mapping[str, str], max_size: int) -> Any:
    """What a requestState holds, once verified.

    Raises:
        ProtocolError: -32602 for a state that fails verification, saying why (`_state_problem`).
    """
    try:
        return sealer.open(token, bind=bind, max_size=max_size)
    except SealError as exc:
        raise ProtocolError(
            INVALID_PARAMS,
            f"Invalid params: {_state_problem(exc.reason)}; call the tool again without it",
            {"reason": "invalid_request_state", "detail": exc.reason},
        ) from None


def _state_problem(reason: str) -> str:
    """What is wrong with a requestState the sealer refused for `reason`, in words."""
    if reason == "unknown_key":
        # Most likely workers that do not share a secret: say so, as the deployment is what needs the fix.
        return (
            "requestState is signed with another key (every process serving this server needs the same "
            "Server(secret=...), see docs/deploy.md#keys)"
        )
    return "requestState is invalid or has expired"


def input_required(replay: Replay, sealer: Sealer, bind: Mapping[str, str], ttl: float) -> dict[str, Any]:
    """The `InputRequiredResult` that ends a round: the questions, and always a requestState (it carries the log)."""
    return {
        "resultType": "input_required",
        "inputRequests": replay.pending,
        "requestState": sealer.seal(replay.state(), bind=bind, ttl=ttl),
    }
