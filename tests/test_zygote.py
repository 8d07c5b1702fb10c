"""The suite's warm fork server (tests/zygote.py) runs a script as `python script.py args` would: as `__main__`, with
its arguments, folder, environment and pipes, and reports its exit status as the process's return code."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
import zygote
from anyio.streams.buffered import BufferedByteReceiveStream

SCRIPT = """
import os, signal, sys
print(__name__, sys.argv[1:], os.getcwd(), os.environ.get("ZYGOTE_TEST"), sys.path[0], flush=True)
print("Ctrl-C raises KeyboardInterrupt:", signal.getsignal(signal.SIGINT) is signal.default_int_handler)
print("to stderr", file=sys.stderr)
line = sys.stdin.readline()
print("read", line.strip())
sys.exit(int(sys.argv[1]))
"""


async def _run(process: anyio.abc.Process, stdin: bytes) -> tuple[int, str, str]:
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    await process.stdin.send(stdin)
    await process.stdin.aclose()
    out, err = b"", b""
    async for chunk in process.stdout:
        out += chunk
    async for chunk in process.stderr:
        err += chunk
    with anyio.fail_after(30):
        return await process.wait(), out.decode(), err.decode()


@pytest.mark.anyio
async def test_a_forked_script_sees_what_a_started_one_sees_and_exits_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ZYGOTE_TEST", "set by the test")
    command = [sys.executable, str(script), "3", "two words"]
    async with zygote.fork(command) as forked:
        from_zygote = await _run(forked, b"hello\n")
    async with await anyio.open_process(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as started:
        from_a_new_interpreter = await _run(started, b"hello\n")
    assert from_zygote == from_a_new_interpreter
    code, out, err = from_zygote
    assert code == 3
    assert out.splitlines() == [
        f"__main__ ['3', 'two words'] {tmp_path} set by the test {tmp_path}",
        "Ctrl-C raises KeyboardInterrupt: True",
        "read hello",
    ]
    assert err == "to stderr\n"


@pytest.mark.anyio
async def test_a_killed_forked_script_reports_the_signal_as_a_started_one_does(tmp_path: Path) -> None:
    script = tmp_path / "sleeps.py"
    script.write_text("import sys, time\nprint('up', flush=True)\ntime.sleep(60)\n")
    async with zygote.fork([sys.executable, str(script)]) as forked:
        assert forked.stdout is not None
        # (a line may come in two reads: PYTHONUNBUFFERED writes print()'s text and its end apart)
        assert await BufferedByteReceiveStream(forked.stdout).receive_until(b"\n", 100) == b"up"
        forked.kill()
        with anyio.fail_after(30):
            assert await forked.wait() == -signal.SIGKILL
    assert forked.returncode == -signal.SIGKILL
    assert os.getpid() != forked.pid
