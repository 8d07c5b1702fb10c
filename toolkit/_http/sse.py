"""SSE event ids and the replay buffer of 2025-11-25 Streamable HTTP (transports §Resumability and Redelivery).

Every SSE stream of a handshake-era session (a POST's answer, or the GET stream) gets an id of its own, random so
that two workers never mint the same one: `p` + 11 characters for a POST's stream, `g` + 11 for the GET stream.
Its events are numbered from 1 (0 is the priming event), and an event's id is `<stream>:<n>`: unique within the
session, and it names the stream it belongs to, as the spec asks. A client that lost the connection sends the last
id it saw as `Last-Event-ID` on a GET, and gets the events of *that* stream after it, never another stream's.

What is kept, per process (a worker that never served the stream has nothing to replay):
- each stream keeps its last events up to `max_size` bytes (and `max_events`), oldest dropped first; the answer,
  the last event of a POST stream, is always kept;
- a stream is kept while it is in use (a call running, a GET attached) and for `window` seconds after;
- a session keeps at most `per_session` streams that are no longer in use, and the process at most `total` bytes of
  them: beyond that the oldest go first.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio

__all__ = ["PRIMING_SINCE", "EventStream", "Mirror", "ReplayStore", "Resumption", "priming", "retry_field"]

Mirror = Callable[[str, int, bytes, bool], Awaitable[None]]
"""Where a POST stream's events are also kept for the other workers (with a backend, `fleet.py`): the stream's id,
the event's number (0: the stream opened), its frame, and whether it is the last."""

# SEP-1699 (2025-11-25): the revision whose clients expect priming events (an id, empty data); older clients would
# read the empty data as a message.
PRIMING_SINCE = "2025-11-25"


def priming(stream_id: str, after: int, retry: bytes) -> bytes:
    """The event that opens a response of a stream: an id the client may resume from, `retry`, no data."""
    return b"id: %s:%d\n%sdata:\n\n" % (stream_id.encode(), after, retry)


def retry_field(seconds: float) -> bytes:
    """The SSE `retry` line (milliseconds) that tells a client how long to wait before it reconnects."""
    return b"retry: %d\n" % max(0, round(seconds * 1000))


class EventStream:
    """One SSE stream of a session, as kept for resumption: its numbered events and whether it has ended."""

    __slots__ = (
        "_store",
        "_waiter",
        "done",
        "events",
        "id",
        "idle_at",
        "kept",
        "mirror",
        "nonce",
        "owner",
        "seq",
        "size",
    )

    def __init__(self, store: ReplayStore, nonce: str, kind: str) -> None:
        self._store = store
        self.nonce = nonce
        self.id = kind + secrets.token_urlsafe(8)
        if kind == "p" and store.worker is not None:  # names the worker that writes it (`.` never in a token)
            self.id += "." + store.worker()
        self.seq = 0  # the number of the last event (0: only the priming event so far)
        self.events: deque[tuple[int, bytes]] = deque()
        self.size = 0
        self.done = False  # a POST stream's answer is in (or the call ended without one): nothing more comes
        self.idle_at: float | None = None  # when it stopped being in use (None: in use)
        self.owner = 0  # who writes it now: 0 the request that opened it, n the n-th resumption
        self.kept = True  # False once the store let it go (its size no longer counts there)
        self._waiter: anyio.Event | None = None
        # A POST's stream is resumed on any worker: its events are kept in the backend too (GET streams are not:
        # any worker opens a fresh one, and the tool-list changes reach every worker's).
        self.mirror = store.mirror if kind == "p" else None

    def priming(self, after: int, retry: bytes) -> bytes:
        """The event that opens a response of this stream: an id the client may resume from, `retry`, no data."""
        return priming(self.id, after, retry)

    def add(self, text: str) -> bytes:
        """Number an event, keep it for replay, and return its SSE frame."""
        self.seq += 1
        frame = b"id: %s:%d\nevent: message\ndata: %s\n\n" % (self.id.encode(), self.seq, text.encode())
        self.events.append((self.seq, frame))
        store = self._store
        before = self.size
        self.size += len(frame)
        while len(self.events) > 1 and (self.size > store.max_size or len(self.events) > store.max_events):
            self.size -= len(self.events.popleft()[1])
        if self.kept:
            store.size += self.size - before
        self.wake()
        return frame

    def since(self, after: int) -> list[tuple[int, bytes]]:
        """The kept events numbered after `after` (those before the oldest kept one are gone)."""
        if not self.events or after >= self.seq:
            return []
        skip = max(0, after - self.events[0][0] + 1)
        return [event for i, event in enumerate(self.events) if i >= skip]

    def finish(self) -> None:
        """The stream has ended: resumptions replay what is kept, then end too."""
        self.done = True
        self._store.idle(self)
        self.wake()

    def take(self) -> int:
        """A resumption takes the stream over: the request writing it until now stops."""
        self.owner += 1
        self.wake()
        return self.owner

    def wake(self) -> None:
        if self._waiter is not None:
            self._waiter.set()
            self._waiter = None

    async def wait(self) -> None:
        """Until the next event, the end, or another resumption."""
        if self._waiter is None:
            self._waiter = anyio.Event()
        await self._waiter.wait()


class ReplayStore:
    """The SSE streams of this process's sessions that a client may still resume, bounded in size and time."""

    def __init__(
        self,
        window: float,
        max_size: int,
        *,
        max_events: int = 1000,
        per_session: int = 32,
        total: int = 64 << 20,
    ) -> None:
        self.window = window
        self.max_size = max_size
        self.max_events = max_events
        self.per_session = per_session
        self.total = total
        self.size = 0  # bytes held by every stream kept
        self.mirror: Mirror | None = None  # with a backend: where POST streams' events are kept for other workers
        self.worker: Callable[[], str] | None = None  # with a backend: this worker's name, in its POST streams' ids
        self._sessions: dict[str, dict[str, EventStream]] = {}
        self._idle: OrderedDict[str, EventStream] = OrderedDict()  # streams no longer in use, oldest first

    def open(self, nonce: str, kind: str) -> EventStream:
        """A new stream of the session `nonce` (`kind`: `p` for a POST's answer, `g` for the GET stream)."""
        self.sweep()
        stream = EventStream(self, nonce, kind)
        streams = self._sessions.setdefault(nonce, {})
        streams[stream.id] = stream
        if len(streams) > self.per_session:
            oldest = next((s for s in streams.values() if s.idle_at is not None), None)
            if oldest is not None:
                self._drop(oldest)
        return stream

    def find(self, nonce: str, last_event_id: str) -> tuple[EventStream, int] | None:
        """The stream a `Last-Event-ID` names and the number after which to replay, if this session has it here."""
        self.sweep()
        stream_id, _, seq = last_event_id.rpartition(":")
        stream = self._sessions.get(nonce, {}).get(stream_id)
        if stream is None or not seq.isdigit() or int(seq) > stream.seq:
            return None
        return stream, int(seq)

    def idle(self, stream: EventStream) -> None:
        """The stream is no longer in use: kept `window` seconds from now."""
        if stream.id in self._sessions.get(stream.nonce, ()):
            stream.idle_at = anyio.current_time()
            self._idle[stream.id] = stream
            self._idle.move_to_end(stream.id)

    def use(self, stream: EventStream) -> None:
        """A resumption attached to the stream: kept while it lasts."""
        stream.idle_at = None
        self._idle.pop(stream.id, None)

    def drop_session(self, nonce: str) -> None:
        """The session ended: its streams go, and resumptions of them end."""
        for stream in list(self._sessions.get(nonce, {}).values()):
            self._drop(stream)
            stream.done = True
            stream.wake()

    def sweep(self) -> None:
        deadline = anyio.current_time() - self.window
        idle = self._idle
        while idle:
            stream = next(iter(idle.values()))
            if stream.idle_at is not None and stream.idle_at > deadline and self.size <= self.total:
                break
            self._drop(stream)

    def _drop(self, stream: EventStream) -> None:
        self._idle.pop(stream.id, None)
        streams = self._sessions.get(stream.nonce)
        if streams is not None and streams.pop(stream.id, None) is not None:
            stream.kept = False
            self.size -= stream.size
            if not streams:
                del self._sessions[stream.nonce]


@dataclass(frozen=True, slots=True)
class Resumption:
    """How an app's SSE streams are kept and resumed: the store of their events, the `retry` line, how long a
    response stays open before the client must resume it (`sse_close_after=`), and the idle GET stream's ping."""

    store: ReplayStore
    retry: bytes
    close_after: float | None
    ping: float
