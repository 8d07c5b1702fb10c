"""`toolkit search TARGET QUERY`: the tools a tool search (`Server(tool_search=...)`, `ToolIndex`) finds for a query,
best first, for trying a server's names and descriptions before a model does."""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from toolkit import ToolIndex

from ._common import data_on_stdout, is_url, load, read_tools, say, target_first
from ._output import print_table

__all__ = ["search_tools"]

_WIDTH = 72  # of a description's first line in the table


@data_on_stdout
def search_tools(args: argparse.Namespace, out: TextIO) -> int:
    """`toolkit search`: print the tools that match the query, best first; 1 when none does (as `grep`)."""
    query = " ".join(target_first(args, "search needs TARGET and QUERY (or --stdio QUERY ... -- COMMAND)"))
    # A module's own tools, every one of them (tools/list of a server with tool_search lists only its pinned ones);
    # a process or a URL: what it lists.
    tools: Any = load(args.target) if not args.stdio and not is_url(args.target) else read_tools(args)
    index = ToolIndex(tools, threshold=args.threshold)
    matches = index.search(query, args.limit)
    if args.format == "json":
        found = [{"name": match.name, "score": match.score} for match in matches]
        print(json.dumps({"query": query, "tools": found}, indent=2), file=out)
    elif matches:
        rows = [("SCORE", "NAME", "DESCRIPTION")]
        rows += [(f"{match.score:.2f}", match.name, _first_line(match.definition)) for match in matches]
        print_table(rows, [0, 1, 2], out=out)
    if not matches:
        say(f"search: no tool of {len(index)} matches {query!r} (a score of at least {args.threshold:g})")
    return 0 if matches else 1


def _first_line(definition: dict[str, Any]) -> str:
    text = str(definition.get("description") or "").strip().split("\n", 1)[0]
    return text if len(text) <= _WIDTH else text[: _WIDTH - 1] + "…"
