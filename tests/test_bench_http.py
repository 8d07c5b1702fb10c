"""`python -m benchmarks.http --quick` serves toolkit on uvicorn and loads it with the raw HTTP/1.1 generator (what
runs where wrk is not installed): every call of both eras and of the three tools (sync `add`, `add_async`, and
`add_progress`, which takes a Context and reports progress) answered with 200, and the idle-session memory
measured; the floor (a bare ASGI app on the same uvicorn) beside it. With `--sides toolkit,floor,ts,ts2,node-floor`
the Node sides, installed from npm by the harness (benchmarks/_node.py), are measured too: the TypeScript SDK 1.32 in
2025-11-25, 2.4 in 2026-07-28, and bare node:http in both.

One run serves both tests (`every_side`): the sides take turns, each on a server of its own, so the toolkit and
floor rows of a run with the Node sides are what a run without them measures (toolkit was measured twice).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks import _node, http

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ["add", "add_async", "add_progress"]


def _quick(tmp_path: Path, *args: str) -> dict[str, Any]:
    """A `--quick` run on h11 with `args`, without the untimed warm-up before each row (a second of load each, half
    the run: what the tests read of a row is that it was measured, not how fast); its JSON (every row answered with
    200, p50 <= p99)."""
    out = tmp_path / "run.json"
    command = [sys.executable, "-m", "benchmarks.http", "--quick", "--warmup", "0", "--stacks", "h11"]
    command += ["--json", str(out), *args]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "load: raw" in done.stdout
    run: dict[str, Any] = json.loads(out.read_text())
    for row in run["rows"]:
        assert row["calls"] > 0, row
        assert row["errors"] == 0, row
        assert row["p50_ms"] <= row["p99_ms"], row
    return run


ERAS = ("2025-11-25", "2026-07-28")


def _cells(run: dict[str, Any], side: str) -> list[tuple[str, str]]:
    return sorted((row["era"], row["tool"]) for row in run["rows"] if row["side"] == side)


@pytest.fixture(scope="module")
def every_side(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One `--quick` run of toolkit, the floor and the Node sides."""
    _node.install()  # npm ci into the cache folder, once: a failure (no npm, no registry) fails the tests
    return _quick(tmp_path_factory.mktemp("bench"), "--sides", "toolkit,floor,ts,ts2,node-floor")


def test_the_http_benchmark_loads_both_eras_and_every_tool_with_the_raw_generator_beside_the_floor(
    every_side: dict[str, Any],
) -> None:
    run = every_side
    assert _cells(run, "toolkit") == sorted((era, tool) for era in ERAS for tool in TOOLS)
    # The floor answers `add`'s JSON: the sync and the async tool alike, no progress notification.
    assert _cells(run, "floor") == sorted((era, tool) for era in ERAS for tool in ("add", "add_async"))
    shares = {(e["era"], e["tool"]) for e in run["table"] if e["side"] == "toolkit" and e.get("calls_vs_floor", 0) > 0}
    assert shares == set(_cells(run, "floor"))
    assert run["memory"]["toolkit"] >= 0
    assert "floor" not in run["memory"]  # no sessions to keep


def test_the_http_benchmark_installs_and_measures_both_typescript_sdks_and_nodes_floor(
    every_side: dict[str, Any],
) -> None:
    run = every_side
    assert _cells(run, "ts") == [("2025-11-25", tool) for tool in TOOLS]  # 1.32 speaks no 2026-07-28
    assert _cells(run, "ts2") == [("2026-07-28", tool) for tool in TOOLS]  # 2.4: the stateless era
    assert _cells(run, "node-floor") == sorted((era, tool) for era in ERAS for tool in ("add", "add_async"))
    against = {(e["era"], e["tool"]) for e in run["table"] if e["side"] == "toolkit" and e.get("calls_vs_ts", 0) > 0}
    assert against == {(era, tool) for era in ERAS for tool in TOOLS}  # each era against its SDK
    shares = {e["side"] for e in run["table"] if e.get("calls_vs_node_floor", 0) > 0 and e["tool"] == "add"}
    assert shares == {"toolkit", "floor", "ts", "ts2", "node-floor"}
    assert "ts" in run["memory"]  # Node's RSS may shrink under its GC: measured, not bounded


def test_the_http_claims_compare_toolkits_sync_add_with_mcps_alone() -> None:
    """README's HTTP claims quote the sync `add`: a run with other tools pairs each round's toolkit `add` with mcp's
    `add` of the same round, never with another tool's row."""

    def row(side: str, tool: str, calls: float) -> dict[str, Any]:
        return {"stack": "h11", "workers": 1, "era": "2026-07-28", "round": 0, "side": side, "tool": tool} | {
            "calls_per_s": calls,
            "p99_ms": 1000 / calls,
        }

    rows = [row("toolkit", "add", 4000), row("mcp", "add", 1000), row("toolkit", "add_async", 900)]
    rows.append(row("mcp", "add_async", 300))
    ratios = http._claim_ratios(rows, {}, 500)
    assert ratios == {"http:2026-07-28:calls": [4.0], "http:2026-07-28:p99": [4.0]}


def test_a_session_that_grows_no_page_is_far_below_mcps_not_unmeasured() -> None:
    """RSS grows by 4 KiB pages: toolkit's 0 over 500 sessions is under one page among them all, a claim that holds."""
    ratios = http._claim_ratios([], {"toolkit": 0.0, "mcp": 36_000.0}, 500)
    assert ratios == {"http:session-memory": [36_000.0 / (4096 / 500)]}
    assert http._claim_ratios([], {"toolkit": 1600.0, "mcp": 36_000.0}, 500) == {"http:session-memory": [22.5]}
