"""The `toolkit` command's subcommands (serve, list, docs, check, call) and their connection to the tools.

Each takes the parsed arguments and returns the exit status; a problem to report in one line is a `CommandError`.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ._cli_output import ProgressBar, print_result, print_table

if TYPE_CHECKING:
    from ._client import Client, Protocol
    from ._server import Lifespan
    from ._types import CallToolResult

__all__ = ["CommandError", "call_tool", "check_tools", "list_tools", "serve_target", "write_docs"]

T = TypeVar("T")


class CommandError(Exception):
    """A problem to report in one line, exiting with status 2."""


# -- connecting ------------------------------------------------------------------------------------------------


def _load(target: str) -> Any:
    from ._target import TargetError, load_server

    try:
        return load_server(target)
    except TargetError as exc:
        raise CommandError(str(exc)) from exc


@asynccontextmanager
async def _connect(
    args: argparse.Namespace, protocol: Protocol = "auto", lifespan: Lifespan | None = None
) -> AsyncIterator[Client]:
    from ._client import Client

    if args.stdio:
        client = Client.stdio(args.command, protocol=protocol)
    else:
        # `call` loads the server itself first, to check the tool's name.
        server = _load(args.target) if isinstance(args.target, str) else args.target
        client = Client(server, protocol=protocol, lifespan=lifespan)
    try:
        async with client:
            yield client
    except OSError as exc:
        raise CommandError(f"cannot start {' '.join(args.command)!r}: {exc}") from exc


def _payload(args: argparse.Namespace) -> list[dict[str, Any]]:

    async def fetch() -> list[dict[str, Any]]:
        from ._server import definitions_only

        async with _connect(args, args.protocol, definitions_only) as client:
            tools = await client.list_tools()
        return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]

    return _run(fetch)


def _run(fn: Callable[[], Awaitable[T]]) -> T:
    """`anyio.run(fn)`, with the one error from inside a task group raised as itself."""
    import anyio

    try:
        return anyio.run(fn)
    except Exception as exc:
        inner: BaseException = exc
        while isinstance(getattr(inner, "exceptions", None), tuple) and len(inner.exceptions) == 1:  # type: ignore[attr-defined]
            inner = inner.exceptions[0]  # type: ignore[attr-defined]
        if inner is exc:
            raise
        raise inner from exc


# -- commands --------------------------------------------------------------------------------------------------


def serve_target(args: argparse.Namespace) -> int:
    """`toolkit serve`: serve the target over stdio until the client leaves."""
    _load(args.target).run()
    return 0


def list_tools(args: argparse.Namespace) -> int:
    """`toolkit list`: print the tools as a table."""
    from ._docsgen import badges
    from ._schematext import describe_type

    tools = _payload(args)
    rows = [("NAME", "TITLE", "HINTS", "PARAMETERS")]
    for tool in tools:
        schema = tool.get("inputSchema") or {}
        required = set(schema.get("required") or ())
        params = ", ".join(
            f"{name}{'' if name in required else '?'}: {describe_type(sub)}"
            for name, sub in (schema.get("properties") or {}).items()
        )
        title = tool.get("title") or (tool.get("annotations") or {}).get("title") or ""
        rows.append((tool["name"], title, ", ".join(badges(tool, mark_defaults=False)), params or "-"))
    print_table(rows, [0, 1, 2, 3] if any(row[1] for row in rows[1:]) else [0, 2, 3])
    print(f"{len(tools)} tool{'' if len(tools) == 1 else 's'}")
    return 0


def write_docs(args: argparse.Namespace) -> int:
    """`toolkit docs`: write (or, with `--check`, compare) the Markdown or JSON reference of the tools."""
    from ._docsgen import render_json, render_markdown

    tools = _payload(args)
    text = render_json(tools) if args.format == "json" else render_markdown(tools, title=args.title)
    if args.check:
        return _compare_file(Path(args.check), text, args)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def _compare_file(path: Path, text: str, args: argparse.Namespace) -> int:
    try:
        current = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot read {str(path)!r}: {exc.strerror}") from exc
    if current == text:
        return 0
    diff = difflib.unified_diff(
        current.splitlines(keepends=True), text.splitlines(keepends=True), f"{path} (on disk)", f"{path} (generated)"
    )
    sys.stdout.writelines(diff)
    source = f"--stdio -- {' '.join(args.command)}" if args.stdio else args.target
    print(f"toolkit: {path} is out of date; update it with: toolkit docs {source} -o {path}", file=sys.stderr)
    return 1


def check_tools(args: argparse.Namespace) -> int:
    """`toolkit check`: report changes since a snapshot (1 if any breaks), or write one."""
    from ._compat import compare, format_changes
    from ._docsgen import render_json

    tools = _payload(args)
    if args.write:
        Path(args.write).write_text(render_json(tools), encoding="utf-8")
        print(f"wrote {len(tools)} tool{'' if len(tools) == 1 else 's'} to {args.write}", file=sys.stderr)
        return 0
    changes = compare(_read_snapshot(Path(args.against)), tools)
    if args.format == "json":
        breaking = sum(c.severity == "breaking" for c in changes)
        report = {
            "breaking": breaking,
            "compatible": len(changes) - breaking,
            "changes": [c.to_json() for c in changes],
        }
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(format_changes(changes))
    return 1 if any(c.severity == "breaking" for c in changes) else 0


def _read_snapshot(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CommandError(f"cannot read {str(path)!r}: {exc.strerror}") from exc
    except ValueError as exc:
        raise CommandError(f"{str(path)!r} is not JSON: {exc}") from exc
    tools = data.get("tools") if isinstance(data, dict) else data
    if not isinstance(tools, list) or not all(isinstance(t, dict) and "name" in t for t in tools):
        raise CommandError(f"{str(path)!r} is not a tools/list snapshot (write one with --write)")
    return tools


# -- call ------------------------------------------------------------------------------------------------------


def call_tool(args: argparse.Namespace) -> int:
    """`toolkit call`: call one tool, drawing its progress, and print its result."""
    from ._errors import StartupError
    from ._jsonrpc import ProtocolError

    words = list(args.words)
    if not args.stdio:
        if len(words) < 2:
            raise CommandError("call needs TARGET and TOOL (or --stdio TOOL ... -- COMMAND)")
        args.target = words.pop(0)
    name, arguments = words[0], _arguments(words[1:], args.json_args)
    if not args.stdio:
        server = _load(args.target)
        if name not in server.tools:
            close = difflib.get_close_matches(name, list(server.tools), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; tools: {', '.join(server.tools) or 'none'}"
            raise CommandError(f"no tool named {name!r}{hint}")
        args.target = server
    bar = ProgressBar(sys.stderr)

    async def run() -> CallToolResult:
        async with _connect(args) as client:
            return await client.call_tool(name, arguments, progress=bar.update, timeout=args.timeout)

    try:
        result = _run(run)
    except ProtocolError as exc:
        raise CommandError(f"the server refused the call: {exc.message} (code {exc.code})") from exc
    except TimeoutError as exc:
        raise CommandError(f"no result within {args.timeout} seconds") from exc
    except StartupError as exc:
        raise CommandError(str(exc)) from exc
    finally:
        bar.close()
    return print_result(result, raw=args.raw)


def _arguments(pairs: Sequence[str], json_args: str | None) -> dict[str, Any]:
    arguments: dict[str, Any] = {}
    if json_args is not None:
        try:
            value = json.loads(json_args)
        except ValueError as exc:
            raise CommandError(f"--json is not valid JSON: {exc}") from exc
        if not isinstance(value, dict):
            raise CommandError("--json must be a JSON object")
        arguments.update(value)
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise CommandError(f"argument {pair!r} is not key=value")
        try:
            arguments[key] = json.loads(text)
        except ValueError:
            arguments[key] = text
    return arguments
