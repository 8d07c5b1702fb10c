"""Events for the hot path: `anyio.Event`'s class for the running event loop, looked up once by its user.

`anyio.Event()` asks which async library runs (sniffio, then anyio's backend table) every time it is called: more
than half of what an event costs. An in-memory `tools/call` makes four (the pipe's wake-up in each direction, the
client's pending request, and the hand-over of the call to its task), so the pipe, the request matcher and a
connection's `Runners` each ask once and make their events from the class they got (`new_event = event_class()`,
then `new_event()`): the running backend's own `Event` (asyncio's or trio's), the same object `anyio.Event()` gives.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio

__all__ = ["event_class"]


def event_class() -> Callable[[], anyio.Event]:
    """What makes an `anyio.Event` for the event loop running now, without looking the loop up again.

    Called outside an event loop it gives anyio's adapter, which finds the loop when first used: correct anywhere,
    only not faster.
    """
    return type(anyio.Event())
