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


def rows(*, quick: bool) -> list[Row]:
    """Every measure of issue 7, sized for a full run or for `--quick` (fewer calls and listings)."""
    calls = 300 if quick else 3000
    client_calls = 200 if quick else 1000
    return [
        Row("define-500", "define + register one tool (500 tools)", "define", "µs", False, {"tools": 500}, False),
        Row("define-1500", "define + register one tool (1,500 tools)", "define", "µs", False, {"tools": 1500}, False),
        Row(
            "list-memory",
            "`tools/list` with 500 tools, in memory",
            "list-memory",
            "ms",
            False,
            {"tools": 500, "lists": 5 if quick else 20},
        ),
        Row(
            "call-memory-sync",
            "`tools/call` `add`, in memory, sync tool",
            "call-memory",
            "/s",
            True,
            {"tool": "add", "calls": calls},
        ),
        Row(
            "call-memory-async",
            "`tools/call` `add`, in memory, async tool",
            "call-memory",
            "/s",
            True,
            {"tool": "add_async", "calls": calls},
        ),
        Row(
            "call-stdio-raw",
            "`tools/call` over stdio, hand-written client",
            "call-stdio-raw",
            "/s",
            True,
            {"calls": calls},
        ),
        Row(
            "call-stdio-client",
            "`tools/call` over stdio, the framework's own client",
            "call-stdio-client",
            "/s",
            True,
            {"calls": client_calls},
            False,
        ),
        Row("import", "`import` of the server API (fresh interpreter)", "import", "ms", False),
        Row("spawn-1", "spawn to `initialize` response, 1 tool", "spawn", "ms", False, {"tools": 0}),
        Row("spawn-501", "spawn to `initialize` response, 501 tools", "spawn", "ms", False, {"tools": 500}),
        Row("rss-501", "idle stdio server RSS, 501 tools", "rss", "MiB", False, {"tools": 500}),
    ]
