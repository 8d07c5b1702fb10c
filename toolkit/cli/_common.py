"""What every `toolkit` command shares: its errors, loading or reaching the target's server, and its output.

A command takes the parsed arguments and returns the exit status; a problem to report in one line is a
`CommandError`. A command whose standard output is data is wrapped in `data_on_stdout`.
"""

from __future__ import annotations

import argparse
import difflib
import functools
import json
import os
import shlex
import sys
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

import anyio
import pydantic

from toolkit import ConnectionClosedError, Lifespan, MessageError, ProtocolError
from toolkit._protocol.jsonrpc import INVALID_REQUEST
from toolkit._server import Server, definitions_only, run_main
from toolkit._target import TargetError, load_server, load_target

if TYPE_CHECKING:
    # Imported where a command connects: `toolkit serve` runs a server, which never needs the client.
    from toolkit import Client

__all__ = [
    "CommandError",
    "CommandTimeout",
    "check_headers",
    "connect",
    "data_on_stdout",
    "deliver",
    "install_command",
    "is_url",
    "json_object",
    "load",
    "load_served",
    "mounted",
    "output_kept_apart",
    "parse_headers",
    "read_server",
    "read_tools",
    "run",
    "say",
    "seconds",
    "tools_payload",
]

T = TypeVar("T")


class CommandError(Exception):
    """A problem to report in one line, exiting with status 2."""


class CommandTimeout(CommandError):
    """`--timeout` expired: reported in one line, exiting with status 124."""


def say(text: str) -> None:
    """A line for the person at the terminal, on stderr (standard output is the command's data)."""
    sys.stderr.write(f"toolkit: {text}\n")
    sys.stderr.flush()


# -- loading ---------------------------------------------------------------------------------------------------


def load(target: str) -> Server:
    """The server `target` names (a module, a file, `:attr`); one that cannot load is a `CommandError`."""
    try:
        return load_server(target)
    except TargetError as exc:
        raise CommandError(str(exc)) from exc


def load_served(target: str) -> Any:
    """What `toolkit serve` serves: the server `target` names, or the HTTP app the module made itself."""
    try:
        return load_target(target)
    except TargetError as exc:
        raise CommandError(str(exc)) from exc


# -- connecting ------------------------------------------------------------------------------------------------


def is_url(target: Any) -> bool:
    return isinstance(target, str) and target.startswith(("http://", "https://"))


@asynccontextmanager
async def connect(args: argparse.Namespace, lifespan: Lifespan | None = None, **options: Any) -> AsyncIterator[Client]:
    """A client connected to the command's server: over stdio (`--stdio -- COMMAND`), at a URL, or in memory (the
    target loaded here, unless the command already put the `Server` in `args.target`)."""
    client = _client(args, lifespan, options)
    connected = False
    try:
        async with client:
            connected = True
            yield client
    except OSError as exc:
        # Only while starting: later, a TimeoutError (an OSError) of --timeout or the block's own errors go on.
        if connected or isinstance(exc, TimeoutError):
            raise
        raise CommandError(f"cannot start {' '.join(args.command)!r}: {exc}") from exc
    except ProtocolError as exc:
        if connected or isinstance(exc, ConnectionClosedError):
            raise
        raise CommandError(_not_connected(args, exc)) from exc


def _client(args: argparse.Namespace, lifespan: Lifespan | None, options: dict[str, Any]) -> Client:
    """The client `connect` connects, with the command's protocol and message size: over stdio, HTTP or memory."""
    from toolkit import Client

    options["protocol"] = args.protocol
    if args.max_message_size is not None:
        options["max_message_size"] = args.max_message_size
    if args.stdio:
        return Client.stdio(args.command, **options)
    if is_url(args.target):
        try:
            return Client.http(args.target, headers=parse_headers(args.headers), **options)
        except ImportError as exc:  # without the http extra: the message says what to install
            raise CommandError(str(exc)) from exc
    server = load(args.target) if isinstance(args.target, str) else args.target
    return Client(server, lifespan=lifespan, **options)


def check_headers(args: argparse.Namespace, target: Any) -> None:
    """`-H` goes with a URL target only."""
    if args.headers and (args.stdio or not is_url(target)):
        what = "a server started with --stdio" if args.stdio else repr(target)
        raise CommandError(f"-H applies to URL targets (http://... or https://...), not to {what}")


def _not_connected(args: argparse.Namespace, exc: ProtocolError) -> str:
    """Why the client could not connect: the HTTP client's failure to reach a URL, or the server's refusal."""
    if not is_url(args.target):
        return f"the server refused the connection: {exc.message} (code {exc.code})"
    url = urllib.parse.urlsplit(args.target)
    # Client.http answers a request that got no JSON-RPC reply with one of two messages (toolkit/_transports/http.py).
    failure = exc.message.removeprefix("HTTP request failed: ")
    if failure != exc.message or exc.message.startswith("HTTP "):
        hint = ""
        if exc.message.startswith("HTTP 404") and url.path.rstrip("/") != "/mcp":
            hint = f"; the endpoint is usually /mcp: {urllib.parse.urlunsplit((*url[:2], '/mcp', *url[3:]))}"
        elif "WRONG_VERSION_NUMBER" in failure and url.scheme == "https":
            hint = f"; is it a plain HTTP server? try {urllib.parse.urlunsplit(('http', *url[1:]))}"
        return f"cannot connect to {args.target}: {failure}{hint}"
    return f"{args.target} refused the connection: {exc.message} (code {exc.code})"


def mounted(server: Server, read: Callable[[Server], T]) -> T:
    """`read(server)` with the servers mounted on it connected (their tools listed as its own), its own lifespan not
    run; at once for a server that mounts none."""
    if not server.registry.mounts:
        return read(server)

    async def connected() -> T:
        async with server.running(lifespan=definitions_only):
            return read(server)

    return anyio.run(connected)


def parse_headers(pairs: Sequence[str] | None) -> dict[str, str]:
    """`-H` values (`Name: value`) as headers."""
    headers = {}
    for pair in pairs or ():
        name, sep, value = pair.partition(":")
        if not sep or not name.strip():
            raise CommandError(f"a header is 'Name: value', got {pair!r}")
        headers[name.strip()] = value.strip()
    return headers


def target_first(args: argparse.Namespace, needs: str) -> list[str]:
    """The words of a command whose TARGET comes first (`call`, `search`): the target taken from them into
    `args.target` (unless `--stdio`), its headers checked; the words after it.

    Raises:
        CommandError: no word after the target (`needs` says what the command needs).
    """
    words = list(args.words)
    if not args.stdio:
        if len(words) < 2:
            raise CommandError(needs)
        args.target = words.pop(0)
    check_headers(args, args.target)
    return words


def read_tools(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The command's server's tools, as `tools/list` gives them (see `read_server`)."""
    return read_server(args, tools_payload)


async def tools_payload(client: Client) -> list[dict[str, Any]]:
    """The `tools` of the server's `tools/list` result, as JSON (every page)."""
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in await client.list_tools()]


def read_server(args: argparse.Namespace, read: Callable[[Client], Awaitable[T]], **options: Any) -> T:
    """Connect to the command's server for its definitions only (its lifespan does not run), within `--timeout`,
    and return what `read` reads from it; a refusal or a timeout is reported in one line. `options` go to the
    `Client` (`apps=True`: as an MCP Apps host)."""
    check_headers(args, args.target)

    async def fetch() -> T:
        with anyio.fail_after(args.timeout):
            async with connect(args, definitions_only, **options) as client:
                return await read(client)

    try:
        return run(fetch)
    except ProtocolError as exc:
        raise CommandError(f"the server refused tools/list: {exc.message} (code {exc.code})") from exc
    except TimeoutError as exc:
        what = f"the server {' '.join(args.command)!r}" if args.stdio else repr(args.target)
        raise CommandTimeout(f"{args.name}: {what} gave no tools within {seconds(args.timeout)} (--timeout)") from exc


def seconds(value: float) -> str:
    return f"{value:g} second{'' if value == 1 else 's'}"


def run(fn: Callable[[], Awaitable[T]]) -> T:
    """`anyio.run(fn)` (Ctrl-C a `KeyboardInterrupt` on every Python), with the one error from inside a task group
    raised as itself, and the connection's failures (the server exited, a reply too large) turned into a
    `CommandError`."""
    try:
        try:
            return run_main(fn)
        except Exception as exc:
            inner: BaseException = exc
            while isinstance(getattr(inner, "exceptions", None), tuple) and len(inner.exceptions) == 1:  # type: ignore[attr-defined]
                inner = inner.exceptions[0]  # type: ignore[attr-defined]
            if inner is exc:
                raise
            raise inner from exc
    except ConnectionClosedError as exc:
        raise CommandError(exc.message) from exc
    except MessageError as exc:
        hint = "; accept it with --max-message-size" if exc.code == INVALID_REQUEST else ""
        raise CommandError(f"{exc}{hint}") from exc
    except pydantic.ValidationError as exc:  # the client read an answer the protocol's types do not allow
        raise CommandError(_malformed(exc)) from exc


def _malformed(exc: pydantic.ValidationError) -> str:
    """One line for an answer of the server that is not MCP: where the first problem is, and how many there are."""
    first = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"]) or "the whole answer"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"the server's answer is not valid MCP: at {where}: {first['msg']}{more}"


def install_command(extra: str) -> str:
    """The pip command that adds toolkit's `extra` to this environment, the way toolkit is installed in it: an
    editable install stays editable (`pip install '.[reload]'` in the clone would replace it with a copy), a copy of a
    clone comes from that clone, and otherwise from a clone of toolkit (the package is not on the index yet)."""
    import importlib.metadata  # only here: on an error path

    try:
        source = json.loads(importlib.metadata.distribution("mcp-toolkit").read_text("direct_url.json") or "{}")
    except (importlib.metadata.PackageNotFoundError, ValueError):
        source = None
    url = source.get("url") if isinstance(source, dict) else None
    if not isinstance(url, str) or not url.startswith("file:") or not isinstance(source.get("dir_info"), dict):
        return f"pip install '.[{extra}]' in a clone of toolkit"
    import urllib.request

    folder = urllib.request.url2pathname(urllib.parse.urlsplit(url).path)
    editable = "-e " if source["dir_info"].get("editable") else ""
    return f"pip install {editable}{shlex.quote(f'{folder}[{extra}]')}"


def json_object(source: str, where: str) -> dict[str, Any]:
    """The JSON object written in `source` (given as `where`, for the message)."""
    try:
        value = json.loads(source)
    except ValueError as exc:
        raise CommandError(f"{where} is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise CommandError(f"{where} must be a JSON object")
    return value


# -- output ----------------------------------------------------------------------------------------------------


def data_on_stdout(command: Callable[[argparse.Namespace, TextIO], int]) -> Callable[[argparse.Namespace], int]:
    """A command whose standard output is data (a table, JSON, a result), written to the stream it is given.

    Whatever else runs in this process meanwhile (the module printing as it loads, a tool's `print`) goes to
    stderr, so `toolkit docs app.py --format json | jq` reads JSON only: see `output_kept_apart`.
    """

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        with output_kept_apart(in_memory=not args.stdio) as out:
            return command(args, out)

    return run


@contextmanager
def output_kept_apart(*, in_memory: bool) -> Iterator[TextIO]:
    """Standard output for the result alone: a tool served in this process writes to stderr meanwhile.

    Over stdio, the server's own process keeps its tools' output off the protocol stream. In memory, the tool runs
    here, so file descriptor 1 points at stderr while it may run (what `print`, `os.write(1, ...)` and child
    processes write goes there), and the result is written through a duplicate of the real standard output.
    """
    if not in_memory:
        yield sys.stdout
        return
    sys.stdout.flush()
    real = os.dup(1)
    os.dup2(2, 1)
    out = open(real, "w", encoding=sys.stdout.encoding, errors=sys.stdout.errors, closefd=False)  # noqa: SIM115
    try:
        yield out
    finally:
        try:
            out.close()  # flushes; the descriptor stays open (closefd=False) until restored below
        finally:
            sys.stdout.flush()  # what the tools printed, to stderr
            os.dup2(real, 1)
            os.close(real)


def deliver(text: str, args: argparse.Namespace, out: TextIO) -> int:
    """A generated file: compared with `--check FILE` (1 and a diff when it differs), written to `-o FILE`, or
    printed."""
    if args.check:
        return _compare_file(Path(args.check), text, args, out)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        out.write(text)
    return 0


def _compare_file(path: Path, text: str, args: argparse.Namespace, out: TextIO) -> int:
    try:
        current = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot read {str(path)!r}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:  # what toolkit writes is UTF-8: this file is not one it wrote
        raise CommandError(f"{str(path)!r} is not UTF-8 text (byte {exc.start}: {exc.reason})") from exc
    if current == text:
        return 0
    diff = difflib.unified_diff(
        current.splitlines(keepends=True), text.splitlines(keepends=True), f"{path} (on disk)", f"{path} (generated)"
    )
    out.writelines(diff)
    source = f"--stdio -- {' '.join(args.command)}" if args.stdio else args.target
    say(f"{path} is out of date; update it with: toolkit {args.name} {source} -o {path}")
    return 1
