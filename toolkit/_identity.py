"""Who is calling: the `Identity` a token verifier established, and the request's own copy of it.

A leaf: the HTTP app sets `current_identity` in each request's task (with `auth=`), and what runs below the
transport reads it without importing HTTP: `Context.identity`, and the binding of a requestState to its user.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Identity", "current_identity"]


@dataclass(frozen=True)
class Identity:
    """Who a request comes from, as the token verifier established it."""

    subject: str
    """The user (or service) the token was issued to."""
    scopes: frozenset[str] = frozenset()
    """What the token allows."""
    client_id: str | None = None
    """The OAuth client the token was issued through, if known."""
    expires_at: float | None = None
    """When the token expires (seconds since the epoch), if known."""
    claims: Mapping[str, Any] = field(default_factory=dict)
    """Anything else the verifier wants tools to see (a JWT's claims)."""


#: The identity of the request being served over HTTP with `auth=` (None otherwise). Set by the HTTP app in the
#: request's task, so the tool call's task and its worker thread see it; read by `Context.identity`.
current_identity: ContextVar[Identity | None] = ContextVar("toolkit_identity", default=None)
