"""The table's rows: which worker measure each runs, with which parameters, in which unit.

Issue 7's rows come first; the scale rows of issue 16 (concurrency, size, many tools, the long run)
follow. Several rows may read one measurement: rows with the same measure and parameters share a
worker run per side and round, each showing one `metric` of what it returns.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class Row:
    key: str
    label: str
    measure: str
    unit: str
    higher_is_better: bool
    params: dict[str, Any] = field(default_factory=dict)
    floor: bool = True
    """Whether the floor runs this measure too (it has no `@tool` and no client of its own)."""
    targets: tuple[tuple[str, float, str], ...] = ()
    """toolkit's targets (issue 7's, raised by issue 16): each (reference side, least advantage over it as
    `_report.advantage` counts it, the issue's wording); the row meets them when it meets every one."""
    metric: str | None = None
    """Which of a multi-valued measurement's metrics this row shows (`None`: the measure returns one value)."""
    section: str = "issue 7"
    """The table the row is printed in."""
    max_rounds: int | None = None
    """At most this many rounds, for a measure too long to repeat five times."""
    side_rounds: dict[str, int] = field(default_factory=dict)
    """Fewer rounds still for some sides, where one run of the measure takes minutes."""
    ratios: bool = True
    """Whether ratios between sides mean anything (not for a slope that may be zero or negative)."""
    quick: bool = True
    """Whether `--quick` runs the row."""

    def measurement(self) -> tuple[str, str]:
        """What identifies one worker run: rows with the same measure and parameters share it."""
        return self.measure, json.dumps(self.params, sort_keys=True)


def rows(*, quick: bool) -> list[Row]:
    """Every row, sized for a full run or for `--quick` (fewer calls and listings; no long run)."""
    return [r for r in [*issue7_rows(quick=quick), *scale_rows(quick=quick)] if r.quick or not quick]


def issue7_rows(*, quick: bool) -> list[Row]:
    """Every measure of issue 7, sized for a full run or for `--quick` (fewer calls and listings)."""
    calls = 300 if quick else 3000
    client_calls = 200 if quick else 1000
    return [
        Row(
            "define-500",
            "define + register one tool (500 tools)",
            "define",
            "µs",
            False,
            {"tools": 500},
            False,
            targets=(("mcp", 5, ">= 5x mcp"),),
        ),
        Row(
            "define-1500",
            "define + register one tool (1,500 tools)",
            "define",
            "µs",
            False,
            {"tools": 1500},
            False,
            targets=(("mcp", 5, ">= 5x mcp"),),
        ),
        Row(
            "list-memory",
            "`tools/list` with 500 tools, in memory",
            "list-memory",
            "ms",
            False,
            {"tools": 500, "lists": 5 if quick else 20},
            targets=(("mcp", 20, ">= 20x mcp"),),
        ),
        Row(
            "call-memory-sync",
            "`tools/call` `add`, in memory, sync tool",
            "call-memory",
            "/s",
            True,
            {"tool": "add", "calls": calls},
            targets=(("mcp", 3, ">= 3x mcp"),),
        ),
        Row(
            "call-memory-async",
            "`tools/call` `add`, in memory, async tool",
            "call-memory",
            "/s",
            True,
            {"tool": "add_async", "calls": calls},
            targets=(("mcp", 5, ">= 5x mcp"), ("floor", 0.7, ">= 70% of floor")),
        ),
        Row(
            "call-stdio-raw",
            "`tools/call` over stdio, hand-written client",
            "call-stdio-raw",
            "/s",
            True,
            {"calls": calls},
            targets=(("floor", 0.6, ">= 60% of floor"),),
        ),
        Row(
            "call-stdio-client",
            "`tools/call` over stdio, the framework's own client",
            "call-stdio-client",
            "/s",
            True,
            {"calls": client_calls},
            False,
            targets=(("mcp", 5, ">= 5x mcp"),),
        ),
        Row(
            "call-stdio-raw-async",
            "`tools/call` over stdio, hand-written client, async tool",
            "call-stdio-raw",
            "/s",
            True,
            {"calls": calls, "tool": "add_async"},
            targets=(("floor", 0.6, ">= 60% of floor"),),
        ),
        Row(
            "call-stdio-client-async",
            "`tools/call` over stdio, the framework's own client, async tool",
            "call-stdio-client",
            "/s",
            True,
            {"calls": client_calls, "tool": "add_async"},
            False,
            targets=(("mcp", 5, ">= 5x mcp"),),
        ),
        # "at most 10 % of mcp's time" is an advantage of 1 / 0.10, and so on.
        Row(
            "import",
            "`import` of the server API (fresh interpreter)",
            "import",
            "ms",
            False,
            targets=(("mcp", 1 / 0.10, "<= 10% of mcp's"),),
        ),
        Row(
            "spawn-1",
            "spawn to `initialize` response, 1 tool",
            "spawn",
            "ms",
            False,
            {"tools": 0},
            targets=(("mcp", 5, "<= 20% of mcp's"),),
        ),
        Row(
            "spawn-501",
            "spawn to `initialize` response, 501 tools",
            "spawn",
            "ms",
            False,
            {"tools": 500},
            targets=(("mcp", 5, "<= 20% of mcp's"),),
        ),
        Row(
            "rss-501",
            "idle stdio server RSS, 501 tools",
            "rss",
            "MiB",
            False,
            {"tools": 500},
            targets=(("mcp", 2, "<= 50% of mcp's"),),
        ),
    ]


IN_FLIGHT = (1, 10, 100, 1000)
CONNECTIONS = 100
MANY_TOOLS = 10_000
PAGE_SIZE = 100
LONG_CALLS = 1_000_000
LONG_SAMPLE_EVERY = 10_000
LONG_SECONDS = 150
"""The long run stops after this many seconds if it has not made its million calls (the slow peers)."""


def scale_rows(*, quick: bool) -> list[Row]:
    """Issue 16's rows: how each side's cost grows with calls in flight, connections, sizes and tools."""
    return [*_concurrency_rows(quick=quick), *_size_rows(quick=quick), *_many_tools_rows(quick=quick), *_long_rows()]


def _concurrency_rows(*, quick: bool) -> list[Row]:
    rows = []
    for n in IN_FLIGHT:
        params = {"in_flight": n, "calls": max(200, 2 * n) if quick else max(1000, 3 * n)}
        what = f"{n:,} call{'s' if n > 1 else ''} in flight"
        rows += [
            Row(f"conc-{n}-rate", f"{what}: throughput", "concurrency", "/s", True, params, metric="rate"),
            Row(f"conc-{n}-p50", f"{what}: p50 latency", "concurrency", "ms", False, params, metric="p50"),
            Row(f"conc-{n}-p99", f"{what}: p99 latency", "concurrency", "ms", False, params, metric="p99"),
        ]
    params = {"connections": CONNECTIONS, "calls": 300 if quick else 1000}
    what = f"{CONNECTIONS} connections, 1 call in flight on each"
    rows += [
        Row("conns-rate", f"{what}: throughput", "connections", "/s", True, params, metric="rate"),
        Row("conns-p50", f"{what}: p50 latency", "connections", "ms", False, params, metric="p50"),
        Row("conns-p99", f"{what}: p99 latency", "connections", "ms", False, params, metric="p99"),
        Row("conns-open", f"opening {CONNECTIONS} connections", "connections", "ms", False, params, metric="open"),
        Row("conns-rss", "memory per open connection", "connections", "KiB", False, params, metric="rss"),
    ]
    return [replace(r, section="concurrency") for r in rows]


def _size_rows(*, quick: bool) -> list[Row]:
    # Each call moves a megabyte and takes 10 ms to 2 s: a few calls give a steady figure.
    params = {"calls": 1, "warmup": 1} if quick else {"calls": 5, "warmup": 1}
    kinds = (
        ("text-arg", "take_text", "a 1 MB `str` argument"),
        ("records-arg", "take_records", "a 1 MB argument of 12,000 records"),
        ("records-result", "make_records", "a 1 MB structured result of 12,000 records"),
    )
    rows = []
    for prefix, measure, where in (
        ("size", "size-call", "in memory"),
        ("size-stdio", "size-stdio", "stdio, raw client"),
    ):
        for key, tool, what in kinds:
            rows.append(Row(f"{prefix}-{key}", f"{where}, {what}", measure, "ms", False, {**params, "tool": tool}))
    return [replace(r, section="size") for r in rows]


def _many_tools_rows(*, quick: bool) -> list[Row]:
    # --quick is a smoke run: 2,000 tools exercise the same code in a fifth of the time.
    tools = 2_000 if quick else MANY_TOOLS
    whole = {"tools": tools, "page_size": None, "lists": 1 if quick else 3}
    paged = {**whole, "page_size": PAGE_SIZE}
    n = f"{tools:,} tools"
    rows = [
        Row("tools-10k-spawn", f"spawn to `initialize` response, {n}", "many-tools", "ms", False, whole),
        Row("tools-10k-first", f"first `tools/list`, {n}, one page", "many-tools", "ms", False, whole),
        Row("tools-10k-list", f"`tools/list`, {n}, one page", "many-tools", "ms", False, whole),
        Row("tools-10k-rss", f"stdio server RSS after listing, {n}", "many-tools", "MiB", False, whole),
        Row(
            "tools-10k-paged", f"`tools/list`, {n} in pages of {PAGE_SIZE}: all pages", "many-tools", "ms", False, paged
        ),
        Row("tools-10k-page", f"`tools/list`, {n}: one page of {PAGE_SIZE}", "many-tools", "ms", False, paged),
    ]
    metrics = ("spawn", "first", "list", "rss", "list", "page")
    # Three rounds: mcp takes 15-25 s to register 10,000 tools on a busy machine, each time; fastmcp, whose
    # cost per tool grows with the tools already registered (8 ms for the first thousand, 18 ms at 4,000),
    # takes a minute or more, so it runs once.
    return [
        replace(
            r,
            section="many tools",
            metric=m,
            floor=r.params["page_size"] is None,
            max_rounds=3,
            side_rounds={"fastmcp": 1},
        )
        for r, m in zip(rows, metrics, strict=True)
    ]


def _long_rows() -> list[Row]:
    params = {"calls": LONG_CALLS, "every": LONG_SAMPLE_EVERY, "seconds": LONG_SECONDS}
    what = f"{LONG_CALLS:,} calls on one connection"
    rows = [
        Row("long-rate", f"{what}: throughput", "long-run", "/s", True, params, metric="rate"),
        Row(
            "long-done", f"{what}: calls made within {LONG_SECONDS} s", "long-run", "calls", True, params, metric="done"
        ),
        Row("long-rss-start", f"{what}: RSS after the first sample", "long-run", "MiB", False, params, metric="start"),
        Row("long-rss-mid", f"{what}: RSS halfway", "long-run", "MiB", False, params, metric="middle"),
        Row("long-rss-end", f"{what}: RSS at the end", "long-run", "MiB", False, params, metric="end"),
        Row(
            "long-slope",
            f"{what}: RSS growth (least squares)",
            "long-run",
            "KiB/100k calls",
            False,
            params,
            metric="slope",
            ratios=False,
        ),
    ]
    return [replace(r, section="long run", max_rounds=1, quick=False) for r in rows]
