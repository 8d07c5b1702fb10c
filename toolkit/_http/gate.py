"""Who may call a tool now: the scopes a call needs (with `auth=`), and the rate limit (`limits.py`) of its caller."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from toolkit._definition.middleware import Request
from toolkit._engine import middleware
from toolkit._protocol.jsonrpc import RATE_LIMITED
from toolkit._protocol.meta import VERSION_KEY

from .auth import BearerAuth
from .exchange import Post
from .limits import RateLimiter
from .response import JSON, error_body, plain

if TYPE_CHECKING:
    from toolkit._engine.registry import Registry as Server

__all__ = ["CallGate"]


class CallGate:
    """Refuses the tool calls a caller may not make (scopes: 403) or not make now (the rate limit: 429)."""

    __slots__ = ("_auth", "_limiter", "_server", "open")

    def __init__(self, auth: BearerAuth | None, limiter: RateLimiter | None, server: Server | None = None) -> None:
        self._auth = auth
        self._limiter = limiter
        self._server = server  # its `tool_filter`: a tool hidden from the caller is not one the gate may name
        self.open = auth is None and limiter is None
        """Nothing to check: every call passes (then `refused` need not be asked)."""

    async def refused(self, post: Post) -> bool:
        """Answer a tool call the caller may not make, or not make now; False to serve it."""
        message, caller = post.message, post.caller
        params = message.get("params") or {}
        if self._auth is not None and caller.identity is not None and not self._hidden(post, params):
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

    def _hidden(self, post: Post, params: dict[str, Any]) -> bool:
        """Whether the server's `tool_filter` hides the called tool from this caller: the server then answers it as
        a tool that does not exist, so the scope check must not tell that it does (a 403 naming its scopes)."""
        server = self._server
        if server is None or server.tool_filter is None:
            return False
        name = params.get("name")
        tool = server.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            return False
        meta = params.get("_meta")
        version = meta.get(VERSION_KEY) if isinstance(meta, dict) else post.headers.get("mcp-protocol-version")
        request = Request("tools/call", dict(params), version, post.message["id"], post.caller.identity)
        return not middleware.shown(server, tool, request)
