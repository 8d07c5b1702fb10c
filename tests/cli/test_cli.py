"""The `toolkit` command, run for real in a subprocess: every command, and every way it can fail.

Golden files of the examples' references live in `tests/golden/`; after an intended change, regenerate them with
`toolkit docs examples/<name>.py -o tests/golden/<name>.md` (files: `toolkit docs --stdio -o tests/golden/files.md
-- python examples/files.py`) and review the diff.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import anyio
import pytest
from cli_helpers import PYTHON, ROOT, InProcess, outcome, toolkit

from toolkit import Client
from toolkit.cli import main

GOLDEN = ROOT / "tests" / "golden"

PROGRESS_TOOLS = '''
from toolkit import Context, ToolError, tool


@tool
async def count(n: int, ctx: Context) -> str:
    """Count to n, reporting progress."""
    for i in range(n):
        await ctx.report_progress(i + 1, n, f"step {i + 1}")
    return "done"


@tool
def fail() -> str:
    """Always fails."""
    raise ToolError("the disk is full")


@tool
def echo(value: object = None, text: str = "") -> dict[str, object]:
    """Return the arguments."""
    return {"value": value, "text": text}
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "progress_tools.py").write_text(PROGRESS_TOOLS, encoding="utf-8")
    return tmp_path


# -- docs ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["calculator", "notes"])
def test_the_examples_references_match_their_golden_files(name: str, in_process: InProcess) -> None:
    assert outcome(in_process("docs", f"examples/{name}.py", "--check", f"tests/golden/{name}.md")) == (0, "", "")


def test_a_server_of_any_implementation_is_documented_over_stdio() -> None:
    run = toolkit("docs", "--stdio", "--check", "tests/golden/files.md", "--", PYTHON, "examples/files.py")

    assert outcome(run) == (0, "", "")


def test_docs_print_markdown_and_write_files(tmp_path: Path) -> None:
    printed = toolkit("docs", "examples/notes.py")
    written = toolkit("docs", "examples/notes.py", "-o", str(tmp_path / "tools.md"))

    assert outcome(printed) == (0, (GOLDEN / "notes.md").read_text(encoding="utf-8"), "")
    assert outcome(written) == (0, "", "")
    assert (tmp_path / "tools.md").read_text(encoding="utf-8") == printed.stdout


def test_docs_in_json_are_exactly_the_tools_list_payload() -> None:
    run = toolkit("docs", "examples/notes.py", "--format", "json")

    async def listed() -> list[dict[str, object]]:
        async with Client.stdio([PYTHON, str(ROOT / "examples" / "notes.py")], protocol="handshake") as client:
            tools = await client.list_tools()
        return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]

    assert run.returncode == 0
    assert json.loads(run.stdout) == {"tools": anyio.run(listed)}


def test_out_of_date_docs_fail_with_a_diff(tmp_path: Path) -> None:
    stale = tmp_path / "tools.md"
    stale.write_text((GOLDEN / "notes.md").read_text(encoding="utf-8").replace("Find notes", "Look for notes"))

    run = toolkit("docs", "examples/notes.py", "--check", str(stale))

    assert run.returncode == 1
    assert "-Look for notes, most urgent first.\n+Find notes, most urgent first.\n" in run.stdout
    assert run.stdout.startswith(f"--- {stale} (on disk)\n+++ {stale} (generated)\n")
    assert run.stderr == f"toolkit: {stale} is out of date; update it with: toolkit docs examples/notes.py -o {stale}\n"


def test_checking_docs_against_a_missing_file_is_an_error(tmp_path: Path, in_process: InProcess) -> None:
    run = in_process("docs", "examples/notes.py", "--check", str(tmp_path / "absent.md"))

    assert outcome(run) == (
        2,
        "",
        f"toolkit: error: cannot read '{tmp_path / 'absent.md'}': No such file or directory\n",
    )


# -- list ------------------------------------------------------------------------------------------------------


def test_list_shows_names_hints_and_parameters() -> None:
    expected = [
        "NAME          HINTS                                      PARAMETERS",
        "add_note      destructive, not idempotent, closed-world  "
        "title: string, body: string, tags?: list[string], priority?: 1 | 2 | 3, due?: string (date)",
        "search_notes  read-only, closed-world                    "
        "query?: string, tag?: string, due_before?: string (date), limit?: integer ≥ 1, ≤ 50",
        "update_note   destructive, idempotent, closed-world      "
        "note_id: string (uuid), changes: {title?: string, body?: string, tags?: list[string], priority?: 1 | 2 | 3}",
        "delete_note   destructive, idempotent, closed-world      note_id: string (uuid)",
        "4 tools",
    ]
    text = "\n".join(expected) + "\n"

    assert outcome(toolkit("list", "examples/notes.py")) == (0, text, "")
    assert outcome(toolkit("list", "--stdio", "--", PYTHON, "examples/notes.py")) == (0, text, "")


SERVED_AROUND = '''
from pydantic import BaseModel

from toolkit import Server, tool


class Tag(BaseModel):
    name: str
    color: str = "red"


@tool(task="optional", timeout=5, confirm="Tag {path}?", idempotent=True)
def tag_file(path: str, tag: Tag) -> str:
    """Tag a file of the workspace with a colored tag."""
    return path


server = Server("files", tools=[tag_file])
'''


def test_list_and_docs_show_task_support_confirmation_timeout_and_a_models_fields(
    tmp_path: Path, in_process: InProcess
) -> None:
    (tmp_path / "files.py").write_text(SERVED_AROUND, encoding="utf-8")
    listed = in_process("list", "files.py", cwd=tmp_path)
    remote = in_process("list", "--stdio", "--", PYTHON, "-m", "toolkit", "serve", "files.py", cwd=tmp_path)
    docs = in_process("docs", "files.py", "--no-lint", cwd=tmp_path)

    # Before: `tag: object`, and neither the task support nor what the server does around a call.
    hints = "destructive, idempotent, open-world, task: optional"
    params = "path: string, tag: {name: string, color?: string}"

    def table(shown: str) -> str:
        return f"NAME      {'HINTS':{len(shown)}}  PARAMETERS\ntag_file  {shown}  {params}\n1 tool\n"

    assert outcome(listed) == (0, table(f"{hints}, confirm, timeout 5 s"), "")
    # Over stdio only the definition speaks: it says the task support, not the confirmation nor the timeout.
    assert outcome(remote) == (0, table(hints), "")
    assert docs.returncode == 0
    assert (
        "| `tag_file` | `destructive` `idempotent` `open-world` `task: optional` `confirm` `timeout 5 s` |"
        in docs.stdout
    )
    assert (
        "**Hints:** `not read-only (default)` · `destructive (default)` · `idempotent` · `open-world (default)` · "
        "`task: optional` · `confirm` · `timeout 5 s`\n"
    ) in docs.stdout


def test_list_accepts_a_module_path_and_an_attribute(project: Path, in_process: InProcess) -> None:
    (project / "pkg").mkdir()
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "app.py").write_text(
        "from toolkit import Server\nfrom progress_tools import fail\n\nserver = Server('app', tools=[fail])\n"
    )
    expected = (
        "NAME  HINTS                                    PARAMETERS\n"
        "fail  destructive, not idempotent, open-world  -\n"
        "1 tool\n"
    )

    assert outcome(in_process("list", "pkg.app", cwd=project)) == (0, expected, "")
    assert outcome(in_process("list", "pkg.app:server", cwd=project)) == (0, expected, "")
    assert outcome(in_process("list", "progress_tools:fail", cwd=project)) == (0, expected, "")


# -- call ------------------------------------------------------------------------------------------------------


def test_call_prints_text_and_structured_results() -> None:
    assert outcome(toolkit("call", "examples/calculator.py", "add", "a=1", "b=2")) == (0, "3.0\n", "")
    summary = toolkit("call", "examples/calculator.py", "summarize", "values=[1, 2, 3]")
    assert (summary.returncode, json.loads(summary.stdout)) == (
        0,
        {"count": 3, "mean": 2.0, "median": 2.0, "stdev": 1.0, "minimum": 1.0, "maximum": 3.0},
    )


def test_a_call_refused_for_an_array_given_as_text_says_how_to_write_it(in_process: InProcess) -> None:
    run = in_process("call", "examples/notes.py", "add_note", "title=Tea", "body=Buy tea", "tags=python")

    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr.startswith("Invalid arguments for tool 'add_note':\n- tags: expected an array")
    # Before: nothing said how to write it; a shell turns tags=["python"] into tags=[python].
    assert run.stderr.endswith("\ntoolkit: tags takes an array, written as JSON: tags='[\"python\"]'\n")


def test_call_values_are_json_when_they_parse_and_strings_otherwise(project: Path, in_process: InProcess) -> None:
    run = in_process("call", "progress_tools.py", "echo", 'value={"a": [1, true]}', "text=hello world", cwd=project)
    mixed = in_process(
        "call", "progress_tools.py", "echo", "--json", '{"value": 5, "text": "x"}', "text=7", cwd=project
    )

    assert (run.returncode, json.loads(run.stdout)) == (0, {"value": {"a": [1, True]}, "text": "hello world"})
    # key=value pairs override --json; `text` is a string parameter, so "7" stays the text "7".
    assert (mixed.returncode, json.loads(mixed.stdout)) == (0, {"value": 5, "text": "7"})


def test_call_reports_progress_on_stderr(project: Path) -> None:
    run = toolkit("call", "progress_tools.py", "count", "n=2", cwd=project)

    assert outcome(run) == (
        0,
        "done\n",
        "[###############---------------] 1/2 step 1\n[##############################] 2/2 step 2\n",
    )


def test_a_failing_tool_exits_1_with_its_message(project: Path) -> None:
    assert outcome(toolkit("call", "progress_tools.py", "fail", cwd=project)) == (1, "", "the disk is full\n")


def test_call_raw_prints_the_whole_result(project: Path, in_process: InProcess) -> None:
    run = in_process("call", "progress_tools.py", "fail", "--raw", cwd=project)

    assert run.returncode == 1
    assert json.loads(run.stdout)["isError"] is True


def test_call_reaches_a_running_server_over_stdio() -> None:
    run = toolkit("call", "--stdio", "add", "a=1", "b=2", "--", PYTHON, "examples/calculator.py")

    assert outcome(run) == (0, "3.0\n", "")


def test_an_unknown_tool_over_stdio_is_refused_by_the_server() -> None:
    run = toolkit("call", "--stdio", "nope", "--", PYTHON, "examples/calculator.py")

    assert run.returncode == 2
    assert run.stderr.startswith("toolkit: error: the server refused the call: ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["add"], "call needs TARGET and TOOL (or --stdio TOOL ... -- COMMAND)"),
        (["examples/calculator.py", "ad"], "no tool named 'ad'; did you mean 'add'?"),
        (["examples/calculator.py", "zzz"], "no tool named 'zzz'; tools: add, divide, combine, summarize, "),
        (["examples/calculator.py", "add", "a"], "argument 'a' is not key=value"),
        (["examples/calculator.py", "add", "=1"], "argument '=1' is not key=value"),
        (["examples/calculator.py", "add", "--json", "{"], "--json is not valid JSON: "),
        (["examples/calculator.py", "add", "--json", "[1]"], "--json must be a JSON object"),
    ],
)
def test_call_usage_errors_exit_2(args: list[str], message: str, in_process: InProcess) -> None:
    run = in_process("call", *args)

    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr.startswith(f"toolkit: error: {message}")


# -- targets ---------------------------------------------------------------------------------------------------


def test_targets_that_cannot_be_loaded_are_explained(project: Path, in_process: InProcess) -> None:
    # What `main` says of each target, in this process: eleven processes would only start the same interpreter.
    (project / "broken.py").write_text("import no_such_module\n")
    (project / "syntax.py").write_text("def f(:\n")
    (project / "empty.py").write_text("X = 1\n")
    (project / "two.py").write_text("from toolkit import Server\n\na = Server('a')\nb = Server('b')\n")
    (project / "dup.py").write_text(
        "from toolkit import tool\n\n@tool(name='x')\ndef f() -> None: ...\n\n@tool(name='x')\ndef g() -> None: ...\n"
    )
    (project / "factory.py").write_text(
        "from toolkit import Server\n\ndef make(root: str) -> Server: ...\n\nVALUE = 3\n"
    )
    cannot_import = "toolkit: error: cannot import"
    errors = {
        target: in_process("list", target, cwd=project).stderr
        for target in [
            "missing.py",
            "no_such_package.mod",
            "broken.py",
            "syntax.py",
            "empty.py",
            "two.py",
            "dup.py",
            "broken.py:x",
            "empty.py:X",
            "empty.py:nope",
            "factory.py:make",
        ]
    }

    assert errors == {
        "missing.py": f"toolkit: error: no such file: '{project / 'missing.py'}'\n",
        "no_such_package.mod": f"{cannot_import} 'no_such_package.mod': "
        "ModuleNotFoundError: No module named 'no_such_package'\n",
        "broken.py": f"{cannot_import} 'broken.py': ModuleNotFoundError: No module named 'no_such_module' "
        "(broken.py, line 1)\n",
        "syntax.py": f"{cannot_import} 'syntax.py': SyntaxError: invalid syntax (syntax.py, line 1)\n",
        "empty.py": "toolkit: error: 'empty.py' holds no toolkit.Server, no @tool functions, no function without "
        'arguments that returns a Server and no `if __name__ == "__main__":` block to run with --stdio -- python '
        "FILE\n",
        "two.py": "toolkit: error: 'two.py' holds several servers; choose one: two.py:a, two.py:b\n",
        "dup.py": "toolkit: error: 'dup.py' holds two tools named 'x'\n",
        "broken.py:x": f"{cannot_import} 'broken.py': ModuleNotFoundError: No module named 'no_such_module' "
        "(broken.py, line 1)\n",
        "empty.py:X": "toolkit: error: 'empty.py:X' is int, not a toolkit.Server, a Tool or a list of tools\n",
        "empty.py:nope": "toolkit: error: 'empty.py' has no attribute 'nope'\n",
        "factory.py:make": "toolkit: error: 'factory.py:make' is a function that needs arguments; "
        "it cannot build the server\n",
    }


def test_the_hint_for_a_module_without_a_server_suggests_only_what_exists_and_can_work(
    project: Path, in_process: InProcess
) -> None:
    (project / "factories.py").write_text(
        "from toolkit import Server\n\n\ndef build() -> Server:\n    return Server('b')\n\n\n"
        "def make_server(root: str) -> Server:\n    return Server(root)\n\n\n"
        "if __name__ == '__main__':\n    build().run()\n"
    )
    (project / "needs.py").write_text("from toolkit import Server\n\n\ndef make_server(root: str) -> Server: ...\n")

    errors = [in_process("list", target, cwd=project).stderr for target in ("factories.py", "needs.py", "json")]

    assert errors == [
        "toolkit: error: 'factories.py' holds no toolkit.Server and no @tool functions; name the function that builds "
        "it (factories.py:build) or start it with --stdio -- python factories.py (make_server needs arguments)\n",
        "toolkit: error: 'needs.py' holds no toolkit.Server, no @tool functions, no function without arguments that "
        'returns a Server and no `if __name__ == "__main__":` block to run with --stdio -- python FILE (make_server '
        "needs arguments)\n",
        "toolkit: error: 'json' holds no toolkit.Server, no @tool functions and no function without arguments that "
        "returns a Server\n",
    ]
    assert in_process("list", "factories.py:build", cwd=project).stdout.endswith("0 tools\n")


def test_a_function_without_arguments_can_build_the_server(project: Path, in_process: InProcess) -> None:
    (project / "factory.py").write_text(
        "from toolkit import Server\nfrom progress_tools import fail\n\n"
        "def make() -> Server:\n    return Server('f', tools=[fail])\n"
    )

    assert in_process("list", "factory.py:make", cwd=project).stdout.endswith("1 tool\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["list"], "TARGET is required (or --stdio -- COMMAND)"),
        (["list", "--stdio"], "--stdio needs the server's command after --, e.g. --stdio -- python server.py"),
        (["list", "x.py", "--stdio", "--", "python"], "give either TARGET or --stdio -- COMMAND, not both"),
        (["list", "x.py", "--", "python"], "a command after -- needs --stdio"),
        (["check", "examples/notes.py"], "one of the arguments --against --write --profile is required"),
    ],
)
def test_usage_errors_exit_2_with_the_usage(args: list[str], message: str, in_process: InProcess) -> None:
    run = in_process(*args)

    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr.endswith(f"error: {message}\n")
    assert run.stderr.startswith("usage: toolkit ")


def test_a_server_command_that_cannot_start_is_an_error() -> None:
    run = toolkit("list", "--stdio", "--", "/nonexistent/server")

    assert run.returncode == 2
    assert run.stderr.startswith("toolkit: error: cannot start '/nonexistent/server': ")


@pytest.mark.parametrize("command", [[], ["serve"], ["list"], ["call"], ["docs"], ["check"]])
def test_each_help_fits_in_80_columns_and_says_what_its_targets_are(
    command: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as exited:
        main([*command, "--help"])
    text = capsys.readouterr().out
    assert exited.value.code == 0
    assert [line for line in text.splitlines() if len(line) > 80] == []
    assert "TARGET is package.module, package.module:attr, path/to/file.py or\n" in text
    # A URL and --stdio are targets of the commands that read tools, not of serve.
    assert ("TARGET may also be the URL of a server" in text) is (command != ["serve"])
    assert ("With --http, serves Streamable HTTP" in text) is (command == ["serve"])


def test_version() -> None:
    from toolkit import __version__

    assert outcome(toolkit("--version")) == (0, f"toolkit {__version__}\n", "")


# -- check -----------------------------------------------------------------------------------------------------


def test_check_against_a_snapshot_of_the_same_tools_passes(tmp_path: Path) -> None:
    snapshot = tmp_path / "tools.json"

    written = toolkit("check", "examples/notes.py", "--write", str(snapshot))
    checked = toolkit("check", "examples/notes.py", "--against", str(snapshot))

    assert outcome(written) == (0, "", f"wrote 4 tools to {snapshot}\n")
    assert snapshot.read_text(encoding="utf-8") == toolkit("docs", "examples/notes.py", "--format", "json").stdout
    assert outcome(checked) == (0, "No changes.\n", "")


def test_check_fails_on_breaking_changes(project: Path, in_process: InProcess) -> None:
    (project / "v1.py").write_text(
        "from typing import Literal\nfrom toolkit import tool\n\n"
        "@tool\ndef find(query: str, mode: Literal['a', 'b'] = 'a') -> list[str]:\n    '''Find.'''\n    return []\n"
    )
    (project / "v2.py").write_text(
        "from typing import Literal\nfrom toolkit import tool\n\n"
        "@tool\ndef find(query: str, limit: int, mode: Literal['a'] = 'a') -> list[str]:\n"
        "    '''Find.'''\n    return []\n\n"
        "@tool(read_only=True)\ndef count() -> int:\n    '''Count.'''\n    return 0\n"
    )
    assert in_process("check", "v1.py", "--write", "tools.json", cwd=project).returncode == 0

    text = in_process("check", "v2.py", "--against", "tools.json", cwd=project)
    machine = in_process("check", "v2.py", "--against", "tools.json", "--format", "json", cwd=project)

    assert outcome(text) == (
        1,
        'BREAKING    find: parameter `mode`: enum value `"b"` removed\n'
        "BREAKING    find: parameter `limit` added (required)\n"
        "compatible  count: tool `count` added\n"
        "3 changes: 2 breaking, 1 compatible.\n",
        "",
    )
    assert (machine.returncode, json.loads(machine.stdout)) == (
        1,
        {
            "breaking": 2,
            "compatible": 1,
            "changes": [
                {
                    "severity": "compatible",
                    "kind": "tool-added",
                    "tool": "count",
                    "path": None,
                    "message": "tool `count` added",
                },
                {
                    "severity": "breaking",
                    "kind": "enum-value-removed",
                    "tool": "find",
                    "path": "mode",
                    "message": 'parameter `mode`: enum value `"b"` removed',
                },
                {
                    "severity": "breaking",
                    "kind": "required-parameter-added",
                    "tool": "find",
                    "path": "limit",
                    "message": "parameter `limit` added (required)",
                },
            ],
        },
    )


def test_only_compatible_changes_pass(project: Path, in_process: InProcess) -> None:
    (project / "v1.py").write_text("from toolkit import tool\n\n@tool\ndef f(a: int) -> None:\n    '''F.'''\n")
    (project / "v2.py").write_text(
        "from toolkit import tool\n\n@tool\ndef f(a: float, b: int = 0) -> None:\n    '''F.'''\n"
    )
    in_process("check", "v1.py", "--write", "tools.json", cwd=project)

    assert outcome(in_process("check", "v2.py", "--against", "tools.json", cwd=project)) == (
        0,
        "compatible  f: parameter `a`: now accepts any number (was integer)\n"
        "compatible  f: parameter `b` added (optional)\n"
        "2 changes: 0 breaking, 2 compatible.\n",
        "",
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "'tools.json' is not JSON: "),
        ('{"tools": [1]}', "'tools.json' is not a tools/list snapshot (write one with --write)"),
    ],
)
def test_a_snapshot_that_is_not_a_tools_list_is_an_error(
    project: Path, content: str, message: str, in_process: InProcess
) -> None:
    (project / "tools.json").write_text(content)

    run = in_process("check", "progress_tools.py", "--against", "tools.json", cwd=project)

    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr.startswith(f"toolkit: error: {message}")


# -- call: what the tool says, and how a call can fail -------------------------------------------------------

TALKATIVE_TOOLS = '''
import os
import subprocess
import sys

import anyio

from toolkit import Context, tool


@tool
async def chatty(ctx: Context) -> dict[str, int]:
    """Log at three levels."""
    await ctx.debug("details")
    await ctx.info("starting")
    await ctx.warning({"disk": "low"})
    return {"answer": 42}


@tool
def noisy() -> dict[str, int]:
    """Write to stdout every way there is."""
    print("print")
    sys.stdout.flush()
    os.write(1, b"os.write\\n")
    subprocess.run([sys.executable, "-c", "print('child')"], check=True)
    return {"answer": 42}


@tool
async def forever() -> str:
    """Never finish."""
    await anyio.sleep_forever()
    return "unreachable"


@tool
def big(size: int) -> str:
    """A text of `size` characters."""
    return "x" * size

'''


@pytest.fixture
def talkative(tmp_path: Path) -> Path:
    (tmp_path / "talkative.py").write_text(TALKATIVE_TOOLS, encoding="utf-8")
    (tmp_path / "loud.py").write_text("print('imported')\nfrom talkative import noisy\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("over", ["memory", "stdio"])
def test_call_shows_the_tools_log_messages_on_stderr_with_their_level(talkative: Path, over: str) -> None:
    args = ["chatty"] if over == "stdio" else ["talkative.py", "chatty"]
    stdio = ["--", PYTHON, "-m", "toolkit", "serve", "talkative.py"] if over == "stdio" else []
    shown = toolkit("call", *(["--stdio"] if stdio else []), *args, *stdio, cwd=talkative)
    quiet = toolkit("call", "--quiet", *(["--stdio"] if stdio else []), *args, *stdio, cwd=talkative)
    detailed = toolkit("call", "--log-level", "debug", *(["--stdio"] if stdio else []), *args, *stdio, cwd=talkative)

    assert outcome(shown) == (0, '{\n  "answer": 42\n}\n', 'info: starting\nwarning: {"disk": "low"}\n')
    assert outcome(quiet) == (0, '{\n  "answer": 42\n}\n', "")
    assert detailed.stderr == 'debug: details\ninfo: starting\nwarning: {"disk": "low"}\n'


def test_in_memory_what_a_tool_writes_to_stdout_goes_to_stderr_so_stdout_holds_only_the_result(
    talkative: Path,
) -> None:
    run = toolkit("call", "loud.py", "noisy", cwd=talkative)

    assert outcome(run) == (0, '{\n  "answer": 42\n}\n', "imported\nprint\nos.write\nchild\n")
    assert json.loads(run.stdout) == {"answer": 42}


@pytest.mark.parametrize("over", ["memory", "stdio"])
def test_a_call_that_outlasts_its_timeout_exits_124(talkative: Path, over: str) -> None:
    if over == "stdio":
        run = toolkit(
            "call",
            "--stdio",
            "--timeout",
            "0.2",
            "forever",
            "--",
            PYTHON,
            "-m",
            "toolkit",
            "serve",
            "talkative.py",
            cwd=talkative,
        )
    else:
        run = toolkit("call", "--timeout", "0.2", "talkative.py", "forever", cwd=talkative)

    assert (run.returncode, run.stdout) == (124, "")
    assert run.stderr.endswith("toolkit: error: call: forever gave no result within 0.2 seconds (--timeout)\n")


def test_a_reply_over_the_message_size_limit_is_an_error_naming_the_option(talkative: Path) -> None:
    server = ["--", PYTHON, "-m", "toolkit", "serve", "talkative.py"]
    refused = toolkit("call", "--stdio", "--max-message-size", "64K", "big", "size=100000", *server, cwd=talkative)
    accepted = toolkit("call", "--stdio", "--max-message-size", "1M", "big", "size=100000", *server, cwd=talkative)
    in_memory = toolkit("call", "--max-message-size", "64K", "talkative.py", "big", "size=100000", cwd=talkative)

    expected = (
        "toolkit: error: the reply to tools/call is larger than max_message_size (65,536 bytes), so it was skipped; "
        "accept it with --max-message-size\n"
    )
    assert outcome(refused) == (2, "", expected)
    assert outcome(accepted) == (0, "x" * 100_000 + "\n", "")
    assert outcome(in_memory) == (2, "", expected)


def test_a_message_size_that_is_not_a_size_is_a_usage_error(in_process: InProcess) -> None:
    run = in_process("list", "--max-message-size", "lots", "examples/calculator.py")

    assert run.returncode == 2
    assert run.stderr.endswith("argument --max-message-size: 'lots' is not a size such as 20000000, 64K, 32M or 1G\n")


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (["-c", "import sys; sys.exit(3)"], "the server process exited with status 3"),
        (
            ["-c", "print('hello')"],
            "the server process exited with status 0; before that, it wrote what is not JSON-RPC to its output: "
            "'hello'",
        ),
        (
            ["-S", "-m", "toolkit", "serve", "calculator.py"],
            "the server process exited with status 1; its stderr ended with: ",
        ),
    ],
)
@pytest.mark.parametrize("verb", ["list", "call"])
def test_a_server_command_that_ends_at_start_is_one_line_saying_what_it_did(
    command: list[str], message: str, verb: str, tmp_path: Path, in_process: InProcess
) -> None:
    # From an empty folder, so that `python -S` finds toolkit neither in site-packages nor in the checkout. The server
    # is the process here; what is said of it is said by `main`, in this one.
    run = in_process(verb, "--stdio", *(["add"] if verb == "call" else []), "--", PYTHON, *command, cwd=tmp_path)

    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr.startswith(f"toolkit: error: {message}")
    assert run.stderr.count("\n") == 1
    if "-S" in command:  # python without site-packages cannot import toolkit
        assert run.stderr.endswith(": No module named toolkit\n")


NO_LOGGING_SERVER = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    method, reply = message.get("method"), {"jsonrpc": "2.0", "id": message.get("id")}
    if method == "initialize":
        info = {"name": "plain", "version": "1"}
        reply["result"] = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": info}
    elif method == "tools/list":
        reply["result"] = {"tools": [{"name": "ping", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        reply["result"] = {"content": [{"type": "text", "text": "pong"}]}
    elif "id" in message:
        reply["error"] = {"code": -32601, "message": "Method not found"}
    else:
        continue
    print(json.dumps(reply), flush=True)
"""


def test_call_works_with_a_server_that_offers_no_logging() -> None:
    run = toolkit("call", "--stdio", "ping", "--", PYTHON, "-c", NO_LOGGING_SERVER)

    assert outcome(run) == (0, "pong\n", "")


@pytest.mark.parametrize(
    "args",
    [
        ["docs", "examples/notes.py"],
        ["docs", "examples/notes.py", "--check", "tests/golden/calculator.md"],
        ["list", "examples/notes.py"],
        ["call", "examples/calculator.py", "summarize", "values=[1, 2]"],
    ],
)
def test_output_into_a_closed_pipe_ends_quietly(args: list[str]) -> None:
    reader, writer = os.pipe()
    os.close(reader)  # the reader is gone before the first byte: every write fails with EPIPE
    try:
        run = subprocess.run(
            [PYTHON, "-m", "toolkit", *args],
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            timeout=60,
            check=False,
        )
    finally:
        os.close(writer)

    assert (run.returncode, run.stderr) == (141, "")


# -- serve -----------------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_serve_speaks_mcp_over_stdio() -> None:
    command = [PYTHON, "-m", "toolkit", "serve", str(ROOT / "examples" / "calculator.py")]
    with anyio.fail_after(30):
        async with Client.stdio(command) as client:
            tools = await client.list_tools()
            result = await client.call_tool("add", {"a": 1, "b": 2})

    assert (len(tools), result.text) == (7, "3.0")


# -- mkdocs plugin ---------------------------------------------------------------------------------------------


def mkdocs_build(project: Path, page: str) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mkdocs")
    (project / "mkdocs.yml").write_text("site_name: t\nplugins:\n  - toolkit-tools\n", encoding="utf-8")
    (project / "docs").mkdir(exist_ok=True)
    (project / "docs" / "index.md").write_text(page, encoding="utf-8")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [PYTHON, "-m", "mkdocs", "build", "-q", "-d", "site"]
    return subprocess.run(command, capture_output=True, text=True, cwd=project, env=env, timeout=120, check=False)


def test_the_mkdocs_plugin_replaces_blocks_outside_code_fences(project: Path) -> None:
    page = (
        "# Reference\n\n```markdown\n::: toolkit-tools progress_tools.py\n```\n\n::: toolkit-tools progress_tools.py\n"
    )
    page += "    heading_level: 3\n\nAfter.\n"

    run = mkdocs_build(project, page)
    html = (project / "site" / "index.html").read_text(encoding="utf-8")

    assert (run.returncode, run.stderr) == (0, "")
    assert "::: toolkit-tools progress_tools.py" in html  # the example in the fence is kept
    tags = ('<h3 id="count">', '<h3 id="fail">', '<h3 id="echo">', "<p>After.</p>")
    assert [tag for tag in tags if tag not in html] == []


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ("::: toolkit-tools missing.py\n", "index.md: toolkit-tools missing.py: no such file: "),
        (
            "::: toolkit-tools progress_tools.py\n    colour: red\n",
            "index.md: unknown toolkit-tools option 'colour: red'",
        ),
    ],
)
def test_the_mkdocs_plugin_fails_the_build_on_a_bad_block(project: Path, block: str, message: str) -> None:
    run = mkdocs_build(project, block)

    assert run.returncode == 1
    assert message in run.stderr


# -- what a new user runs into ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["list", "loud.py"],
        ["docs", "loud.py", "--format", "json"],
        ["docs", "loud.py", "--format", "openai"],
        ["check", "loud.py", "--profile", "all", "--format", "json"],
        ["check", "loud.py", "--write", "-"],
    ],
)
def test_every_command_keeps_what_the_module_prints_as_it_loads_off_stdout(talkative: Path, args: list[str]) -> None:
    if args[-1] == "-":
        args = [*args[:-1], str(talkative / "snapshot.json")]
    run = toolkit(*args, cwd=talkative)

    assert run.returncode == 0, run.stderr
    assert run.stderr.startswith("imported\n")
    if "json" in args or "openai" in args:
        json.loads(run.stdout)
    else:
        assert "imported" not in run.stdout


NESTED = {
    "nested.py": "import helper\n",
    "helper.py": "def f():\n    return {}['k']\nf()\n",
}


def test_an_import_error_names_the_line_in_the_users_code_and_traceback_prints_it_all(tmp_path: Path) -> None:
    for name, text in NESTED.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    short = toolkit("list", "nested.py", cwd=tmp_path)
    before = toolkit("--traceback", "list", "nested.py", cwd=tmp_path)
    after = toolkit("list", "nested.py", "--traceback", cwd=tmp_path)

    message = "toolkit: error: cannot import 'nested.py': KeyError: 'k' (helper.py, line 2)\n"
    assert outcome(short) == (2, "", message)
    assert before.returncode == after.returncode == 2
    assert before.stderr == after.stderr
    trace = before.stderr.splitlines()
    assert trace[0] == "Traceback (most recent call last):"
    assert [line.strip() for line in trace if line.strip().startswith("File ")][-3:] == [
        f'File "{tmp_path / "nested.py"}", line 1, in <module>',
        f'File "{tmp_path / "helper.py"}", line 3, in <module>',
        f'File "{tmp_path / "helper.py"}", line 2, in f',
    ]
    assert trace[-2:] == ["KeyError: 'k'", message.rstrip("\n")]


SILENT_SERVER = "import time; time.sleep(100)"


@pytest.mark.parametrize(
    ("args", "seconds"),
    [
        (["list", "--timeout", "1"], "1 second"),
        (["docs", "--timeout", "0.5"], "0.5 seconds"),
        (["check", "--timeout", "0.5", "--profile", "all"], "0.5 seconds"),
    ],
)
def test_a_server_that_never_answers_gives_up_after_the_timeout_with_124(
    args: list[str], seconds: str, in_process: InProcess
) -> None:
    run = in_process(*args, "--stdio", "--", PYTHON, "-c", SILENT_SERVER)

    assert outcome(run) == (
        124,
        "",
        f"toolkit: error: {args[0]}: the server '{PYTHON} -c {SILENT_SERVER}' gave no tools within {seconds} "
        "(--timeout)\n",
    )


@pytest.mark.parametrize("value", ["0", "-1", "soon"])
def test_a_timeout_that_is_not_a_positive_number_is_a_usage_error(value: str, in_process: InProcess) -> None:
    run = in_process("list", "examples/calculator.py", "--timeout", value)

    assert run.returncode == 2
    assert f"argument --timeout: {value!r} is not a number of seconds above 0" in run.stderr


TYPED_TOOLS = '''
from typing import Literal

from toolkit import tool


@tool
def typed(
    text: str,
    count: int = 0,
    flag: bool = False,
    name: "str | None" = None,
    mode: Literal["1", "2"] = "1",
    value: object = None,
) -> dict[str, object]:
    """Return the arguments."""
    return {"text": text, "count": count, "flag": flag, "name": name, "mode": mode, "value": value}
'''


@pytest.fixture
def typed(tmp_path: Path) -> Path:
    (tmp_path / "typed.py").write_text(TYPED_TOOLS, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("over", ["memory", "stdio"])
def test_key_value_texts_are_strings_where_the_schema_says_string(typed: Path, over: str) -> None:
    pairs = ["text=123", "count=7", "flag=true", "name=true", "mode=2", "value=[1]"]
    if over == "stdio":
        run = toolkit("call", "--stdio", "typed", *pairs, "--", PYTHON, "-m", "toolkit", "serve", "typed.py", cwd=typed)
    else:
        run = toolkit("call", "typed.py", "typed", *pairs, cwd=typed)
    nulls = toolkit("call", "typed.py", "typed", "text=null", "name=null", cwd=typed)
    given_null = toolkit("call", "typed.py", "typed", "text=x", "--json", '{"name": null}', cwd=typed)

    assert (run.returncode, json.loads(run.stdout)) == (
        0,
        {"text": "123", "count": 7, "flag": True, "name": "true", "mode": "2", "value": [1]},
    )
    # `name: str | None = None` is served as a string (the null is left out of the schema), so `name=null` is the
    # text "null" as well; `--json` gives the JSON null.
    assert (json.loads(nulls.stdout)["text"], json.loads(nulls.stdout)["name"]) == ("null", "null")
    assert json.loads(given_null.stdout)["name"] is None


def test_a_key_given_twice_is_an_error(typed: Path, in_process: InProcess) -> None:
    run = in_process("call", "typed.py", "typed", "text=a", "text=b", cwd=typed)

    assert outcome(run) == (2, "", "toolkit: error: argument 'text' given twice (text=a and text=b)\n")


def test_json_arguments_come_from_stdin_or_a_file(typed: Path) -> None:
    (typed / "args.json").write_text('{"text": "from a file", "count": 2}', encoding="utf-8")
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    piped = subprocess.run(
        [PYTHON, "-m", "toolkit", "call", "typed.py", "typed", "--json", "-", "count=3"],
        input='{"text": "from stdin"}',
        capture_output=True,
        text=True,
        cwd=typed,
        env=env,
        timeout=60,
        check=False,
    )
    filed = toolkit("call", "typed.py", "typed", "--json", "@args.json", cwd=typed)
    missing = toolkit("call", "typed.py", "typed", "--json", "@nope.json", cwd=typed)

    assert (piped.returncode, json.loads(piped.stdout)["text"], json.loads(piped.stdout)["count"]) == (
        0,
        "from stdin",
        3,
    )
    assert (filed.returncode, json.loads(filed.stdout)["text"], json.loads(filed.stdout)["count"]) == (
        0,
        "from a file",
        2,
    )
    assert outcome(missing) == (
        2,
        "",
        "toolkit: error: cannot read 'nope.json' (--json @nope.json): No such file or directory\n",
    )


def test_an_unknown_tool_over_stdio_gets_a_suggestion_from_the_tools_listed(in_process: InProcess) -> None:
    run = in_process("call", "--stdio", "ad", "a=1", "--", PYTHON, "examples/calculator.py")
    far = in_process("call", "--stdio", "zzz", "--", PYTHON, "examples/calculator.py")

    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr.startswith("toolkit: error: the server refused the call: ")
    # Said once: toolkit's server already names the close match, so the CLI does not repeat it.
    assert run.stderr.endswith(": Unknown tool: ad; did you mean 'add'? (code -32602)\n")
    assert far.stderr.endswith(
        " (code -32602); tools: add, divide, combine, summarize, convert_distance, round_money, evaluate\n"
    )


def test_progress_into_a_file_is_throttled_and_ends_with_the_last_update(project: Path) -> None:
    run = toolkit("call", "progress_tools.py", "count", "n=3000", cwd=project)
    lines = run.stderr.splitlines()

    assert (run.returncode, run.stdout) == (0, "done\n")
    assert lines[0] == "[------------------------------] 1/3000 step 1"
    assert lines[-1] == "[##############################] 3000/3000 step 3000"
    assert len(lines) < 3000


def test_a_tool_the_servers_filter_hides_is_neither_called_nor_suggested_by_name(
    tmp_path: Path, in_process: InProcess
) -> None:
    server = tmp_path / "hidden.py"
    server.write_text(
        "from toolkit import Request, Server, ToolDefinition\n"
        "server = Server('h', tool_filter=lambda d, r: d.name != 'secret_admin_tool')\n"
        "@server.tool\n"
        "def secret_admin_tool() -> str:\n"
        "    return 'x'\n"
        "@server.tool\n"
        "def status() -> str:\n"
        "    return 'ok'\n"
    )
    near = in_process("call", str(server), "secret_admin")
    exact = in_process("call", str(server), "secret_admin_tool")
    assert near.returncode == exact.returncode == 2
    assert "secret_admin_tool" not in near.stderr
    assert near.stderr.endswith("Unknown tool: secret_admin (code -32602); tools: status\n")
    assert exact.stderr.endswith("Unknown tool: secret_admin_tool (code -32602); tools: status\n")
