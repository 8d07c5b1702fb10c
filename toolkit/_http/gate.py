"""Who may call a tool now: the scopes a call needs (with `auth=`), and the rate limit (`limits.py`) of its caller."""

from __future__ import annotations

import math

from toolkit._protocol.jsonrpc import RATE_LIMITED

from .auth import BearerAuth
from .exchange import Post
from .limits import RateLimiter
from .response import JSON, error_body, plain

__all__ = ["CallGate"]


class CallGate:
    """Refuses the tool calls a caller may not make (scopes: 403) or not make now (the rate limit: 429)."""

    __slots__ = ("_auth", "_limiter", "open")

    def __init__(self, auth: BearerAuth | None, limiter: RateLimiter | None) -> None:
        self._auth = auth
        self._limiter = limiter
        self.open = auth is None and limiter is None
        """Nothing to check: every call passes (then `refused` need not be asked)."""

    async def refused(self, post: Post) -> bool:
        """Answer a tool call the caller may not make, or not make now; False to serve it."""
        message, caller = post.message, post.caller
        params = message.get("params") or {}
        if self._auth is not None and caller.identity is not None:
            refusal = self._auth.check_scopes(params.get("name"), caller.identity, caller.base, message["id"])
            if refusal is not None:
                await plain(post.send, refusal.status, refusal.body, refusal.headers)
                return True
        if self._limiter is not None:
            wait = self._limiter.acquire(caller.key)
            if wait is not None:
                seconds = max(1, math.ceil(wait))
                body = error_body(message["id"], RATE_LIMITED, "Rate limit exceeded", f"retry in {seconds} s")
                await plain(post.send, 429, body, [JSON, (b"retry-after", str(seconds).encode())])
                return True
        return False
