"""Scripted answers for tests: the user's and the model's replies written down in advance, every question recorded.

A question nobody scripted is answered with an error (so the server never waits for a human who is not there)
and kept, so that the test fails after the call with a message that shows the question.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from toolkit import (
    ClientRequestError,
    ElicitationHandler,
    ElicitRequest,
    ElicitResult,
    SampleRequest,
    SampleResult,
    SamplingHandler,
)
from toolkit._protocol.jsonrpc import INTERNAL_ERROR

__all__ = ["ElicitationScript", "SamplingScript", "Scripted"]

_ElicitationAnswer = Literal["accept", "decline", "cancel"] | Mapping[str, Any] | ElicitResult[Any]
ElicitationScript = _ElicitationAnswer | Sequence[_ElicitationAnswer] | ElicitationHandler
"""`"accept"` (the form's defaults), `"decline"`, `"cancel"`, a dict (accept with that content), an
`ElicitResult`, a list of those (one per question, in order, for each call), or a handler."""
_SamplingAnswer = str | SampleResult
SamplingScript = _SamplingAnswer | Sequence[_SamplingAnswer] | SamplingHandler
"""A reply's text, a `SampleResult`, a list of those (one per request, in order, for each call), or a handler."""


class Scripted:
    """Handlers that answer from scripts and record every request (see `ToolTester(elicitation=, sampling=)`).

    `None` for a script declares no capability at all: the server then cannot ask, which is how a test checks a
    tool's behaviour with a client that cannot elicit or sample.
    """

    def __init__(self, elicitation: ElicitationScript | None, sampling: SamplingScript | None) -> None:
        self.elicitation = elicitation
        self.sampling = sampling
        self.elicitations: list[ElicitRequest] = []
        """The elicitations of the last call, in order."""
        self.samplings: list[SampleRequest] = []
        """The sampling requests of the last call, in order."""
        self.problems: list[str] = []
        """Questions the scripts had no answer for, during the last call."""

    def reset(self) -> None:
        """Forget the last call: its records, its problems, and the position in each list script."""
        self.elicitations.clear()
        self.samplings.clear()
        self.problems.clear()

    @property
    def elicitation_handler(self) -> ElicitationHandler | None:
        return None if self.elicitation is None else self._elicit

    @property
    def sampling_handler(self) -> SamplingHandler | None:
        return None if self.sampling is None else self._sample

    async def _elicit(self, request: ElicitRequest) -> ElicitResult[Any]:
        self.elicitations.append(request)
        script = self.elicitation
        if callable(script) and not isinstance(script, ElicitResult):
            answer: Any = script(request)
            if not isinstance(answer, ElicitResult):
                answer = await answer
            result: ElicitResult[Any] = answer
            return result
        step = self._step(script, len(self.elicitations), f"the tool asked {_describe(request)}", "elicitation")
        return self._elicit_answer(request, step)

    def _elicit_answer(self, request: ElicitRequest, step: Any) -> ElicitResult[Any]:
        if isinstance(step, ElicitResult):
            return step
        if step in ("decline", "cancel"):
            return ElicitResult(step)
        if isinstance(step, Mapping):
            return ElicitResult.accept(step)
        if step == "accept":
            return self._accept_defaults(request)
        self._fail(f"the tool asked {_describe(request)}, and the script's answer {step!r} is not one toolkit knows")
        raise AssertionError  # unreachable: _fail raises

    def _accept_defaults(self, request: ElicitRequest) -> ElicitResult[Any]:
        """The script's `"accept"`: a URL elicitation accepted, or a form accepted with its defaults (a problem
        when a required field has none)."""
        if request.mode == "url":
            return ElicitResult.accept()
        schema = request.requested_schema or {}
        properties = schema.get("properties") or {}
        content = {name: prop["default"] for name, prop in properties.items() if "default" in prop}
        missing = [r for r in schema.get("required", ()) if r not in content]
        if missing:
            self._fail(
                f"the tool asked {_describe(request)}, and the script says accept, but required field "
                f"{', '.join(map(repr, missing))} has no default; script the content: elicitation={{...}}"
            )
        return ElicitResult.accept(content)

    async def _sample(self, request: SampleRequest) -> SampleResult | str:
        self.samplings.append(request)
        script = self.sampling
        if callable(script) and not isinstance(script, (str, SampleResult)):
            answer: Any = script(request)
            if not isinstance(answer, (str, SampleResult)):
                answer = await answer
            reply: SampleResult | str = answer
            return reply
        asked = [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in request.messages]
        question = f"the tool asked the model {_brief(asked)}"
        step = self._step(script, len(self.samplings), question, "sampling")
        if isinstance(step, (str, SampleResult)):
            return step
        self._fail(f"{question}, and the script's answer {step!r} is not a str or a SampleResult")
        raise AssertionError  # unreachable

    def _step(self, script: Any, count: int, question: str, kind: str) -> Any:
        if isinstance(script, Sequence) and not isinstance(script, (str, Mapping)):
            if count > len(script):
                self._fail(
                    f"{question}, but no {kind} answer was scripted for it (the script has {len(script)}); "
                    f"pass {kind}=[...] to ToolTester with one answer per question"
                )
            return script[count - 1]
        return script

    def _fail(self, problem: str) -> None:
        self.problems.append(problem)
        # The server gets an error reply, never silence: the tool fails at once, and the test after the call.
        raise ClientRequestError(INTERNAL_ERROR, "no scripted answer (see the test's failure)")


def _describe(request: ElicitRequest) -> str:
    if request.mode == "url":
        return f"{request.message!r} (URL {request.url})"
    return f"{request.message!r} (form {_brief(request.requested_schema)})"


def _brief(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 300 else text[:297] + "..."
