"""`toolkit preview`: a local host for a server's MCP Apps, to see a tool's page work in a browser before any host
is involved, with no network.

It serves, on 127.0.0.1 only, a page that does what a host does (specification/2026-01-26/apps.mdx): it lists the
tools, reads the tool's page with `resources/read`, renders it in a sandboxed iframe under the CSP its `_meta.ui`
declares, runs the `ui/initialize` handshake with the official `AppBridge` (vendored in `toolkit/_apps/vendor/`),
sends the tool's input and result, and answers the page's own `tools/call` and `resources/read` from the server. The
server runs in this process behind an in-memory `Client(server, apps=True)`, as a host's client would see it.

Routes: `/` lists the tools with a page and a form for their arguments; `/?tool=NAME&arguments=<JSON>` is the host
page for one call; `/rpc` (POST, JSON, at most the server's `max_message_size`: 413 past it) answers the host page;
`/ext-apps.js` and `/host.js` are its scripts; `/events` tells open pages to reload when the module or a page's file
changes (with watchfiles, the `reload` extra).
"""

from __future__ import annotations

import argparse
import html
import json
import sys
import threading
import webbrowser
from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import anyio
import anyio.to_thread

from toolkit import Client, ProtocolError, Server
from toolkit._http.response import plain, read_body
from toolkit._target import source_folder
from toolkit._version import __version__

from ._common import CommandError, load, say
from ._dev import Reloader, watched_files, watchfiles

__all__ = ["PreviewApp", "run_preview"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_ASSETS = Path(__file__).resolve().parent.parent / "_apps"
_SCRIPTS = {"/ext-apps.js": _ASSETS / "vendor" / "ext-apps.js", "/host.js": _ASSETS / "host.js"}
_PAGE_SUFFIXES = (".html", ".htm", ".css", ".js", ".svg")  # a page's files: a change reloads the preview too
_RPC_METHODS = ("tools/list", "tools/call", "resources/list", "resources/read")
_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
_WATCH_WAIT = 10.0  # seconds an event stream waits for the watcher's first look before it says it is watching


def run_preview(args: argparse.Namespace) -> int:
    """`toolkit preview TARGET` (and `toolkit dev TARGET --ui`): serve the host page until Ctrl-C."""
    try:
        import uvicorn
    except ImportError:
        raise CommandError("toolkit preview serves its page on uvicorn: install toolkit's http extra") from None
    sys.dont_write_bytecode = True  # as toolkit dev: a reload never reads a stale .pyc
    server = load(args.target)
    app = PreviewApp(server)
    _watch(app, args.target)
    sock = _bind(args.host or "127.0.0.1", args.port or 0)
    with sock:
        host, port = sock.getsockname()[:2]
        url = f"http://{host}:{port}/" if ":" not in host else f"http://[{host}]:{port}/"
        say(f"previewing {args.target}'s MCP Apps on {url}")
        if args.open:  # webbrowser honours BROWSER; on a thread, as a browser command may take its time
            threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
        config = uvicorn.Config(app, lifespan="on", log_level="warning", timeout_graceful_shutdown=1)
        uvicorn.Server(config).run(sockets=[sock])
    return 0


def _watch(app: PreviewApp, target: str) -> None:
    """Reload the server's tools and the open pages when the module's folder changes (`.py` and page files)."""
    try:
        watch, default_filter = watchfiles()
    except CommandError as exc:
        say(f"{exc}; previewing without reloads")
        return
    watched = watched_files(default_filter(), list(_PAGE_SUFFIXES), own=(sys.stdout, sys.stderr))
    reloader = Reloader(app.server, target, source_folder(target), watch, watched, then=app.reloaded)
    app.server.lifespan = reloader.around(app.server.lifespan)
    app.watching = reloader.watching


def _bind(host: str, port: int) -> Any:
    import socket

    if host not in ("127.0.0.1", "localhost", "::1"):
        raise CommandError(f"toolkit preview serves on this machine only (127.0.0.1), not on {host}")
    sock = socket.socket(socket.AF_INET6 if host == "::1" else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((host, port))
        sock.listen(64)
    except OSError as exc:
        sock.close()
        raise CommandError(f"cannot serve the preview on {host}:{port}: {exc}") from None
    return sock


class PreviewApp:
    """The preview's ASGI app: the host page, its scripts, and its way to the server (see the module docstring)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.client: Client | None = None
        self.watching: threading.Event | None = None
        """Set once the folder is watched (None: no reloads, without watchfiles)."""
        self._changed = anyio.Event()

    def reloaded(self) -> None:
        """The tools or pages changed: every open page reloads (on the event loop)."""
        self._changed.set()
        self._changed = anyio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if not _from_this_machine(scope):  # DNS rebinding: a page of another site must not reach the tools
            await _respond(send, 403, "text/plain", b"toolkit preview answers 127.0.0.1 only")
            return
        path, method = scope["path"], scope["method"]
        if path == "/rpc" and method == "POST":
            await self._rpc(scope, receive, send)
        elif path == "/events":
            await self._events(receive, send)
        elif path in _SCRIPTS:
            await _respond(send, 200, "text/javascript; charset=utf-8", _SCRIPTS[path].read_bytes())
        elif path == "/":
            await self._page(scope, send)
        else:
            await _respond(send, 404, "text/plain", b"not found")

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup
        async with AsyncExitStack() as stack:
            try:
                self.client = await stack.enter_async_context(Client(self.server, apps=True))
            except Exception as exc:
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
            self._changed.set()  # open event streams end
        self.client = None
        await send({"type": "lifespan.shutdown.complete"})

    async def _page(self, scope: Scope, send: Send) -> None:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        name = query.get("tool", [None])[0]
        if name is None:
            await _respond(send, 200, "text/html; charset=utf-8", index_page(self.server).encode())
            return
        try:
            arguments = json.loads(query.get("arguments", ["{}"])[0])
        except ValueError as exc:
            await _respond(send, 400, "text/plain; charset=utf-8", f"arguments is not JSON: {exc}".encode())
            return
        if not isinstance(arguments, dict):
            await _respond(send, 400, "text/plain; charset=utf-8", b"arguments must be a JSON object")
            return
        await _respond(send, 200, "text/html; charset=utf-8", host_page(name, arguments).encode())

    async def _rpc(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope["headers"])
        if not headers.get(b"content-type", b"").startswith(b"application/json"):  # never a simple (CSRF) request
            await _respond(send, 415, "text/plain", b"application/json only")
            return
        # Bounded as the server's own HTTP endpoint is: a body over its max_message_size is answered 413.
        length = headers.get(b"content-length", b"").decode("latin-1") or None
        body = await read_body(receive, send, self.server.registry.max_message_size, length)
        if body is None:
            return
        try:
            request = json.loads(body)
            reply: dict[str, Any] = {"result": await self._answer(request["method"], request.get("params") or {})}
        except ProtocolError as exc:
            reply = {"error": {"code": exc.code, "message": str(exc)}}
        except (ValueError, KeyError, TypeError) as exc:
            reply = {"error": {"code": -32600, "message": f"bad request: {exc}"}}
        await _respond(send, 200, "application/json", json.dumps(reply).encode())

    async def _answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        client = self.client
        assert client is not None, "the preview's lifespan runs the client"
        if method == "tools/list":
            return {"tools": [_wire(tool) for tool in await client.list_tools()]}
        if method == "tools/call":
            result: dict[str, Any] = _wire(await client.call_tool(params["name"], params.get("arguments")))
            return result
        if method == "resources/list":
            return {"resources": await client.list_resources()}
        if method == "resources/read":
            return {"contents": [_wire(item) for item in await client.read_resource(params["uri"])]}
        raise ProtocolError(-32601, f"the preview answers {', '.join(_RPC_METHODS)}, not {method}")

    async def _events(self, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-store")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        if self.watching is not None:  # a page (or a test) that hears this knows that an edit from now on is seen
            await anyio.to_thread.run_sync(self.watching.wait, _WATCH_WAIT)
        await send({"type": "http.response.body", "body": b": watching\n\n", "more_body": True})
        changed = self._changed
        async with anyio.create_task_group() as tg:

            async def left() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                tg.cancel_scope.cancel()

            tg.start_soon(left)
            await changed.wait()
            await send({"type": "http.response.body", "body": b"data: reload\n\n", "more_body": False})
            tg.cancel_scope.cancel()


def _wire(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def _from_this_machine(scope: Scope) -> bool:
    host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return name in _LOOPBACK


async def _respond(send: Send, status: int, content_type: str, body: bytes) -> None:
    await plain(send, status, body, [(b"content-type", content_type.encode()), (b"cache-control", b"no-store")])


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #1a1a1a; }
h1 { font-size: 1.3rem; } h1 small { color: #666; font-weight: normal; }
.tool { border: 1px solid #ddd; border-radius: 8px; padding: 0.8rem 1rem; margin: 0.8rem 0; max-width: 50rem; }
textarea { width: 100%; font-family: ui-monospace, monospace; }
iframe { width: 100%; min-height: 120px; border: none; display: block; }
iframe.bordered { border: 1px solid #ccc; border-radius: 8px; }
#log { font-family: ui-monospace, monospace; font-size: 0.8rem; color: #444; padding-left: 1.2rem; }
#log .error { color: #b00020; } #log .app { color: #0b5394; } #log .server { color: #38761d; }
"""


def index_page(server: Server) -> str:
    """The index: every tool with a page, each with a form for its arguments (a JSON object, its defaults filled)."""
    forms = []
    for tool in server.tools.values():
        if tool.ui is None:
            continue
        properties = tool.definition.input_schema.get("properties", {})
        defaults = {key: spec["default"] for key, spec in properties.items() if "default" in spec}
        who = " (app-only)" if tool.app_only else ""
        forms.append(
            f'<form class="tool" method="get" action="/"><h2>{html.escape(tool.name)}{who}</h2>'
            f"<p>{html.escape(tool.definition.description or '')}</p><p><code>{html.escape(tool.ui.uri)}</code></p>"
            f'<input type="hidden" name="tool" value="{html.escape(tool.name)}">'
            f'<textarea name="arguments" rows="3">{html.escape(json.dumps(defaults))}</textarea>'
            f'<p><button type="submit">Call and render</button></p></form>'
        )
    body = "".join(forms) or "<p>No tool of this server has an MCP App (<code>@tool(ui=UI(...))</code>).</p>"
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(server.name)}: MCP Apps</title>"
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(server.name)} <small>MCP Apps preview</small></h1>"
        f"{body}<script>new EventSource('/events').onmessage = () => location.reload();</script></body></html>"
    )


def host_page(name: str, arguments: dict[str, Any]) -> str:
    """The host page for one call of the tool `name` (its script is `/host.js`)."""
    config = json.dumps({"tool": name, "arguments": arguments, "version": __version__}).replace("</", "<\\/")
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(name)}: MCP Apps preview</title>"
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(name)} <small><a href='/'>MCP Apps preview</a></small>"
        f"</h1><iframe id='frame' title='{html.escape(name)}'></iframe><ol id='log'></ol>"
        f"<script type='application/json' id='preview-config'>{config}</script>"
        "<script src='/ext-apps.js'></script><script src='/host.js'></script></body></html>"
    )
