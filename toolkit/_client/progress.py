"""The progress callbacks of a client's calls, by the `progressToken` each request carries (utilities/progress)."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["ProgressCallback", "ProgressCallbacks", "maybe_await"]

ProgressCallback = Callable[[float, "float | None", "str | None"], Awaitable[None] | None]
"""Called with `(progress, total, message)` for each progress notification of a call."""


class ProgressCallbacks:
    """The callback of each request that asked for progress, by its token; a notification for a token no longer held
    (the request has ended) is dropped."""

    def __init__(self) -> None:
        self._callbacks: dict[str, ProgressCallback] = {}
        self._tokens = itertools.count(1)  # tokens the client's requests in flight never share (the spec: unique)

    def add(self, callback: ProgressCallback) -> str:
        """A new token, whose notifications go to `callback` until it is dropped."""
        token = f"p{next(self._tokens)}"
        self._callbacks[token] = callback
        return token

    def drop(self, token: str | None) -> None:
        """Forget a token (harmless for None or one already dropped)."""
        if token is not None:
            self._callbacks.pop(token, None)

    def stamped(self, params: dict[str, Any], callback: ProgressCallback, held: list[str]) -> dict[str, Any]:
        """`params` with a new token for `callback` in its `_meta` (appended to `held`, for the caller to drop)."""
        token = self.add(callback)
        held.append(token)
        return {**params, "_meta": {"progressToken": token}}

    async def notify(self, params: dict[str, Any]) -> None:
        """A `notifications/progress`: to the callback of its token, if it is still held."""
        token = params.get("progressToken")
        callback = self._callbacks.get(token) if isinstance(token, str) else None
        if callback is not None:
            await maybe_await(callback(params.get("progress", 0), params.get("total"), params.get("message")))


async def maybe_await(value: Awaitable[None] | None) -> None:
    """Await what a user's callback returned, when it is awaitable (a callback may be sync or async)."""
    if value is not None:
        await value
