"""`toolkit lint`: the mistakes in the tools' definitions that make models misuse them, and, with `--call`, what
real calls of the tools that are safe to call show (a result over the budget, a protocol error for a failed run)."""

from __future__ import annotations

import argparse
import difflib
import json
from typing import Any, TextIO

import anyio

from toolkit import ProtocolError, Server
from toolkit._lint import Finding, check_codes, lint, lint_definitions, location, measured_findings, select

from ._commands import CommandError, CommandTimeout, connect, data_on_stdout, is_url, load, payload, run, seconds
from ._output import findings_json, format_findings

__all__ = ["lint_tools"]


@data_on_stdout
def lint_tools(args: argparse.Namespace, out: TextIO) -> int:
    """`toolkit lint`: print every finding; 1 when one at error level remains after `--select`/`--ignore`."""
    calls = [_call_of(text) for text in args.call or ()]
    chosen, ignored = _codes(args.select), _codes(args.ignore)
    try:
        check_codes([*chosen, *ignored])  # before any server starts
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    if args.stdio or is_url(args.target):
        tools = payload(args)
        findings = lint_definitions(tools)
    else:
        server = load(args.target)
        tools = [t.definition.model_dump(mode="json", by_alias=True, exclude_none=True) for t in server.tools.values()]
        findings = lint(server)
        args.target = server  # the calls below reach the same server, in memory
    if calls:
        findings += _measure(args, tools, calls)
    kept = select(findings, chosen, ignored)
    out.write(findings_json(kept, len(tools)) if args.format == "json" else format_findings(kept, len(tools)))
    return 1 if any(f.rule.level == "error" for f in kept) else 0


def _call_of(text: str) -> tuple[str, dict[str, Any]]:
    """`--call NAME` or `--call 'NAME={"key": "value"}'`: the tool and its arguments (`=` is never in a name)."""
    name, sep, given = text.partition("=")
    if not sep:
        return name, {}
    try:
        arguments = json.loads(given)
    except ValueError as exc:
        raise CommandError(f"--call {text}: the arguments after '=' are not JSON: {exc}") from exc
    if not isinstance(arguments, dict):
        raise CommandError(f"--call {text}: the arguments after '=' must be a JSON object")
    return name, arguments


def _codes(values: list[str] | None) -> list[str]:
    return [code.strip().upper() for value in values or () for code in value.split(",") if code.strip()]


def _measure(
    args: argparse.Namespace, tools: list[dict[str, Any]], calls: list[tuple[str, dict[str, Any]]]
) -> list[Finding]:
    """Call each tool once with the arguments given, refusing any that is not both read-only and idempotent."""
    listed = {str(t.get("name")): t for t in tools}
    for name, _ in calls:
        if name not in listed:
            close = difflib.get_close_matches(name, list(listed), n=1)
            raise CommandError(f"--call: no tool named {name!r}" + (f"; did you mean {close[0]!r}?" if close else ""))
        hints = listed[name].get("annotations") or {}
        missing = [
            label
            for key, label in (("readOnlyHint", "read-only"), ("idempotentHint", "idempotent"))
            if hints.get(key) is not True
        ]
        if missing:
            raise CommandError(
                f"--call {name}: lint calls only tools marked read-only and idempotent; {name} is not marked "
                f"{' or '.join(missing)}"
            )

    local = args.target.tools if isinstance(args.target, Server) else {}
    where = {name: location(local[name]) if name in local else None for name, _ in calls}

    async def call_all() -> list[Finding]:
        found: list[Finding] = []
        with anyio.fail_after(args.timeout):
            async with connect(args) as client:
                for name, arguments in calls:
                    try:
                        result = await client.call_tool(name, arguments)
                    except ProtocolError as exc:
                        found += measured_findings(name, None, (exc.code, exc.message), args.budget, where[name])
                        continue
                    wire = result.model_dump(mode="json", by_alias=True, exclude_none=True)
                    found += measured_findings(name, wire, None, args.budget, where[name])
        return found

    try:
        return run(call_all)
    except TimeoutError as exc:
        raise CommandTimeout(f"lint: the calls gave no result within {seconds(args.timeout)} (--timeout)") from exc
