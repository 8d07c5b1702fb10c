"""One measurement in a fresh process: `python -m benchmarks._worker MEASURE SIDE PARAMS_JSON`.

Prints one JSON line: `{"value": ...}`; for a measure that returns several figures, `{"metrics": {...}}`
(with `"series"` beside it when it also sampled something along the way, such as memory, and `"missing"`,
the reason, when some metrics are null); or
`{"skipped": reason}` when the side cannot run the measure.
With `--profile FILE`, the measurement runs under cProfile and the stats are written to FILE (for the
measures that run in this process; stdio servers are children, profile those with py-spy).
"""

from __future__ import annotations

import argparse
import cProfile
import json
from collections.abc import Callable
from typing import Any

from . import call_memory, call_stdio, concurrency, define, list_tools, long_run, many_tools, rss, size, startup

MEASURES: dict[str, Callable[[str, dict[str, Any]], Any]] = {
    "define": define.run,
    "list-memory": list_tools.run,
    "call-memory": call_memory.run,
    "call-stdio-raw": call_stdio.run_raw,
    "call-stdio-client": call_stdio.run_client,
    "import": startup.run_import,
    "spawn": startup.run_spawn,
    "rss": rss.run,
    "concurrency": concurrency.run_in_flight,
    "connections": concurrency.run_connections,
    "size-call": size.run,
    "size-stdio": size.run_stdio,
    "many-tools": many_tools.run,
    "long-run": long_run.run,
}

# toolkit measures that need `Server`; before it lands they are skipped rather than failed.
_NEEDS_SERVER = set(MEASURES) - {"define"}


def _skip_reason(measure: str, side: str, params: dict[str, Any]) -> str | None:
    if side == "toolkit" and measure in _NEEDS_SERVER:
        import toolkit

        if not hasattr(toolkit, "Server"):
            return "toolkit.Server does not exist yet"
    if side == "floor" and measure in {"define", "call-stdio-client"}:
        return "the floor has no such measure"
    if measure == "many-tools" and params.get("page_size") is not None:
        if side == "mcp":
            from .side_mcp import NO_PAGES

            return NO_PAGES
        if side == "floor":
            return "the floor sends every tool in one page"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks._worker")
    parser.add_argument("measure", choices=sorted(MEASURES))
    parser.add_argument("side")
    parser.add_argument("params", type=json.loads)
    parser.add_argument("--profile", metavar="FILE")
    args = parser.parse_args()
    reason = _skip_reason(args.measure, args.side, args.params)
    if reason is not None:
        print(json.dumps({"skipped": reason}))
        return
    measure = MEASURES[args.measure]
    if args.profile:
        profiler = cProfile.Profile()
        value = profiler.runcall(measure, args.side, args.params)
        profiler.dump_stats(args.profile)
    else:
        value = measure(args.side, args.params)
    if isinstance(value, dict):
        extra = {k: value.pop(k) for k in ("series", "missing") if k in value}
        print(json.dumps({"metrics": value, **extra}))
    else:
        print(json.dumps({"value": value}))


if __name__ == "__main__":
    main()
