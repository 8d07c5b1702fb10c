"""`toolkit proxy`: serve any MCP server through toolkit (a gateway of one mount), over stdio or Streamable HTTP."""

from __future__ import annotations

import argparse
import os
import re

from toolkit._errors import StartupError
from toolkit._server import Server, serve_process

from ._common import CommandError, check_headers, is_url, parse_headers

__all__ = ["proxy_server", "proxy_target"]

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def proxy_server(args: argparse.Namespace) -> Server:
    """The gateway `toolkit proxy` serves: a server named `--name` with the upstream mounted on it."""
    upstream: str | list[str]
    if args.stdio:
        upstream = list(args.command)
    elif is_url(args.target):
        upstream = args.target
    else:
        raise CommandError(
            f"toolkit proxy takes a URL (http://... or https://...) or --stdio -- COMMAND, not {args.target!r}"
        )
    check_headers(args, upstream if isinstance(upstream, str) else None)
    server = Server(args.server_name or "proxy")
    headers = {name: _expand(value) for name, value in parse_headers(args.headers).items()} or None
    try:
        if headers is not None:
            server.mount(upstream, prefix=args.prefix, headers=headers)
        else:
            server.mount(upstream, prefix=args.prefix)
    except (TypeError, ValueError) as exc:
        raise CommandError(str(exc)) from exc
    return server


def proxy_target(args: argparse.Namespace) -> int:
    """`toolkit proxy`: serve the upstream through toolkit until the client leaves (stdio) or until interrupted."""
    server = proxy_server(args)
    try:
        if args.http:
            options = {"allowed_hosts": args.allowed_hosts} if args.allowed_hosts else {}
            serve_process(server, transport="http", host=args.host, port=args.port, **options)
        else:
            serve_process(server)
    except ImportError as exc:  # without the http extra
        raise CommandError(str(exc)) from exc
    except StartupError as exc:
        raise CommandError(str(exc)) from exc
    return 0


def _expand(value: str) -> str:
    """`${NAME}` in a header's value, from this process's environment: a secret need not be on the command line
    (where `ps` shows it)."""

    def variable(match: re.Match[str]) -> str:
        found = os.environ.get(match[1])
        if found is None:
            raise CommandError(f"a header names ${{{match[1]}}}, which is not set in the environment")
        return found

    return _VARIABLE.sub(variable, value)
