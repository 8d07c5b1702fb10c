"""What a stdio server says when its input ends with a sync tool stuck on its worker thread: a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
import wire

pytestmark = pytest.mark.anyio

STUCK = str(Path(__file__).parent / "servers" / "stuck_sync.py")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": wire.LATEST, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
MESSAGES = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
CALL = {"jsonrpc": "2.0", "id": "never", "method": "tools/call", "params": {"name": "stuck"}}


async def _exit_with(calls: list[dict[str, Any]], backend: str) -> tuple[int, list[Any], str]:
    """Send the handshake and `calls`, wait until each stuck call runs, close stdin: exit code, replies, stderr."""
    process = await anyio.open_process(
        [sys.executable, STUCK, backend], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    err = bytearray()
    out = bytearray()
    async with process:
        with anyio.fail_after(wire.TIMEOUT):
            await process.stdin.send(b"".join(json.dumps(m).encode() + b"\n" for m in [*MESSAGES, *calls]))
            while err.count(b"stuck: started") < len(calls):  # the tool says so on stderr once its thread runs
                err += await process.stderr.receive()
            await process.stdin.aclose()
            async for chunk in process.stdout:
                out += chunk
            async for chunk in process.stderr:
                err += chunk
            code = await process.wait()
    replies = [json.loads(line) for line in out.splitlines()]
    for reply in replies:
        wire.check_server_message(reply, wire.LATEST, "initialize")
    return code, replies, err.decode()


async def test_a_sync_tool_stuck_at_end_of_input_is_reported_on_stderr_and_the_server_still_exits(
    anyio_backend: str,
) -> None:
    code, replies, stderr = await _exit_with([CALL], anyio_backend)

    assert code == 0
    assert [reply["id"] for reply in replies] == [1]  # the stuck call is never answered
    warnings = [line for line in stderr.splitlines() if "still running" in line]
    assert warnings == [
        "exiting with 1 sync tool call still running on a worker thread (cancelled at end of input; a thread cannot "
        "be stopped, so it is abandoned)"
    ]


async def test_the_warning_counts_every_stuck_call(anyio_backend: str) -> None:
    calls = [{**CALL, "id": f"never-{n}"} for n in range(3)]
    code, _, stderr = await _exit_with(calls, anyio_backend)

    assert code == 0
    assert "exiting with 3 sync tool calls still running on a worker thread" in stderr


async def test_a_clean_end_of_input_logs_nothing(anyio_backend: str) -> None:
    code, replies, stderr = await _exit_with([], anyio_backend)

    assert (code, len(replies), stderr) == (0, 1, "")
