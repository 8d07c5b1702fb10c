"""Middleware around the questions a tool asks its client: elicitation (`confirm=` included), sampling, roots.

Every question of a call goes through `Asker`, and from there through the hooks of `Server(question_middleware=...)`
(`ask_through`), in both eras: around the live request (2025-11-25), or around the answer replayed from the
client's retry (2026-07-28; a question not answered yet ends the round, and `call_next` raises `InputRequired`).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolkit._identity import Identity

__all__ = ["AskNext", "Question", "QuestionMiddleware", "ask_through"]


@dataclass
class Question:
    """One question a tool asks its client, as question middleware sees it."""

    method: str
    """`"elicitation/create"` (a form, a URL, or a `confirm=` confirmation), `"sampling/createMessage"`,
    `"roots/list"`."""
    params: dict[str, Any] = field(default_factory=dict)
    """What is sent (the message, the requested schema, the sampling messages...)."""
    tool: str = ""
    """The name of the tool that asks (a str; `Request.tool`, in request middleware, is the `ToolDefinition`)."""
    version: str = ""
    """The protocol revision of the call."""
    identity: Identity | None = None
    """Who the call comes from (HTTP with `auth=`), else None."""
    key: str | None = None
    """The question's `key=` (2026-07-28 input request key), if the tool gave one."""


AskNext = Callable[[Question], Awaitable[dict[str, Any]]]
"""The rest of the chain: the next question middleware, or the client (its raw answer, a JSON object)."""

QuestionMiddleware = Callable[[Question, AskNext], Awaitable[dict[str, Any]]]
"""`async def hook(question: Question, call_next: AskNext) -> dict[str, Any]`: returns the client's answer as the
tool will read it (an elicitation's `{"action": "accept", "content": {...}}`, a sampling result, `{"roots": [...]}`),
or one of its own."""


async def ask_through(hooks: Sequence[QuestionMiddleware], question: Question, ask: AskNext) -> dict[str, Any]:
    """`question` through `hooks` (the first outermost), `ask` at the end: the answer the tool reads."""
    step = ask
    for hook in reversed(hooks):
        step = functools.partial(_step, hook, step)
    return await step(question)


async def _step(hook: QuestionMiddleware, call_next: AskNext, question: Question) -> dict[str, Any]:
    return await hook(question, call_next)
