"""`AuditLog`: a shipped middleware that records each request, and each question a tool asks, through `logging`."""

from __future__ import annotations

import logging
import time
from typing import Any

import anyio

from toolkit._asking.around import AskNext, Question
from toolkit._asking.mrtr import Suspend
from toolkit._definition.middleware import CallNext, Request
from toolkit._errors import ProtocolError

__all__ = ["AuditLog"]


class AuditLog:
    """Record every request (and, as question middleware, every question a tool asks) with the standard `logging`.

    One record per request, when it ends: `"tools/call add by alice: ok in 1.2 ms"`. The record carries the parts
    as attributes too, for structured handlers: `mcp_method`, `mcp_tool`, `mcp_subject` (the caller's
    `Identity.subject`, or None), `mcp_outcome` (`ok`, `tool_error`, `input_required`, `error -32602`, `failed`,
    `cancelled`), `mcp_duration_ms`, and `mcp_arguments` only with `arguments=True` (they may hold personal data).

    Args:
        logger: The logger's name, or the logger (default `"toolkit.audit"`).
        level: The level of the records (default `logging.INFO`).
        arguments: Also record a call's arguments, and the content of the answers to questions.

    Example:
        ```python
        from toolkit import AuditLog, Server

        audit = AuditLog()
        server = Server("demo", middleware=[audit], question_middleware=[audit.question])
        ```
    """

    def __init__(
        self, logger: str | logging.Logger = "toolkit.audit", level: int = logging.INFO, *, arguments: bool = False
    ) -> None:
        self.logger = logger if isinstance(logger, logging.Logger) else logging.getLogger(logger)
        self.level = level
        self.arguments = arguments

    async def __call__(self, request: Request, call_next: CallNext) -> dict[str, Any]:
        """The middleware: `Server(middleware=[audit])` (every request) or `tool_middleware=[audit]` (calls)."""
        start = time.perf_counter()
        outcome = "failed"
        try:
            result = await call_next(request)
            outcome = _outcome(result) if type(result) is dict else "failed"  # the chain's own check reports it
            return result
        except ProtocolError as exc:
            outcome = f"error {exc.code}"
            raise
        except Suspend:  # tool middleware, 2026-07-28: a question without an answer yet ends this round
            outcome = "input_required"
            raise
        except anyio.get_cancelled_exc_class():
            outcome = "cancelled"
            raise
        finally:
            if self.logger.isEnabledFor(self.level):
                tool = request.tool.name if request.tool is not None else None
                subject = request.identity.subject if request.identity is not None else None
                extra = request.arguments if self.arguments and request.method == "tools/call" else None
                self._record((request.method, tool, subject, outcome), start, extra)

    async def question(self, question: Question, call_next: AskNext) -> dict[str, Any]:
        """The question middleware: `Server(question_middleware=[audit.question])`. Records the question and what
        the client answered (an elicitation's action, `accept` for a confirmation given; `unanswered` when a
        2026-07-28 round ends with it, to be answered in the client's retry)."""
        start = time.perf_counter()
        outcome = "unanswered"
        answer: dict[str, Any] | None = None
        try:
            answer = await call_next(question)
            outcome = str(answer.get("action", "answered"))
            return answer
        except Exception:
            outcome = "failed"
            raise
        finally:
            if self.logger.isEnabledFor(self.level):
                subject = question.identity.subject if question.identity is not None else None
                content = answer if self.arguments else None
                self._record((question.method, question.tool, subject, outcome), start, content)

    def _record(self, what: tuple[str, str | None, str | None, str], start: float, extra: Any) -> None:
        """Log one record: (method, tool, subject, outcome), the duration since `start`, what `arguments=` adds."""
        method, tool, subject, outcome = what
        duration = (time.perf_counter() - start) * 1000
        fields = {
            "mcp_method": method,
            "mcp_tool": tool,
            "mcp_subject": subject,
            "mcp_outcome": outcome,
            "mcp_duration_ms": duration,
        }
        if self.arguments:
            fields["mcp_arguments"] = extra
        name = f"{method} {tool}" if tool is not None else method
        by = f" by {subject}" if subject is not None else ""
        detail = f" {extra!r}" if self.arguments and extra is not None else ""
        self.logger.log(self.level, "%s%s: %s in %.1f ms%s", name, by, outcome, duration, detail, extra=fields)


def _outcome(result: dict[str, Any]) -> str:
    if result.get("isError"):
        return "tool_error"
    if result.get("resultType") == "input_required":
        return "input_required"
    return "ok"
