"""The `toolkit` command as a process: signals, terminals and what reaches its streams (real processes only).

Every wait is bounded by a generous `TIMEOUT`: only a hang reaches it, and no test asserts how fast anything is.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HITL = str(ROOT / "tests" / "servers" / "hitl_server.py")
TIMEOUT = 60.0

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and pseudo-terminals")


class Running:
    """A child process whose stderr is read on a thread, so that a test can wait for a line (bounded)."""

    def __init__(self, command: list[str], **options: object) -> None:
        self.process = subprocess.Popen(command, stderr=subprocess.PIPE, cwd=ROOT, **options)  # type: ignore[call-overload]
        self.stderr = bytearray()
        self._chunks: queue.Queue[bytes] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        while chunk := os.read(self.process.stderr.fileno(), 65536):
            self._chunks.put(chunk)
        self._chunks.put(b"")

    def wait_for(self, text: str) -> None:
        """Wait until stderr holds `text` (fails if the process ends first)."""
        while text.encode() not in self.stderr:
            chunk = self._chunks.get(timeout=TIMEOUT)
            if not chunk:
                raise AssertionError(f"the process ended before writing {text!r}: {self.stderr.decode()}")
            self.stderr += chunk

    def wait(self) -> tuple[int, str]:
        """The exit status and all of stderr, once the process has ended (within TIMEOUT)."""
        try:
            status = self.process.wait(timeout=TIMEOUT)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
        self._reader.join(timeout=TIMEOUT)
        while not self._chunks.empty():
            self.stderr += self._chunks.get()
        assert self.process.stderr is not None
        self.process.stderr.close()
        return status, self.stderr.decode()


@contextmanager
def terminal() -> Iterator[int]:
    """The far end of a pseudo-terminal, for a child's stdin: what a person at a terminal types into."""
    import pty

    ours, theirs = pty.openpty()
    try:
        yield theirs
    finally:
        os.close(theirs)
        os.close(ours)


# -- toolkit call: Ctrl-C at a prompt ---------------------------------------------------------------------------


@posix_only
@pytest.mark.parametrize("transport", ["memory", "stdio"])
def test_ctrl_c_at_a_prompt_of_toolkit_call_exits_130_without_waiting_for_enter(transport: str) -> None:
    where = [f"{HITL}:build", "delete_file"] if transport == "memory" else ["--stdio", "delete_file"]
    command = [sys.executable, "-m", "toolkit", "call", *where, "path=/tmp/x"]
    if transport == "stdio":
        command += ["--", sys.executable, HITL]
    with terminal() as stdin:
        running = Running(command, stdin=stdin, stdout=subprocess.DEVNULL)
        running.wait_for("? Delete /tmp/x? [y/N]: ")  # waiting for a line the person has not typed
        running.process.send_signal(signal.SIGINT)
        status, stderr = running.wait()  # before the fix: waited for Enter forever (the reading thread)
    assert status == 130
    assert "Traceback" not in stderr
