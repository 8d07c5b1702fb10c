import functools
import os
import re
import resource
import signal
from collections import defaultdict
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
import wire
import zygote
from cli_helpers import InProcess, toolkit_here
from redis_server import redis_server, redis_url  # noqa: F401  (fixtures: one Redis for the session, a db a test)


def pytest_configure(config: pytest.Config) -> None:
    # The Ctrl-C tests send SIGINT to the processes they start, which inherit this one's handling of it: a suite
    # started in the background by a script (`cmd &` in a non-interactive shell, nohup) ignores SIGINT, and its
    # children would too (the servers never stopped: the tests hung). Ctrl-C is Python's KeyboardInterrupt again.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_unconfigure(config: pytest.Config) -> None:
    zygote.stop()  # this test process's warm fork server of stdio servers (see tests/zygote.py), if it started one


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# -- protocol tests: a raw peer on the demo server, over each transport ----------------------------------


@pytest.fixture(params=["memory", "stdio"])
def connect(request: pytest.FixtureRequest, anyio_backend: str) -> wire.Connect:
    """`async with connect() as peer`: a raw peer on a fresh demo server, in memory or over stdio."""
    transport = str(request.param)

    def open_peer(**options: Any) -> AbstractAsyncContextManager[wire.Peer]:
        return wire.connect(transport, anyio_backend, **options)

    return open_peer


# -- the CLI's tests: a command run by `main` in the test's process -----------------------------------------------


@pytest.fixture
def in_process(capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> InProcess:
    """`in_process(*args, cwd=...)`: `toolkit ARGS` run by `main` in this test's process (see `toolkit_here`)."""
    return functools.partial(toolkit_here, capfd=capfd, monkeypatch=monkeypatch)


# -- the suite in parallel (pytest-xdist, `-n auto --dist loadgroup` in pyproject.toml) --------------------------------


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: three workers a core, at least four. Most tests wait on a server process, a socket or a subprocess
    (the suite's own process sits at a few percent of a core), so workers can outnumber the cores."""
    return max(4, 3 * (os.cpu_count() or 1))


@functools.cache
def _shares_servers(module: Path) -> bool:
    """Whether a test module starts servers for several of its tests (a module- or class-scoped fixture)."""
    return re.search(r"scope=\"(module|class)\"", module.read_text(encoding="utf-8")) is not None


# The tests of tens of seconds (CI's slowest), longest first. xdist hands out the work in collection order (the groups
# first, the largest first): these lead the others, so that none starts late and runs alone at the end of the run.
_LONG = (
    "tests/http/test_http_fleet_load.py",
    "tests/http/test_http_fleet_faults.py::test_redis_stopped_and_restarted",
    "tests/test_bench_http.py",
    "tests/http/test_http_faults.py::test_hundreds_of_clients_on_real_uvicorn",
    "tests/test_faults.py::test_a_stdio_server_whose_client_stops_reading",
    "tests/http/test_http_faults.py::test_memory_stays_flat",
    "tests/client/test_schema_check.py::test_the_compiled_check",
    "tests/http/test_http_memory.py",
    "tests/tasks/test_tasks_faults.py::test_a_thousand_tasks",
)


def _rank(item: pytest.Item) -> int:
    """Where a test starts: a long one by its place in `_LONG`, the others after them, in their order."""
    return next((rank for rank, prefix in enumerate(_LONG) if item.nodeid.startswith(prefix)), len(_LONG))


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups into the test ids
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests of a module that shares its servers run on one worker, so that each server starts once; the long
    tests come first."""
    for item in items:
        if _shares_servers(item.path):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
    items.sort(key=_rank)  # stable: the others keep their order


def pytest_collection_finish(session: pytest.Session) -> None:
    """On an xdist worker grouping by `xdist_group`, every grouped test's id must name its group (`...@group`): that
    suffix is all the scheduler reads. A pytest whose ids ignore xdist's rewrite (9.2 with xdist 3.8) would split the
    groups silently, so the run stops here instead.

    Raises:
        pytest.UsageError: a grouped test's id does not name its group.
    """
    if not session.config.getoption("loadgroup", default=False) or not hasattr(session.config, "workerinput"):
        return
    for item in session.items:
        if item.get_closest_marker("xdist_group") is not None and "@" not in item.nodeid:
            raise pytest.UsageError(
                f"pytest-xdist could not group {item.nodeid}: this pytest ({pytest.__version__}) ignores xdist's "
                "group ids; pyproject.toml's dev extra pins the versions that work together"
            )


# -- where the suite's time goes: a table at the end of every run (issue 38) -----------------------------------------

_SPENT: defaultdict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])  # folder -> [seconds, cpu, tests]
_KINDS: defaultdict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])  # kind -> [seconds, cpu, tests]
_CPU_BEFORE = [0.0]  # this worker's processor time at its last report
_CPU_BY_TEST: defaultdict[str, float] = defaultdict(float)  # test id -> processor seconds, its phases summed


def _processor_seconds() -> float:
    """The processor time of this process and of every child process it has waited for (with theirs)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime + zygote.forked_processor_seconds()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Each phase's report carries the processor seconds spent since the one before (on the worker that ran it)."""
    report = yield
    now = _processor_seconds()
    report.user_properties.append(("cpu", now - _CPU_BEFORE[0]))
    _CPU_BEFORE[0] = now
    return report


def _kind(nodeid: str) -> str:
    """What a test waits on, read from its id: a stdio server process, real HTTP servers, or the test's own process."""
    if "stdio" in nodeid:
        return "a stdio server process"
    if "ts_client" in nodeid or "conformance" in nodeid:
        return "Node (the TS SDK, the conformance suite)"
    if "/http/" in nodeid or "uvicorn" in nodeid:
        return "HTTP servers (processes, sockets)"
    if nodeid.startswith(("tests/cli/", "tests/test_wheel", "tests/test_start_up", "tests/test_bench")):
        return "CLI, wheel and benchmark processes"
    return "in process"


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add each phase's duration to the test's folder and kind (with xdist, the controller hears every worker)."""
    folder = report.nodeid.split("::", 1)[0].rsplit("/", 1)[0] if "/" in report.nodeid.split("::", 1)[0] else "tests"
    counted = 1.0 if report.when == "call" else 0.0
    cpu = next((value for name, value in report.user_properties if name == "cpu" and isinstance(value, float)), 0.0)
    for table, key in ((_SPENT, folder), (_KINDS, _kind(report.nodeid))):
        table[key][0] += report.duration
        table[key][1] += cpu
        table[key][2] += counted
    _CPU_BY_TEST[report.nodeid] += cpu


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The time spent by folder and by kind, summed over the tests' phases (setup, call, teardown)."""
    total = sum(seconds for seconds, _, _ in _SPENT.values())
    if not total:
        return
    cpu_total = sum(cpu for _, cpu, _ in _SPENT.values()) or 1.0
    terminalreporter.section("time by folder and kind (test seconds and processor seconds, summed over workers)")
    for title, table in (("folder", _SPENT), ("kind", _KINDS)):
        terminalreporter.write_line(f"{title:<40} {'seconds':>8} {'share':>6} {'cpu s':>7} {'share':>6} {'tests':>6}")
        for key, (seconds, cpu, tests) in sorted(table.items(), key=lambda item: -item[1][1]):
            terminalreporter.write_line(
                f"{key:<40} {seconds:8.1f} {seconds / total:6.1%} {cpu:7.1f} {cpu / cpu_total:6.1%} {int(tests):6d}"
            )
    terminalreporter.write_line("the 15 tests of most processor seconds (theirs and their processes')")
    for nodeid, cpu in sorted(_CPU_BY_TEST.items(), key=lambda item: -item[1])[:15]:
        terminalreporter.write_line(f"{cpu:7.1f} {nodeid}")
