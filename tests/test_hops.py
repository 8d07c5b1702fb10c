"""The hop figure (docs/architecture.md): one `tools/call` runs a handful of toolkit functions in a handful of modules.

A count, not a time: it changes only when the path changes. Measured by `benchmarks/hops.py` with a profiler hook.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import hops

# Issue 39's one pipeline (2026-12-07): 12 in 5 -> 23 in 9. The connection answers (`_respond`) apart from
# running the handler (`_handle`); the era routes the request (`eras.route`) and stamps the result; `tools/call` is
# the pipeline's (`pipeline.py`: `ToolCalls._call`, `_arguments`, `_run`); the run level every call shares, a task's
# too (`running.run_call`); the outbox is a module of its own; and the copies inlined to save a hop are undone (a
# message is checked by `check_message`, a request admitted by `_admit`, the outbox writes through `_write`). Each is
# a concept of its own module, not inlined to meet the figure (issue 39). 2026-12-07 (issue 40): a call runs in a
# task kept for the next call (`runners.py`: `Runners.start` hands it over, `Runners._run` runs it, in place of
# `Connection._spawn`): 23 in 9 -> 24 in 10, for a quarter less CPU per in-memory async call (starting an anyio task
# cost about as much as the rest of the server's side; docs/performance.md).
MAX_FUNCTIONS = 24
MAX_MODULES = 10


@pytest.mark.parametrize("backend", hops.BACKENDS)
@pytest.mark.parametrize("name", hops.TOOLS)
@pytest.mark.parametrize("era", hops.ERAS)
def test_one_tools_call_runs_a_bounded_number_of_toolkit_functions_in_a_few_modules(
    era: str, name: str, backend: str
) -> None:
    functions = hops.count(name, backend, era)
    assert len(functions) <= MAX_FUNCTIONS, sorted(functions)
    assert len(hops.modules(functions)) <= MAX_MODULES, sorted(functions)
    # One argument validation and one serialization of the reply, whatever else changes.
    assert "_definition.tool:call_tool" in functions
    assert sum(function.startswith("_protocol.jsonrpc:encode") for function in functions) == 1
    # No Context for a tool without one.
    assert not any(function.startswith("_call.context:") for function in functions)


# One HTTP POST `tools/call`, server side (the ASGI app driven in process, its lifespan running), both eras. Issue 22
# aims at 20 functions in 6 modules (plain sync tool) and 30 in 8 (a tool that takes a Context). The functions: a
# Context call at or under 30 in both eras; a plain one 20 on trio, 21 on asyncio (the thread pool's loop callback,
# anyio's own code on trio) in 2026-07-28 and 22-23 in a 2025-11-25 session (its id, its record, the call in the
# session's table). The modules are read per wing (docs/architecture.md): the core's are the in-memory path's (and
# the Context's), at most 5 and 6; the HTTP wing's are one concept each (app, headers, post, serving, response, and a
# session's sessions), at most 6. Pinned at today's figures so that they only go down; `python -m benchmarks.hops
# -v` lists them. History: before the reshape 34-38 in 6-8 and 65-67 in 10-12; after it (stop 30) 26-27 in 11 and
# 43-44 in 17, 65 in 17 and 78 in 19; 2026-12-06 a 2025-11-25 Context call that only notifies in its request's task
# (64 in 17 -> 38 in 15); 2026-12-07 no asking for a Context that is only told, one session check, Direct beside
# the session's table (38 in 15 -> 30 in 12, 34-35 in 13 -> 28-29 in 11, 24-25 in 13 -> 22-23 in 11).
# 2026-12-07 issue 39's pipeline, eras and outbox (the in-memory path's), and the 2026-07-28 headers checked one by
# one (a generator: `MetaHeaders.mismatch` at complexity 10): 21-23 in 10-11 -> 28-29 in 13-14, 29-30 in 11-12 ->
# 36 in 14-15. 2026-12-07 issue 39's complexity ceilings in the HTTP wing (no function over 10): the era of a POST
# decided in one function (`_is_stateless`), the body decoded by a pure one (`_decoded`), the reply written by the one
# `_reply` that `answer` and `stream` each had a copy of, and a session's request served apart from its checks
# (`Posts._request`): 3-4 more. 2026-12-07 the body read within its limit by the one reader `toolkit preview` shares
# (`response.read_body`, not a copy in each): 1 more. 2026-12-07 a Context's client info read only when a tool asks
# for it (`Context.client_info`): 1 fewer with a Context.
HTTP_MAX = {
    ("modern", "add"): (32, 13),
    ("handshake", "add"): (34, 14),
    ("modern", "add_context"): (38, 14),
    ("handshake", "add_context"): (39, 15),
}
CORE_MODULES = {"add": 8, "add_context": 9}
HTTP_MODULES = 6


@pytest.mark.parametrize("backend", hops.BACKENDS)
@pytest.mark.parametrize("name", hops.HTTP_TOOLS)
@pytest.mark.parametrize("era", hops.ERAS)
def test_one_http_post_tools_call_runs_a_bounded_number_of_toolkit_functions(era: str, name: str, backend: str) -> None:
    functions = hops.http_count(name, backend, era)
    max_functions, max_modules = HTTP_MAX[era, name]
    assert len(functions) <= max_functions, sorted(functions)
    assert len(hops.modules(functions)) <= max_modules, sorted(functions)
    wing = hops.http_modules(functions)
    assert len(hops.modules(functions) - wing) <= CORE_MODULES[name], sorted(functions)
    assert len(wing) <= HTTP_MODULES, sorted(functions)
    # A Context that is only told starts no asking (`Tool.asks`), in either era.
    assert not any(function.startswith("_asking.") for function in functions), sorted(functions)
    # The body is read and decoded in one place (the connection is handed the decoded message).
    assert "_http.post:Posts._read" in functions
    # One serialization of the reply, and no Context for a tool without one.
    assert sum(function.startswith("_protocol.jsonrpc:encode") for function in functions) == 1
    assert (name == "add_context") == any(function.startswith("_call.context:") for function in functions)
