"""`Tool.only_notifies`: read from a tool's own source, and False whenever the source cannot tell."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from toolkit import Context, tool


async def progress_and_logs(n: int, ctx: Context) -> int:
    """Report, log and read."""
    await ctx.report_progress(1, total=n)
    await ctx.info(f"{ctx.client_info} {ctx.protocol_version} {ctx.request_id}")
    if ctx.can_elicit() and not ctx.cancelled:
        await ctx.debug([ctx.request_id for _ in range(n)])  # a comprehension reads it too
    return n


async def asks(ctx: Context) -> str:
    """Ask."""
    answer = await ctx.confirm("Sure?")
    return str(answer.action)


async def hands_it_on(ctx: Context) -> None:
    """Pass it to another function."""
    await print_it(ctx)


async def print_it(value: Any) -> None:
    print(value)


async def keeps_it(ctx: Context) -> None:
    """Bind it to another name."""
    other = ctx
    await other.info("x")


async def asks_in_a_closure(ctx: Context) -> None:
    """Ask from a nested function."""

    async def inner() -> None:
        await ctx.sample("hi", max_tokens=10)

    await inner()


async def reads_locals(ctx: Context) -> None:
    """Reach it through locals()."""
    await locals()["ctx"].info("x")


async def closes_its_stream(ctx: Context) -> None:
    """Close the response early."""
    await ctx.close_sse_stream()


def wrapped(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        return await fn(*args, **kwargs)

    return wrapper


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        (progress_and_logs, True),
        (asks, False),
        (hands_it_on, False),
        (keeps_it, False),
        (asks_in_a_closure, False),
        (reads_locals, False),
        (closes_its_stream, False),
        (wrapped(progress_and_logs), False),  # a wrapper's own source says nothing of what it wraps
    ],
)
def test_a_tool_only_notifies_when_its_source_shows_nothing_else(fn: Callable[..., Any], expected: bool) -> None:
    assert tool(fn).only_notifies is expected


def test_a_tool_without_a_context_or_without_source_does_not_count_as_only_notifying() -> None:
    namespace: dict[str, Any] = {"Context": Context}
    exec("async def made(ctx: Context) -> int:\n    await ctx.info('x')\n    return 1", namespace)
    assert not tool(namespace["made"]).only_notifies  # no source to read
    assert not tool(print_it).only_notifies  # no Context: it cannot notify at all
    assert not tool(confirm="Sure?")(progress_and_logs).only_notifies  # confirming asks


async def only_tells(n: int, ctx: Context) -> int:
    """Report and log, and read what the call knows."""
    await ctx.report_progress(1, total=n)
    await ctx.info(f"{ctx.client_info} {ctx.protocol_version} {ctx.request_id} {ctx.cancelled}")
    return n


async def reads_capabilities(ctx: Context) -> bool:
    """Read what the client can do."""
    return bool(ctx.client_capabilities)


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        (only_tells, False),  # no asking at all: started and finished for nothing otherwise
        (progress_and_logs, True),  # `can_elicit()` reads the client's capabilities, which the asking holds
        (reads_capabilities, True),
        (asks, True),
        (hands_it_on, True),
        (reads_locals, True),
        (wrapped(only_tells), True),
        (print_it, False),  # no Context, no confirm=: nothing to ask with
    ],
)
def test_a_call_gets_its_asking_unless_the_tool_only_tells(fn: Callable[..., Any], expected: bool) -> None:
    made = tool(fn)
    assert made.asks is expected
    assert made.only_notifies is (fn in (only_tells, progress_and_logs, reads_capabilities))
    assert made.may_ask is (fn is not print_it)  # decided at decoration: what `asks` narrows on first use


def test_a_confirming_tool_gets_its_asking_whatever_its_source() -> None:
    assert tool(confirm="Sure?")(only_tells).asks
    assert tool(confirm="Sure?")(print_it).asks


def test_the_compiled_code_counts_when_the_source_on_disk_changed_since_import(tmp_path: Path) -> None:
    import importlib.util
    import linecache

    path = tmp_path / "edited_tools.py"
    path.write_text(
        "from toolkit import Context\n\nasync def ask(ctx: Context) -> str:\n"
        "    return str(await ctx.confirm('Sure?'))\n"
    )
    spec = importlib.util.spec_from_file_location("edited_tools", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # Edited after import (a deploy over a running process): the file now only tells, the running code still asks.
    path.write_text("from toolkit import Context\n\nasync def ask(ctx: Context) -> str:\n    return ctx.request_id\n")
    linecache.checkcache(str(path))
    made = tool(module.ask)
    assert made.asks
    assert not made.only_notifies
