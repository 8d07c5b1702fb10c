"""One measurement in a fresh process: `python -m benchmarks._worker MEASURE SIDE PARAMS_JSON`.

Prints one JSON line: `{"value": ...}`, or `{"skipped": reason}` when the side cannot run the measure yet.
With `--profile FILE`, the measurement runs under cProfile and the stats are written to FILE (for the
measures that run in this process; stdio servers are children, profile those with py-spy).
"""

from __future__ import annotations

import argparse
import cProfile
import json
from collections.abc import Callable
from typing import Any

from . import call_memory, call_stdio, define, list_tools, rss, startup

MEASURES: dict[str, Callable[[str, dict[str, Any]], float]] = {
    "define": define.run,
    "list-memory": list_tools.run,
    "call-memory": call_memory.run,
    "call-stdio-raw": call_stdio.run_raw,
    "call-stdio-client": call_stdio.run_client,
    "import": startup.run_import,
    "spawn": startup.run_spawn,
    "rss": rss.run,
}

# toolkit measures that need `Server`; before it lands they are skipped rather than failed.
_NEEDS_SERVER = {"list-memory", "call-memory", "call-stdio-raw", "call-stdio-client", "import", "spawn", "rss"}


def _skip_reason(measure: str, side: str) -> str | None:
    if side == "toolkit" and measure in _NEEDS_SERVER:
        import toolkit

        if not hasattr(toolkit, "Server"):
            return "toolkit.Server does not exist yet"
    if side == "floor" and measure in {"define", "call-stdio-client"}:
        return "the floor has no such measure"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks._worker")
    parser.add_argument("measure", choices=sorted(MEASURES))
    parser.add_argument("side")
    parser.add_argument("params", type=json.loads)
    parser.add_argument("--profile", metavar="FILE")
    args = parser.parse_args()
    reason = _skip_reason(args.measure, args.side)
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
    print(json.dumps({"value": value}))


if __name__ == "__main__":
    main()
