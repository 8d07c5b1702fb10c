"""The pytest plugin, driven as users drive it: test projects run by `pytester`."""

import json
import re
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "testing.md"
EXAMPLE = ROOT / "examples" / "project"
FENCE = re.compile(r"^```python\n# (?P<name>\S+\.py)\n(?P<code>.*?)^```$", re.MULTILINE | re.DOTALL)
BACKENDS = 2  # anyio runs each async test on asyncio and trio

SERVER = """\
import os

from toolkit import Server

server = Server("demo")


@server.tool
def add(a: int, b: int) -> int:
    \"\"\"Add two integers.\"\"\"
    return a + b


@server.tool
def pid() -> int:
    return os.getpid()
"""

CONFTEST = """\
import pytest

from demo import server


@pytest.fixture
def toolkit_server():
    return server
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A test project with a `demo` server and a conftest pointing the plugin at it."""
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider --strict-markers\nfilterwarnings = error\n")
    pytester.makepyfile(demo=SERVER)
    pytester.makeconftest(CONFTEST)
    return pytester


def guide_files() -> dict[str, str]:
    """The files of the guide's test project: each ```python block whose first line is `# name.py`."""
    return {match["name"]: match["code"] for match in FENCE.finditer(GUIDE.read_text(encoding="utf-8"))}


# --- fixtures --------------------------------------------------------------------------------------------


def test_the_guide_s_test_project_passes(pytester: pytest.Pytester) -> None:
    files = guide_files()
    for name, code in files.items():
        path = pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code, encoding="utf-8")
    pytester.makepyfile(
        **{
            "both/test_both": """
                import pytest

                @pytest.mark.anyio
                async def test_add(toolkit_client, toolkit_transport):
                    assert (await toolkit_client.call_tool("divide", {"a": 4, "b": 2})).text
                """
        }
    )

    # In a new process: the guide's module names (test_transports, ...) may be taken in this one.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v")

    assert sorted(files) == [
        "both/conftest.py",
        "conftest.py",
        "my_tools.py",
        "test_async.py",
        "test_monkeypatch.py",
        "test_schema.py",
        "test_sync.py",
        "test_transports.py",
    ]
    result.assert_outcomes(passed=1 + 2 * BACKENDS + 2 * BACKENDS + 1 + 1 + 2 * BACKENDS)
    result.stdout.fnmatch_lines(
        [
            "both/test_both.py::test_add[[]asyncio-stdio[]] PASSED*",
            "test_transports.py::test_divide_works_in_memory_and_over_stdio[[]asyncio-stdio[]] PASSED*",
            "*= toolkit snapshots =*",
            "created snapshots/test_schema.test_tool_definitions_have_not_changed.json",
        ]
    )


def test_a_sync_test_gets_a_tool_tester_over_the_server(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        from toolkit.testing import text

        def test_add(toolkit_tester):
            assert text(toolkit_tester.call("add", a=1, b=2)) == "3"
        """
    )

    project.runpytest().assert_outcomes(passed=1)


def test_without_a_toolkit_server_fixture_the_test_fails_saying_how_to_define_one(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_add(toolkit_tester):
            pass
        """
    )

    result = pytester.runpytest()

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["toolkit: no server to test. Define a `toolkit_server` fixture (in conftest.py, for example) *"]
    )


def test_a_failing_assertion_reports_what_the_result_said_at_the_user_s_line(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        from toolkit.testing import assert_error

        def test_add_fails(toolkit_tester):
            result = toolkit_tester.call("add", a=1, b=2)
            assert_error(result, match="overflow")
        """
    )

    result = project.runpytest()

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            '>       assert_error(result, match="overflow")',
            "E       AssertionError: expected the tool call to fail, but it succeeded with: '3'",
        ]
    )
    result.stdout.no_fnmatch_line("*ExceptionGroup*")


def test_an_async_test_gets_a_connected_client_on_each_backend(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import pytest

        @pytest.mark.anyio
        async def test_add(toolkit_client, anyio_backend):
            assert (await toolkit_client.call_tool("add", {"a": 1, "b": 2})).text == "3"
            assert toolkit_client.protocol_version == "2026-07-28"
        """
    )

    result = project.runpytest("-v")

    result.assert_outcomes(passed=BACKENDS)
    result.stdout.fnmatch_lines(["*test_add[[]asyncio[]] PASSED*", "*test_add[[]trio[]] PASSED*"])


def test_the_protocol_can_be_parametrized(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import pytest

        @pytest.mark.anyio
        @pytest.mark.parametrize("toolkit_protocol", ["2026-07-28", "handshake"])
        async def test_era(toolkit_client, toolkit_tester, toolkit_protocol):
            expected = "2025-11-25" if toolkit_protocol == "handshake" else "2026-07-28"
            assert toolkit_client.protocol_version == expected
            assert toolkit_tester.client.protocol_version == expected
        """
    )

    project.runpytest().assert_outcomes(passed=2 * BACKENDS)


# --- transports ------------------------------------------------------------------------------------------


def test_the_stdio_transport_serves_from_another_process(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import os
        import pytest

        @pytest.mark.anyio
        @pytest.mark.parametrize("toolkit_transport", ["memory", "stdio"])
        async def test_pid(toolkit_client, toolkit_transport):
            pid = int((await toolkit_client.call_tool("pid")).text)
            assert (pid == os.getpid()) == (toolkit_transport == "memory")
        """
    )

    project.runpytest().assert_outcomes(passed=2 * BACKENDS)


def test_the_stdio_command_can_be_overridden(project: pytest.Pytester) -> None:
    project.makepyfile(serve_demo="from demo import server\n\nserver.run()\n")
    project.makeconftest(
        CONFTEST
        + textwrap.dedent(
            f"""
            @pytest.fixture
            def toolkit_stdio_command():
                return [{sys.executable!r}, "serve_demo.py"]
            """
        )
    )
    project.makepyfile(
        """
        import pytest

        @pytest.mark.anyio
        @pytest.mark.parametrize("toolkit_transport", ["stdio"])
        async def test_add(toolkit_client, toolkit_stdio_command):
            assert toolkit_stdio_command[-1] == "serve_demo.py"
            assert (await toolkit_client.call_tool("add", {"a": 2, "b": 2})).text == "4"
        """
    )

    project.runpytest().assert_outcomes(passed=BACKENDS)


def test_stdio_needs_a_server_a_module_holds(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        from toolkit import Server

        @pytest.fixture
        def toolkit_server():
            return Server("made-here")

        @pytest.mark.anyio
        @pytest.mark.parametrize("toolkit_transport", ["stdio"])
        @pytest.mark.parametrize("anyio_backend", ["asyncio"])
        async def test_nothing(toolkit_client):
            pass
        """
    )

    result = pytester.runpytest()

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "toolkit: cannot find server 'made-here' as a global of an imported module, so a new process cannot "
            "import it: define it at module level, or override the `toolkit_stdio_command` fixture"
        ]
    )


def test_an_unknown_transport_fails_the_test(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import pytest

        @pytest.mark.anyio
        @pytest.mark.parametrize("toolkit_transport", ["http"])
        @pytest.mark.parametrize("anyio_backend", ["asyncio"])
        async def test_nothing(toolkit_client):
            pass
        """
    )

    result = project.runpytest()

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*toolkit: unknown toolkit_transport 'http'; use 'memory' or 'stdio'"])


# --- snapshots -------------------------------------------------------------------------------------------

SNAPSHOT_TEST = """
from demo import server

def test_tools(toolkit_snapshot):
    toolkit_snapshot(server)
"""


def test_a_missing_snapshot_is_created_and_reported(project: pytest.Pytester) -> None:
    project.makepyfile(test_tools_schema=SNAPSHOT_TEST)

    first = project.runpytest()
    second = project.runpytest()

    first.assert_outcomes(passed=1)
    first.stdout.fnmatch_lines(["*= toolkit snapshots =*", "created snapshots/test_tools_schema.test_tools.json"])
    second.assert_outcomes(passed=1)
    second.stdout.no_fnmatch_line("*toolkit snapshots*")
    stored = json.loads((project.path / "snapshots" / "test_tools_schema.test_tools.json").read_text())
    assert [tool["name"] for tool in stored["tools"]] == ["add", "pid"]


def test_a_changed_tool_fails_with_a_diff_until_the_snapshot_is_updated(project: pytest.Pytester) -> None:
    project.makepyfile(test_tools_schema=SNAPSHOT_TEST)
    project.runpytest().assert_outcomes(passed=1)
    project.makepyfile(demo=SERVER.replace("def add(a: int, b: int) -> int:", "def add(a: float, b: int) -> int:"))

    failed = project.runpytest()
    updated = project.runpytest("--toolkit-update-snapshots")
    passed = project.runpytest()

    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(
        [
            "the tools differ from the snapshot snapshots/test_tools_schema.test_tools.json:",
            "--- snapshots/test_tools_schema.test_tools.json (snapshot)",
            "+++ current",
            "@@ -7,7 +7,7 @@",
            '         "type": "object",',
            '         "properties": {',
            '           "a": {',
            '-            "type": "integer"',
            '+            "type": "number"',
            "           },",
            '           "b": {',
            '             "type": "integer"',
            "(run pytest with --toolkit-update-snapshots to accept the change)",
        ]
    )
    failed.stdout.no_fnmatch_line("*Traceback*")
    updated.assert_outcomes(passed=1)
    updated.stdout.fnmatch_lines(["*= toolkit snapshots =*", "updated snapshots/test_tools_schema.test_tools.json"])
    passed.assert_outcomes(passed=1)
    stored = json.loads((project.path / "snapshots" / "test_tools_schema.test_tools.json").read_text())
    assert stored["tools"][0]["inputSchema"]["properties"]["a"] == {"type": "number"}


def test_a_snapshot_can_be_named_and_taken_for_an_earlier_revision(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import pytest
        from demo import server

        def test_tools(toolkit_snapshot):
            toolkit_snapshot(server, "demo tools", protocol="2024-11-05")

        @pytest.mark.anyio
        @pytest.mark.parametrize("anyio_backend", ["asyncio"])
        @pytest.mark.parametrize("toolkit_transport", ["stdio"])
        async def test_listed(toolkit_client, toolkit_snapshot):
            toolkit_snapshot(await toolkit_client.list_tools(), "listed")
        """
    )

    result = project.runpytest()

    result.assert_outcomes(passed=2)
    old = json.loads((project.path / "snapshots" / "demo_tools.json").read_text())
    listed = json.loads((project.path / "snapshots" / "listed.json").read_text())
    assert old["tools"][1] == {"name": "pid", "inputSchema": {"type": "object", "additionalProperties": False}}
    assert [tool["name"] for tool in listed["tools"]] == ["add", "pid"]


# --- the plugin ------------------------------------------------------------------------------------------


def test_the_update_option_is_in_pytest_s_help(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")

    result.stdout.fnmatch_lines(
        ["toolkit:", "  --toolkit-update-snapshots", "*toolkit: rewrite tool-definition snapshots that differ,*"]
    )


def test_the_plugin_can_be_disabled(project: pytest.Pytester) -> None:
    project.makepyfile("def test_add(toolkit_tester):\n    pass\n")

    result = project.runpytest("-p", "no:toolkit")

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fixture 'toolkit_tester' not found"])


def test_the_example_project_s_tests_pass_against_its_committed_snapshot(pytester: pytest.Pytester) -> None:
    shutil.copytree(EXAMPLE, pytester.path / "project", ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    pytester.chdir()

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "project")

    result.assert_outcomes(passed=3 + 2 * BACKENDS + 1)
    result.stdout.no_fnmatch_line("*toolkit snapshots*")
