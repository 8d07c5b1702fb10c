"""What the `toolkit` command says when a target or an answer is not what it expected: one line that says what to do
(a directory, a typo'd profile or documented parameter, a module shadowing the standard library, a choice)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import sysconfig
import types
from pathlib import Path

import cli_helpers
import pytest
from cli_helpers import ROOT, TIMEOUT, outcome
from test_prompt import CONTACT, Terminal

from toolkit import ElicitRequest
from toolkit._shadowing import shadowing_module


def toolkit(*args: str, cwd: Path = ROOT) -> tuple[int, str, str]:
    return outcome(cli_helpers.toolkit(*args, cwd=cwd))


SEARCH = '''\
from toolkit import tool


@tool
def search(query: str) -> list[str]:
    """Search.

    Args:
        qeury: The text to look for.
    """
    return []
'''


def test_a_directory_as_target_says_so_and_what_to_pass(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "server.py").write_text(SEARCH)
    expected = "toolkit: error: 'project' is a directory: pass the Python file that defines the server such as "
    assert toolkit("list", "project", cwd=tmp_path) == (2, "", f"{expected}project/server.py\n")
    assert toolkit("list", "./project", cwd=tmp_path) == (2, "", f"{expected}project/server.py\n")
    (tmp_path / "empty").mkdir()
    assert toolkit("list", "empty/", cwd=tmp_path) == (
        2,
        "",
        "toolkit: error: 'empty' is a directory: pass the Python file that defines the server\n",
    )


def test_a_typo_in_a_documented_parameter_is_one_line_with_did_you_mean(tmp_path: Path) -> None:
    (tmp_path / "search.py").write_text(SEARCH)
    assert toolkit("list", "search.py", cwd=tmp_path) == (
        2,
        "",
        "toolkit: error: cannot import 'search.py': ToolDefinitionError: cannot make a tool of search: docstring "
        "documents 'qeury', which is not a parameter; did you mean 'query'? (search.py, line 4)\n",
    )


def test_every_problem_of_a_definition_is_on_the_one_line(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text('from toolkit import tool\n\n\n@tool\ndef f(a, *args) -> str:\n    """F."""\n')
    assert toolkit("list", "bad.py", cwd=tmp_path) == (
        2,
        "",
        "toolkit: error: cannot import 'bad.py': ToolDefinitionError: cannot make a tool of f: parameter a: missing "
        "type annotation; parameter *args: variadic parameters cannot be described by a schema (bad.py, line 4)\n",
    )


@pytest.mark.parametrize(
    "command",
    [
        ["check", "examples/calculator.py", "--profile"],
        ["docs", "examples/calculator.py", "--format", "gemini", "--profile"],
    ],
)
def test_a_typo_in_a_profile_name_suggests_the_profile(command: list[str]) -> None:
    status, out, err = toolkit(*command, "gemni")
    assert (status, out) == (2, "")
    assert err.startswith("toolkit: error: unknown schema profile 'gemni'; did you mean 'gemini'? choose one of: ")


def test_a_module_shadowing_the_standard_library_is_named_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "colors.py").write_text(
        "import colorsys\n\nfrom toolkit import tool\n\n\n@tool\ndef hue(r: float, g: float, b: float) -> float:\n"
        '    """The hue."""\n    return colorsys.rgb_to_hsv(r, g, b)[0]\n\n\nRED = hue(1, 0, 0)\n'
    )
    (tmp_path / "colorsys.py").write_text("")  # the user's own, found first: no rgb_to_hsv
    assert toolkit("list", "colors.py", cwd=tmp_path) == (
        2,
        "",
        "toolkit: error: cannot import 'colors.py': 'colorsys.py' shadows the standard library's 'colorsys' module: "
        "rename it\n",
    )


@pytest.mark.parametrize(
    ("module", "command"), [("signal", ["list", "app.py"]), ("http", ["serve", "app.py", "--http", "--port", "0"])]
)
def test_a_module_shadowing_one_that_toolkit_imports_later_is_named_in_one_line(
    module: str, command: list[str], tmp_path: Path
) -> None:
    (tmp_path / "app.py").write_text(SEARCH.replace("qeury", "query"))
    (tmp_path / f"{module}.py").write_text("")  # found first: the event loop's `signal`, uvicorn's `http`
    code, out, err = toolkit(*command, cwd=tmp_path)
    if _imported_at_start(module):
        # Under coverage (CI), the interpreter imports `signal` before any module of the user's: the file shadows
        # nothing then, and the command must simply work.
        assert (code, err) == (0, "")
        assert "search" in out
    else:
        assert (code, out, err) == (
            2,
            "",
            f"toolkit: error: '{module}.py' shadows the standard library's '{module}' module: rename it\n",
        )


def _imported_at_start(module: str) -> bool:
    """Whether a child interpreter, started as the tests start toolkit, has `module` before running any code."""
    probe = subprocess.run(
        [sys.executable, "-c", f"import sys; print({module!r} in sys.modules)"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=TIMEOUT,
        check=True,
    )
    return probe.stdout.strip() == "True"


def test_python_m_toolkit_names_a_module_of_the_current_directory_that_shadows_one_it_needs(tmp_path: Path) -> None:
    (tmp_path / "argparse.py").write_text("")  # `python -m` puts the current directory first on the path
    assert toolkit("list", "app.py", cwd=tmp_path) == (
        2,
        "",
        "toolkit: error: 'argparse.py' shadows the standard library's 'argparse' module: rename it\n",
    )


@pytest.mark.anyio
async def test_a_wrong_choice_says_names_work_too() -> None:
    term = Terminal("x@y.io", "3", "Green", "", "", "", "", "")
    result = await term.prompt().elicit(ElicitRequest("Contact?", requested_schema=CONTACT))
    assert result.content == {"email": "x@y.io", "color": "g", "news": False}
    assert "! choose a number from 1 to 2, or a name: Red, Green; try again" in term.text


def test_an_address_in_use_is_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        status, out, err = toolkit("serve", "examples/calculator.py", "--http", "--port", str(port))
    assert (status, out) == (2, "")
    assert err.startswith(f"toolkit: error: cannot listen on 127.0.0.1:{port}: ")
    assert len(err.splitlines()) == 1


def test_an_installed_package_is_never_taken_for_a_users_file_that_shadows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """setuptools puts its own `distutils` in place (from site-packages) once anything imports distutils: that is
    no file of the user's, and blaming it would hide every unrelated error behind a wrong one-line message. (In a
    virtual environment site-packages lies under `platstdlib` anyway; a system-wide install's does not.)"""
    installed = types.ModuleType("colorsys")
    installed.__file__ = os.path.join(sysconfig.get_path("purelib"), "somepackage", "colorsys.py")
    monkeypatch.setitem(sys.modules, "colorsys", installed)
    assert shadowing_module() is None
    users = types.ModuleType("colorsys")
    users.__file__ = str(tmp_path / "colorsys.py")
    monkeypatch.setitem(sys.modules, "colorsys", users)
    assert (
        shadowing_module()
        == f"{os.path.relpath(users.__file__)!r} shadows the standard library's 'colorsys' module: rename it"
    )


DEEP = '''\
from toolkit import tool


@tool
def deep(text: str) -> str:
    """Answer,
    and then
    {indent}a line indented past the width of a docstring line.
    """
    return text
'''


def test_a_description_indented_past_the_line_width_gives_a_client_with_its_indent_cut(tmp_path: Path) -> None:
    (tmp_path / "deep.py").write_text(DEEP.format(indent=" " * 130), encoding="utf-8")
    status, out, err = toolkit("client", "deep.py", cwd=tmp_path)

    assert (status, err) == (0, "")
    compile(out, "deep_client.py", "exec")  # a module Python reads
    deep = f"{' ' * 24}a line indented past the width of a docstring line."
    assert f'        """Answer,\n        and then\n{deep}\n' in out


def test_a_file_to_check_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "search.py").write_text(SEARCH.replace("qeury", "query"), encoding="utf-8")
    (tmp_path / "TOOLS.md").write_bytes(b"# Tools caf\xe9\n")

    assert toolkit("docs", "search.py", "--check", "TOOLS.md", cwd=tmp_path) == (
        2,
        "",
        "toolkit: error: 'TOOLS.md' is not UTF-8 text (byte 11: invalid continuation byte)\n",
    )
