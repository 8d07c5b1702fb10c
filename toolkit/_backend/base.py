"""The shared state of the processes that serve one server: the `Backend` protocol.

A toolkit server keeps almost nothing between requests (its 2025-11-25 session ids and 2026-07-28 `requestState`
are signed and self-contained). What is left is small and lives here, behind one object passed once
(`Server(backend=...)` or `server.http_app(backend=...)`), so that any process serves any request of any session
behind a plain round-robin load balancer:

- facts with an expiry (`put`, `get`): the sessions `DELETE` ended, a session's log level (`logging/setLevel`);
- token buckets (`take`): `rate_limit=` holds for the whole fleet;
- messages to one worker (`send`) or to all of them (`broadcast`), received by `listen`: the answer to a question a
  2025-11-25 tool asked reaches the worker whose tool waits, `notifications/cancelled` reaches the call's worker,
  `tools/list_changed` reaches every worker's listeners; `send` says at once when no such worker listens (it is
  gone), so nobody waits for an answer that cannot come;
- the SSE events of a 2025-11-25 stream (`append`, `since`), bounded per stream and expiring, so that
  `Last-Event-ID` resumes the stream on any worker.

Every operation is async and bounded: a backend that cannot answer within its timeout raises `BackendError`, and
the request that needed it fails with a clear error rather than hang (or serve a session that may have ended).
Keys are plain strings chosen by the caller (`ended/<nonce>`, `level/<nonce>`, `rate/<who>`, `events/<stream>`);
a backend adds its own prefix. Nothing it keeps lives longer than the `ttl` it was given.

`MemoryBackend` (`memory.py`) keeps it all in this process (any number of apps in it share one); `RedisBackend`
(`redis.py`) keeps it in Redis or Valkey, for several processes and machines.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import anyio
import anyio.abc

from toolkit._errors import ToolkitError

__all__ = ["UNAVAILABLE", "Backend", "BackendError", "Events", "Inbox", "serve_app", "worker_name"]


UNAVAILABLE = "Shared state unavailable"
"""The message of the JSON-RPC error a request gets when the shared state it needs did not answer (its data says
why: the `BackendError`, the task store's failure)."""


def worker_name() -> str:
    """A new worker's name: 12 lowercase hex digits, which start the ids of the questions it asks (`AskTag`), so no
    separator a question id uses may appear in it. Every backend names its workers with this."""
    return secrets.token_hex(6)


def serve_app(backend: object, name: str) -> None:
    """Tell `backend` the name of the server it is given to, when it wants to know (`RedisBackend.serve_app`: its
    default prefix is the app's), before it is used."""
    tell = getattr(backend, "serve_app", None)
    if tell is not None:
        tell(name)


Inbox = Callable[[bytes], Awaitable[None]]
"""What `Backend.listen` calls with each message sent to this worker (`send`) or to every worker (`broadcast`)."""


class BackendError(ToolkitError):
    """The shared backend could not answer in time (Redis down, slow, or refusing): the request that needed it fails
    with this, the others go on, and the next request tries again."""


@dataclass(frozen=True, slots=True)
class Events:
    """What `Backend.since` found of a stream: its frames after the asked number, in order, and whether its last
    event (a POST stream's answer) is among all it ever had."""

    frames: Sequence[tuple[int, bytes]]
    done: bool
    known: bool = True
    """False when the stream is unknown (never kept, or expired)."""


@runtime_checkable
class Backend(Protocol):
    """The state the processes serving one server share ([Backends](backend.md)).

    Implement it to keep that state elsewhere; `MemoryBackend` and `RedisBackend` are the two toolkit ships.
    Each method raises `BackendError` when the backend does not answer within its own timeout.
    """

    @property
    def worker(self) -> str:
        """This process's name among the workers, unique in the fleet, 8 to 32 characters of `0-9a-z`: the address
        of `send`, and the start of the ids of the questions this worker asks (so that an answer finds it)."""
        ...

    async def start(self) -> None:
        """Connect (called once by the app's lifespan before any request; again after `stop`)."""
        ...

    async def stop(self) -> None:
        """Disconnect and drop this process's resources (the shared state stays, and expires)."""
        ...

    # -- facts with an expiry ---------------------------------------------------------------------------

    async def put(self, key: str, value: str, ttl: float) -> None:
        """Keep `value` under `key` for `ttl` seconds (replacing what was there)."""
        ...

    async def get(self, *keys: str) -> list[str | None]:
        """The values under `keys` (None: none, or expired), in one round trip."""
        ...

    # -- rate limits ------------------------------------------------------------------------------------

    async def take(self, key: str, rate: float, capacity: float) -> float | None:
        """Take one token from the bucket `key` (refilled at `rate` a second, up to `capacity`, full at first):
        None when there was one, else the seconds until there would be. Atomic across the fleet."""
        ...

    # -- messages between workers -----------------------------------------------------------------------

    async def send(self, worker: str, message: bytes) -> bool:
        """Deliver `message` to `worker`'s `listen`; False at once when no such worker listens (it stopped or
        died), so that the sender can say so instead of waiting."""
        ...

    async def broadcast(self, message: bytes) -> None:
        """Deliver `message` to every worker's `listen`, this one's included."""
        ...

    async def listen(
        self, inbox: Inbox, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Call `inbox` with each message sent to this worker or broadcast, until cancelled; `task_status.started()`
        once it listens (then `send` to this worker delivers). Reconnects by itself when the backend comes back."""
        ...

    # -- SSE events kept for resumption -----------------------------------------------------------------

    async def append(self, stream: str, seq: int, frame: bytes, *, last: bool = False) -> None:
        """Keep event number `seq` of `stream`, its SSE `frame`, and whether it is the stream's `last`. Numbers only
        grow within a stream; 0 (an empty frame) says the stream opened, so that it is known before its first
        event. The backend keeps a bounded number of each stream's latest events (the last one always), and
        forgets the stream some time after its latest event."""
        ...

    async def since(self, stream: str, after: int, wait: float = 0.0) -> Events:
        """The kept events of `stream` numbered after `after`; when there are none yet (and the stream is not
        done), wait up to `wait` seconds for one (a backend may wait less: the caller asks again). `known` is
        False when nothing of the stream is kept."""
        ...
