"""The `toolkit` command's arguments: the parser of every subcommand, and the checks argparse cannot express."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from typing import NamedTuple

from toolkit import __version__
from toolkit._lint import DEFAULT_BUDGET
from toolkit._search import DEFAULT_THRESHOLD

from ._commands import call_tool, check_tools, list_tools, serve_target, write_docs
from ._dev import run_dev
from ._inspect import inspect_server
from ._install import CLIENTS, install_server
from ._lint import lint_tools
from ._proxy import proxy_target
from ._search import search_tools
from ._tasks import task_command
from ._typed_client import write_client

__all__ = ["parse_arguments"]

# The commands whose TARGET is the first of their words (none with --stdio), the rest what they act on.
_WORDS_FIRST = (call_tool, search_tools)
_LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_SIZE = re.compile(r"^\s*(\d+)\s*([kmg]?)(?:i?b)?\s*$", re.IGNORECASE)

# The epilogs keep their line breaks (and so their lines fit in 80 columns).
_RAW = argparse.RawDescriptionHelpFormatter
_TARGET = """\
TARGET is package.module, package.module:attr, path/to/file.py or
path/to/file.py:attr. Without :attr the module's Server is used, or its @tool
functions are collected into one.

"""
_EPILOG = (
    _TARGET
    + """\
TARGET may also be the URL of a server served over Streamable HTTP
(http://127.0.0.1:8000/mcp); -H sends a header with each request. With --stdio,
put the server's command after `--`: toolkit list --stdio -- python server.py

"""
)
_SERVE_EPILOG = (
    _TARGET
    + """\
Without --http, serves over stdio until stdin closes (what an MCP client's
configuration runs). With --http, serves Streamable HTTP at
http://HOST:PORT/mcp until Ctrl-C or SIGTERM.
"""
)
_PROXY_EPILOG = """
Serves the upstream's tools as its own, over stdio (until stdin closes) or with
--http over Streamable HTTP at http://HOST:PORT/mcp, in both protocol eras,
whatever era the upstream speaks. -H sends a header to a URL upstream; ${NAME}
in its value is read from the environment, e.g.
  toolkit proxy https://example.com/mcp -H 'Authorization: Bearer ${TOKEN}'
  toolkit proxy --http --port 9000 --stdio -- npx -y some-mcp-server
"""
_INSTALL_EPILOG = """
CLIENT is claude-desktop, claude-code, cursor, vscode, gemini, or mcp-json
(print a {"mcpServers": ...} object). The entry runs this interpreter (its
virtual environment) as python -m toolkit serve /absolute/path.py; other
servers and keys in the file are kept. HOME, XDG_CONFIG_HOME and APPDATA say
where the user's files are.
"""
_DEV_EPILOG = """
Needs the reload extra (watchfiles). The tools are imported again in this
process after each change; a connected client keeps its connection (over HTTP,
its session) and hears tools/list_changed when the tools it lists changed. An
import that fails leaves the last good tools serving and says why in one line.
Only .py files under the folder reload it (--watch-ext adds a suffix); never
the files its own output is redirected to.
"""

_CALL_EPILOG = """\
Arguments are key=value: a string when the tool's parameter is a string
(text=123 is "123"), otherwise JSON when the value parses as JSON, else a
string.
"""
_PREVIEW_EPILOG = """
Opens http://127.0.0.1:PORT/ (in $BROWSER's browser, unless --no-open): the
tools that have a page, each with a form for its arguments. A tool's page,
/?tool=NAME&arguments=<JSON>, is rendered as a host renders it: a sandboxed
iframe, the ui/initialize handshake, the tool's input and result, the page's
own tool calls answered by the server. No network is used. With the reload
extra, the page reloads when a .py, .html, .css or .js file under TARGET's
folder changes. Needs the http extra (uvicorn).
"""


def parse_arguments(argv: Sequence[str]) -> argparse.Namespace:
    """The parsed command line; `args.run(args)` runs the subcommand. Usage errors exit with status 2."""
    args_list, command = _split_command(list(argv))
    words = [word for word in args_list if not word.startswith("-")]
    if words[:1] == ["install"] and ("--stdio" in args_list or command):
        _refuse(
            "toolkit install writes TARGET (path/to/file.py or a module), which it loads first, not --stdio -- "
            "COMMAND: print an entry with `toolkit install mcp-json TARGET` and edit its command and args"
        )
    parser = _parser()
    args, extra = parser.parse_known_args(args_list)
    if extra:
        _take_words(parser, args, extra)
    args.command = command
    _check_source(parser, args)
    _check_http_options(args)
    return args


def _split_command(argv: list[str]) -> tuple[list[str], list[str]]:
    """The command line's own words, and the COMMAND after `--` (empty without one)."""
    if "--" not in argv:
        return argv, []
    split = argv.index("--")
    return argv[:split], argv[split + 1 :]


def _take_words(parser: argparse.ArgumentParser, args: argparse.Namespace, extra: list[str]) -> None:
    """The words argparse left over, which only a command whose words come first takes: key=value pairs (a query's
    words) given after an option such as --json. Anything else is a usage error."""
    if args.run not in _WORDS_FIRST or any(word.startswith("-") for word in extra):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.words += extra


def parse_size(text: str) -> int:
    """`--max-message-size`: bytes, or with a K, M or G suffix (powers of 1024)."""
    match = _SIZE.match(text)
    if match is None or int(match[1]) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size such as 20000000, 64K, 32M or 1G")
    power = " kmg".index((match[2] or " ").lower())
    return int(match[1]) * (1 << (10 * power))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolkit",
        description="Serve, list, search, call, document and check MCP tools.",
        epilog=_EPILOG,
        formatter_class=_RAW,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    _traceback_option(parser, default=False)
    commands = parser.add_subparsers(title="commands", required=True, metavar="COMMAND")
    for command in _COMMANDS:
        sub = commands.add_parser(
            command.name, help=command.help, usage=command.usage, epilog=command.epilog, formatter_class=_RAW
        )
        command.arguments(sub)
        sub.set_defaults(run=command.run, name=command.name)
    return parser


class _Command(NamedTuple):
    """A subcommand: what `toolkit --help` says of it, what adds its arguments, what runs it."""

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    epilog: str = _EPILOG
    """Below its `--help` (its line breaks kept)."""
    usage: str | None = None
    """Its usage line, when argparse's would not say it (TARGET or `--stdio -- COMMAND`)."""


def _usage(name: str, target: str, stdio: str) -> str:
    """The usage of a command that reaches a server by TARGET or by `--stdio -- COMMAND`: both forms, aligned."""
    return f"toolkit {name} [options] {target}\n       toolkit {name} [options] {stdio} -- COMMAND ..."


def _proxy_options(proxy: argparse.ArgumentParser) -> None:
    proxy.add_argument("target", nargs="?", metavar="URL")
    proxy.add_argument("--stdio", action="store_true", help="proxy the server started by the command after --")
    proxy.add_argument("--prefix", help="serve each tool as PREFIX_name")
    proxy.add_argument("--name", dest="server_name", metavar="NAME", help="the proxy's server name (default: proxy)")
    _header_option(proxy)
    _listening_options(proxy)
    _traceback_option(proxy)


def _serve_options(serve: argparse.ArgumentParser) -> None:
    _serving_options(serve)
    serve.add_argument(
        "--workers", type=int, default=None, help="with --http: worker processes sharing the port (default: 1)"
    )
    _traceback_option(serve)
    serve.set_defaults(stdio=False)


def _call_options(call: argparse.ArgumentParser) -> None:
    call.add_argument("words", nargs="+", metavar="ARGUMENT", help="TARGET (unless --stdio), TOOL, key=value pairs")
    call.add_argument(
        "--json",
        dest="json_args",
        metavar="OBJECT",
        help="arguments as one JSON object; `-` reads it from standard input, `@FILE` from FILE",
    )
    call.add_argument("--stdio", action="store_true", help="call the server started by the command after --")
    _header_option(call)
    call.add_argument("--timeout", type=float, help="seconds to wait for the result (then exit with status 124)")
    call.add_argument("--raw", action="store_true", help="print the whole result as JSON")
    call.add_argument("-q", "--quiet", action="store_true", help="do not show the tool's log messages and progress")
    call.add_argument(
        "-y", "--yes", action="store_true", help="accept the tool's confirmations without asking (forms still ask)"
    )
    call.add_argument(
        "--root",
        action="append",
        dest="roots",
        metavar="PATH",
        help="a directory or file the tool may work on, for roots/list (repeatable; default: the current directory, "
        "none for a URL)",
    )
    call.add_argument(
        "--log-level", choices=_LOG_LEVELS, default="info", help="the least severe log message to show (default: info)"
    )
    call.add_argument(
        "--detach",
        action="store_true",
        help="with a server at a URL: when the server runs the call as a task, print the task's id and exit (pick "
        "it up with toolkit task)",
    )
    _size_option(call)
    _traceback_option(call)
    call.set_defaults(target=None, protocol="auto")


def _task_options(task: argparse.ArgumentParser) -> None:
    task.add_argument(
        "action",
        choices=("get", "result", "cancel"),
        help="get: the task's status; result: wait for its result (answering its questions); cancel: cancel it",
    )
    task.add_argument("task_id", metavar="ID", help="the task's id, as toolkit call printed it")
    task.add_argument("target", nargs="?", metavar="TARGET", help="the server: a URL, or a file or module")
    task.add_argument("--stdio", action="store_true", help="ask the server started by the command after --")
    _header_option(task)
    task.add_argument(
        "--protocol",
        choices=("auto", "handshake", "2026-07-28"),
        default="auto",
        help="the protocol era (default: auto, 2026-07-28 when the server offers it)",
    )
    task.add_argument("--timeout", type=_positive_seconds, metavar="SECONDS", help="result: seconds to wait (124)")
    task.add_argument("--raw", action="store_true", help="print the whole result (or state) as JSON")
    task.add_argument("-q", "--quiet", action="store_true", help="result: do not show the task's state as it changes")
    task.add_argument(
        "-y", "--yes", action="store_true", help="accept the task's confirmations without asking (forms still ask)"
    )
    _size_option(task)
    _traceback_option(task)


def _docs_options(docs: argparse.ArgumentParser) -> None:
    _source(docs)
    docs.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    docs.add_argument(
        "--format",
        choices=("markdown", "json", "openai", "anthropic", "gemini"),
        default="markdown",
        help="openai, anthropic, gemini: the tools as that provider's function definitions (a JSON array)",
    )
    docs.add_argument("--profile", help="with --format openai|anthropic: the profile, e.g. openai-strict")
    docs.add_argument("--title", default="Tools", help="the top heading (default: Tools)")
    docs.add_argument("--check", metavar="FILE", help="exit 1 with a diff when FILE is not up to date")
    docs.add_argument(
        "--no-lint", action="store_true", help="leave out the tools' lint findings (shown by default, for a reviewer)"
    )


def _check_options(check: argparse.ArgumentParser) -> None:
    _source(check)
    mode = check.add_mutually_exclusive_group(required=True)
    mode.add_argument("--against", metavar="SNAPSHOT", help="report changes since SNAPSHOT; exit 1 if any breaks")
    mode.add_argument("--write", metavar="SNAPSHOT", help="save today's tools to SNAPSHOT")
    mode.add_argument(
        "--profile",
        action="append",
        metavar="PROFILE",
        help="report what PROFILE's provider rejects or changes; exit 1 if a tool would be rejected "
        "(repeatable; `all` for every profile that is not strict: openai, gemini, anthropic, claude-desktop)",
    )
    check.add_argument("--format", choices=("text", "json"), default="text")


def _dev_options(dev: argparse.ArgumentParser) -> None:
    _serving_options(dev)
    dev.add_argument("--inspector", action="store_true", help="open the MCP Inspector on it (needs Node.js: npx)")
    dev.add_argument(
        "--watch-ext",
        action="append",
        metavar="SUFFIX",
        help="reload when a file with SUFFIX changes too, e.g. .toml (repeatable; default: .py files only)",
    )
    dev.add_argument(
        "--ui", action="store_true", help="preview the tools' MCP Apps in a browser instead (as toolkit preview)"
    )
    _traceback_option(dev)
    dev.set_defaults(stdio=False, open=True)


def _preview_options(preview: argparse.ArgumentParser) -> None:
    preview.add_argument("target", metavar="TARGET")
    preview.add_argument("--port", type=int, default=0, help="the port (default: 0, any free one)")
    preview.add_argument("--host", default="127.0.0.1", help="the loopback address to listen on (default: 127.0.0.1)")
    preview.add_argument(
        "--no-open", dest="open", action="store_false", help="do not open a browser (default: open $BROWSER's)"
    )
    _traceback_option(preview)


def _install_options(install: argparse.ArgumentParser) -> None:
    install.add_argument("client", choices=list(CLIENTS), metavar="CLIENT", help=", ".join(CLIENTS))
    install.add_argument("target", metavar="TARGET")
    install.add_argument(
        "--name", dest="server_name", metavar="NAME", help="the server's name in the file (default: the server's own)"
    )
    install.add_argument("--env", action="append", metavar="KEY=VALUE", help="a variable for the server (repeatable)")
    install.add_argument(
        "--project", action="store_true", help="write the project's file in this folder, not the user's"
    )
    install.add_argument("--python", metavar="PATH", help="the interpreter to run (default: this one, its venv's)")
    install.add_argument(
        "--cwd",
        metavar="DIR",
        help="the folder the client starts the server in, where its entries can say one (gemini; default: the "
        "file's folder)",
    )
    install.add_argument("--uv", action="store_true", help="run the server with uv run --with mcp-toolkit ...")
    install.add_argument(
        "--with", dest="packages", action="append", metavar="PACKAGE", help="with uv: a package it needs (repeatable)"
    )
    install.add_argument(
        "--dev", action="store_true", help="run toolkit dev: the client's server reloads as you edit (reload extra)"
    )
    install.add_argument("--dry-run", action="store_true", help="print the change as a diff; write nothing")
    _traceback_option(install)
    install.set_defaults(stdio=False)


def _run_dev(args: argparse.Namespace) -> int:
    return _run_preview(args) if args.ui else run_dev(args)


def _run_preview(args: argparse.Namespace) -> int:
    from ._preview import run_preview  # only when used: the preview loads the client and uvicorn

    return run_preview(args)


def _serving_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="TARGET")
    _listening_options(parser)


def _listening_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP (needs the http extra)")
    parser.add_argument("--host", help="with --http: the address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, help="with --http: the port (default: 8000; 0: any free one)")
    parser.add_argument(
        "--allowed-host",
        action="append",
        dest="allowed_hosts",
        metavar="HOST",
        help="with --http: a Host header to accept (repeatable; default: loopback names only)",
    )


def _inspect_options(inspect: argparse.ArgumentParser) -> None:
    _source(inspect)
    inspect.add_argument("--format", choices=("card", "tools"), default="card", help="card (default) or tools")
    inspect.add_argument(
        "--name", dest="card_name", metavar="NAMESPACE/NAME", help="the card's name, e.g. io.github.you/notes"
    )
    inspect.add_argument(
        "--url", action="append", dest="urls", metavar="URL", help="a URL the server is served at (repeatable)"
    )


def _client_options(client: argparse.ArgumentParser) -> None:
    _source(client)
    client.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    client.add_argument("--class-name", metavar="NAME", help="the client class (default: from the server's name)")
    client.add_argument("--check", metavar="FILE", help="exit 1 with a diff when FILE is not up to date")


def _lint_options(lint: argparse.ArgumentParser) -> None:
    _source(lint)
    lint.add_argument("--format", choices=("text", "json"), default="text")
    lint.add_argument(
        "--select", action="append", metavar="CODES", help="report only these codes or prefixes (TK1,TK301)"
    )
    lint.add_argument("--ignore", action="append", metavar="CODES", help="leave out these codes or prefixes")
    lint.add_argument(
        "--call",
        action="append",
        metavar="TOOL[=JSON]",
        help="call TOOL (only if marked read-only and idempotent) with the JSON object's arguments and report what "
        "the call shows: a result over --budget, a protocol error (repeatable)",
    )
    lint.add_argument(
        "--budget",
        type=_tokens,
        default=DEFAULT_BUDGET,
        metavar="TOKENS",
        help=f"with --call: the most tokens a result may take (default: {DEFAULT_BUDGET:,})",
    )


def _tokens(text: str) -> int:
    if not text.strip().isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of tokens above 0")
    return int(text)


def _search_options(search: argparse.ArgumentParser) -> None:
    search.add_argument("words", nargs="+", metavar="WORD", help="TARGET (unless --stdio), then the query's words")
    _reach(search)
    search.add_argument("--limit", type=_positive_int, default=5, metavar="N", help="at most N tools (default: 5)")
    search.add_argument(
        "--threshold",
        type=_share,
        default=DEFAULT_THRESHOLD,
        metavar="SCORE",
        help=f"the least score a tool must reach, 0 to 1 (default: {DEFAULT_THRESHOLD:g}, as tool_search's)",
    )
    search.add_argument("--format", choices=("text", "json"), default="text")
    search.set_defaults(target=None)


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}")
    return value


def _source(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", nargs="?", metavar="TARGET")
    _reach(parser)


def _reach(parser: argparse.ArgumentParser) -> None:
    """How a command that reads a server's tools reaches it: --stdio, headers, the era, the timeout, the size."""
    parser.add_argument("--stdio", action="store_true", help="ask the server started by the command after --")
    _header_option(parser)
    parser.add_argument(
        "--protocol",
        choices=("handshake", "2026-07-28", "auto"),
        default="handshake",
        help="the protocol era to list tools in (default: handshake, what most clients speak; auto: 2026-07-28 when "
        "the server offers it)",
    )
    parser.add_argument(
        "--timeout",
        type=_positive_seconds,
        default=30.0,
        metavar="SECONDS",
        help="give up, with status 124, when the server has not given its tools within SECONDS (default: 30)",
    )
    _size_option(parser)
    _traceback_option(parser)


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0")
    return value


def _traceback_option(parser: argparse.ArgumentParser, default: object = argparse.SUPPRESS) -> None:
    # On the top parser and on each command's (where SUPPRESS keeps the top one's value when not given there),
    # so that `toolkit --traceback list app.py` and `toolkit list app.py --traceback` both work.
    parser.add_argument(
        "--traceback", action="store_true", default=default, help="on an error, print the full Python traceback too"
    )


def _header_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-H",
        "--header",
        action="append",
        dest="headers",
        metavar="'NAME: VALUE'",
        help="with a URL as TARGET: an HTTP header to send (repeatable), e.g. -H 'Authorization: Bearer ...'",
    )


def _size_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-message-size",
        type=parse_size,
        default=None,
        metavar="BYTES",
        help="the largest message to accept from the server, e.g. 64M (default: 16M)",
    )


_HTTP_OPTIONS = {"host": "127.0.0.1", "port": 8000, "allowed_hosts": None, "workers": 1}  # given only with --http


def _check_http_options(args: argparse.Namespace) -> None:
    """`serve` and `dev`: an option of the HTTP transport without --http is refused (it would be ignored), in one line
    as the commands' errors are; then the options take their defaults."""
    if not hasattr(args, "http") or getattr(args, "ui", False):  # `dev --ui`: --host and --port are the preview's
        return
    for option, default in _HTTP_OPTIONS.items():
        if not hasattr(args, option):
            continue
        if getattr(args, option) is not None and not args.http:
            flag = "--allowed-host" if option == "allowed_hosts" else f"--{option}"
            _refuse(f"{flag} needs --http (without it, {args.name} serves over stdio)")
        if getattr(args, option) is None:
            setattr(args, option, default)


def _refuse(message: str) -> None:
    """A usage error in one line, as the commands' own errors are (status 2)."""
    sys.stderr.write(f"toolkit: error: {message}\n")
    raise SystemExit(2)


def _check_source(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if getattr(args, "stdio", False):
        if not args.command:
            parser.error("--stdio needs the server's command after --, e.g. --stdio -- python server.py")
        if args.run not in _WORDS_FIRST and args.target is not None:
            parser.error("give either TARGET or --stdio -- COMMAND, not both")
    elif args.command:
        parser.error("a command after -- needs --stdio")
    elif args.run not in _WORDS_FIRST and args.target is None:
        parser.error("TARGET is required (or --stdio -- COMMAND)")


# The subcommands, in the order `toolkit --help` lists them (here, below the functions each row names).
_COMMANDS = (
    _Command(
        "serve",
        "serve TARGET over stdio, or over HTTP with --http",
        _serve_options,
        serve_target,
        epilog=_SERVE_EPILOG,
    ),
    _Command(
        "dev",
        "serve TARGET as serve does, and reload its tools when a .py file under its folder changes",
        _dev_options,
        _run_dev,
        epilog=_SERVE_EPILOG + _DEV_EPILOG,
    ),
    _Command(
        "preview",
        "render TARGET's MCP Apps in a local host page on 127.0.0.1, reloading on changes",
        _preview_options,
        _run_preview,
        epilog=_EPILOG + _PREVIEW_EPILOG,
    ),
    _Command(
        "install",
        "write TARGET into an MCP client's configuration file (or print an mcp.json)",
        _install_options,
        install_server,
        epilog=_TARGET + _INSTALL_EPILOG,
    ),
    _Command("list", "show the tools as a table", _source, list_tools),
    _Command(
        "search",
        "find the tools a tool search finds for a query, best first; exit 1 when none",
        _search_options,
        search_tools,
        usage=_usage("search", "TARGET QUERY ...", "--stdio QUERY ..."),
    ),
    _Command(
        "call",
        "call a tool and print its result",
        _call_options,
        call_tool,
        epilog=_EPILOG + _CALL_EPILOG,
        usage=_usage("call", "TARGET TOOL [key=value ...]", "--stdio TOOL [key=value ...]"),
    ),
    _Command(
        "task",
        "a task a call started: its status, its result, or cancel it",
        _task_options,
        task_command,
        usage=_usage("task", "{get,result,cancel} ID TARGET", "{get,result,cancel} ID --stdio"),
    ),
    _Command("docs", "write a Markdown (or JSON) reference of the tools", _docs_options, write_docs),
    _Command(
        "check",
        "compare the tools with a snapshot, or check them against provider profiles",
        _check_options,
        check_tools,
    ),
    _Command(
        "inspect", "print the server's card (SEP-2127) or its tools/list result", _inspect_options, inspect_server
    ),
    _Command("client", "write a typed Python client for the tools", _client_options, write_client),
    _Command(
        "proxy",
        "serve another MCP server (a URL, or --stdio -- COMMAND) through toolkit",
        _proxy_options,
        proxy_target,
        epilog=_PROXY_EPILOG,
        usage=_usage("proxy", "URL", "--stdio"),
    ),
    _Command(
        "lint",
        "report the mistakes that make models misuse the tools; exit 1 on an error",
        _lint_options,
        lint_tools,
    ),
)
