"""`toolkit dev`: serve a module over stdio or HTTP, and reload its tools whenever a Python file under its folder
changes.

One design for both transports: the module is imported again in this process and its tools replace the ones served
(`Server.replace_tools`), so that every connection outlives the reload. A stdio client cannot be handed a new
process, and over HTTP the app keeps its session key, its session records, its GET streams and its port: a
2025-11-25 session goes on with the same `Mcp-Session-Id`, and a 2026-07-28 client holds no session to lose.
Clients hear `notifications/tools/list_changed` only when what they list changed. The server itself (its name,
options and lifespan) is the one loaded first: changing those needs a restart.

watchfiles (the `reload` extra) says when files change; it is imported only here, when `toolkit dev` runs. Only the
files that can change what is served count: `.py` files (and the suffixes of `--watch-ext`), outside the folders
watchfiles' default filter leaves out (`.git`, `.venv`, `__pycache__`, ...), and never the files this process writes
its own output to (`toolkit dev > dev.out 2> dev.err` in the folder would otherwise reload on every line it says).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import shlex
import shutil
import stat
import sys
import sysconfig
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread

import toolkit
from toolkit import Lifespan, Server
from toolkit._target import TargetError, absolute_target, load_server, source_folder

from ._common import CommandError, install_command, load, say

__all__ = ["Reloader", "run_dev", "watched_files"]

_INSPECTOR = "@modelcontextprotocol/inspector"
# How long the watcher's thread waits for a change before it looks up: its first look up says that it is watching
# (every change from then on is seen), which is what a person, or a test, waits for before editing.
_LOOK_UP_MS = 500
# How long stopping waits for a reload that is importing the module (an import cannot be interrupted): one that is
# still running then is left to its daemon thread, which ends with the process, so that a module that hangs while
# it imports cannot keep `toolkit dev` from stopping.
_STOP_WAIT = 5.0


def run_dev(args: argparse.Namespace) -> int:
    """`toolkit dev`: serve the target (stdio, or HTTP with `--http`) and reload it when a file under its folder
    changes, until the client leaves (stdio) or Ctrl-C / SIGTERM (HTTP)."""
    watch, default_filter = (
        watchfiles()
    )  # first: the Inspector would start a `toolkit dev` that stops at once without it
    if args.inspector:
        return _inspector(args)
    # A stale .pyc (same size, same second) must never serve the code before an edit; in development, no cache.
    sys.dont_write_bytecode = True
    watched = watched_files(default_filter(), args.watch_ext or [], own=(sys.stdout, sys.stderr))
    server = _first_load(args.target, watch, watched)
    reloader = Reloader(server, args.target, source_folder(args.target), watch, watched)
    server.lifespan = reloader.around(server.lifespan)
    if not args.http:
        server.run()
        return 0
    options: dict[str, Any] = {"allowed_hosts": args.allowed_hosts} if args.allowed_hosts else {}
    try:
        server.run(transport="http", host=args.host, port=args.port, **options)
    except ImportError as exc:  # without the http extra (uvicorn), before serving: the message says what to install
        raise CommandError(str(exc)) from exc
    return 0


def _inspector(args: argparse.Namespace) -> int:
    """`--inspector`: the MCP Inspector (Node, through npx) starts `toolkit dev TARGET` over stdio and shows it in the
    browser; the reloads reach it as they reach any client."""
    if args.http:
        raise CommandError("--inspector starts the server over stdio itself: leave out --http")
    dev = [sys.executable, "-m", "toolkit", "dev", absolute_target(args.target)]
    dev += [word for suffix in args.watch_ext or [] for word in ("--watch-ext", suffix)]
    npx = shutil.which("npx")
    if npx is None:
        raise CommandError(
            "--inspector runs the MCP Inspector with npx, from Node.js, which is not on PATH: install Node.js "
            f"(https://nodejs.org), or run it yourself: npx {_INSPECTOR} {shlex.join(dev)}"
        )
    import subprocess  # only here: the command runs the Inspector, which runs the server

    return subprocess.run([npx, "--yes", _INSPECTOR, *dev], check=False).returncode


def watchfiles() -> tuple[Any, Any]:
    try:
        from watchfiles import DefaultFilter, watch
    except ImportError:
        how = f"install toolkit's reload extra: {install_command('reload')}"
        raise CommandError(f"toolkit dev needs watchfiles to see files change: {how}") from None
    return watch, DefaultFilter


def _first_load(target: str, watch: Any, watched: Callable[[Any, str], bool]) -> Server:
    """The server `target` names. A file that does not load yet (a syntax error from the start) is watched until an
    edit makes it load, as after a broken edit: the server then serves (its lifespan, its options) as it would have.
    A module name, or a path to no file, is a one-line error."""
    try:
        return load(target)
    except CommandError as exc:
        file = target if Path(target).is_file() else target.rpartition(":")[0]
        if not file or not Path(file).is_file():
            raise
        say(f"{_one_line(str(exc))}; serving once an edit makes it load")
    folder = source_folder(target)
    watching = False
    for changes in watch(folder, watch_filter=watched, rust_timeout=_LOOK_UP_MS, yield_on_timeout=True):
        if not watching:
            say(f"watching {folder} for changes")
            watching = True
        if not changes:
            continue
        try:
            return _load_again(target, folder)
        except TargetError as exc:
            say(f"still cannot serve it: {_one_line(str(exc))}")
    raise CommandError(f"stopped watching {folder}")  # watchfiles ends only when stopped


def watched_files(
    default: Callable[[Any, str], bool], suffixes: Sequence[str], *, own: Sequence[Any] = ()
) -> Callable[[Any, str], bool]:
    """Which changes reload (watchfiles' `watch_filter`): a `.py` file or one of `suffixes`, that `default` (watchfiles'
    DefaultFilter: no `.git`, `.venv`, `__pycache__`, swap files) keeps, and that is none of the files `own` (this
    process's standard output and error) write to."""
    endings = (".py", *(suffix if suffix.startswith(".") else f".{suffix}" for suffix in suffixes))
    written = {identity for identity in map(_file_identity, own) if identity is not None}

    def watched(change: Any, path: str) -> bool:
        if not path.endswith(endings) or not default(change, path):
            return False
        try:
            status = os.stat(path)
        except OSError:  # removed: a module gone is a change
            return True
        return (status.st_dev, status.st_ino) not in written

    return watched


def _file_identity(stream: Any) -> tuple[int, int] | None:
    """The (device, inode) of the regular file a stream writes to, or None (a pipe, a terminal, no file number)."""
    with contextlib.suppress(AttributeError, OSError, ValueError):
        status = os.fstat(stream.fileno())
        if stat.S_ISREG(status.st_mode):
            return status.st_dev, status.st_ino
    return None


def _one_line(text: str) -> str:
    return " | ".join(line.strip() for line in text.splitlines() if line.strip())


class Reloader:
    """Watches the module's folder while the server runs (inside its lifespan) and swaps in the tools of each
    import that succeeds; then calls `then` on the event loop (`toolkit preview` reloads its pages).

    The watching and the imports run on a thread of their own, which hands each new set of tools to the event loop:
    calls in flight go on while a module imports, and the lifespan holds no task group (`Server.running` leaves a
    lifespan inside a shielded scope of its own, which a task group entered at startup cannot be exited from).
    """

    def __init__(  # noqa: PLR0913 (what it watches, how, and what to tell: each used)
        self,
        server: Server,
        target: str,
        folder: Path,
        watch: Any,
        watched: Callable[[Any, str], bool],
        *,
        then: Callable[[], None] | None = None,
    ) -> None:
        self.server = server
        self.then = then
        self.watching = threading.Event()
        """Set once the watcher has looked at the folder: every change from then on is seen."""
        self.target = target
        self.folder = folder
        self.watch = watch
        self.watched = watched
        self.options = _server_options(server)

    def around(self, inner: Lifespan | None) -> Lifespan:
        """The server's lifespan with the watcher running inside it: it starts and stops with the serving, under
        stdio and under uvicorn alike."""

        @asynccontextmanager
        async def lifespan(server: Server) -> AsyncIterator[Any]:
            stop = threading.Event()
            token = anyio.lowlevel.current_token()
            watcher = threading.Thread(target=self._watch, args=(stop, token), name="toolkit dev", daemon=True)
            watcher.start()
            try:
                if inner is None:
                    yield None
                else:
                    async with inner(server) as state:
                        yield state
            finally:
                stop.set()  # seen by the watcher within its `step` (50 ms), or once an import in progress ends
                # On a worker thread: the loop stays free for a swap the watcher hands it meanwhile.
                await anyio.to_thread.run_sync(watcher.join, _STOP_WAIT)
                if watcher.is_alive():
                    say(f"stopping without the reload in progress: importing {self.target} took over {_STOP_WAIT:g} s")

        return lifespan

    def _watch(self, stop: threading.Event, token: anyio.lowlevel.EventLoopToken) -> None:
        watching = False
        try:
            changes_seen = self.watch(
                self.folder,
                watch_filter=self.watched,
                stop_event=stop,
                rust_timeout=_LOOK_UP_MS,
                yield_on_timeout=True,
            )
            for changes in changes_seen:
                if not watching:
                    say(f"watching {self.folder} for changes")
                    watching = True
                    self.watching.set()
                if changes and not stop.is_set():
                    self._reload(token)
        except OSError as exc:  # no watch possible (inotify's limit reached, the folder gone): serve on, say why
            say(f"cannot watch {self.folder}, so it will not reload: {exc}")

    def _reload(self, token: anyio.lowlevel.EventLoopToken) -> None:
        try:
            loaded = self._import()
            tools = [*loaded.tools.values(), *self._mounted(loaded)]
            changed = anyio.from_thread.run_sync(self.server.replace_tools, tools, token=token)
            if self.then is not None:
                anyio.from_thread.run_sync(self.then, token=token)
        except Exception as exc:  # whatever the module does (a factory that raises included), the last tools serve on
            why = str(exc) if isinstance(exc, TargetError) else f"{type(exc).__name__}: {exc}"
            say(f"reload failed, still serving the last good tools: {_one_line(why)}")
            return
        names = ", ".join(self.server.tools) or "none"
        options = _server_options(loaded)
        differ = [option for option, value in self.options.items() if options[option] != value]
        restart = f"; the server's {', '.join(differ)} changed: restart toolkit dev to serve them" if differ else ""
        say(f"reloaded {self.target}: tools {names}{'' if changed else ' (definitions unchanged)'}{restart}")

    def _mounted(self, loaded: Server) -> list[Any]:
        """The tools of the servers mounted on the running server (`Server.mount`): they stay served across a reload
        (their connections were opened when it started; a change to the `mount()` calls takes a restart)."""
        return [tool for tool in self.server.tools.values() if tool.forwards and tool.name not in loaded.tools]

    def _import(self) -> Server:
        return _load_again(self.target, self.folder)


def _load_again(target: str, folder: Path) -> Server:
    """The server `target` names, its module and the modules of its folder read again from their files."""
    _forget_modules(folder)
    importlib.invalidate_caches()  # a module added since the last import is found
    return load_server(target)


# What a server is made with besides its tools, which a reload does not change (the lifespan is a new function at each
# import, so it is not compared): a change of one of these is said, with the need to restart.
_SERVER_OPTIONS = (
    "instructions",
    "page_size",
    "show_error_details",
    "strict_arguments",
    "max_message_size",
    "max_concurrent_requests",
    "max_queued_messages",
    "max_queued_bytes",
    "tool_timeout",
    "shutdown_grace",
    "ttl_ms",
    "cache_scope",
    "schema_profile",
    "confirm_fallback",
    "client_request_timeout",
    "request_state_ttl",
    "secret",
)


def _server_options(server: Server) -> dict[str, Any]:
    info = server.registry.info.model_dump(exclude_none=True)
    return {
        **{key: info.get(key) for key in ("name", "version", "title", "description")},
        **{option: getattr(server.registry, option, None) for option in _SERVER_OPTIONS},
    }


def _forget_modules(folder: Path) -> None:
    """Drop the modules imported from `folder`, so that the next import reads their files again: the target's
    neighbours too (a helper module it imports). Not toolkit, nor a virtual environment inside the folder."""
    kept = [Path(toolkit.__file__).resolve().parent, Path(sys.prefix).resolve()]
    kept += [Path(path).resolve() for path in {sysconfig.get_path(key) for key in ("stdlib", "purelib", "platlib")}]
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not isinstance(file, str):
            continue
        path = Path(os.path.abspath(file))
        if path.is_relative_to(folder) and not any(path.is_relative_to(root) for root in kept):
            del sys.modules[name]
