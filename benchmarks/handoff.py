"""`python -m benchmarks.handoff`: what handing a sync tool to a thread and back costs, design by design.

Issue 23 asks that a sync tool cost at most one thread hand-off more than the same tool written `async`, and that the
hand-off be as cheap as the machine allows. This measures both, in one process, rounds interleaved:

- the bare primitive, a loop that hands a no-op to a worker thread and awaits its result, for each design:
  `toolkit` (`toolkit._call.threads.run_sync`: a waiting worker's `SimpleQueue.put`, and
  `call_soon_threadsafe` back), `minimal` (the same design stripped to its two calls: one dedicated thread, no pool,
  no counting, no context copy: its floor), `executor` (`loop.run_in_executor` on a `ThreadPoolExecutor`),
  `anyio` (`anyio.to_thread.run_sync`, what toolkit uses on trio), `inline` (no thread at all: the loop's own cost
  of an await, for reference; never what a server may do, as it blocks the event loop);
- a sequential in-memory `tools/call` through toolkit's `Client`, of a sync `add` and of the same `add` made
  `async`, so that their difference can be set against the hand-off.

Each figure is µs per operation (wall clock over N operations), the median of the rounds with their range.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import queue
import statistics
import threading
import time
from collections.abc import Awaitable, Callable

import anyio.to_thread

from toolkit import Client
from toolkit._call.threads import run_sync

from .asgi import _server as asgi_server

__all__ = ["measure", "report"]

Handoff = Callable[[Callable[[], None]], Awaitable[None]]


def _noop() -> None:
    return None


class _Minimal:
    """One dedicated thread, a `SimpleQueue` to it and `call_soon_threadsafe` back: the design's two calls alone."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[tuple[asyncio.AbstractEventLoop, asyncio.Future[None], Callable[[], None]]]
        self.jobs = queue.SimpleQueue()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while True:
            loop, future, func = self.jobs.get()
            func()
            loop.call_soon_threadsafe(future.set_result, None)

    async def __call__(self, func: Callable[[], None]) -> None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self.jobs.put((loop, future, func))
        await future


def _designs() -> dict[str, Handoff]:
    executor = concurrent.futures.ThreadPoolExecutor(max_workers=1)

    async def via_executor(func: Callable[[], None]) -> None:
        await asyncio.get_running_loop().run_in_executor(executor, func)

    async def via_anyio(func: Callable[[], None]) -> None:
        await anyio.to_thread.run_sync(func)

    async def inline(func: Callable[[], None]) -> None:
        func()
        await asyncio.sleep(0)  # one trip through the loop, as an await of a finished call makes

    return {"toolkit": run_sync, "minimal": _Minimal(), "executor": via_executor, "anyio": via_anyio, "inline": inline}


async def _per_handoff(design: Handoff, count: int) -> tuple[float, float]:
    for _ in range(50):
        await design(_noop)
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(count):
        await design(_noop)
    return (time.perf_counter() - start) / count * 1e6, (time.process_time() - cpu) / count * 1e6


async def _per_call(client: Client, name: str, count: int) -> tuple[float, float]:
    for i in range(50):
        await client.call_tool(name, {"a": i, "b": 1})
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(count):
        await client.call_tool(name, {"a": i, "b": 1})
    return (time.perf_counter() - start) / count * 1e6, (time.process_time() - cpu) / count * 1e6


Samples = dict[str, list[tuple[float, float]]]


async def _round(designs: dict[str, Handoff], count: int, samples: Samples) -> None:
    for name, design in designs.items():
        samples[name].append(await _per_handoff(design, count))
    async with Client(asgi_server()) as client:  # its add and add_async
        for name in ("add", "add_async"):
            samples[f"call {name}"].append(await _per_call(client, name, count // 5))


def measure(rounds: int, count: int) -> Samples:
    """Every row's µs per operation (wall clock, process CPU), one sample per round (on asyncio, a server's default)."""
    designs = _designs()
    samples: Samples = {name: [] for name in designs}
    samples |= {"call add": [], "call add_async": []}
    for _ in range(rounds):
        asyncio.run(_round(designs, count, samples))
    return samples


def _cell(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"


def report(samples: Samples) -> str:
    """The table, then the sync tool's extra cost set against toolkit's hand-off, by the clock and in CPU."""
    lines = ["| row | wall µs per operation, median (range) | CPU µs per operation |", "| --- | --- | --- |"]
    lines += [f"| {name} | {_cell([w for w, _ in v])} | {_cell([c for _, c in v])} |" for name, v in samples.items()]
    lines.append("")
    for index, what in ((0, "wall"), (1, "CPU")):
        extra = [s[index] - a[index] for s, a in zip(samples["call add"], samples["call add_async"], strict=True)]
        handoff = [h[index] for h in samples["toolkit"]]
        within = statistics.median(extra) <= statistics.median(handoff)
        lines.append(
            f"{what}: a sync tool's extra cost per call (sync - async, per round) {_cell(extra)} µs, toolkit's "
            f"hand-off alone {_cell(handoff)} µs: within one hand-off: {'yes' if within else 'no'}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.handoff", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--count", type=int, default=5000, help="hand-offs per design and round (calls: a fifth)")
    parser.add_argument("--quick", action="store_true", help="2 rounds of 500: a smoke run")
    args = parser.parse_args(argv)
    rounds, count = (2, 500) if args.quick else (args.rounds, args.count)
    print(report(measure(rounds, count)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
