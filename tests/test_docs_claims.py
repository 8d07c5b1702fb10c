"""What the docs state that a test can keep true: the exit statuses of the command line and of a failed start, the
install commands (only ones that work today), the home page's map. The docs' code blocks run in test_docs_code.py;
the behaviour behind the shutdown promises is tested in test_shutdown.py and test_cli_process.py."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli_process import HITL, Running, posix_only, terminal

from toolkit import cli

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted((ROOT / "docs").glob("*.md"))
TIMEOUT = 60.0
BIN = Path(sys.executable).parent


def section(path: Path, heading: str) -> str:
    """The text of a Markdown section, from its heading to the next heading of the same or a higher level."""
    text = path.read_text(encoding="utf-8")
    level = heading.split(" ", 1)[0]
    start = text.index(f"\n{heading}\n")
    ends = [m.start() for m in re.finditer(rf"\n#{{1,{len(level)}}} ", text) if m.start() > start]
    return text[start : ends[0] if ends else len(text)]


def toolkit(*args: str, stdout: int = subprocess.PIPE) -> int:
    run = subprocess.run(
        [sys.executable, "-m", "toolkit", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        timeout=TIMEOUT,
        check=False,
    )
    return run.returncode


# -- exit statuses ----------------------------------------------------------------------------------------------


def documented_statuses() -> list[int]:
    rows = re.findall(r"^\| (\d+) \|", section(ROOT / "docs" / "cli.md", "## Exit status"), re.MULTILINE)
    return [int(status) for status in rows]


def interrupted_at_a_prompt() -> int:
    command = [sys.executable, "-m", "toolkit", "call", f"{HITL}:build", "delete_file", "path=/tmp/x"]
    with terminal() as stdin:
        running = Running(command, stdin=stdin, stdout=subprocess.DEVNULL)
        running.wait_for("[y/N]: ")
        running.process.send_signal(signal.SIGINT)
        status, _ = running.wait()
    return status


def into_a_closed_pipe() -> int:
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return toolkit("docs", "examples/notes.py", stdout=writer)
    finally:
        os.close(writer)


SILENT_SERVER = [sys.executable, "-c", "import sys; sys.stdin.read()"]  # reads, never answers
# One way the command gets each status, as the table of docs/cli.md says.
STATUSES = {
    0: lambda: toolkit("list", "examples/calculator.py"),
    1: lambda: toolkit("call", "examples/calculator.py", "divide", "dividend=1", "divisor=0"),
    2: lambda: toolkit("list", "examples/no_such_file.py"),
    124: lambda: toolkit("list", "--timeout", "0.5", "--stdio", "--", *SILENT_SERVER),
    130: interrupted_at_a_prompt,
    141: into_a_closed_pipe,
}


def test_the_exit_statuses_of_the_cli_docs_are_the_commands_own() -> None:
    assert documented_statuses() == sorted(STATUSES)
    # The module's docstring (`toolkit --help`'s source for them) lists the same.
    assert cli.__doc__ is not None
    said = {int(n) for n in re.findall(r"\b(\d+)\b", cli.__doc__.split("Exit codes:")[1])}
    assert said == set(STATUSES)


@posix_only
@pytest.mark.parametrize("status", sorted(STATUSES))
def test_each_documented_exit_status_is_what_the_command_returns(status: int) -> None:
    assert STATUSES[status]() == status


def console_steps(block: str) -> list[tuple[str, list[str]]]:
    """The commands of a ```console block, each with the lines shown after it."""
    steps: list[tuple[str, list[str]]] = []
    for line in block.strip().splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def test_a_failed_start_is_what_the_server_docs_show(tmp_path: Path) -> None:
    text = section(ROOT / "docs" / "server.md", "### When it fails")
    block = text.split("```console\n", 1)[1].split("```", 1)[0]
    source = (ROOT / "docs" / "server.md").read_text(encoding="utf-8").split("```python\n# visits.py\n", 1)[1]
    (tmp_path / "visits.py").write_text(source.split("```", 1)[0], encoding="utf-8")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}  # `python` and `toolkit` of this venv
    status = None
    for command, shown in console_steps(block):
        if command == "echo $?":
            assert [str(status)] == shown, f"{command}: the docs show {shown}, the status was {status}"
            continue
        run = subprocess.run(
            ["bash", "-c", f"{command} 2>&1"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        status = run.returncode
        assert run.stdout.splitlines() == shown, f"$ {command}"
    assert "toolkit serve" in block  # both ways of serving, and their two statuses, are shown and checked
    assert shlex.split(block)  # a well-formed block


# -- install ----------------------------------------------------------------------------------------------------

# The distribution's name as a requirement (`pip install 'mcp-toolkit[http]'`), not a wheel's file name in a path
# (`dist/mcp_toolkit-*.whl`) nor a comment after the command.
UNPUBLISHED = re.compile(r"(pip|pipx|uv pip) install[^\n`#]*(?<![/\w.-])mcp[-_]toolkit\b|uv add[^\n`#]*mcp[-_]toolkit")


def test_no_doc_or_message_names_an_install_command_that_cannot_work_yet() -> None:
    # `mcp-toolkit` is not on the package index: `pip install mcp-toolkit` fails for anyone who tries it. Installs
    # name a clone (`pip install .`, `pip install '.[http]'`) or a wheel built from one.
    places = [
        ROOT / "README.md",
        *DOCS,
        *(ROOT / "examples").rglob("*.md"),
        *(ROOT / "toolkit").rglob("*.py"),
    ]
    found = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in places
        for match in UNPUBLISHED.finditer(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_home_page_says_how_to_install_today() -> None:
    install = section(ROOT / "docs" / "index.md", "## Install")
    assert "not on the Python package index" in install
    assert "pip install ." in install
    assert "pip wheel" in install


# -- the home page's map ----------------------------------------------------------------------------------------


def test_the_home_page_maps_every_guide_and_promises_nothing_already_done() -> None:
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    table = section(ROOT / "docs" / "index.md", "## Where to go next")
    linked = set(re.findall(r"\]\(([a-z-]+\.md)", table))
    guides = {"http.md", "deploy.md", "server.md", "client.md", "tools.md", "testing.md", "cli.md"}
    assert guides <= linked, guides - linked
    assert "not in a release yet" not in index
    assert "in progress" not in index.lower()
