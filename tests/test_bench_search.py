"""`python -m benchmarks.search`'s measures, on the vendored MetaTool slice and the hand-written reference requests'
shape (a short run: the figures are not checked, only that each is a share or a time)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import lint_reference, search
from toolkit import ToolIndex

SLICE = json.loads((Path(__file__).parent / "data" / "metatool" / "slice.json").read_text(encoding="utf-8"))


def test_each_measure_gives_shares_and_times() -> None:
    tools = [{**tool, "inputSchema": {"type": "object"}} for tool in SLICE["tools"]]
    index = ToolIndex(tools)
    one = search.single(index, SLICE["queries"], 0.3)
    none = search.unanswered(index, SLICE["no_tool"], 0.3)
    pairs = [
        {"query": f"{a['query']} and {b['query']}", "tools": [a["tool"], b["tool"]]}
        for a, b in zip(SLICE["queries"][::2], SLICE["queries"][1::2], strict=False)
    ]
    two = search.multi(index, pairs, 0.3)
    named = {tool["name"] for tool in tools}
    requests = [
        {"query": SLICE["queries"][0]["query"], "needs": [[SLICE["queries"][0]["tool"]]]},
        {"query": pairs[0]["query"], "needs": [[tool] for tool in pairs[0]["tools"]]},
        {"query": SLICE["no_tool"][0]["query"], "needs": []},
    ]
    assert all(tool in named for request in requests for group in request["needs"] for tool in group)
    reference = search.needs(index, requests, 0.3)
    timed = search.timings(tools, [query["query"] for query in SLICE["queries"]])
    shares = [*one.values(), none, *two.values(), *reference.values()]
    assert all(0.0 <= share <= 1.0 for share in shares), shares
    assert one["top5"] >= one["first"] > 0.0
    assert timed["tools"] == len(tools)
    assert all(timed[key] > 0.0 for key in ("build", "median", "p99", "update")), timed


def test_the_reference_requests_name_only_tools_of_the_reference_servers() -> None:
    data = json.loads(search.QUERIES.read_text(encoding="utf-8"))
    servers = {tool.split("/", 1)[0] for query in data["queries"] for group in query["needs"] for tool in group}
    assert servers <= set(lint_reference.REFERENCE)
    assert len(data["queries"]) == 70
