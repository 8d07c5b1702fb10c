"""`MemoryBackend`: the shared state of the workers of one process (`base.Backend`), no dependency.

One process serving one app needs no backend at all (the default keeps each fact where it is used). This one is for
several apps in one process that must act as workers of one server, and the reference the other backends are tested
against: every worker made with `peer()` shares the first one's state, and has a name of its own.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

import anyio
import anyio.abc

from .base import Events, Inbox, worker_name

__all__ = ["MemoryBackend"]

_SWEEP_EVERY = 1024  # writes between two sweeps of what expired


@dataclass
class _Stream:
    events: deque[tuple[int, bytes]] = field(default_factory=deque)
    done: bool = False
    expires: float = 0.0
    changed: anyio.Event = field(default_factory=anyio.Event)


class _Space:
    """What the workers of one `MemoryBackend` share."""

    def __init__(self, events_ttl: float, max_events: int) -> None:
        self.events_ttl = events_ttl
        self.max_events = max_events
        self.values: dict[str, tuple[str, float]] = {}
        self.buckets: dict[str, tuple[float, float]] = {}
        self.streams: dict[str, _Stream] = {}
        self.inboxes: dict[str, Inbox] = {}
        self.until_sweep = _SWEEP_EVERY

    def sweep(self) -> None:
        """Count a write; every `_SWEEP_EVERY` writes, drop what has expired."""
        self.until_sweep -= 1
        if self.until_sweep > 0:
            return
        self.until_sweep = _SWEEP_EVERY
        self._drop_expired(time.monotonic())

    def _drop_expired(self, now: float) -> None:
        """Drop the values and streams past their expiry, and the rate-limit buckets idle for an hour."""
        for key in [k for k, (_, until) in self.values.items() if until < now]:
            del self.values[key]
        for key in [k for k, s in self.streams.items() if s.expires < now]:
            del self.streams[key]
        for key in [k for k, (_, then) in self.buckets.items() if then < now - 3600]:
            del self.buckets[key]


class MemoryBackend:
    """The shared state of workers in one process ([Backends](backend.md)): nothing leaves it.

    `MemoryBackend()` is one worker; `backend.peer()` another worker on the same state (two apps in one process
    that behave as two workers of one server, as behind a round-robin balancer).

    Args:
        events_ttl: Seconds a stream's SSE events are kept after its latest one (for `Last-Event-ID`).
        max_events: Events kept per stream (the oldest go first; a POST stream's answer always stays).
    """

    __slots__ = ("_space", "_worker")

    def __init__(self, *, events_ttl: float = 60.0, max_events: int = 1000) -> None:
        if events_ttl <= 0 or max_events < 1:
            raise ValueError("MemoryBackend needs events_ttl > 0 and max_events >= 1")
        self._space = _Space(events_ttl, max_events)
        self._worker = worker_name()

    def peer(self) -> MemoryBackend:
        """Another worker sharing this one's state."""
        other = MemoryBackend.__new__(MemoryBackend)
        other._space = self._space
        other._worker = worker_name()
        return other

    @property
    def worker(self) -> str:
        return self._worker

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        self._space.inboxes.pop(self._worker, None)

    async def put(self, key: str, value: str, ttl: float) -> None:
        self._space.sweep()
        self._space.values[key] = (value, time.monotonic() + ttl)

    async def get(self, *keys: str) -> list[str | None]:
        now = time.monotonic()
        found: list[str | None] = []
        for key in keys:
            kept = self._space.values.get(key)
            found.append(kept[0] if kept is not None and kept[1] >= now else None)
        return found

    async def take(self, key: str, rate: float, capacity: float) -> float | None:
        self._space.sweep()
        now = time.monotonic()
        tokens, then = self._space.buckets.get(key, (capacity, now))
        tokens = min(capacity, tokens + (now - then) * rate)
        wait = None
        if tokens >= 1:
            tokens -= 1
        else:
            wait = (1 - tokens) / rate
        self._space.buckets[key] = (tokens, now)
        return wait

    async def send(self, worker: str, message: bytes) -> bool:
        inbox = self._space.inboxes.get(worker)
        if inbox is None:
            return False
        await inbox(message)
        return True

    async def broadcast(self, message: bytes) -> None:
        for inbox in list(self._space.inboxes.values()):
            await inbox(message)

    async def listen(
        self, inbox: Inbox, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        self._space.inboxes[self._worker] = inbox
        try:
            task_status.started()
            await anyio.sleep_forever()
        finally:
            if self._space.inboxes.get(self._worker) is inbox:
                del self._space.inboxes[self._worker]

    async def append(self, stream: str, seq: int, frame: bytes, *, last: bool = False) -> None:
        space = self._space
        space.sweep()
        kept = space.streams.get(stream)
        if kept is None:
            kept = space.streams[stream] = _Stream()
        kept.events.append((seq, frame))
        while len(kept.events) > space.max_events:
            kept.events.popleft()
        kept.done = kept.done or last
        kept.expires = time.monotonic() + space.events_ttl
        kept.changed.set()
        kept.changed = anyio.Event()

    async def since(self, stream: str, after: int, wait: float = 0.0) -> Events:
        kept = self._space.streams.get(stream)
        if kept is None or kept.expires < time.monotonic():
            return Events((), False, known=False)
        if not kept.done and (not kept.events or kept.events[-1][0] <= after) and wait > 0:
            with anyio.move_on_after(wait):
                await kept.changed.wait()
        return Events([event for event in kept.events if event[0] > after], kept.done)
