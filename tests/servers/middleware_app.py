"""A server with middleware of every kind, for the middleware tests over stdio and HTTP: `python middleware_app.py
[BACKEND]`, or `toolkit serve middleware_app.py --http`.

- `add` doubles `a` in its own middleware (so `add(a=1, b=2)` answers 4);
- `secret` is hidden from every caller by the tool filter, and refused as an unknown tool;
- `big` returns more than its `max_result_bytes`;
- `ask` confirms its calls (`confirm=`): the question middleware counts the questions and their answers.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

from toolkit import AskNext, CallNext, Context, Question, Request, Server, ToolDefinition, tool

seen: list[str] = []  # each method the server-wide middleware saw, in order
asked: list[str] = []  # each question and its answer's action


async def record(request: Request, call_next: CallNext) -> dict[str, Any]:
    seen.append(request.method)
    return await call_next(request)


async def double_a(request: Request, call_next: CallNext) -> dict[str, Any]:
    arguments = dict(request.arguments or {})
    arguments["a"] = arguments.get("a", 0) * 2
    return await call_next(dataclasses.replace(request, arguments=arguments))


async def count_questions(question: Question, call_next: AskNext) -> dict[str, Any]:
    answer = await call_next(question)
    asked.append(f"{question.method} {question.tool}: {answer.get('action')}")
    return answer


def not_secret(definition: ToolDefinition, request: Request) -> bool:
    return definition.name != "secret"


@tool(middleware=[double_a])
def add(a: int, b: int) -> int:
    """Add two integers (a is doubled by the tool's middleware)."""
    return a + b


@tool
def secret() -> str:
    """Hidden from every caller."""
    return "never listed"


@tool(max_result_bytes=200)
def big() -> str:
    """Return more than 200 bytes."""
    return "x" * 1000


@tool(confirm="Really?", read_only=True)
async def ask(ctx: Context) -> str:
    """Confirm, then say how many questions the middleware saw."""
    return f"asked {len(asked)}"


def build() -> Server:
    return Server(
        "middleware",
        tools=[add, secret, big, ask],
        middleware=[record],
        question_middleware=[count_questions],
        tool_filter=not_secret,
    )


server = build()

if __name__ == "__main__":
    server.run(backend="trio" if sys.argv[1:] == ["trio"] else "asyncio")
