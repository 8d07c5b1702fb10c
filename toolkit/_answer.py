"""What asking the client returns: one object that a sync tool gets filled in and an async tool awaits."""

from __future__ import annotations

from collections.abc import Coroutine, Generator
from typing import Any

from typing_extensions import Self

__all__ = ["Answer"]


class Answer:
    """Base of `ElicitResult` and `SampleResult`.

    In an async tool, `ctx.elicit(...)` returns an answer still pending: awaiting it asks the client and fills it
    in (and returns it). In a sync tool the answer comes back filled in. Reading a pending answer raises, so a
    forgotten `await` fails loudly (and Python warns that the coroutine inside was never awaited).
    """

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending: Coroutine[Any, Any, Self] | None = None

    @classmethod
    def _waiting(cls, pending: Coroutine[Any, Any, Self]) -> Self:
        answer = cls.__new__(cls)
        answer._pending = pending
        return answer

    def __await__(self) -> Generator[Any, None, Self]:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            done = yield from pending.__await__()
            self._fill(done)
        return self

    def _fill(self, done: Self) -> None:
        raise NotImplementedError

    def _ready(self) -> None:
        if self._pending is not None:
            raise RuntimeError(
                f"this {type(self).__name__} has not been answered yet: await it in an async tool "
                "(`result = await ctx.elicit(...)`)"
            )
