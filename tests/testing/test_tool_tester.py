"""`toolkit.testing` without pytest's help: ToolTester, the result assertions, snapshots, the stdio command."""

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from toolkit import CallToolResult, Context, ProtocolError, Server, TextContent, ToolDefinition, ToolError, tool
from toolkit.testing import (
    Progress,
    ToolTester,
    assert_error,
    assert_ok,
    assert_tools_snapshot,
    stdio_command,
    stdio_environment,
    structured,
    text,
    tools_payload,
)


class Forecast(BaseModel):
    city: str
    celsius: float


server = Server("weather", version="1.0.0")


@server.tool(read_only=True)
def forecast(city: str) -> Forecast:
    """Tomorrow's forecast for a city."""
    if city == "Atlantis":
        raise ToolError(f"unknown city: {city}")
    return Forecast(city=city, celsius=21.5)


@server.tool
async def crawl(pages: int, ctx: Context) -> str:
    """Crawl some pages, reporting progress."""
    await ctx.debug("starting")
    for done in range(1, pages + 1):
        await ctx.report_progress(done, total=pages, message=f"page {done}")
    await ctx.info(f"crawled {pages} pages")
    return "done"


@server.tool
async def hang() -> None:
    """Never return."""
    await anyio.sleep_forever()


@server.tool
def rename(name: str, new_name: str) -> str:
    return f"{name} -> {new_name}"


FORECAST = {
    "name": "forecast",
    "description": "Tomorrow's forecast for a city.",
    "inputSchema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "outputSchema": {
        "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
        "required": ["city", "celsius"],
        "title": "Forecast",
        "type": "object",
    },
    "annotations": {"readOnlyHint": True},
}


EMPTY = {"type": "object", "additionalProperties": False}


def wire(result: CallToolResult) -> dict[str, Any]:
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


# --- ToolTester ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_tester_calls_a_tool_through_the_protocol_and_returns_its_result(backend: Any) -> None:
    with ToolTester(server, backend=backend, protocol="handshake") as tester:
        result = tester.call("forecast", city="Paris")

    assert wire(result) == {
        "content": [{"type": "text", "text": '{"city":"Paris","celsius":21.5}'}],
        "structuredContent": {"city": "Paris", "celsius": 21.5},
        "isError": False,
    }


@pytest.mark.parametrize(("protocol", "version"), [("auto", "2026-07-28"), ("handshake", "2025-11-25")])
def test_a_tester_speaks_the_protocol_it_is_given(protocol: Any, version: str) -> None:
    with ToolTester(server, protocol=protocol) as tester:
        assert tester.client.protocol_version == version
        assert structured(tester.call("forecast", city="Oslo")) == {"city": "Oslo", "celsius": 21.5}


def test_a_tester_lists_tools_as_a_client_sees_them() -> None:
    with ToolTester(server) as tester:
        tools = tester.list_tools()
        definition = tester.tool("forecast")

    assert [t.name for t in tools] == ["forecast", "crawl", "hang", "rename"]
    assert definition.model_dump(mode="json", by_alias=True, exclude_none=True) == FORECAST


def test_asking_a_tester_for_an_unknown_tool_names_the_tools_there_are() -> None:
    with ToolTester(forecast) as tester, pytest.raises(LookupError) as caught:
        tester.tool("forcast")

    assert str(caught.value) == "no tool named 'forcast'; the server has: 'forecast'"


def test_a_tester_keeps_the_log_messages_and_progress_of_the_last_call() -> None:
    with ToolTester(server) as tester:
        assert text(tester.call("crawl", pages=2)) == "done"
        first = ([(log.level, log.data) for log in tester.logs], list(tester.progress))
        tester.call("forecast", city="Rome")
        second = (list(tester.logs), list(tester.progress))

    assert first == (
        [("debug", "starting"), ("info", "crawled 2 pages")],
        [Progress(1, 2, "page 1"), Progress(2, 2, "page 2")],
    )
    assert second == ([], [])


def test_a_tester_receives_only_log_messages_at_its_level_and_above() -> None:
    with ToolTester(server, log_level="info") as tester:
        tester.call("crawl", pages=1)

    assert [log.data for log in tester.logs] == ["crawled 1 pages"]


def test_progress_compares_equal_to_a_plain_tuple() -> None:
    assert Progress(1, None, None) == (1, None, None)


def test_a_tester_serves_one_tool_or_a_list_of_tools() -> None:
    with ToolTester(forecast) as one, ToolTester([forecast, crawl]) as two:
        assert [t.name for t in one.list_tools()] == ["forecast"]
        assert [t.name for t in two.list_tools()] == ["forecast", "crawl"]
        assert one.server.name == "test"


def test_a_tool_argument_may_be_called_name() -> None:
    with ToolTester(rename) as tester:
        assert text(tester.call("rename", name="a", new_name="b")) == "a -> b"


def test_calling_an_unknown_tool_raises_the_protocol_error() -> None:
    with ToolTester(server) as tester, pytest.raises(ProtocolError) as caught:
        tester.call("nope")

    assert caught.value.code == -32602


def test_a_call_that_takes_longer_than_the_timeout_raises_timeout_error() -> None:
    with ToolTester(server, timeout=0.05) as tester:
        with pytest.raises(
            TimeoutError, match=r"^tool 'hang' gave no result within 0.05 seconds \(ToolTester timeout=0.05\)$"
        ):
            tester.call("hang")
        assert text(tester.call("crawl", pages=1)) == "done"


def test_an_exception_in_the_with_block_comes_out_unchanged() -> None:
    with pytest.raises(AssertionError) as caught, ToolTester(server) as tester:
        raise AssertionError(text(tester.call("forecast", city="Oslo")))

    assert caught.type is AssertionError
    assert caught.value.args == ('{"city":"Oslo","celsius":21.5}',)


def test_a_tester_made_inside_a_running_event_loop_works(anyio_backend: str) -> None:
    async def main() -> str:
        with ToolTester(server) as tester:  # blocks this loop while the portal's serves the call
            return text(tester.call("crawl", pages=1))

    assert anyio.run(main, backend=anyio_backend) == "done"


def test_a_tester_outside_its_with_block_says_how_to_use_it() -> None:
    tester = ToolTester(server)
    with pytest.raises(RuntimeError, match="inside `with`"):
        tester.call("forecast", city="Paris")
    with pytest.raises(RuntimeError, match="inside `with`"):
        tester.portal
    with tester:
        tester.portal.call(tester.client.ping)
    with pytest.raises(RuntimeError, match="inside `with`"):
        tester.list_tools()


# --- result assertions -----------------------------------------------------------------------------------


def test_the_result_helpers_give_text_structured_content_and_error_messages() -> None:
    with ToolTester(server) as tester:
        ok = tester.call("forecast", city="Lima")
        failed = tester.call("forecast", city="Atlantis")

    assert text(ok) == '{"city":"Lima","celsius":21.5}'
    assert assert_ok(ok) is ok
    assert structured(ok) == {"city": "Lima", "celsius": 21.5}
    assert assert_error(failed) == "unknown city: Atlantis"
    assert assert_error(failed, match=r"unknown city: \w+") == "unknown city: Atlantis"


def test_the_result_assertions_fail_with_what_the_result_says() -> None:
    ok = CallToolResult(content=[TextContent(text="fine")])
    failed = CallToolResult(content=[TextContent(text="boom")], is_error=True)
    messages = []
    for check in (
        lambda: assert_ok(failed),
        lambda: structured(failed),
        lambda: structured(ok),
        lambda: assert_error(ok),
        lambda: assert_error(failed, match="bang"),
    ):
        with pytest.raises(AssertionError) as caught:
            check()
        messages.append(str(caught.value))

    assert messages == [
        "the tool call failed: boom",
        "the tool call failed: boom",
        "the result has no structured content; its text is: 'fine'",
        "expected the tool call to fail, but it succeeded with: 'fine'",
        "the error message 'boom' does not match 'bang'",
    ]


# --- snapshots -------------------------------------------------------------------------------------------


def test_the_tools_payload_is_what_a_client_of_each_revision_receives() -> None:
    @tool(structured=True)
    def cities() -> list[str]:
        return []

    strings = {"items": {"type": "string"}, "type": "array"}
    payloads = [tools_payload(cities, protocol=p) for p in ("2026-07-28", "handshake", "2025-03-26", "2024-11-05")]

    assert payloads == [
        {"tools": [{"name": "cities", "inputSchema": EMPTY, "outputSchema": strings}]},
        {
            "tools": [
                {
                    "name": "cities",
                    "inputSchema": EMPTY,
                    "outputSchema": {"type": "object", "properties": {"result": strings}, "required": ["result"]},
                }
            ]
        },
        {"tools": [{"name": "cities", "inputSchema": EMPTY}]},
        {"tools": [{"name": "cities", "inputSchema": EMPTY}]},
    ]


def test_the_tools_payload_of_definitions_is_the_definitions_as_json() -> None:
    definition = ToolDefinition.model_validate(FORECAST)

    assert tools_payload([definition]) == {"tools": [FORECAST]}
    assert tools_payload([]) == {"tools": []}
    assert tools_payload(server) == tools_payload([forecast, crawl, hang, rename])


def test_the_tools_payload_refuses_unknown_revisions_and_mixed_items() -> None:
    with pytest.raises(ValueError, match="unknown protocol revision '2099-01-01'"):
        tools_payload(server, protocol="2099-01-01")
    with pytest.raises(TypeError, match="not a mix"):
        tools_payload([forecast, ToolDefinition.model_validate(FORECAST)])


def test_a_missing_snapshot_is_created_then_matched(tmp_path: Path) -> None:
    path = tmp_path / "snapshots" / "weather.json"

    assert assert_tools_snapshot(forecast, path) == "created"
    assert assert_tools_snapshot(forecast, path) == "matched"
    assert json.loads(path.read_text()) == {"tools": [FORECAST]}
    assert path.read_text().startswith('{\n  "tools": [\n    {\n      "name": "forecast",')


def test_a_snapshot_that_differs_fails_with_a_unified_diff(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    assert_tools_snapshot(forecast, path)

    @tool(read_only=True)
    def forecast_v2(city: str, days: int = 1) -> Forecast:
        """Tomorrow's forecast for a city."""
        return Forecast(city=city, celsius=0)

    with pytest.raises(AssertionError) as caught:
        assert_tools_snapshot([forecast_v2], path)

    assert str(caught.value) == textwrap.dedent(f"""\
        the tools differ from the snapshot {path}:
        --- {path} (snapshot)
        +++ current
        @@ -1,13 +1,17 @@
         {{
           "tools": [
             {{
        -      "name": "forecast",
        +      "name": "forecast_v2",
               "description": "Tomorrow's forecast for a city.",
               "inputSchema": {{
                 "type": "object",
                 "properties": {{
                   "city": {{
                     "type": "string"
        +          }},
        +          "days": {{
        +            "type": "integer",
        +            "default": 1
                   }}
                 }},
                 "required": [
        """)


def test_update_rewrites_a_snapshot_that_differs(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    assert_tools_snapshot(forecast, path)

    assert assert_tools_snapshot(crawl, path, update=True) == "updated"
    assert json.loads(path.read_text()) == tools_payload(crawl)


# --- stdio -----------------------------------------------------------------------------------------------


def test_the_stdio_command_serves_the_server_by_its_module_and_name() -> None:
    assert stdio_command(server) == [sys.executable, "-m", "toolkit", "serve", f"{__name__}:server"]


def test_the_stdio_command_needs_a_server_a_module_holds() -> None:
    with pytest.raises(LookupError, match="define it at module level"):
        stdio_command(Server("local"))


def test_the_stdio_environment_gives_a_new_process_this_import_path() -> None:
    paths = stdio_environment()["PYTHONPATH"].split(os.pathsep)

    assert str(Path(__file__).parent) in paths
    assert sys.prefix not in paths


def test_the_stdio_environment_keeps_an_existing_pythonpath_last(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["/opt/a", "/opt/b"]))

    assert stdio_environment()["PYTHONPATH"].endswith(os.pathsep + os.pathsep.join(["/opt/a", "/opt/b"]))


def test_the_tool_tester_docstring_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", ToolTester.__doc__ or "", re.DOTALL)

    assert len(blocks) == 1
    exec(textwrap.dedent(blocks[0]), {})


def test_importing_toolkit_testing_needs_no_pytest() -> None:
    script = textwrap.dedent("""\
        import sys
        sys.modules["pytest"] = None  # importing pytest now fails
        from toolkit import tool
        from toolkit.testing import ToolTester, text

        @tool
        def hello() -> str:
            return "hi"

        with ToolTester(hello) as tester:
            print(text(tester.call("hello")))
        """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)

    assert (done.returncode, done.stdout, done.stderr) == (0, "hi\n", "")
