"""What a stdio server says when its input ends with a sync tool stuck on its worker thread: a real subprocess."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
import servers
import wire

from toolkit import CallToolResult, Client, ConnectionClosedError

pytestmark = pytest.mark.anyio

STUCK = str(servers.STUCK_SYNC)
LIFESPAN = str(servers.LIFESPAN_STDIO)
INITIALIZE = wire.initialize_request()
MESSAGES = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
CALL = {"jsonrpc": "2.0", "id": "never", "method": "tools/call", "params": {"name": "stuck"}}
SHUTTING_DOWN = {"code": -32000, "message": "Server shutting down"}


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
    # Past the grace, the stuck call is answered so (its client must not wait), though its thread goes on.
    assert replies[1:] == [{"jsonrpc": "2.0", "id": "never", "error": SHUTTING_DOWN}]
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


# -- a server with a lifespan: what the client waits for, SIGTERM, stdin that is not a pipe ---------------------------

CLEAN_EXIT = [
    "lifespan: started",
    "lifespan: cleaned up",
    "run: returned; SIGTERM handler restored: True",
    "atexit: ran",
]


def lifespan_command(backend: str, *args: str) -> list[str]:
    return [sys.executable, LIFESPAN, "--backend", backend, *args]


async def test_leaving_client_stdio_waits_for_a_call_within_the_servers_grace_and_copies_its_last_stderr(
    anyio_backend: str, capsys: pytest.CaptureFixture[str]
) -> None:
    results: list[CallToolResult] = []
    with anyio.fail_after(wire.TIMEOUT):
        async with anyio.create_task_group() as tg, Client.stdio(lifespan_command(anyio_backend)) as client:
            await client.list_tools()  # the output schemas, known before the connection closes
            started = anyio.Event()

            async def call() -> None:
                # Longer than the two seconds the client used to wait before SIGTERM; shorter than the 5 s grace.
                progress = lambda *_: started.set()  # noqa: E731
                results.append(await client.call_tool("nap", {"seconds": 2.5}, progress=progress))

            tg.start_soon(call)
            await started.wait()

    assert [result.text for result in results] == ["rested"]
    assert capsys.readouterr().err.splitlines() == CLEAN_EXIT


async def test_sigterm_ends_server_run_as_ctrl_c_does_and_the_lifespan_cleans_up(
    anyio_backend: str, capsys: pytest.CaptureFixture[str]
) -> None:
    command = lifespan_command(anyio_backend, "--shutdown-grace", "60")
    failures: list[ConnectionClosedError] = []
    # The server would give its call a minute: the client terminates it after 0.2 s.
    with anyio.fail_after(wire.TIMEOUT):
        async with anyio.create_task_group() as tg, Client.stdio(command, shutdown_timeout=0.2) as client:
            started = anyio.Event()

            async def call() -> None:
                with pytest.raises(ConnectionClosedError) as caught:
                    await client.call_tool("nap", {"seconds": 600}, progress=lambda *_: started.set())
                failures.append(caught.value)

            tg.start_soon(call)
            await started.wait()

    assert [failure.returncode for failure in failures] == [0]
    assert capsys.readouterr().err.splitlines() == CLEAN_EXIT


HELLO = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hello", "arguments": {"name": "file"}}}


@pytest.mark.parametrize("stdin", ["/dev/null", "a regular file"])
async def test_stdin_that_cannot_be_polled_ends_the_server_cleanly_with_no_warning(
    stdin: str, anyio_backend: str, tmp_path: Path
) -> None:
    if stdin == "/dev/null":
        path, expected = Path(os.devnull), []
    else:
        path, expected = tmp_path / "input.jsonl", [1, 2]
        path.write_bytes(b"".join(json.dumps(m).encode() + b"\n" for m in [*MESSAGES, HELLO]))
    with path.open("rb") as source, anyio.fail_after(wire.TIMEOUT):
        done = await anyio.run_process(lifespan_command(anyio_backend), stdin=source, check=False)

    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [reply["id"] for reply in replies] == expected
    if expected:
        assert replies[1]["result"]["content"] == [{"type": "text", "text": "hello file"}]
    assert (done.returncode, done.stderr.decode().splitlines()) == (0, CLEAN_EXIT)


@pytest.mark.skipif(sys.platform == "win32", reason="no pseudo-terminals")
async def test_ctrl_c_ends_a_server_reading_a_terminal(anyio_backend: str) -> None:
    import pty

    # A terminal cannot be polled: stdin is read on a thread, which must not keep the process alive after Ctrl-C.
    terminal, their_end = pty.openpty()
    try:
        process = await anyio.open_process(
            lifespan_command(anyio_backend), stdin=their_end, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    finally:
        os.close(their_end)
    assert process.stdout is not None
    assert process.stderr is not None
    err = bytearray()
    try:
        async with process:
            with anyio.fail_after(wire.TIMEOUT):
                # Serving (not starting, which Ctrl-C would interrupt): it answers a request typed on the terminal.
                os.write(terminal, json.dumps(INITIALIZE).encode() + b"\n")
                await process.stdout.receive()
                process.send_signal(signal.SIGINT)
                async for chunk in process.stderr:
                    err += chunk
                code = await process.wait()
    finally:
        os.close(terminal)

    assert (code, err.decode().splitlines()) == (0, CLEAN_EXIT)


# -- SIGTERM while the client is still connected: the calls in flight get the grace ---------------------------------

SIGTERM_LINE = "toolkit: stopping: calls in flight have 60 s to answer (Ctrl-C or SIGTERM again stops at once)"


def _ids(out: bytearray) -> set[Any]:
    return {json.loads(line).get("id") for line in out.splitlines() if line.strip()}


async def _terminate_during_a_nap(
    backend: str, seconds: float, signals: int, grace: float = 60, then: tuple[dict[str, Any], ...] = ()
) -> tuple[int, list[Any], list[str]]:
    """A nap of `seconds`, then SIGTERM once it has started (its progress came) and the client still holds stdin
    open; once the server said it is stopping, the requests `then`, and a second SIGTERM when their replies came. The
    exit status, the replies, stderr's lines."""
    process = await anyio.open_process(
        lifespan_command(backend, "--shutdown-grace", f"{grace:g}"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    nap = {
        "jsonrpc": "2.0",
        "id": "nap",
        "method": "tools/call",
        "params": {"name": "nap", "arguments": {"seconds": seconds}, "_meta": {"progressToken": "p"}},
    }
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    out = bytearray()
    err = bytearray()
    said = anyio.Event()

    async def read_stderr() -> None:
        assert process.stderr is not None
        async for chunk in process.stderr:
            err.extend(chunk)
            if b"toolkit: stopping: " in err:
                said.set()

    async with process, anyio.create_task_group() as tg:
        with anyio.fail_after(wire.TIMEOUT):
            tg.start_soon(read_stderr)
            await process.stdin.send(b"".join(json.dumps(m).encode() + b"\n" for m in [*MESSAGES, nap]))
            while b"notifications/progress" not in out:  # the call runs
                out += await process.stdout.receive()
            process.terminate()
            if then:
                await said.wait()
                await process.stdin.send(b"".join(json.dumps(m).encode() + b"\n" for m in then))
                while not {m["id"] for m in then} <= _ids(out):
                    out += await process.stdout.receive()
            if signals == 2:
                await said.wait()
                process.terminate()
            async for chunk in process.stdout:
                out += chunk
            code = await process.wait()
    replies = [json.loads(line) for line in out.splitlines()]
    for reply in replies:
        methods = {1: "initialize", "nap": "tools/call", **{m["id"]: m["method"] for m in then}}
        wire.check_server_message(reply, wire.LATEST, methods.get(reply.get("id")))
    return code, replies, err.decode().splitlines()


async def test_sigterm_while_the_client_is_connected_lets_the_call_in_flight_answer_then_exits(
    anyio_backend: str,
) -> None:
    code, replies, stderr = await _terminate_during_a_nap(anyio_backend, 1.5, signals=1)

    answered = [reply for reply in replies if reply.get("id") == "nap"]
    assert [reply["result"]["content"] for reply in answered] == [[{"type": "text", "text": "rested"}]]
    assert (code, stderr) == (0, [CLEAN_EXIT[0], SIGTERM_LINE, *CLEAN_EXIT[1:]])


async def test_a_second_sigterm_stops_at_once(anyio_backend: str) -> None:
    code, replies, stderr = await _terminate_during_a_nap(anyio_backend, 600, signals=2)

    assert [reply.get("id") for reply in replies if "id" in reply] == [1]  # the nap never answers
    assert (code, stderr) == (0, [CLEAN_EXIT[0], SIGTERM_LINE, *CLEAN_EXIT[1:]])


async def test_sigterm_answers_a_call_still_running_past_the_grace_with_server_shutting_down_then_exits(
    anyio_backend: str,
) -> None:
    code, replies, stderr = await _terminate_during_a_nap(anyio_backend, 600, signals=1, grace=0.5)

    answered = [reply for reply in replies if reply.get("id") == "nap"]
    assert answered == [{"jsonrpc": "2.0", "id": "nap", "error": SHUTTING_DOWN}]
    assert code == 0
    assert stderr == [CLEAN_EXIT[0], SIGTERM_LINE.replace("60 s", "0.5 s"), *CLEAN_EXIT[1:]]


async def test_while_calls_drain_after_sigterm_requests_that_only_read_are_answered_and_new_calls_refused(
    anyio_backend: str,
) -> None:
    then = (
        {"jsonrpc": "2.0", "id": "list", "method": "tools/list"},
        {"jsonrpc": "2.0", "id": "ping", "method": "ping"},
        {**HELLO, "id": "late"},
    )
    code, replies, stderr = await _terminate_during_a_nap(anyio_backend, 600, signals=2, then=then)

    by_id = {reply.get("id"): reply for reply in replies if "id" in reply}
    assert [tool["name"] for tool in by_id["list"]["result"]["tools"]] == ["hello", "nap"]
    assert by_id["ping"]["result"] == {}
    assert by_id["late"] == {"jsonrpc": "2.0", "id": "late", "error": SHUTTING_DOWN}
    assert "nap" not in by_id  # the second SIGTERM stopped it at once
    assert (code, stderr) == (0, [CLEAN_EXIT[0], SIGTERM_LINE, *CLEAN_EXIT[1:]])
