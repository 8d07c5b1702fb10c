"""The `toolkit` command: serve, list, call, document and check the tools of a module or of any stdio server.

Exit codes: 0 success; 1 when the answer is "no" (a tool call returned `isError`, docs are out of date, a
breaking change was found); 2 for usage errors and targets that cannot be loaded or reached.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

if TYPE_CHECKING:
    from ._client import Client, Protocol
    from ._types import CallToolResult

__all__ = ["main"]

T = TypeVar("T")

_EPILOG = """\
TARGET is package.module, package.module:attr, path/to/file.py or path/to/file.py:attr. Without :attr the
module's Server is used, or its @tool functions are collected into one. With --stdio, put the server's command
after `--`: toolkit list --stdio -- python server.py
"""


class CommandError(Exception):
    """A problem to report in one line, exiting with status 2."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `toolkit` command with `argv` (default: `sys.argv[1:]`) and return its exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    command: list[str] = []
    if "--" in args_list:
        split = args_list.index("--")
        args_list, command = args_list[:split], args_list[split + 1 :]
    parser = _parser()
    args, extra = parser.parse_known_args(args_list)
    if extra and (args.run is not _call or any(word.startswith("-") for word in extra)):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if extra:
        args.words += extra  # key=value pairs given after an option such as --json
    args.command = command
    try:
        _check_source(parser, args)
        status: int = args.run(args)
    except CommandError as exc:
        print(f"toolkit: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return status


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolkit",
        description="Serve, list, call, document and check MCP tools.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(title="commands", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="serve TARGET over stdio", epilog=_EPILOG)
    serve.add_argument("target", metavar="TARGET")
    serve.set_defaults(run=_serve, stdio=False)

    listing = commands.add_parser("list", help="show the tools as a table", epilog=_EPILOG)
    _source(listing)
    listing.set_defaults(run=_list)

    call = commands.add_parser(
        "call",
        help="call a tool and print its result",
        usage="toolkit call [options] TARGET TOOL [key=value ...]\n"
        "       toolkit call [options] --stdio TOOL [key=value ...] -- COMMAND ...",
        epilog=_EPILOG + "Arguments are key=value; a value that parses as JSON is JSON, otherwise a string.\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    call.add_argument("words", nargs="+", metavar="ARGUMENT", help="TARGET (unless --stdio), TOOL, key=value pairs")
    call.add_argument("--json", dest="json_args", metavar="OBJECT", help="arguments as one JSON object")
    call.add_argument("--stdio", action="store_true", help="call the server started by the command after --")
    call.add_argument("--timeout", type=float, help="seconds to wait for the result")
    call.add_argument("--raw", action="store_true", help="print the whole result as JSON")
    call.set_defaults(run=_call, target=None)

    docs = commands.add_parser("docs", help="write a Markdown (or JSON) reference of the tools", epilog=_EPILOG)
    _source(docs)
    docs.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    docs.add_argument("--format", choices=("markdown", "json"), default="markdown")
    docs.add_argument("--title", default="Tools", help="the top heading (default: Tools)")
    docs.add_argument("--check", metavar="FILE", help="exit 1 with a diff when FILE is not up to date")
    docs.set_defaults(run=_docs)

    check = commands.add_parser("check", help="compare the tools with a snapshot", epilog=_EPILOG)
    _source(check)
    mode = check.add_mutually_exclusive_group(required=True)
    mode.add_argument("--against", metavar="SNAPSHOT", help="report changes since SNAPSHOT; exit 1 if any breaks")
    mode.add_argument("--write", metavar="SNAPSHOT", help="save today's tools to SNAPSHOT")
    check.add_argument("--format", choices=("text", "json"), default="text")
    check.set_defaults(run=_check)
    return parser


def _source(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", nargs="?", metavar="TARGET")
    parser.add_argument("--stdio", action="store_true", help="ask the server started by the command after --")
    parser.add_argument(
        "--protocol",
        choices=("handshake", "2026-07-28"),
        default="handshake",
        help="the protocol era to list tools in (default: handshake, what most clients speak)",
    )


def _version() -> str:
    from . import __version__

    return __version__


def _check_source(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if getattr(args, "stdio", False):
        if not args.command:
            parser.error("--stdio needs the server's command after --, e.g. --stdio -- python server.py")
        if args.run is not _call and args.target is not None:
            parser.error("give either TARGET or --stdio -- COMMAND, not both")
    elif args.command:
        parser.error("a command after -- needs --stdio")
    elif args.run is not _call and args.target is None:
        parser.error("TARGET is required (or --stdio -- COMMAND)")


# -- connecting ------------------------------------------------------------------------------------------------


def _load(target: str) -> Any:
    from ._target import TargetError, load_server

    try:
        return load_server(target)
    except TargetError as exc:
        raise CommandError(str(exc)) from exc


@asynccontextmanager
async def _connect(args: argparse.Namespace, protocol: Protocol = "auto") -> AsyncIterator[Client]:
    from ._client import Client

    if args.stdio:
        client = Client.stdio(args.command, protocol=protocol)
    else:
        # `call` loads the server itself first, to check the tool's name.
        server = _load(args.target) if isinstance(args.target, str) else args.target
        client = Client(server, protocol=protocol)
    try:
        async with client:
            yield client
    except OSError as exc:
        raise CommandError(f"cannot start {' '.join(args.command)!r}: {exc}") from exc


def _payload(args: argparse.Namespace) -> list[dict[str, Any]]:

    async def fetch() -> list[dict[str, Any]]:
        async with _connect(args, args.protocol) as client:
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


def _serve(args: argparse.Namespace) -> int:
    _load(args.target).run()
    return 0


def _list(args: argparse.Namespace) -> int:
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
    columns = [0, 1, 2, 3] if any(row[1] for row in rows[1:]) else [0, 2, 3]
    widths = {i: max(len(row[i]) for row in rows) for i in columns[:-1]}
    for row in rows:
        print("  ".join(row[i].ljust(widths[i]) for i in columns[:-1]) + "  " + row[3])
    print(f"{len(tools)} tool{'' if len(tools) == 1 else 's'}")
    return 0


def _docs(args: argparse.Namespace) -> int:
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


def _check(args: argparse.Namespace) -> int:
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


def _call(args: argparse.Namespace) -> int:

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
    bar = _ProgressBar(sys.stderr)

    async def run() -> CallToolResult:
        async with _connect(args) as client:
            return await client.call_tool(name, arguments, progress=bar.update, timeout=args.timeout)

    try:
        result = _run(run)
    except ProtocolError as exc:
        raise CommandError(f"the server refused the call: {exc.message} (code {exc.code})") from exc
    except TimeoutError as exc:
        raise CommandError(f"no result within {args.timeout} seconds") from exc
    finally:
        bar.close()
    return _print_result(result, raw=args.raw)


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


def _print_result(result: CallToolResult, *, raw: bool) -> int:
    if raw:
        print(
            json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True), indent=2, ensure_ascii=False)
        )
        return 1 if result.is_error else 0
    if result.is_error:
        print(_content_text(result) or "the tool reported an error", file=sys.stderr)
        return 1
    if result.structured_content is not None:
        print(json.dumps(result.structured_content, indent=2, ensure_ascii=False))
    else:
        text = _content_text(result)
        if text:
            print(text)
    return 0


def _content_text(result: CallToolResult) -> str:
    lines = []
    for block in result.content:
        wire = block.model_dump(mode="json", by_alias=True, exclude_none=True)
        kind = wire.get("type")
        if kind == "text":
            lines.append(wire["text"])
        elif kind in ("image", "audio"):
            lines.append(f"[{kind}: {wire.get('mimeType')}, {len(wire.get('data', '')) * 3 // 4:,} bytes]")
        elif kind == "resource_link":
            lines.append(f"[resource link: {wire.get('uri')}]")
        else:
            resource = wire.get("resource") or {}
            lines.append(resource.get("text") or f"[resource: {resource.get('uri')}]")
    return "\n".join(lines)


class _ProgressBar:
    """Progress notifications drawn on one line of a terminal, or one line each when stderr is a file."""

    width = 30

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.drawn = False

    def update(self, progress: float, total: float | None, message: str | None) -> None:
        if total:
            done = max(0, min(self.width, round(self.width * progress / total)))
            line = f"[{'#' * done}{'-' * (self.width - done)}] {progress:g}/{total:g}"
        else:
            line = f"[{progress:g}]"
        if message:
            line += f" {message}"
        if self.tty:
            self.stream.write(f"\r\x1b[K{line}")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn and self.tty:
            self.stream.write("\n")
            self.stream.flush()


if __name__ == "__main__":
    sys.exit(main())
