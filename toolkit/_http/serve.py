"""Serving the ASGI app on uvicorn: one process, or several worker processes sharing one socket.

The only module that imports uvicorn (the `http` extra). It binds the socket itself, so that it can say where it
listens (port 0 included) once clients can connect, which is once the server's lifespan has started: tests and
scripts wait for that line, never for a delay. A lifespan that fails is one error (`ServeError`), never a "serving
on" line first nor uvicorn's own lines.

Workers are supervised here, not by uvicorn's `Multiprocess`, for what it does not do: tell the workers' graceful
shutdown the server's `shutdown_grace`, stop them at once on a second signal or once the grace (and a cleanup
margin) is over, and report a worker's failed start as one line and a failure rather than a clean exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import os
import secrets
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import anyio
import anyio.abc

from toolkit._errors import StartupError

if TYPE_CHECKING:
    from .app import HttpApp

__all__ = [
    "BACKEND_ENV",
    "OPTIONS_ENV",
    "SECRET_ENV",
    "STORE_ENV",
    "TARGET_ENV",
    "ServeError",
    "Served",
    "Workers",
    "local_hub",
    "say_stopping",
    "serve_http",
    "serve_workers",
    "work",
]

# What `toolkit serve --workers N` hands its worker processes (read only by the workers' app factory, never at import).
TARGET_ENV = "TOOLKIT_HTTP_TARGET"
SECRET_ENV = "TOOLKIT_HTTP_SECRET"
OPTIONS_ENV = "TOOLKIT_HTTP_OPTIONS"
STORE_ENV = "TOOLKIT_HTTP_SESSION_STORE"  # the SQLite file of the ended sessions the workers share
BACKEND_ENV = "TOOLKIT_HTTP_BACKEND"  # the Unix socket of the supervisor's `LocalHub`: the state the workers share
# What the supervisor tells each worker process it starts (`work`).
_FACTORY_ENV = "TOOLKIT_HTTP_FACTORY"
_SOCKET_ENV = "TOOLKIT_HTTP_SOCKET_FD"
_REPORT_ENV = "TOOLKIT_HTTP_REPORT_FD"
_LOG_LEVEL_ENV = "TOOLKIT_HTTP_LOG_LEVEL"
_LIFELINE_ENV = "TOOLKIT_HTTP_LIFELINE_FD"  # ends (EOF) when the supervisor does, however it ends

_STARTUP_FAILURE = 3  # uvicorn's status for a worker that could not start (uvicorn.config.STARTUP_FAILURE)
#: After a worker's `shutdown_grace`, how long its lifespan's cleanup may take before the supervisor kills it.
_CLEANUP_SECONDS = 10.0
#: After the grace, how long the calls stopped then have to write their answers before uvicorn cancels their requests.
_ANSWERING_SECONDS = 1.0
_POLL_SECONDS = 0.5  # how often the supervisor looks at its workers when no signal or report wakes it
_logger = logging.getLogger("toolkit")
_HUB_FAILURES, _HUB_WINDOW = 5, 60.0  # the hub failing this often within this many seconds stops the server


class ServeError(StartupError):
    """The server could not start serving over HTTP (its lifespan failed, a worker could not start).

    Its message is the line to show, as uvicorn's lifespan (or the worker) reported it: the original exception
    lives in another task or process, so there is no `__cause__`.
    """

    def __init__(self, server_name: str, message: str) -> None:
        self.server_name = server_name
        RuntimeError.__init__(self, message)


def _uvicorn() -> Any:
    try:
        import uvicorn
    except ImportError:
        raise ImportError(
            "serving over HTTP needs uvicorn: install toolkit's http extra"
            " (in a clone of toolkit: pip install '.[http]')"
        ) from None
    return uvicorn


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio turns Nagle off on accepted connections only then; with it on, every keep-alive
    # answer waits ~40 ms for the client's delayed ACK (measured: 46 ms a request, 2.8 ms with it).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(2048)
    except OSError:  # a port in use, an address not here: said by the caller in one line
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def _announce(sock: socket.socket, path: str) -> None:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    _say(f"serving on http://{shown}:{port}{path}")


def say_stopping(grace: float) -> None:
    """What a server says when a signal starts its graceful shutdown (stdio, HTTP, workers alike)."""
    _say(f"stopping: calls in flight have {grace:g} s to answer (Ctrl-C or SIGTERM again stops at once)")


class Served(Protocol):
    """What serving needs of the server it serves (the `Server` facade sits above this module): its name, for what
    it says, and the grace its calls in flight get at shutdown."""

    @property
    def name(self) -> str: ...

    @property
    def shutdown_grace(self) -> float: ...


def _say(text: str) -> None:
    sys.stderr.write(f"toolkit: {text}\n")
    sys.stderr.flush()


def serve_http(app: HttpApp, *, host: str = "127.0.0.1", port: int = 8000, log_level: str = "warning") -> None:
    """Serve `app` on uvicorn in this process until interrupted (Ctrl-C, SIGTERM: a graceful shutdown).

    Raises:
        ServeError: the server's lifespan failed to start; nothing was served.
    """
    _uvicorn()  # the missing extra is said before the port is taken
    sock = _bind(host, port)
    # uvicorn never closes a socket it was given: a failed start would leave it open
    with sock, _sigterm_ends_gracefully():
        server = _uvicorn_server(
            app,
            log_level,
            started=lambda: _announce(sock, app.path),
            stopping=say_stopping,
            stopped=lambda: _say("stopped"),
        )
        server.run(sockets=[sock])


@contextlib.contextmanager
def _sigterm_ends_gracefully() -> Iterator[None]:
    """A SIGTERM that stopped the server gracefully ends the process with status 0, as it does a stdio server and
    the supervisor of `--workers`. uvicorn, once shut down, puts back the handler it found and raises the signal
    again "so that the parent sees it": with the default handler there, the process would die of it (-15). The one
    it finds is this one, which does nothing; the previous one is back after the run. (The main thread only: uvicorn
    handles no signal elsewhere.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _stopped)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _stopped(signum: int, frame: object) -> None:
    """SIGTERM after uvicorn's graceful shutdown: it is over."""


class _HeldErrors(logging.Filter):
    """Keeps uvicorn's error lines of a failed startup ("Application startup failed. Exiting.", the lifespan's
    message) off stderr: the caller says what failed, in one line of its own."""

    def __init__(self) -> None:
        super().__init__()
        self.held: list[logging.LogRecord] = []

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.ERROR:
            return True
        self.held.append(record)
        return False

    def reason(self, server_name: str) -> str:
        if not self.held:
            return f"server {server_name!r} failed to start"
        first = self.held[0]
        text = first.getMessage().strip()
        error = first.exc_info[1] if first.exc_info else None
        return f"{text}: {type(error).__name__}: {error}" if error is not None else text


async def _stopping(app: Any) -> None:
    app.stopping()


def _uvicorn_server(
    app: Any,
    log_level: str,
    *,
    started: Callable[[], None],
    stopping: Callable[[float], None],
    stopped: Callable[[], None],
) -> Any:
    """A uvicorn server for `app` (an HttpApp) that gives calls in flight the server's `shutdown_grace` when it is
    stopped, raises `ServeError` when the lifespan fails, and says when it has started and stopped."""
    grace = app.registry.shutdown_grace
    base: Any = _uvicorn().Server

    class Server(base):  # type: ignore[misc]
        async def startup(self, sockets: Any = None) -> None:
            errors = _HeldErrors()
            logger = logging.getLogger("uvicorn.error")
            logger.addFilter(errors)
            try:
                await super().startup(sockets=sockets)
            except SystemExit:  # uvicorn exits with STARTUP_FAILURE when the lifespan failed
                raise ServeError(app.registry.name, errors.reason(app.registry.name)) from None
            finally:
                logger.removeFilter(errors)
            started()

        async def shutdown(self, sockets: Any = None) -> None:
            await super().shutdown(sockets=sockets)
            if not self.force_exit:
                stopped()

        def handle_exit(self, sig: int, frame: Any) -> None:
            # uvicorn forces the exit on a second SIGINT only (a process manager sends SIGTERM twice), and even then
            # waits for the connections whose responses are still open (a call's event stream): end their requests.
            # The state changes before anything is written: a second signal may run this handler again as soon as
            # the first has said it is stopping (CPython runs signal handlers between any two bytecodes).
            again = self.should_exit
            super().handle_exit(sig, frame)
            if again:
                self.force_exit = True
                with contextlib.suppress(RuntimeError):  # the loop is not running: nothing is left to end
                    asyncio.get_running_loop().call_soon_threadsafe(self.cancel_requests)
            else:
                stopping(grace)
                # Open streams end now, not at the end of the grace (uvicorn runs the lifespan's shutdown, which
                # would end them, only once every response is complete).
                with contextlib.suppress(RuntimeError):
                    asyncio.get_running_loop().call_soon_threadsafe(self.end_streams)

        def end_streams(self) -> None:
            self.ending = asyncio.ensure_future(_stopping(app))  # a task: anyio's clock needs one

        def cancel_requests(self) -> None:
            for task in list(self.server_state.tasks):
                task.cancel()

    return Server(_config(app, log_level))


def _config(app: Any, log_level: str) -> Any:
    """uvicorn's configuration for `app`. uvicorn cancels the requests still open once its graceful shutdown ends: a
    moment after the app's grace, so that the calls the app stopped at the grace have written their "Server shutting
    down" answers."""
    grace = app.registry.shutdown_grace + _ANSWERING_SECONDS
    return _uvicorn().Config(app, lifespan="on", log_level=log_level, timeout_graceful_shutdown=grace)


# -- several workers ----------------------------------------------------------------------------------------------


class Workers(NamedTuple):
    """Where and how many worker processes serve (`serve_workers`)."""

    host: str
    port: int
    workers: int
    path: str = "/mcp"
    log_level: str = "warning"


def serve_workers(factory: str, target: str, server: Served, where: Workers, options: dict[str, Any]) -> None:
    """Serve the server of `target` (a file or module) in `where.workers` uvicorn processes sharing one socket.

    `factory` is the import string (`module:function`) of the function each worker calls for its app, whose server
    is `server` (its `shutdown_grace` bounds the shutdown). Every worker
    gets the same fresh session key, so any of them serves any request of a session, one session store (an
    SQLite file in a temporary folder, removed on exit), so that a DELETE holds on all of them, and one backend: a
    `LocalHub` this process serves on a Unix socket in that folder, so that an answer, a cancellation, a log level,
    a stream's events and a list change reach the worker that needs them, whichever worker gets the request.

    Runs until SIGTERM or Ctrl-C: the workers then shut down gracefully, each giving its calls in flight the
    server's `shutdown_grace`; a second signal, or the grace and a cleanup margin running out, stops them at once.

    Raises:
        ServeError: a worker could not start (the server's lifespan failed); the others are stopped.
    """
    if sys.platform == "win32":
        raise ServeError(server.name, "--workers needs a POSIX system; on Windows, run one process per port")
    _uvicorn()  # without the http extra, say so here, not once per worker
    os.environ[TARGET_ENV] = target
    os.environ.setdefault(SECRET_ENV, secrets.token_hex(32))
    os.environ[OPTIONS_ENV] = json.dumps(options)
    os.environ[_FACTORY_ENV] = factory
    os.environ[_LOG_LEVEL_ENV] = where.log_level
    sock = _bind(where.host, where.port)
    try:
        with tempfile.TemporaryDirectory(prefix="toolkit-sessions-") as folder, local_hub(folder) as hub:
            os.environ.setdefault(STORE_ENV, os.path.join(folder, "sessions.db"))
            os.environ[BACKEND_ENV] = hub.path
            try:
                _Supervisor(sock, where.workers, where.path, server, hub.failure).run()
            finally:
                del os.environ[BACKEND_ENV]
    finally:
        sock.close()
    _say("stopped")


class _Started:
    """A task status told once, however many times the task starts again."""

    def __init__(self, told: anyio.abc.TaskStatus[None]) -> None:
        self.told, self.done = told, False

    def started(self, value: None = None) -> None:
        if not self.done:
            self.done = True
            self.told.started()


class Hub(NamedTuple):
    """The supervisor's `LocalHub`, as `local_hub` serves it."""

    path: str
    """Its Unix socket, for the workers' `LocalBackend`."""
    failure: list[str]
    """Why it stopped for good (empty while it serves): the supervisor then stops the server."""


@contextlib.contextmanager
def local_hub(folder: str) -> Iterator[Hub]:
    """The shared state of the workers of one machine: a `LocalHub` served by this process on a Unix socket in
    `folder` while the block runs (an event loop in a thread of its own: a supervisor's loop is a plain `select`),
    started again, with its state, when it fails (`keep_serving`)."""
    from anyio.from_thread import start_blocking_portal

    from toolkit._backend.local import LocalHub

    hub = Hub(os.path.join(folder, "backend.sock"), [])
    serve = LocalHub(hub.path).serve
    with start_blocking_portal() as portal:
        serving, _ = portal.start_task(keep_serving, serve, hub.failure)
        try:
            yield hub
        finally:
            serving.cancel()


async def keep_serving(
    serve: Callable[..., Awaitable[None]],
    failure: list[str],
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Run `serve` (a function that takes `task_status`), again each time it fails after it started, logging each
    failure once (with its traceback); after `_HUB_FAILURES` failures within `_HUB_WINDOW` seconds, give up and put
    why in `failure` instead, which the supervisor says as it stops. A failure before the first start is raised."""
    status, failed = _Started(task_status), list[float]()
    while True:
        try:
            await serve(task_status=status)
        except Exception as exc:
            if not status.done:
                raise
            now = time.monotonic()
            failed = [*(then for then in failed if now - then < _HUB_WINDOW), now]
            if len(failed) >= _HUB_FAILURES:
                failure.append(
                    f"the workers' shared state (the hub) failed {len(failed)} times within {_HUB_WINDOW:g} s,"
                    f" stopping the server; the last time: {type(exc).__name__}: {exc}"
                )
                return
            _logger.error("toolkit: the workers' shared state (the hub) failed; starting it again", exc_info=exc)


class _Supervisor:
    """Starts the workers, says where they serve once all have started, restarts one that dies, and stops them."""

    def __init__(self, sock: socket.socket, workers: int, path: str, server: Served, hub: list[str]) -> None:
        self.name = server.name
        self.hub = hub  # why the workers' hub stopped for good (`local_hub`), once it has
        self.sock = sock
        self.grace = server.shutdown_grace
        self.count = workers
        self.path = path
        self.workers: list[subprocess.Popen[bytes]] = []
        self.signals: list[int] = []
        self.ready = 0
        self.announced = False
        self.failure: str | None = None
        self.stop_by: float | None = None  # once stopping: when the workers still running are killed

    def run(self) -> None:
        reports, report_end = os.pipe()
        wake, wake_end = os.pipe()
        # The workers hold the reading end, the supervisor the other, never written: if the supervisor dies (even
        # of SIGKILL), the workers read the end of it and stop, rather than serve on without it.
        lifeline, lifeline_end = os.pipe()
        os.set_blocking(reports, False)
        os.set_blocking(wake, False)
        os.set_blocking(wake_end, False)
        previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        previous_wakeup = signal.set_wakeup_fd(wake_end)
        try:
            self.workers = [self._start(report_end, lifeline) for _ in range(self.count)]
            lines = bytearray()
            while any(worker.poll() is None for worker in self.workers):
                lines = self._read_reports(reports, wake, lines)
                self._on_signals()
                self._look_after(report_end, lifeline)
        finally:
            self._kill_all()
            signal.set_wakeup_fd(previous_wakeup)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            for fd in (reports, report_end, wake, wake_end, lifeline, lifeline_end):
                os.close(fd)
        if self.failure is not None:
            raise ServeError(self.name, self.failure)

    def _read_reports(self, reports: int, wake: int, lines: bytearray) -> bytearray:
        """Wait a moment for the workers' reports or a signal; act on every whole line; what is left of a line."""
        readable, _, _ = select.select([reports, wake], [], [], _POLL_SECONDS)
        if wake in readable:
            while _read_some(wake):
                pass
        # Read before looking at the workers: one that failed wrote why before it exited.
        while data := _read_some(reports):
            lines += data
        *done, rest = lines.split(b"\n")
        for line in done:
            self._on_report(line.decode("utf-8", "replace"))
        return bytearray(rest)

    def _kill_all(self) -> None:
        for worker in self.workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()

    def _on_signal(self, signum: int, frame: object) -> None:
        self.signals.append(signum)

    def _start(self, report_end: int, lifeline: int) -> subprocess.Popen[bytes]:
        fds = {_SOCKET_ENV: self.sock.fileno(), _REPORT_ENV: report_end, _LIFELINE_ENV: lifeline}
        env = {**os.environ, **{name: str(fd) for name, fd in fds.items()}}
        return subprocess.Popen(
            # `-c` puts the current directory first on the path, where a `json.py` would shadow the standard one.
            [sys.executable, "-c", "import sys; del sys.path[0]; from toolkit._http.serve import work; work()"],
            env=env,
            pass_fds=tuple(fds.values()),
            # Out of the terminal's process group: Ctrl-C reaches the supervisor alone, which stops the workers once
            # (a worker that got both the terminal's SIGINT and the supervisor's SIGTERM would take it as a second
            # signal, and stop at once).
            start_new_session=True,
        )

    def _on_report(self, line: str) -> None:
        kind, _, text = line.partition(" ")
        if kind == "ready":
            self.ready += 1
            if self.ready == self.count and not self.announced and self.stop_by is None:
                self.announced = True  # once: a worker started in place of one that died is not news
                _announce(self.sock, self.path)
        elif kind == "failed" and self.failure is None:
            self.failure = text
            self._stop()

    def _on_signals(self) -> None:
        while self.signals:
            self.signals.pop(0)
            if self.stop_by is None:
                say_stopping(self.grace)
                self._stop()
            else:  # a second Ctrl-C or SIGTERM: at once
                self._kill()

    def _stop(self) -> None:
        if self.stop_by is not None:
            return
        self.stop_by = time.monotonic() + self.grace + _CLEANUP_SECONDS
        for worker in self.workers:
            if worker.poll() is None:
                worker.terminate()  # uvicorn's graceful shutdown, within the server's shutdown_grace

    def _look_after(self, report_end: int, lifeline: int) -> None:
        """One look at the workers: stop them all when the hub failed; once stopping, kill what still runs past the
        deadline; else start another in place of one that ended."""
        if self.hub and self.stop_by is None:  # every worker needs it: stop rather than serve 503s
            self.failure = self.failure or self.hub[0]
            self._stop()
        if self.stop_by is None:
            self._replace_ended(report_end, lifeline)
        elif time.monotonic() > self.stop_by:
            self._kill()

    def _replace_ended(self, report_end: int, lifeline: int) -> None:
        """Start another worker in place of each one that ended; stop them all instead when one ended before every
        worker had started, or failed to start (it would end the same way again)."""
        for index, worker in enumerate(self.workers):
            status = worker.poll()
            if status is None:
                continue
            if not self.announced or status == _STARTUP_FAILURE:
                self.failure = self.failure or f"a worker process exited with status {status} before it could serve"
                self._stop()
                return
            _say(f"a worker process exited with status {status}; starting another")
            self.ready -= 1
            self.workers[index] = self._start(report_end, lifeline)

    def _kill(self) -> None:
        """End the workers that still run, at once."""
        for worker in self.workers:
            if worker.poll() is None:
                worker.kill()


def _read_some(fd: int) -> bytes:
    try:
        return os.read(fd, 4096)
    except BlockingIOError:
        return b""


def work() -> None:
    """One worker process of `serve_workers`: its app, on the inherited socket, telling the supervisor how it went."""
    # Taken out of the environment as read: a subprocess a tool starts inherits none of them (`worker_app` takes the
    # rest).
    report = int(os.environ.pop(_REPORT_ENV))
    sock = socket.socket(fileno=int(os.environ.pop(_SOCKET_ENV)))
    module, _, name = os.environ.pop(_FACTORY_ENV).partition(":")
    started: list[bool] = []
    lifeline = int(os.environ.pop(_LIFELINE_ENV))
    log_level = os.environ.pop(_LOG_LEVEL_ENV)

    def watch_the_supervisor() -> None:
        while os.read(lifeline, 1):  # nothing is ever written: this returns only at the supervisor's end
            pass
        os.kill(os.getpid(), signal.SIGTERM)  # the graceful shutdown, as if the supervisor had asked

    threading.Thread(target=watch_the_supervisor, name="toolkit-lifeline", daemon=True).start()

    def ready() -> None:
        started.append(True)
        os.write(report, b"ready\n")

    try:
        app = getattr(importlib.import_module(module), name)()
        quiet = lambda *_: None  # noqa: E731  (the supervisor speaks for its workers)
        _uvicorn_server(app, log_level, started=ready, stopping=quiet, stopped=quiet).run(sockets=[sock])
    except Exception as exc:
        if started:
            raise
        reason = str(exc) if isinstance(exc, ServeError) else f"{type(exc).__name__}: {exc}"
        # One line, shorter than PIPE_BUF: written at once, never mixed with another worker's.
        os.write(report, f"failed {' '.join(reason.split())[:2000]}\n".encode())
        raise SystemExit(_STARTUP_FAILURE) from None
