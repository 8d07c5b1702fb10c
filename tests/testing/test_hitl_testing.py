"""Testing tools that ask: ToolTester's scripted answers and records, in both eras, and the pytest plugin's fixtures."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from toolkit import Context, ElicitRequest, ElicitResult, ProtocolError, SampleResult, Server, tool
from toolkit.testing import ToolTester, assert_error, assert_ok

pytest_plugins = ["pytester"]
ERAS = pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
EMPTY: dict[str, Any] = {"type": "object", "properties": {}}


@tool(destructive=True, confirm="Delete {path}?")
def delete_file(path: str) -> str:
    return f"deleted {path}"


@tool
async def survey(ctx: Context) -> str:
    first = await ctx.elicit("Tea?", {"type": "object", "properties": {"sugar": {"type": "integer", "default": 1}}})
    second = await ctx.elicit("Milk?", EMPTY)
    reply = await ctx.sample("Say cheese", max_tokens=5)
    return f"{first.action}:{first.content} {second.action} {reply.text}"


@tool
def tidy(ctx: Context) -> str:
    """Asks for the roots and a confirmation at once."""
    with ctx.together():
        roots = ctx.list_roots()
        ok = ctx.confirm("Tidy them?")
    return f"tidied {[str(path) for path in roots.paths]}" if ok.accepted else "left alone"


SERVER = Server("t", tools=[delete_file, survey, tidy])


@ERAS
def test_a_confirming_tool_in_three_lines(protocol: Any) -> None:
    with ToolTester(SERVER, protocol=protocol, elicitation="decline") as t:
        assert_error(t.call("delete_file", path="/tmp/x"), "declined")
        assert t.elicitations[0].message == "Delete /tmp/x?"


@ERAS
def test_scripts_in_order_and_records_per_call(protocol: Any) -> None:
    with ToolTester(SERVER, protocol=protocol, elicitation=["accept", "cancel"], sampling="cheese") as t:
        assert assert_ok(t.call("survey")).text == "accept:{'sugar': 1} cancel cheese"
        assert [e.message for e in t.elicitations] == ["Tea?", "Milk?"]
        assert [s.messages[0].blocks[0].text for s in t.samplings] == ["Say cheese"]
        t.elicitation = [{"sugar": 3}, ElicitResult.accept()]
        t.sampling = [SampleResult.reply("brie")]
        assert t.call("survey").text == "accept:{'sugar': 3} accept brie"
        assert len(t.elicitations) == 2  # records are the last call's


@ERAS
def test_a_question_nobody_scripted_fails_the_test_showing_it(protocol: Any) -> None:
    with (
        ToolTester(SERVER, protocol=protocol, elicitation=["accept"], sampling="x") as t,
        pytest.raises(AssertionError) as caught,
    ):
        t.call("survey")
    message = str(caught.value)
    assert "'Milk?'" in message
    assert "no elicitation answer was scripted" in message


@ERAS
def test_scripted_roots(protocol: Any, tmp_path: Path) -> None:
    with ToolTester(SERVER, protocol=protocol, roots=[tmp_path], elicitation=["accept"]) as t:
        assert assert_ok(t.call("tidy")).text == f"tidied [{str(tmp_path)!r}]"
        assert [e.message for e in t.elicitations] == ["Tidy them?"]
    with ToolTester(SERVER, protocol=protocol, elicitation=["accept"]) as t:
        if protocol == "handshake":
            assert_error(t.call("tidy"), "did not declare roots")
        else:
            with pytest.raises(ProtocolError, match="roots capability"):
                t.call("tidy")


def test_a_handler_answers_too_and_no_script_means_no_capability() -> None:
    def answer(request: ElicitRequest) -> ElicitResult[Any]:
        return ElicitResult.accept() if request.message == "Delete /a?" else ElicitResult.decline()

    with ToolTester(SERVER, elicitation=answer) as t:
        assert t.call("delete_file", path="/a").text == "deleted /a"
        assert_error(t.call("delete_file", path="/b"), "declined")
    with ToolTester(SERVER, protocol="handshake") as t:
        assert_error(t.call("delete_file", path="/a"), "client cannot ask the user")
        with pytest.raises(ValueError, match="cannot change between None"):
            t.elicitation = "accept"


@pytest.mark.parametrize("kind", ["elicitation", "sampling"])
def test_a_script_given_too_late_says_where_to_give_it_the_fixtures_included(kind: str) -> None:
    with ToolTester(SERVER, protocol="handshake") as t, pytest.raises(ValueError, match="cannot change") as raised:
        setattr(t, kind, "accept" if kind == "elicitation" else "a reply")

    # Before: "pass it to ToolTester(...)", which a test using the toolkit_tester fixture does not call.
    assert str(raised.value).endswith(
        f"pass it to ToolTester(..., {kind}=...), or, for the toolkit_tester fixture, give it with the "
        f'toolkit_{kind} fixture (override it, or @pytest.mark.parametrize("toolkit_{kind}", [...]))'
    )


def test_the_plugin_fixtures_take_scripts(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider --strict-markers\nfilterwarnings = error\n")
    pytester.makepyfile(
        demo=textwrap.dedent(
            """
            from toolkit import Server, tool

            @tool(destructive=True, confirm="Delete {path}?")
            def delete_file(path: str) -> str:
                return f"deleted {path}"

            server = Server("demo", tools=[delete_file])
            """
        )
    )
    pytester.makeconftest(
        "import pytest\nfrom demo import server\n\n@pytest.fixture\ndef toolkit_server():\n    return server\n"
    )
    pytester.makepyfile(
        test_confirm=textwrap.dedent(
            """
            import pytest

            @pytest.mark.parametrize(("toolkit_elicitation", "error"), [("accept", False), ("decline", True)])
            def test_delete(toolkit_tester, error):
                assert toolkit_tester.call("delete_file", path="/x").is_error is error

            @pytest.mark.anyio
            @pytest.mark.parametrize("toolkit_elicitation", ["accept"])
            async def test_delete_with_the_client(toolkit_client):
                assert (await toolkit_client.call_tool("delete_file", {"path": "/x"})).text == "deleted /x"
            """
        )
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=4)  # the async test runs on asyncio and trio
