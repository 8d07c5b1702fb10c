"""The options of a server, declared once: their types (`ServerOptions`, what `Server(name, **options)` takes, with
`TaskOptions`, the part its tasks read), their defaults (`DEFAULTS`), and the check of a set of them (`resolve`).

Every other module reads an option from the resolved mapping (`options["tool_timeout"]`), never with a default of
its own: the defaults below are the only ones, as the `Server` docstring documents them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from toolkit._asking.around import QuestionMiddleware
from toolkit._asking.asking import ConfirmFallback
from toolkit._backend.base import Backend
from toolkit._definition.middleware import Middleware, ToolFilter, middleware_problems
from toolkit._definition.options import limit_problems
from toolkit._errors import refuse_unknown_options
from toolkit._protocol.types import Icon
from toolkit._seal import SecretOption
from toolkit._transports.base import DEFAULT_MAX_MESSAGE_SIZE

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

    from toolkit._tasks.store import TaskStore

    from .search import ToolSearch

__all__ = ["DEFAULTS", "ServerOptions", "TaskOptions", "resolve"]


class TaskOptions(TypedDict, total=False):
    """The task options of `Server(...)` (documented on [`Server`][toolkit.Server]): what its `Tasks` read."""

    task_store: TaskStore | None
    task_ttl: float
    max_task_ttl: float
    task_poll_interval: float
    max_tasks_per_caller: int
    max_tasks: int
    max_task_result_bytes: int
    task_lease: float


class ServerOptions(TaskOptions, total=False):
    """The options of `Server(name, ...)` (each is documented on [`Server`][toolkit.Server])."""

    version: str | None
    title: str | None
    description: str | None
    icons: Sequence[Icon | Mapping[str, Any]] | None
    website_url: str | None
    instructions: str | None
    page_size: int | None
    show_error_details: bool
    max_message_size: int
    max_concurrent_requests: int
    max_queued_messages: int
    max_queued_bytes: int
    tool_timeout: float | None
    shutdown_grace: float
    ttl_ms: int
    cache_scope: Literal["public", "private"]
    schema_profile: str | None
    confirm_fallback: ConfirmFallback
    client_request_timeout: float | None
    secret: SecretOption
    request_state_ttl: float
    strict_arguments: bool
    middleware: Sequence[Middleware]
    tool_middleware: Sequence[Middleware]
    question_middleware: Sequence[QuestionMiddleware]
    tool_filter: ToolFilter | None
    max_result_bytes: int | None
    tracer_provider: TracerProvider | None
    meter_provider: MeterProvider | None
    backend: Backend | None
    tool_search: bool | ToolSearch | None


#: Every option's default (the `Server` docstring says what each does).
DEFAULTS: ServerOptions = {
    "version": "0.0.0",  # also for a version given as None or ""
    "title": None,
    "description": None,
    "icons": None,
    "website_url": None,
    "instructions": None,
    "page_size": None,  # every tool in one page
    "show_error_details": False,
    "max_message_size": DEFAULT_MAX_MESSAGE_SIZE,
    "max_concurrent_requests": 1000,
    "max_queued_messages": 10_000,
    "max_queued_bytes": 64 * 1024 * 1024,
    "tool_timeout": None,  # no limit
    "shutdown_grace": 5.0,
    "ttl_ms": 0,
    "cache_scope": "public",
    "schema_profile": None,
    "confirm_fallback": "auto",
    "client_request_timeout": None,  # as long as the call may run
    "secret": None,  # a random key of this process
    "request_state_ttl": 900.0,
    "strict_arguments": False,
    "middleware": (),
    "tool_middleware": (),
    "question_middleware": (),
    "tool_filter": None,
    "max_result_bytes": None,  # no limit
    "tracer_provider": None,  # OpenTelemetry's global one, if configured
    "meter_provider": None,
    "backend": None,  # this process only
    "tool_search": None,
    "task_store": None,  # this process's memory
    "task_ttl": 3600.0,
    "max_task_ttl": 86400.0,
    "task_poll_interval": 0.5,
    "max_tasks_per_caller": 100,
    "max_tasks": 10_000,
    "max_task_result_bytes": 1_000_000,
    "task_lease": 30.0,
}


def resolve(options: ServerOptions) -> ServerOptions:
    """`options` over the defaults, checked: every option is then in the mapping.

    Raises:
        TypeError: an unknown option (with the known one it is closest to), or a `backend` that is not a `Backend`.
        ValueError: a value out of range (`page_size`, the queue bounds, `confirm_fallback`, the middleware, the
            limits).
    """
    refuse_unknown_options("Server", options, DEFAULTS.keys())
    resolved: ServerOptions = {**DEFAULTS, **options}
    if not resolved["version"]:  # serverInfo needs one
        resolved["version"] = DEFAULTS["version"]
    _check_limits(resolved)
    _check_kinds(resolved)
    problems = [
        *middleware_problems(resolved["middleware"], "middleware"),
        *middleware_problems(resolved["tool_middleware"], "tool_middleware"),
        *middleware_problems(resolved["question_middleware"], "question_middleware"),
        *limit_problems(resolved["tool_timeout"], resolved["max_result_bytes"], "server "),
    ]
    if problems:
        raise ValueError("; ".join(problems))
    return resolved


def _check_limits(options: ServerOptions) -> None:
    """Refuse a page size or a queue bound under 1 (`ValueError`)."""
    page_size = options["page_size"]
    if page_size is not None and page_size < 1:
        raise ValueError("page_size must be at least 1")
    if options["max_queued_messages"] < 1 or options["max_queued_bytes"] < 1:
        raise ValueError("max_queued_messages and max_queued_bytes must be at least 1")


def _check_kinds(options: ServerOptions) -> None:
    """Refuse a `confirm_fallback` that is not one (`ValueError`) and a `backend` that is not a `Backend`
    (`TypeError`)."""
    if options["confirm_fallback"] not in ("auto", "refuse", "run"):
        raise ValueError("confirm_fallback must be 'auto', 'refuse' or 'run'")
    backend = options["backend"]
    if backend is not None and not isinstance(backend, Backend):
        raise TypeError(f"backend= takes a Backend (MemoryBackend, RedisBackend), got {backend!r}")
