"""`toolkit lint`: the mistakes in the tools' definitions that make models misuse them, and, with `--call`, what
real calls of the tools that are safe to call show (a result over the budget, a protocol error for a failed run)."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import logging
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TextIO

import anyio

from toolkit import ProtocolError, Server, TextResourceContents
from toolkit._lint import Finding, Page, check_codes, lint, lint_definitions, location, measured_findings, select

from ._common import (
    CommandError,
    CommandTimeout,
    connect,
    data_on_stdout,
    is_url,
    json_object,
    load,
    mounted,
    read_server,
    run,
    seconds,
    tools_payload,
)
from ._output import findings_json, format_findings

if TYPE_CHECKING:
    from toolkit import Client

__all__ = ["lint_tools", "page_findings"]


@data_on_stdout
def lint_tools(args: argparse.Namespace, out: TextIO) -> int:
    """`toolkit lint`: print every finding; 1 when one at error level remains after `--select`/`--ignore`, or when
    a `--call` returned an error result (then it measured nothing: a note on stderr says which call and why)."""
    calls = [_call_of(text) for text in args.call or ()]
    chosen, ignored = _codes(args.select), _codes(args.ignore)
    try:
        check_codes([*chosen, *ignored])  # before any server starts
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    tools, findings = _lint_server(args)
    unmeasured: list[str] = []
    if calls:
        measured, unmeasured = _measure(args, tools, calls)
        findings += measured
    kept = select(findings, chosen, ignored)
    out.write(findings_json(kept, len(tools)) if args.format == "json" else format_findings(kept, len(tools)))
    for note in unmeasured:
        print(f"toolkit lint: {note}", file=sys.stderr)
    return 1 if unmeasured or any(f.rule.level == "error" for f in kept) else 0


def _lint_server(args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[Finding]]:
    """The server's tools (as JSON) and what lint finds in them: another server's as its definitions say, a module's
    own with what their code says. A module's server is left in `args.target`, so that `--call` reaches the same
    server, in memory."""
    if args.stdio or is_url(args.target):
        tools, pages = read_server(args, _tools_and_pages, apps=True)
        return tools, lint_definitions(tools, pages=pages)
    server = load(args.target)
    findings = mounted(server, lint)  # a gateway's mounted tools are listed once its upstreams are connected
    args.target = server
    return [
        t.definition.model_dump(mode="json", by_alias=True, exclude_none=True) for t in server.tools.values()
    ], findings


def page_findings(args: argparse.Namespace) -> list[Finding]:
    """What lint finds of the command's server's MCP Apps pages (TK701-TK703): `toolkit check` reports them too."""
    if args.stdio or is_url(args.target):
        tools, pages = read_server(args, _tools_and_pages, apps=True)
        found = lint_definitions(tools, pages=pages)
    else:
        found = mounted(load(args.target), lint)
    return [finding for finding in found if finding.rule.code.startswith("TK7")]


async def _tools_and_pages(client: Client) -> tuple[list[dict[str, Any]], dict[str, Page] | None]:
    """The tools, as an MCP Apps host lists them, and the server's `ui://` pages (None: it serves no resources)."""
    tools = await tools_payload(client)
    if "resources" not in client.capabilities:
        return tools, None
    pages: dict[str, Page] = {}
    for resource in await client.list_resources():
        uri = resource.get("uri")
        if isinstance(uri, str) and uri.startswith("ui://"):
            page = await _page(client, uri, resource)
            if page is not None:
                pages[uri] = page
    return tools, pages


async def _page(client: Client, uri: str, resource: dict[str, Any]) -> Page | None:
    """The page a `ui://` resource holds: its first contents when they are text, with the contents' `_meta.ui` (else
    the listed resource's: the spec says the contents' comes first); None when it cannot be read or is not text."""
    with contextlib.suppress(ProtocolError):
        contents = await client.read_resource(uri)
        for item in contents[:1]:
            if isinstance(item, TextResourceContents):
                listed = (resource.get("_meta") or {}).get("ui") or {}
                return Page(item.text, (item.meta or {}).get("ui") or listed)
    return None


def _call_of(text: str) -> tuple[str, dict[str, Any]]:
    """`--call NAME` or `--call 'NAME={"key": "value"}'`: the tool and its arguments (`=` is never in a name)."""
    name, sep, given = text.partition("=")
    if not sep:
        return name, {}
    return name, json_object(given, f"--call {text} (the arguments after '=')")


def _codes(values: list[str] | None) -> list[str]:
    return [code.strip().upper() for value in values or () for code in value.split(",") if code.strip()]


def _measure(
    args: argparse.Namespace, tools: list[dict[str, Any]], calls: list[tuple[str, dict[str, Any]]]
) -> tuple[list[Finding], list[str]]:
    """Call each tool once with the arguments given, refusing any that is not read-only: the findings, and a note for
    each call that returned an error result (its size says nothing about a real result)."""
    _check_calls({str(t.get("name")): t for t in tools}, calls)
    local = args.target.tools if isinstance(args.target, Server) else {}
    where = {name: location(local[name]) if name in local else None for name, _ in calls}

    async def call_all() -> tuple[list[Finding], list[str]]:
        found: list[Finding] = []
        notes: list[str] = []
        with anyio.fail_after(args.timeout), _server_log_quiet(bool(local)):
            async with connect(args) as client:
                for name, arguments in calls:
                    try:
                        result = await client.call_tool(name, arguments)
                    except ProtocolError as exc:
                        found += measured_findings(name, None, (exc.code, exc.message), args.budget, where[name])
                        continue
                    if result.is_error:
                        text = " ".join((result.text or "no text").split())
                        notes.append(f"--call {name} returned an error result, so nothing was measured: {text}")
                        continue
                    wire = result.model_dump(mode="json", by_alias=True, exclude_none=True)
                    found += measured_findings(name, wire, None, args.budget, where[name])
        return found, notes

    try:
        return run(call_all)
    except TimeoutError as exc:
        raise CommandTimeout(f"lint: the calls gave no result within {seconds(args.timeout)} (--timeout)") from exc


def _check_calls(listed: dict[str, dict[str, Any]], calls: list[tuple[str, dict[str, Any]]]) -> None:
    """Refuse a `--call` of a tool the server does not list, or of one not marked read-only."""
    for name, _ in calls:
        if name not in listed:
            close = difflib.get_close_matches(name, list(listed), n=1)
            raise CommandError(f"--call: no tool named {name!r}" + (f"; did you mean {close[0]!r}?" if close else ""))
        # The spec gives idempotentHint meaning only when readOnlyHint is false: a read-only tool repeats harmlessly.
        if (listed[name].get("annotations") or {}).get("readOnlyHint") is not True:
            raise CommandError(f"--call {name}: lint calls only tools marked read-only; {name} is not (readOnlyHint)")


@contextlib.contextmanager
def _server_log_quiet(in_memory: bool) -> Iterator[None]:
    """Without the server's log of a tool's exception (a traceback on stderr) while lint calls the tools in this
    process: what lint found in the call is its finding (TK501), and a traceback would bury the report."""
    logger = logging.getLogger("toolkit")
    disabled = logger.disabled
    logger.disabled = disabled or in_memory
    try:
        yield
    finally:
        logger.disabled = disabled
