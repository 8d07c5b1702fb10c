"""The `toolkit` command as the CLI tests run it: in a child process, to its end, and its help as a person reads it."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Iterator, Mapping, Sequence
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


InProcess = Callable[..., subprocess.CompletedProcess[str]]  # the `in_process` fixture: `toolkit_here` bound to a test


def toolkit_here(
    *args: str, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    """`toolkit ARGS` run by `main` in this process, from `cwd`: the status it returns (or argparse's exit status)
    and what it printed. For a test of what a command says or does, which the process around `main` changes nothing
    of (a process costs an interpreter and toolkit's imports, under coverage too); the tests of the process itself
    (`python -m toolkit`'s exit, pipes, signals, terminals, the environment) run `toolkit(...)`.

    `capfd`, not `capsys`: a command on a module serves it in this process with file descriptor 1 pointed at stderr
    and its result written through a duplicate of it (`output_kept_apart`). What the module itself prints goes to
    pytest's capture of stdout here, not to stderr as in a process: where output goes is a test for `toolkit(...)`.
    A new process sees none of the user's modules a command imported before it: those (the target, its
    neighbours) are forgotten afterwards, and `sys.path` is put back.
    """
    monkeypatch.chdir(cwd)
    modules, path = dict(sys.modules), list(sys.path)
    capfd.readouterr()
    try:
        status = main(list(args))
    except SystemExit as exc:  # argparse's usage errors and --help
        status = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.path[:] = path
        for name, module in list(sys.modules.items()):
            if modules.get(name) is not module and _users(module):
                if name in modules:
                    sys.modules[name] = modules[name]
                else:
                    del sys.modules[name]
    out, err = capfd.readouterr()
    return subprocess.CompletedProcess(["toolkit", *args], status, out, err)


_LIBRARY = tuple(
    str(Path(folder).resolve())
    for folder in {sysconfig.get_path(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    | {str(ROOT / "toolkit")}
)


def _users(module: object) -> bool:
    """Whether a module is the user's (a target, a module beside it): neither toolkit's nor an installed one."""
    file = getattr(module, "__file__", None)
    return isinstance(file, str) and not str(Path(file).resolve()).startswith(_LIBRARY)


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
