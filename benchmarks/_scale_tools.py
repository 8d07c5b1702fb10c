"""The tools of the scale rows: an async tool that waits, and tools that take or return about 1 MB.

Kept apart from `_fixtures` so that the stdio servers of the start-up rows import none of this.
"""

from __future__ import annotations

import anyio
from typing_extensions import TypedDict  # pydantic wants this one, not typing's, before Python 3.12

WAIT_SECONDS = 0.001
RECORDS = 12_000
"""About 1 MB of compact JSON: each record is about 82 bytes."""
TEXT = ("The quick brown fox jumps over the lazy dog. " * 25_000)[:1_000_000]


class Record(TypedDict):
    """One row of a listing."""

    id: int
    name: str
    tags: list[str]
    score: float


class Listing(TypedDict):
    """A page of records: an object, so that every framework returns it as `structuredContent` unwrapped."""

    records: list[Record]


_RECORDS: list[Record] = [
    {"id": i, "name": f"record-{i:06d}", "tags": ["alpha", "beta"], "score": i / 7} for i in range(RECORDS)
]


async def wait_a_little(n: int) -> int:
    """Wait 1 ms, as a tool waiting on a database or a web service would, then return `n`.

    Args:
        n: Any integer.

    Returns:
        `n`.
    """
    await anyio.sleep(WAIT_SECONDS)
    return n


def take_text(text: str) -> int:
    """Count the characters of a text.

    Args:
        text: The text.

    Returns:
        Its length.
    """
    return len(text)


def take_records(records: list[Record]) -> int:
    """Count records.

    Args:
        records: The records.

    Returns:
        How many there are.
    """
    return len(records)


def make_records(count: int) -> Listing:
    """Return the first `count` records of a ready-made listing (building them is not what is measured).

    Args:
        count: How many records.

    Returns:
        The records.
    """
    return {"records": _RECORDS[:count]}


def records_argument() -> list[dict[str, object]]:
    """The 1 MB argument of `take_records`, as plain JSON data."""
    return [dict(r) for r in _RECORDS]


TOOLS = [wait_a_little, take_text, take_records, make_records]
"""What `serve.py benchmarks._scale_tools` serves over stdio."""
