"""Rate limiting of tool calls: a token bucket per caller (the spec's tools page: servers MUST rate limit tool
invocations). Pure and in memory: the limit holds per process."""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass

__all__ = ["RateLimit", "RateLimiter"]

_MAX_KEYS = 100_000  # callers remembered; the least recently seen are forgotten first (they start full again)


@dataclass(frozen=True)
class RateLimit:
    """At most `calls` tool calls per `per` seconds for each caller, with bursts of up to `burst` (default: `calls`).

    The caller is the authenticated identity's subject, else the client's address. Over the limit, HTTP answers
    429 with `Retry-After`. The limit holds per process: N workers allow N times the rate.
    """

    calls: int
    per: float = 60.0
    burst: int | None = None

    def __post_init__(self) -> None:
        if self.calls < 1 or self.per <= 0 or (self.burst is not None and self.burst < 1):
            raise ValueError("RateLimit needs calls >= 1, per > 0 and burst >= 1")


class RateLimiter:
    """Token buckets by key."""

    __slots__ = ("_buckets", "_capacity", "_rate")

    def __init__(self, limit: RateLimit) -> None:
        self._rate = limit.calls / limit.per
        self._capacity = float(limit.burst if limit.burst is not None else limit.calls)
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    @property
    def rate(self) -> float:
        """Tokens a second."""
        return self._rate

    @property
    def capacity(self) -> float:
        """Tokens a full bucket holds."""
        return self._capacity

    def acquire(self, key: str) -> float | None:
        """Take one call for `key`: None when allowed, else the seconds until one would be."""
        now = time.monotonic()
        tokens, then = self._buckets.pop(key, (self._capacity, now))
        tokens = min(self._capacity, tokens + (now - then) * self._rate)
        wait = None
        if tokens >= 1:
            tokens -= 1
        else:
            wait = (1 - tokens) / self._rate
        self._buckets[key] = (tokens, now)
        if len(self._buckets) > _MAX_KEYS:
            self._buckets.popitem(last=False)
        return wait
