"""The table's rows: which worker measure each runs, with which parameters, in which unit."""

from __future__ import annotations

from dataclasses import dataclass, field
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
    target: tuple[str, float, str] | None = None
    """Issue 7's target for toolkit: (reference side, least advantage over it as `_report.advantage` counts
    it, the issue's wording)."""


def rows(*, quick: bool) -> list[Row]:
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
            ("mcp", 5, ">= 5x mcp"),
        ),
        Row(
            "define-1500",
            "define + register one tool (1,500 tools)",
            "define",
            "µs",
            False,
            {"tools": 1500},
            False,
            ("mcp", 5, ">= 5x mcp"),
        ),
        Row(
            "list-memory",
            "`tools/list` with 500 tools, in memory",
            "list-memory",
            "ms",
            False,
            {"tools": 500, "lists": 5 if quick else 20},
            target=("mcp", 20, ">= 20x mcp"),
        ),
        Row(
            "call-memory-sync",
            "`tools/call` `add`, in memory, sync tool",
            "call-memory",
            "/s",
            True,
            {"tool": "add", "calls": calls},
            target=("mcp", 5, ">= 5x mcp"),
        ),
        Row(
            "call-memory-async",
            "`tools/call` `add`, in memory, async tool",
            "call-memory",
            "/s",
            True,
            {"tool": "add_async", "calls": calls},
            target=("mcp", 5, ">= 5x mcp"),
        ),
        Row(
            "call-stdio-raw",
            "`tools/call` over stdio, hand-written client",
            "call-stdio-raw",
            "/s",
            True,
            {"calls": calls},
            target=("floor", 0.5, ">= 50% of floor"),
        ),
        Row(
            "call-stdio-client",
            "`tools/call` over stdio, the framework's own client",
            "call-stdio-client",
            "/s",
            True,
            {"calls": client_calls},
            False,
            ("mcp", 5, ">= 5x mcp"),
        ),
        # "at most 15 % of mcp's time" is an advantage of 1 / 0.15, and so on.
        Row(
            "import",
            "`import` of the server API (fresh interpreter)",
            "import",
            "ms",
            False,
            target=("mcp", 1 / 0.15, "<= 15% of mcp's"),
        ),
        Row(
            "spawn-1",
            "spawn to `initialize` response, 1 tool",
            "spawn",
            "ms",
            False,
            {"tools": 0},
            target=("mcp", 5, "<= 20% of mcp's"),
        ),
        Row(
            "spawn-501",
            "spawn to `initialize` response, 501 tools",
            "spawn",
            "ms",
            False,
            {"tools": 500},
            target=("mcp", 5, "<= 20% of mcp's"),
        ),
        Row(
            "rss-501",
            "idle stdio server RSS, 501 tools",
            "rss",
            "MiB",
            False,
            {"tools": 500},
            target=("mcp", 2, "<= 50% of mcp's"),
        ),
    ]
