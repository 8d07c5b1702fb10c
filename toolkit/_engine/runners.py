"""The tasks a connection's calls run in (`Runners`): each call in a task of its own, kept for the next call.

A call (`tools/call`, `subscriptions/listen`, `tasks/result`) runs apart from the connection's reader, so that the
reader goes on reading (the call's cancellation, the client's answers to its questions, other calls) while it runs.
Starting an anyio task for each call costs about as much as the rest of the server's side of an in-memory call (its
handle, cancel scope and event, anyio's bookkeeping, then the task's first step: about 15 µs of CPU, against 3-4 µs
to hand a call to a task that waits for one). So a task whose call has ended waits for the next one, and a call is
handed to such a task when one waits, to a new task otherwise.

A call sees what a task started for it would: the context variables of the connection's reader, as they are when the
call is handed over. A task is kept only while its calls leave its context as they found it (a call that sets a
context variable and does not reset it, `structlog.contextvars.bind_contextvars` say, ends its task: the next call
gets a new one), and a waiting task is handed a call only while the reader's context is the one the task started
from. Comparing two contexts that share their variables is one pointer comparison.

At most `KEEP` tasks wait: the calls of a burst beyond it end their tasks, as a task per call did.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolkit._events import event_class

if TYPE_CHECKING:
    import anyio
    import anyio.abc

__all__ = ["KEEP", "Runners"]

KEEP = 16
"""How many tasks may wait for a call at once (an idle one holds a task and its frame: about 2 KB)."""

Call = Callable[..., Awaitable[None]]


@dataclass(slots=True, eq=False)
class _Waiting:
    """A task waiting for a call: `wake` is set once `job` holds it (None: the task ends). `home` is the task's
    context, which every call it ran left as it found it."""

    wake: anyio.Event
    home: contextvars.Context
    job: tuple[Call, tuple[Any, ...]] | None = None


class Runners:
    """Runs calls in tasks of `tg`, each call in a task of its own, reusing the tasks whose calls have ended.

    Made inside the event loop that uses it (its events are that loop's).
    """

    __slots__ = ("_idle", "_new_event", "_tg")

    def __init__(self, tg: anyio.abc.TaskGroup) -> None:
        self._tg = tg
        self._idle: list[_Waiting] = []
        self._new_event = event_class()

    def start(self, call: Call, *args: Any) -> None:
        """Run `call(*args)` in a task of its own: one that waits for a call, else a new one. Never waits."""
        idle = self._idle
        if idle and idle[-1].home != contextvars.copy_context():  # the reader's context changed: start afresh
            for waiting in idle:  # each ends (no job)
                waiting.wake.set()
            idle.clear()
        if idle:
            waiting = idle.pop()
            waiting.job = (call, args)
            waiting.wake.set()
        else:
            self._tg.start_soon(self._run, call, args)

    async def _run(self, call: Call, args: tuple[Any, ...]) -> None:
        home = contextvars.copy_context()  # what each call it runs starts from
        idle = self._idle
        while True:
            await call(*args)
            if len(idle) >= KEEP or contextvars.copy_context() != home:  # a call left its context changed
                return
            waiting = _Waiting(self._new_event(), home)
            idle.append(waiting)
            try:
                await waiting.wake.wait()
            finally:
                if waiting in idle:  # cancelled while it waited (the connection is ending)
                    idle.remove(waiting)
            if waiting.job is None:
                return
            call, args = waiting.job
