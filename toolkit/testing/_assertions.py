"""Short assertions on tool results, and the provider-portability assertion."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolkit import CallToolResult, Server, Tool
from toolkit._profiles.portability import check_tools

from ._snapshots import Definitions, tools_payload

if TYPE_CHECKING:
    from toolkit._lint import Finding

__all__ = ["assert_error", "assert_lint_clean", "assert_ok", "assert_portable", "structured", "text"]


def text(result: CallToolResult) -> str:
    """The text of every text block of `result`, joined by newlines."""
    return result.text


def assert_ok(result: CallToolResult) -> CallToolResult:
    """Check that the call succeeded and return the result.

    Raises:
        AssertionError: the result is an error; the message includes the error text.
    """
    __tracebackhide__ = True
    if result.is_error:
        raise AssertionError(f"the tool call failed: {result.text}")
    return result


def structured(result: CallToolResult) -> Any:
    """The structured content of a successful call (`structuredContent`).

    Raises:
        AssertionError: the result is an error, or has no structured content.
    """
    __tracebackhide__ = True
    assert_ok(result)
    if result.structured_content is None:
        raise AssertionError(f"the result has no structured content; its text is: {result.text!r}")
    return result.structured_content


def assert_error(result: CallToolResult, match: str | re.Pattern[str] | None = None) -> str:
    """Check that the call failed (`isError`), and return its message.

    Args:
        result: The call's result.
        match: A regular expression the message must contain (`re.search`), as `pytest.raises(match=...)`.

    Raises:
        AssertionError: the result is not an error, or its message does not match.
    """
    __tracebackhide__ = True
    message = result.text
    if not result.is_error:
        raise AssertionError(f"expected the tool call to fail, but it succeeded with: {message!r}")
    if match is not None and re.search(match, message) is None:
        pattern = match.pattern if isinstance(match, re.Pattern) else match
        raise AssertionError(f"the error message {message!r} does not match {pattern!r}")
    return message


# -- provider profiles -------------------------------------------------------------------------------------


def assert_portable(target: Definitions, *profiles: str, adapted: bool = False) -> None:
    """Check that no provider of `profiles` would reject the tools (problems it only mishandles pass).

    Args:
        target: A server, a tool, several tools, or tool definitions, checked as a client receives them (a
            server with `schema_profile` serves adapted schemas).
        profiles: Profile names (`"gemini"`, `"openai-strict"`, ...), or `"all"` (every profile that is not
            strict: `openai`, `gemini`, `anthropic`, `claude-desktop`; the default).
        adapted: Check what toolkit's adaptation leaves (what `tool.definition_for(profile)` and
            `Server(schema_profile=...)` send), instead of the definitions as they are.

    Raises:
        AssertionError: a tool would be rejected; the message lists every problem, one line each.
    """
    __tracebackhide__ = True
    problems = check_tools(tools_payload(target)["tools"], profiles or ("all",))
    failing = [p for p in problems if p.rejects and not (adapted and p.fixable)]
    if failing:
        raise AssertionError(
            f"{len(failing)} problem{'' if len(failing) == 1 else 's'} a provider would reject:\n"
            + "\n".join(f"- {p}" for p in failing)
        )


# -- lint ------------------------------------------------------------------------------------------------------


def assert_lint_clean(
    target: Definitions | str, *, select: Sequence[str] = (), ignore: Sequence[str] = (), warnings: bool = True
) -> None:
    """Check that `toolkit lint` finds nothing wrong with the tools: gate CI on it with one test.

    Toolkit tools (a server, a tool, several tools) are linted with what their code says, and their
    `lint_ignore=` silences apply; tool definitions (from `client.list_tools()`) as any client sees them.

    Args:
        target: A server, a tool, several tools, or tool definitions; or a target as `toolkit lint` takes it
            (`app.py`, `app.py:server`, `package.module`), relative to the current directory.
        select: Check only these codes or prefixes (`"TK3"`, `"TK301"`); all when empty.
        ignore: Leave out these codes or prefixes.
        warnings: Fail on warnings too (the default); `False` fails on error-level findings only, as
            `toolkit lint`'s exit status does.

    Raises:
        AssertionError: a finding remains; the message lists every one, one line each.
        ValueError: a target string that does not load (the message says why).
    """
    __tracebackhide__ = True
    # Loaded here: the pytest plugin imports this module in every test run of every user, and the rules are the
    # heaviest import of toolkit (about 8 ms), for the few runs that lint.
    from toolkit._lint import select as select_findings

    findings = _lint_findings(_loaded(target) if isinstance(target, str) else target)
    failing = [f for f in select_findings(findings, select, ignore) if warnings or f.rule.level == "error"]
    if failing:
        raise AssertionError(
            f"toolkit lint: {len(failing)} finding{'' if len(failing) == 1 else 's'}:\n"
            + "\n".join(f"- {f} [{f.rule.level}] (fix: {f.rule.hint})" for f in failing)
        )


def _loaded(target: str) -> Server:
    """The server a `toolkit lint` target names (`app.py`, `app.py:server`, `package.module`).

    Raises:
        ValueError: it does not load (the message says why).
    """
    from toolkit._target import TargetError, load_server

    try:
        return load_server(target)
    except TargetError as exc:
        raise ValueError(str(exc)) from None


def _lint_findings(target: Definitions) -> list[Finding]:
    """What `toolkit lint` finds: toolkit tools with what their code says, definitions as a client sees them."""
    from toolkit._lint import lint, lint_definitions

    if isinstance(target, (Server, Tool)):
        return lint(target)
    items = list(target)
    tools = [item for item in items if isinstance(item, Tool)]
    if tools and len(tools) == len(items):
        return lint(tools)
    # tools_payload refuses a mix of tools and definitions, as the snapshot helpers do.
    return lint_definitions(tools_payload(items)["tools"])
