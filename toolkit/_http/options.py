"""The options of an HTTP app, declared once: their types (`HttpOptions`, what `Server.http_app(**options)` takes)
and their defaults (`DEFAULTS`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import TypedDict

from toolkit._backend.base import Backend
from toolkit._errors import refuse_unknown_options

from .auth import Identity, TokenVerifier
from .limits import RateLimit
from .session_store import SessionStore

__all__ = ["DEFAULTS", "HttpOptions", "resolve"]


class HttpOptions(TypedDict, total=False):
    """The options of [`Server.http_app`][toolkit.Server.http_app]."""

    allowed_hosts: Sequence[str] | None
    allowed_origins: Sequence[str] | None
    max_body_size: int | None
    legacy: bool
    secret: bytes | str | Sequence[bytes | str] | None
    session_ttl: float
    session_store: SessionStore | None
    sse_ping: float
    sse_retry: float
    sse_close_after: float | None
    replay_window: float
    replay_size: int
    auth: TokenVerifier | Callable[[str], Awaitable[Identity | None]] | None
    resource_url: str | None
    authorization_servers: Sequence[str]
    scopes_supported: Sequence[str] | None
    required_scopes: Mapping[str, Collection[str]] | None
    scope_implies: Mapping[str, Collection[str]] | None
    rate_limit: RateLimit | None
    backend: Backend | None


#: Every option's default (docs/http.md says what each does).
DEFAULTS: HttpOptions = {
    "allowed_hosts": None,  # loopback only
    "allowed_origins": None,  # the same origin, or a loopback page
    "max_body_size": None,  # the server's max_message_size
    "legacy": True,
    "secret": None,
    "session_ttl": 24 * 3600.0,
    "session_store": None,
    "sse_ping": 15.0,
    "sse_retry": 1.0,
    "sse_close_after": None,
    "replay_window": 60.0,
    "replay_size": 1 << 20,
    "auth": None,
    "resource_url": None,
    "authorization_servers": (),
    "scopes_supported": None,
    "required_scopes": None,
    "scope_implies": None,
    "rate_limit": None,
    "backend": None,  # the Server's
}


def resolve(options: HttpOptions) -> HttpOptions:
    """`options` over the defaults, checked.

    Raises:
        TypeError: an unknown option, or a `session_store` that is not a `SessionStore`.
        ValueError: a value out of range, or an option that needs another.
    """
    refuse_unknown_options("http_app", options, DEFAULTS.keys())
    resolved: HttpOptions = {**DEFAULTS, **options}
    close_after = resolved["sse_close_after"]
    if close_after is not None and close_after < 0:
        raise ValueError(f"sse_close_after must be at least 0 seconds, got {close_after}")
    _check_kinds(resolved)
    _check_scopes(resolved)
    return resolved


def _check_kinds(options: HttpOptions) -> None:
    """Refuse a `backend` or a `session_store` that is not one (`TypeError`)."""
    backend = options["backend"]
    if backend is not None and not isinstance(backend, Backend):
        raise TypeError(f"backend= takes a Backend (MemoryBackend, RedisBackend), got {backend!r}")
    store = options["session_store"]
    if store is not None and not isinstance(store, SessionStore):
        raise TypeError(f"session_store= takes a SessionStore (end, is_ended), got {store!r}")


def _check_scopes(options: HttpOptions) -> None:
    """Refuse scope options without `auth=` (`ValueError`): without a verified token there are no scopes to check."""
    if options["auth"] is not None:
        return
    for option in ("required_scopes", "scope_implies"):
        if options[option]:
            raise ValueError(f"{option}= needs auth=: without a verified token there are no scopes to check")
