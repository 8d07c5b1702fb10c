"""`toolkit inspect`: what a server offers, as a Server Card (SEP-2127) or as its `tools/list` result.

The card follows the Server Card extension's schema (`ServerCard` in `schema.json` of
modelcontextprotocol/experimental-ext-server-card at 8924e08, the contract SEP-2127 points to since its revision of
2026-08-14, a6c26fa6 on the spec repository's `sep/mcp-server-cards` branch). That revision describes a *remote*
server's identity and endpoints only: it leaves primitives out on purpose (they vary by user and are listed at
runtime), so the tools are the other format, `--format tools`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

from toolkit import __version__
from toolkit._protocol.client_eras import CLIENT_VERSIONS, HANDSHAKE_ERA, STATELESS_ERA
from toolkit.docs import render_json

from ._common import CommandError, data_on_stdout, is_url, parse_headers, read_server, say, tools_payload

if TYPE_CHECKING:
    from toolkit import Client

__all__ = ["CARD_SCHEMA", "Described", "inspect_server", "server_card"]

CARD_SCHEMA = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
"""The `$schema` every card names (the schema's own pattern allows only this URL)."""

_NAME = re.compile(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")  # reverse-DNS namespace, one slash, a name
_TEXT_LIMIT = 100  # the schema's maxLength of `description` and `title`
_PROBE_TIMEOUT = 30.0  # httpx's connect and write timeout of each revision's probe (the command's --timeout bounds all)


@data_on_stdout
def inspect_server(args: argparse.Namespace, out: TextIO) -> int:
    """`toolkit inspect`: print the server's card, or its tools as the `tools/list` result."""
    if args.card_name is not None and not _NAME.match(args.card_name):
        raise CommandError(f"--name {args.card_name!r} is not namespace/name, such as io.github.you/notes")
    for url in args.urls or ():
        if not is_url(url):
            raise CommandError(f"--url {url!r} is not an http:// or https:// URL")
    if args.format == "tools":
        out.write(render_json(read_server(args, tools_payload)))
        return 0

    async def describe(client: Client) -> dict[str, Any]:
        tools = await tools_payload(client)
        known = client.server_info
        info = known.model_dump(mode="json", by_alias=True, exclude_none=True) if known else {}
        # A module is served by toolkit, over HTTP in every revision it speaks; a URL, in each revision it answers in;
        # a server started over stdio (no remote of its own), in the one it spoke.
        if is_url(args.target):
            versions = await served_versions(args, client.protocol_version)
        elif args.stdio:
            versions = [client.protocol_version or STATELESS_ERA.version]
        else:
            versions = list(CLIENT_VERSIONS)
        urls = [*([args.target] if is_url(args.target) else []), *(args.urls or ())]
        described = Described(info, client.instructions, tools)
        return server_card(described, name=args.card_name, urls=urls, versions=versions)

    card = read_server(args, describe)
    print(json.dumps(card, indent=2, ensure_ascii=False), file=out)
    return 0


async def served_versions(args: argparse.Namespace, spoken: str | None) -> list[str]:
    """Every revision the server at the URL `args.target` serves, newest first: 2026-07-28 when it answers
    `server/discover` in it, and each handshake revision whose `initialize` it answers in that revision (the spec's
    negotiation: a server that supports the version asked for MUST answer with it). `spoken` is the revision the
    command's own client spoke, known already."""
    from toolkit import Client, ProtocolError

    headers = parse_headers(args.headers)
    found: set[str | None] = {spoken}
    if STATELESS_ERA.version not in found:
        with contextlib.suppress(ProtocolError):  # an error or an HTTP status: not served in 2026-07-28
            async with Client.http(args.target, headers=headers, protocol="2026-07-28"):
                found.add(STATELESS_ERA.version)
    for version in HANDSHAKE_ERA.rules.versions:
        if version not in found and await _answers_in(args.target, headers, version):
            found.add(version)
    return [version for version in CLIENT_VERSIONS if version in found]


async def _answers_in(url: str, headers: dict[str, str], version: str) -> bool:
    """Whether the server at `url` answers an `initialize` asking for handshake revision `version` in it."""
    from toolkit import ProtocolError
    from toolkit._transports.http import open_http  # a URL: the http extra is there (the client connected)

    info = {"name": "toolkit", "version": __version__}
    request = {"protocolVersion": version, "capabilities": {}, "clientInfo": info}
    try:
        async with open_http(url, headers, _PROBE_TIMEOUT, None) as transport:
            await transport.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": request}))
            answer = json.loads(await transport.receive())
    except (ProtocolError, ValueError):  # an HTTP status, or no JSON: not served in this revision
        return False
    result = answer.get("result") if isinstance(answer, dict) else None
    return isinstance(result, dict) and result.get("protocolVersion") == version


class Described(NamedTuple):
    """What a server says of itself when a client connects, and lists."""

    info: dict[str, Any]
    """Its `serverInfo` (an `Implementation`), as JSON."""
    instructions: str | None
    tools: list[dict[str, Any]]


def server_card(
    described: Described, *, name: str | None = None, urls: Sequence[str] = (), versions: list[str]
) -> dict[str, Any]:
    """The Server Card of a server: its `Implementation` (`serverInfo`), with a `streamable-http` remote per URL.

    The card needs a `namespace/name` and a description of at most 100 characters, which a server's own info may
    lack: the name falls back to `local/<name>` (with a warning: a published card names its namespace, `--name`),
    and the description to the instructions' first line, else the tools' names.
    """
    info = described.info
    server_name = str(info.get("name") or "server")
    if name is None:
        name = _card_name(server_name)
    card: dict[str, Any] = {
        "$schema": CARD_SCHEMA,
        "name": name,
        "version": str(info.get("version") or "0.0.0"),
        "description": _short(_description(described, server_name), "description"),
    }
    if info.get("title"):
        card["title"] = _short(info["title"], "title")
    for key in ("websiteUrl", "icons"):
        if info.get(key):
            card[key] = info[key]
    if urls:
        card["remotes"] = [
            {"type": "streamable-http", "url": url, "supportedProtocolVersions": list(versions)} for url in urls
        ]
    return card


def _card_name(server_name: str) -> str:
    """The card's `namespace/name`: the server's own name when it is one, else `local/<name>`, with a warning."""
    if _NAME.match(server_name):
        return server_name
    name = "local/" + (re.sub(r"[^a-zA-Z0-9._-]+", "-", server_name).strip("-") or "server")
    say(
        f"warning: the card is named {name!r}: give --name with your namespace, "
        f"such as io.github.you/{name.partition('/')[2]}"
    )
    return name


def _description(described: Described, name: str) -> str:
    info, instructions, tools = described
    for text in (info.get("description"), instructions):
        line = next((line.strip() for line in (text or "").splitlines() if line.strip()), "")
        if line:
            return line
    names = ", ".join(tool["name"] for tool in tools)
    return f"{name}: {len(tools)} tool{'' if len(tools) == 1 else 's'}{f' ({names})' if names else ''}"


def _short(text: str, field: str) -> str:
    """`text` within the schema's limit, saying on stderr when it had to be cut (the card would not say it)."""
    if len(text) <= _TEXT_LIMIT:
        return text
    say(
        f"warning: the card's {field} is cut to {_TEXT_LIMIT} characters, the most the schema allows "
        f"(it has {len(text)}); give the server a shorter {field}"
    )
    return text[: _TEXT_LIMIT - 3].rstrip() + "..."
