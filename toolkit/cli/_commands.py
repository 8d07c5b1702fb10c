"""The `toolkit` command's first subcommands: serve, list, docs, check and call.

Each takes the parsed arguments and returns the exit status; a problem to report in one line is a `CommandError`.
What they share with the commands in modules of their own (loading, connecting, output) is in `_common`.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from toolkit import CallToolResult, ProtocolError, StartupError
from toolkit._definition.tool import argument_problem, error_wire
from toolkit._lint import Finding, lint
from toolkit._profiles.portability import check_tools as check_profiles
from toolkit._profiles.portability import expand_profiles
from toolkit._profiles.profiles import get_profile
from toolkit._server import Server, serve_process
from toolkit._shadowing import shadowing_module
from toolkit.docs import badges, describe_type, render_definitions, render_json, render_markdown
from toolkit.docs._reference import served_badges

from ._breaking_changes import Change, compare, format_changes
from ._common import (
    CommandError,
    CommandTimeout,
    connect,
    data_on_stdout,
    deliver,
    is_url,
    json_object,
    load,
    load_served,
    output_kept_apart,
    read_tools,
    run,
    say,
    seconds,
    target_first,
)
from ._lint import page_findings
from ._output import ProgressBar, format_findings, format_problems, print_result, print_table, problems_json
from ._prompt import TerminalPrompt
from ._tasks import detached, going_on, refuse_detach, run_call, tasks_ended

if TYPE_CHECKING:
    from toolkit import Client, LogMessage

__all__ = ["call_tool", "check_tools", "list_tools", "serve_target", "worker_app", "write_docs"]


# -- commands --------------------------------------------------------------------------------------------------


def serve_target(args: argparse.Namespace) -> int:
    """`toolkit serve`: serve the target over stdio until the client leaves, or over HTTP until interrupted."""
    # What the module prints as it loads goes to stderr: over stdio, stdout is the protocol's from the start.
    with output_kept_apart(in_memory=True):
        found = load_served(args.target)
    try:
        _serve(args, found)
    except ImportError as exc:  # without the http extra (uvicorn), before serving: the message says what to install
        raise CommandError(shadowing_module() or str(exc)) from exc  # or an `http.py` of the user's is in the way
    except StartupError as exc:
        raise CommandError(str(exc)) from exc
    except OSError as exc:  # binding the address: in use, not ours to bind
        if not args.http or exc.errno is None:
            raise
        raise CommandError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}") from exc
    return 0


def _serve(args: argparse.Namespace, found: Any) -> None:
    """Serve what the target holds (a server, or the app the module made) over stdio, or over HTTP by one process or
    several workers."""
    server: Server = found if isinstance(found, Server) else found.server
    if not args.http:
        serve_process(server)
    elif args.workers > 1:
        _serve_workers(args, found, server)
    elif isinstance(found, Server):
        serve_process(server, transport="http", host=args.host, port=args.port, **_http_options(args, found))
    else:
        from toolkit._http.serve import serve_http

        _http_options(args, found)
        serve_http(found, host=args.host, port=args.port)


def _serve_workers(args: argparse.Namespace, found: Any, server: Server) -> None:
    """Serve over HTTP by `--workers` processes, each of which builds its app with `worker_app`."""
    from toolkit._http.serve import Workers, serve_workers

    options = _http_options(args, found)
    path = options.get("path", "/mcp") if isinstance(found, Server) else found.path
    where = Workers(args.host, args.port, args.workers, path)
    serve_workers("toolkit.cli._commands:worker_app", args.target, server.registry, where, options)


def _http_options(args: argparse.Namespace, found: Any) -> dict[str, Any]:
    """The options `toolkit serve --http` gives `http_app()`; none for an app the module made itself, whose
    settings (`auth=`, allowed hosts, its secret) are served as they are, never replaced or dropped."""
    if isinstance(found, Server):
        return {"allowed_hosts": args.allowed_hosts} if args.allowed_hosts else {}
    where = args.target
    if args.allowed_hosts:
        raise CommandError(
            f"{where!r} serves the app made by server.http_app() in the module, with its own settings: give "
            "allowed_hosts= there, not --allowed-host"
        )
    if args.workers > 1 and found.server.secret is None:
        raise CommandError(
            f"{where!r} serves the app made by server.http_app() in the module, which has no shared secret: its "
            f"{args.workers} workers could not trust each other's sessions; give it http_app(secret=...) (see the "
            "deploy docs, Keys), or serve it with one worker"
        )
    if args.workers > 1 and found.session_store is None and found.fleet is None:
        # Without either, a DELETE holds on one worker only, and a call whose question's answer reached another
        # worker cannot learn it (issue 21: no client may wait for an answer that cannot arrive).
        raise CommandError(
            f"{where!r} serves the app made by server.http_app() in the module, which has no shared session store: "
            f"its {args.workers} workers could not end sessions for each other nor tell a call that its question's "
            "answer reached another worker; give it http_app(backend=RedisBackend(URL)), or "
            "http_app(session_store=SqliteSessionStore(PATH)) (see the deploy docs, Several workers), or serve it "
            "with one worker"
        )
    return {}


@data_on_stdout
def list_tools(args: argparse.Namespace, out: TextIO) -> int:
    """`toolkit list`: print the tools as a table."""
    tools = read_tools(args)
    local = _local_tools(args)
    rows = [("NAME", "TITLE", "HINTS", "PARAMETERS"), *(_row(tool, local) for tool in tools)]
    print_table(rows, [0, 1, 2, 3] if any(row[1] for row in rows[1:]) else [0, 2, 3], out=out)
    print(f"{len(tools)} tool{'' if len(tools) == 1 else 's'}", file=out)
    return 0


def _row(tool: Mapping[str, Any], local: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """A tool's row of `toolkit list`: its name, title, hints (and what its server does around a call, for a tool of
    the module loaded here) and parameters."""
    title = tool.get("title") or (tool.get("annotations") or {}).get("title") or ""
    labels = [*badges(tool, mark_defaults=False), *served_badges(local.get(tool["name"]))]
    return (tool["name"], title, ", ".join(labels), _parameters(tool.get("inputSchema") or {}) or "-")


def _parameters(schema: Mapping[str, Any]) -> str:
    """`name: type, other?: type`: the parameters of an input schema (`?` for an optional one)."""
    required = set(schema.get("required") or ())
    return ", ".join(
        f"{name}{'' if name in required else '?'}: {describe_type(sub, fields=True)}"
        for name, sub in (schema.get("properties") or {}).items()
    )


@data_on_stdout
def write_docs(args: argparse.Namespace, out: TextIO) -> int:
    """`toolkit docs`: write (or, with `--check`, compare) the Markdown or JSON reference of the tools."""
    tools = read_tools(args)
    if args.format in ("openai", "anthropic", "gemini"):
        text = _definitions(tools, args.format, args.profile)
    else:
        # Lint findings are shown unless --no-lint (a reference is read by the tools' authors and reviewers first); a
        # module's own tools with what their code says (and silences), another server's as its definitions say.
        findings: list[Finding] | None = []
        local = _local_tools(args)
        if not args.no_lint:
            findings = None if args.stdio or is_url(args.target) else lint(load(args.target))
        if args.format == "json":
            text = render_json(tools)
        else:
            text = render_markdown(tools, title=args.title, findings=findings, local=local)
    return deliver(text, args, out)


@data_on_stdout
def check_tools(args: argparse.Namespace, out: TextIO) -> int:
    """`toolkit check`: report changes since a snapshot and the problems of the tools' MCP Apps pages (1 if a
    change breaks or a page has an error), or write a snapshot."""
    if args.profile:
        return _check_profiles(args, out)
    tools = read_tools(args)
    if args.write:
        Path(args.write).write_text(render_json(tools), encoding="utf-8")
        print(f"wrote {len(tools)} tool{'' if len(tools) == 1 else 's'} to {args.write}", file=sys.stderr)
        return 0
    changes = compare(_read_snapshot(Path(args.against)), tools)
    pages = page_findings(args)  # what a host would trip on in the tools' MCP Apps pages
    if args.format == "json":
        print(json.dumps(_check_report(changes, pages), indent=2, ensure_ascii=False), file=out)
    else:
        out.write(format_changes(changes))
        out.write(format_findings(pages, len(tools)) if pages else "")
    breaks = any(c.severity == "breaking" for c in changes)
    return 1 if breaks or any(f.rule.level == "error" for f in pages) else 0


def _check_report(changes: Sequence[Change], pages: Sequence[Finding]) -> dict[str, Any]:
    """`toolkit check --format json`: the count of breaking and compatible changes, each change, and the pages'
    problems when there are any."""
    breaking = sum(c.severity == "breaking" for c in changes)
    report: dict[str, Any] = {
        "breaking": breaking,
        "compatible": len(changes) - breaking,
        "changes": [c.to_json() for c in changes],
    }
    if pages:  # a server without a page problem keeps the report it always had
        report["pages"] = [f.to_json() for f in pages]
    return report


def _local_tools(args: argparse.Namespace) -> dict[str, Any]:
    """The toolkit tools of a module target by name (what their server does around a call, which no definition
    says, is shown beside them); none for a server over stdio or at a URL."""
    return {} if args.stdio or is_url(args.target) else dict(load(args.target).tools)


def _check_profiles(args: argparse.Namespace, out: TextIO) -> int:
    try:
        profiles = expand_profiles(args.profile)
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    tools = read_tools(args)
    problems = check_profiles(tools, profiles)
    out.write(problems_json(problems) if args.format == "json" else format_problems(problems, len(tools), profiles))
    return 1 if any(p.rejects for p in problems) else 0


def _definitions(tools: list[dict[str, Any]], provider: str, profile: str | None) -> str:
    try:
        chosen = get_profile(profile or provider)
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    if chosen.provider != provider:
        raise CommandError(f"profile {chosen.name!r} is not for {provider} (its provider is {chosen.provider})")
    # What toolkit's adaptation cannot fix (a name such as `files.delete`) is still in the definitions: the
    # provider would refuse them, so say so, while writing them as asked (`check --profile` is the gate).
    for problem in check_profiles(tools, [chosen.name]):
        if problem.rejects and not problem.fixable:
            say(f"warning: {chosen.name} would reject this definition: {problem}")
    return render_definitions(tools, chosen.name)


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


@data_on_stdout
def call_tool(args: argparse.Namespace, out: TextIO) -> int:
    """`toolkit call`: call one tool, showing its log messages and progress on stderr, and print its result."""
    words = target_first(args, "call needs TARGET and TOOL (or --stdio TOOL ... -- COMMAND)")
    name, pairs = words[0], _pairs(words[1:])
    given = _json_arguments(args.json_args)
    if not args.stdio and not is_url(args.target):
        server = load(args.target)
        # With a tool_filter, the server itself answers: its hint names only the tools this caller sees.
        if name not in server.tools and server.registry.tool_filter is None and not server.registry.mounts:
            raise CommandError(f"no tool named {name!r}{_suggestion(name, list(server.tools))}")
        args.target = server
    return _call(args, name, given, pairs, out)


def _suggestion(name: str, tools: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, tools, n=1)
    return f"; did you mean {close[0]!r}?" if close else f"; tools: {', '.join(tools) or 'none'}"


def _roots(given: list[str] | None, *, remote: bool) -> list[Path] | None:
    """The client's roots for `ctx.list_roots()`: each `--root` (which must exist), or else the current directory;
    none for a server at a URL (`None`: the client declares no roots), which runs on another machine, where this
    directory means nothing and its path is not the server's to learn."""
    if not given:
        return None if remote else [Path.cwd()]
    missing = [root for root in given if not Path(root).exists()]
    if missing:
        raise CommandError(f"--root {missing[0]}: no such file or directory")
    return [Path(root).resolve() for root in given]


def _call(args: argparse.Namespace, name: str, given: dict[str, Any], pairs: list[tuple[str, str]], out: TextIO) -> int:
    bar = ProgressBar(sys.stderr)
    listed: list[str] = []
    hints: list[str] = []  # how to write a value given as text that the schema wants as JSON

    def show(log: LogMessage) -> None:
        data = log.data if isinstance(log.data, str) else json.dumps(log.data, ensure_ascii=False)
        bar.line(f"{log.level}{f' [{log.logger}]' if log.logger else ''}: {data}")

    # A tool that asks is answered by the person at the terminal (stderr and stdin; stdout is the result).
    prompt = TerminalPrompt(yes=args.yes)

    async def call() -> CallToolResult | None:
        options: dict[str, Any] = {} if args.quiet else {"on_log": show}
        options.update(
            elicitation_handler=prompt.elicit,
            sampling_handler=prompt.sample,
            roots=_roots(args.roots, remote=is_url(args.target)),
        )
        async with connect(args, **options) as client:
            # The tools' schemas say which `key=value` texts are strings; the names, what an unknown tool was meant.
            tools = await client.list_tools()
            listed.extend(t.name for t in tools)
            schema = next((t.input_schema for t in tools if t.name == name), None)
            arguments = {**given, **{key: _value(text, key, schema) for key, text in pairs}}
            hints.extend(_json_hints(pairs, arguments, schema))
            refused = _refused_here(args.target, name, arguments)
            if refused is not None:
                return refused
            if not args.quiet and _takes_log_level(client):
                await client.set_logging_level(args.log_level)
            return await run_call(client, name, arguments, args, None if args.quiet else bar)

    args.started = []  # the task the server runs the call as, if any: named when the command stops waiting
    refuse_detach(args)
    try:
        with tasks_ended(args):
            result = run(call)
    except ProtocolError as exc:
        if prompt.refused_sampling:  # 2026-07-28: the client's own answer ends the call, not the server
            raise CommandError(f"{name} asked for a completion from a model: {exc.message}") from exc
        # The server's own hint (toolkit's says "did you mean") is not repeated.
        hint = _suggestion(name, listed) if listed and name not in listed and "did you mean" not in exc.message else ""
        raise CommandError(f"the server refused the call: {exc.message} (code {exc.code}){hint}") from exc
    except TimeoutError as exc:
        waited = f"call: {name} gave no result within {seconds(args.timeout)} (--timeout)"
        raise CommandTimeout(waited + going_on(args)) from exc
    except StartupError as exc:
        raise CommandError(str(exc)) from exc
    finally:
        bar.close()
    if result is None:
        return detached(args.started[0], args, out)
    return _printed(result, args.raw, out, hints)


def _takes_log_level(client: Client) -> bool:
    """Whether the server takes `logging/setLevel`: every 2026-07-28 server does; a handshake-era server without the
    logging capability would refuse it (-32601)."""
    return client.era.logs_per_request or "logging" in client.capabilities


def _printed(result: CallToolResult, raw: bool, out: TextIO, hints: list[str]) -> int:
    """The result printed, then, when it is an error, the hints on writing the arguments that may have caused it."""
    status = print_result(result, raw=raw, out=out)
    for hint in hints if result.is_error else ():
        say(hint)
    return status


def _json_hints(pairs: list[tuple[str, str]], arguments: dict[str, Any], schema: Any) -> list[str]:
    """A hint for each `key=value` whose text is not JSON, for a parameter that takes only arrays or objects:
    `tags=python` for a list is `tags='["python"]'` (a shell passes `tags=["python"]` as `tags=[python]`)."""
    out = []
    for key, _ in pairs:
        value = arguments[key]
        types = _types(((schema or {}).get("properties") or {}).get(key), schema or {}, 0)
        if not isinstance(value, str) or not types or not types <= {"array", "object", "null"}:
            continue
        if "array" in types:
            out.append(f"{key} takes an array, written as JSON: {key}={shlex.quote(json.dumps([value]))}")
        else:
            out.append(f'{key} takes an object, written as JSON: {key}=\'{{"name": "value"}}\'')
    return out


def _refused_here(target: Any, name: str, arguments: dict[str, Any]) -> CallToolResult | None:
    """The server's own answer to arguments that do not fit a task tool of the module loaded here, before a task is
    made for a call that cannot run (the server validates inside the task). Only where no middleware, which may
    change the arguments, stands between the call and the tool."""
    if not isinstance(target, Server):
        return None
    registry = target.registry
    tool = registry.tools.get(name) if registry.tool_filter is None else None
    if tool is None or tool.task is None or tool.middleware or registry.middleware or registry.tool_middleware:
        return None
    problem = argument_problem(tool, arguments, strict=registry.strict_arguments)
    return None if problem is None else CallToolResult.model_validate(error_wire(problem))


def _json_arguments(source: str | None) -> dict[str, Any]:
    """`--json OBJECT`, `--json -` (standard input) or `--json @FILE`."""
    if source is None:
        return {}
    where = "--json"
    if source == "-":
        where, source = "--json - (standard input)", sys.stdin.read()
    elif source.startswith("@"):
        try:
            where, source = f"--json {source}", Path(source[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot read {source[1:]!r} (--json {source}): {exc.strerror}") from exc
    return json_object(source, where)


def _pairs(words: Sequence[str]) -> list[tuple[str, str]]:
    pairs: dict[str, str] = {}
    for word in words:
        key, sep, text = word.partition("=")
        if not sep or not key:
            raise CommandError(f"argument {word!r} is not key=value")
        if key in pairs:
            raise CommandError(f"argument {key!r} given twice ({key}={pairs[key]} and {word})")
        pairs[key] = text
    return list(pairs.items())


def _value(text: str, key: str, schema: Mapping[str, Any] | None) -> Any:
    """A `key=value` text as the argument: a string when the parameter takes only strings (`text=123` is "123"),
    else JSON when it parses as JSON, else the string."""
    types = _types(((schema or {}).get("properties") or {}).get(key), schema or {}, 0)
    if types and types <= {"string", "null"} and "string" in types and not (text == "null" and "null" in types):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _types(schema: Any, root: Mapping[str, Any], depth: int) -> set[str]:
    """The JSON types a parameter's schema accepts; empty when it accepts any (or cannot tell)."""
    if not isinstance(schema, Mapping) or depth > 8:
        return set()
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        return _types(_pointed(root, ref), root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, (str, list)):
        return _declared_types(kind)
    return _implied_types(schema, root, depth)


def _declared_types(kind: str | list[Any]) -> set[str]:
    """The types a `type` keyword names: one, or a list of them."""
    if isinstance(kind, str):
        return {kind}
    return {k for k in kind if isinstance(k, str)}


def _implied_types(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> set[str]:
    """The types a schema without `type` accepts: its listed values' (`enum`, `const`), or its alternatives'."""
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if isinstance(values, list):
        return {_value_type(v) for v in values}
    members = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(members, list):
        return _union_types(members, root, depth)
    return set()


def _pointed(root: Mapping[str, Any], ref: str) -> Any:
    """What a local JSON pointer (`#/$defs/Name`) points at in `root`; None when nothing."""
    target: Any = root
    for part in ref[2:].split("/"):
        target = target.get(part) if isinstance(target, Mapping) else None
    return target


def _value_type(value: Any) -> str:
    """A listed value's type, as far as `key=value` cares: a string, null, or another."""
    if isinstance(value, str):
        return "string"
    return "null" if value is None else "other"


def _union_types(members: list[Any], root: Mapping[str, Any], depth: int) -> set[str]:
    """The types an `anyOf` (or `oneOf`) accepts: every member's; empty when one member accepts any."""
    each = [_types(m, root, depth + 1) for m in members]
    return set().union(*each) if all(each) else set()


def worker_app() -> Any:
    """The app of one worker of `toolkit serve --http --workers N` (each worker process calls it): the app the module
    made itself, as it is, or the server's, with the key, the session store and the backend the workers share (the
    supervisor's `LocalHub`, unless the server has a backend of its own, such as Redis)."""
    from toolkit import SqliteSessionStore
    from toolkit._backend.local import LocalBackend
    from toolkit._http.serve import BACKEND_ENV, OPTIONS_ENV, SECRET_ENV, STORE_ENV, TARGET_ENV

    # Read once and taken out of the environment: a subprocess a tool starts inherits neither the key that signs
    # every session nor the path of the workers' hub (nor the rest of what only this worker's start needs).
    target, secret = os.environ.pop(TARGET_ENV), os.environ.pop(SECRET_ENV)
    store_path, hub = os.environ.pop(STORE_ENV, None), os.environ.pop(BACKEND_ENV, None)
    options = json.loads(os.environ.pop(OPTIONS_ENV, "{}"))
    found = load_served(target)
    if not isinstance(found, Server):
        return found
    store = SqliteSessionStore(store_path) if store_path is not None else None
    if found.registry.backend is None and hub is not None:
        options["backend"] = LocalBackend(hub)
    return found.http_app(secret=secret, session_store=store, **options)
