"""Who may call a tool now: the scopes a call needs (with `auth=`), and the rate limit (`limits.py`) of its caller."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from toolkit._backend.base import BackendError
from toolkit._definition.middleware import Request
from toolkit._engine import visibility
from toolkit._protocol.jsonrpc import RATE_LIMITED
from toolkit._protocol.meta import VERSION_KEY

from .auth import BearerAuth
from .exchange import Post
from .fleet import Fleet, unavailable
from .limits import RateLimiter
from .response import JSON, error_body, plain

if TYPE_CHECKING:
    from toolkit._engine.registry import Registry

__all__ = ["CallGate"]


class CallGate:
    """Refuses the tool calls a caller may not make (scopes: 403) or not make now (the rate limit: 429)."""

    __slots__ = ("_auth", "_limiter", "_server", "fleet", "open")

    def __init__(self, auth: BearerAuth | None, limiter: RateLimiter | None, server: Registry | None = None) -> None:
        self._auth = auth
        self._limiter = limiter
        self._server = server  # its `tool_filter`: a tool hidden from the caller is not one the gate may name
        self.open = auth is None and limiter is None
        self.fleet: Fleet | None = None
        """With a backend: the buckets are the fleet's (`rate_limit=` holds for all the workers together)."""
        """Nothing to check: every call passes (then `refused` need not be asked)."""

    async def refused(self, post: Post) -> bool:
        """Answer a tool call the caller may not make, or not make now; False to serve it."""
        message, caller = post.message, post.caller
        params = message.get("params") or {}
        if self._auth is not None and caller.identity is not None and not self._hidden(post, params):
            refusal = self._auth.check_scopes(self._called(params), caller.identity, caller.base, message["id"])
            if refusal is not None:
                await plain(post.send, refusal.status, refusal.body, refusal.headers)
                return True
        if self._limiter is not None:
            wait = await self._wait(post)
            if wait is not None and wait < 0:  # answered: the backend is down
                return True
            if wait is not None:
                seconds = max(1, math.ceil(wait))
                body = error_body(message["id"], RATE_LIMITED, "Rate limit exceeded", f"retry in {seconds} s")
                await plain(post.send, 429, body, [JSON, (b"retry-after", str(seconds).encode())])
                return True
        return False

    async def _wait(self, post: Post) -> float | None:
        """The caller's wait before a call (None: now); -1 when the shared buckets could not be reached (answered)."""
        assert self._limiter is not None
        limiter, key = self._limiter, post.caller.key
        if self.fleet is None:
            return limiter.acquire(key)
        try:
            return await self.fleet.backend.take(key, limiter.rate, limiter.capacity)
        except BackendError as exc:
            await unavailable(post.send, post.message["id"], exc)
            return -1.0

    def _called(self, params: dict[str, Any]) -> Any:
        """The name of the tool a call runs: with tool search, a `call_tool` call runs the tool it names, whose scopes
        it needs."""
        server = self._server
        if server is not None and server.search is not None:
            return server.search.inner_name(params)
        return params.get("name")

    def _hidden(self, post: Post, params: dict[str, Any]) -> bool:
        """Whether the server's `tool_filter` hides the called tool from this caller: the server then answers it as
        a tool that does not exist, so the scope check must not tell that it does (a 403 naming its scopes)."""
        server = self._server
        if server is None or server.tool_filter is None:
            return False
        name = self._called(params)
        tool = server.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            return False
        meta = params.get("_meta")
        version = meta.get(VERSION_KEY) if isinstance(meta, dict) else post.headers.get("mcp-protocol-version")
        request = Request("tools/call", dict(params), version, post.message["id"], post.caller.identity)
        return not visibility.shown(server, tool, request)
