"""`toolkit preview` in a child process, for the tests: started on a free port with `$BROWSER` pointed at a script
that records the URL it is asked to open (so the test also shows that BROWSER is honoured), stopped at the end."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TIMEOUT = 30.0  # seconds: start-up on a busy machine (2 cores, many suites) included

_RECORDER = """import pathlib, sys
pathlib.Path(sys.argv[1]).write_text(sys.argv[2], encoding="utf-8")
"""


@contextmanager
def preview(target: Path, tmp_path: Path, command: tuple[str, ...] = ("preview",)) -> Iterator[str]:
    """Run `toolkit preview TARGET --port 0` (or `command`, such as `("dev", "--ui")`); yield the URL it opened in
    `$BROWSER`."""
    recorder = tmp_path / "browser.py"
    recorder.write_text(_RECORDER, encoding="utf-8")
    opened = tmp_path / "opened.txt"
    browser = f"{shlex.quote(sys.executable)} {shlex.quote(str(recorder))} {shlex.quote(str(opened))} %s"
    env = {**os.environ, "BROWSER": browser, "PYTHONUNBUFFERED": "1"}
    line = [sys.executable, "-m", "toolkit", command[0], str(target), *command[1:], "--port", "0"]
    log = tmp_path / "preview.log"
    with log.open("wb") as output:
        process = subprocess.Popen(line, stdout=output, stderr=subprocess.STDOUT, env=env, cwd=tmp_path)
        try:
            yield _wait_for(opened, process, log)
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_for(opened: Path, process: subprocess.Popen[bytes], log: Path) -> str:
    """The URL the preview asked $BROWSER to open, once it has (each look bounded by the deadline)."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if opened.exists() and opened.read_text(encoding="utf-8"):
            return opened.read_text(encoding="utf-8")
        if process.poll() is not None:
            raise AssertionError(f"toolkit preview exited with {process.returncode}:\n{log.read_text()}")
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(0.05)  # a bounded wait on the process itself, not a sleep: it ends early if the process does
    raise AssertionError(f"toolkit preview opened no browser within {TIMEOUT} s:\n{log.read_text()}")
