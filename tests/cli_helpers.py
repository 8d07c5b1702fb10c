"""The `toolkit` command as the CLI tests run it: in a child process, to its end, and its help as a person reads it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest
from served import Served

from toolkit.cli import main

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
TIMEOUT = 60.0  # one command, to its end; only a hang reaches it


def toolkit(
    *args: str,
    cwd: Path = ROOT,
    answers: str | None = None,
    env: Mapping[str, str] | None = None,
    without: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """`python -m toolkit ARGS` in `cwd`, its output read as UTF-8 text; `answers` is its standard input, `env` adds
    to the environment, and `without` names modules the child cannot import (it starts the CLI itself then)."""
    command = [PYTHON, "-m", "toolkit", *args]
    if without:
        hide = "".join(f"sys.modules[{name!r}] = None; " for name in without)
        command = [PYTHON, "-c", f"import sys; {hide}from toolkit.cli import main; sys.exit(main(sys.argv[1:]))", *args]
    return subprocess.run(
        command,
        input=answers,
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONIOENCODING": "utf-8", **(env or {})},
        timeout=TIMEOUT,
        check=False,
    )


def outcome(run: subprocess.CompletedProcess[str]) -> tuple[int, str, str]:
    """The exit status, standard output and standard error: what a test compares whole."""
    return (run.returncode, run.stdout, run.stderr)


def help_text(command: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    """`toolkit COMMAND --help` on an 80-column terminal (it must exit with status 0)."""
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    return capsys.readouterr().out


@contextmanager
def serving(target: Path | str, *args: str) -> Iterator[Served]:
    """`toolkit serve TARGET --http` on a free loopback port while the block runs, then stopped (cleanly)."""
    served = Served(Path(target), *args)
    try:
        yield served
    finally:
        served.close()
