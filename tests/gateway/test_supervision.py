"""A mounted upstream that dies, cannot be reached, or hangs: the affected calls end with clear tool errors, the
gateway keeps serving, keeps listing what it last knew, and says in its log which upstream is down."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from asgi_servers import free_port
from served import Served
from servers import GATEWAY_UPSTREAM, HTTP_DEMO

from toolkit import Client, Server

pytestmark = pytest.mark.anyio

UPSTREAM_COMMAND = [sys.executable, str(GATEWAY_UPSTREAM)]


async def test_a_stdio_upstream_killed_mid_call_fails_its_calls_and_the_next_call_starts_it_again() -> None:
    server = Server("gateway")
    server.mount(UPSTREAM_COMMAND)
    async with Client(server) as client:
        before = (await client.call_tool("pid")).text
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                hung: list[str] = []

                async def hang() -> None:
                    result = await client.call_tool("hang")
                    assert result.is_error
                    hung.append(result.text)

                tg.start_soon(hang)
                died = await client.call_tool("die")
        after = (await client.call_tool("pid")).text
        names = [t.name for t in await client.list_tools()]
    assert died.is_error
    assert "closed its connection during the call" in died.text
    assert "connected again on the next call" in died.text
    assert hung
    assert "closed its connection during the call" in hung[0]
    assert after != before
    assert "pid" in names


async def test_tools_stay_listed_while_the_upstream_is_down_and_the_log_says_which(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The upstream works once, then its command fails: a restart cannot bring it back.
    flag = tmp_path / "started"
    script = tmp_path / "once.py"
    script.write_text(
        "import pathlib, runpy, sys\n"
        f"flag = pathlib.Path({str(flag)!r})\n"
        "if flag.exists():\n"
        "    sys.exit('not again')\n"
        "flag.write_text('1')\n"
        f"sys.argv = [{str(GATEWAY_UPSTREAM)!r}]\n"
        f"runpy.run_path({str(GATEWAY_UPSTREAM)!r}, run_name='__main__')\n"
    )
    server = Server("gateway")
    server.mount([sys.executable, str(script)], prefix="once", connect_timeout=20)
    with caplog.at_level(logging.ERROR, logger="toolkit.gateway"):
        async with Client(server) as client:
            listed = [t.name for t in await client.list_tools()]
            died = await client.call_tool("once_die")
            down = await client.call_tool("once_add", {"a": 1, "b": 2})
            still = [t.name for t in await client.list_tools()]
    assert died.is_error
    assert down.is_error
    assert down.text.startswith(f"the upstream server {sys.executable} {script} is down: cannot connect")
    assert still == listed
    assert f"upstream {sys.executable} {script} is down" in caplog.text


GARBAGE = "import sys\nfor line in sys.stdin:\n    print('this is not JSON', flush=True)\n"


# The connect timeout is the subject only for the upstream that answers garbage; the one that exits must be seen to
# exit before it, however long its process takes to start and stop on a loaded machine (under coverage, a Python
# process may take seconds): 60 s there, which it never waits.
@pytest.mark.parametrize(
    ("program", "connect_timeout", "why"),
    [
        ("import sys; sys.exit(3)", 60, "is down: cannot connect"),
        (GARBAGE, 3, "is down: no answer within 3 s"),
    ],
    ids=["exits", "garbage"],
)
async def test_an_upstream_that_exits_or_answers_garbage_is_logged_and_the_gateway_serves_its_own_tools(
    program: str, connect_timeout: float, why: str, caplog: pytest.LogCaptureFixture
) -> None:
    server = Server("gateway")

    @server.tool
    def local() -> str:
        return "here"

    server.mount([sys.executable, "-c", program], connect_timeout=connect_timeout)
    with caplog.at_level(logging.ERROR, logger="toolkit.gateway"):
        async with Client(server) as client:
            names = [t.name for t in await client.list_tools()]
            result = await client.call_tool("local")
    assert names == ["local"]
    assert result.text == "here"
    assert why in caplog.text


async def test_a_slow_upstream_call_ends_with_the_gateways_timeout_and_the_next_call_is_served() -> None:
    # A timeout of 2 s: the next call must beat it through the upstream's process (under coverage, on a loaded
    # machine, a round trip may take a good part of a second).
    server = Server("gateway", tool_timeout=2)
    server.mount(UPSTREAM_COMMAND)
    async with Client(server) as client:
        slow = await client.call_tool("hang")
        added = await client.call_tool("add", {"a": 2, "b": 2})
    assert slow.is_error
    assert added.text == "4"


async def test_an_http_upstream_that_is_not_up_yet_is_tried_again_with_backoff_and_its_tools_come_when_it_is(
    caplog: pytest.LogCaptureFixture,
) -> None:
    port = free_port()
    gateway = Server("gateway")
    gateway.mount(f"http://127.0.0.1:{port}/mcp", prefix="late", connect_timeout=10)
    changed = anyio.Event()
    with caplog.at_level(logging.ERROR, logger="toolkit.gateway"):
        async with Client(gateway, on_tools_changed=changed.set) as client:
            before = await client.list_tools()
            served = await anyio.to_thread.run_sync(lambda: Served(HTTP_DEMO, "--port", str(port)))
            try:
                with anyio.fail_after(60):  # the retries double from 0.25 s: within a few seconds of it serving
                    await changed.wait()
                names = [t.name for t in await client.list_tools()]
                added = await client.call_tool("late_add", {"a": 1, "b": 2})
            finally:
                await anyio.to_thread.run_sync(served.close)
    assert before == []
    assert f"upstream http://127.0.0.1:{port}/mcp is down: cannot connect" in caplog.text
    assert "late_add" in names
    assert added.text == "3"


async def test_a_stdio_upstream_that_failed_to_start_is_tried_again_and_its_tools_come_when_it_starts(
    tmp_path: Path,
) -> None:
    flag = tmp_path / "failed once"
    script = tmp_path / "second_time.py"
    script.write_text(
        "import pathlib, runpy, sys\n"
        f"flag = pathlib.Path({str(flag)!r})\n"
        "if not flag.exists():\n"
        "    flag.write_text('1')\n"
        "    sys.exit('not the first time')\n"
        f"sys.argv = [{str(GATEWAY_UPSTREAM)!r}]\n"
        f"runpy.run_path({str(GATEWAY_UPSTREAM)!r}, run_name='__main__')\n"
    )
    gateway = Server("gateway")
    gateway.mount([sys.executable, str(script)], prefix="second", tools=["add"], connect_timeout=20)
    changed = anyio.Event()
    async with Client(gateway, on_tools_changed=changed.set) as client:
        before = await client.list_tools()
        with anyio.fail_after(30):
            await changed.wait()
        added = await client.call_tool("second_add", {"a": 2, "b": 2})
    assert before == []
    assert added.text == "4"
