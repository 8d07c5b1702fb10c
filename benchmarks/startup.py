"""Start-up: import of the server API, and spawning a stdio server until its `initialize` response.

`python -m benchmarks.startup` splits the spawn into what a host waits for: the interpreter, the import, the
definition of the tools and serving until the `initialize` response (docs/performance.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from . import _generate, _raw, _sides


def run_import(side_name: str, params: dict[str, Any]) -> float:
    """Return milliseconds of wall time for a fresh interpreter that imports the server API and exits."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", _sides.IMPORTS[side_name]], check=True)
    return (time.perf_counter() - start) * 1e3


def run_spawn(side_name: str, params: dict[str, Any]) -> float:
    """Return milliseconds from spawning the server to reading its `initialize` response."""
    argv = _sides.serve_argv(side_name, params["tools_dir"], params["tools"])
    start = time.perf_counter()
    client = _raw.RawClient(argv)
    try:
        client.request(
            "initialize",
            {"protocolVersion": _raw.PROTOCOL_VERSION, "capabilities": {}, "clientInfo": {"name": "b", "version": "0"}},
        )
        elapsed = time.perf_counter() - start
    finally:
        client.close()
    return elapsed * 1e3


PHASES = ("interpreter start", "import", "definition of the tools", "serve until the initialize response")


def _cpu_ms(pid: int) -> float:
    """The process's user + system CPU time so far (clock ticks: 10 ms steps on most systems)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK") * 1e3


def run_phases(side_name: str, tools_dir: str, tools: int) -> dict[str, float]:
    """What an MCP host waits for when it spawns `side_name`'s stdio server with `add` and `tools` generated tools,
    in milliseconds by phase: the interpreter's start (to the server script's first line), the framework's import,
    the definition of the tools, and serving until the `initialize` response is read; `total` from `Popen` on. The
    same keys prefixed `cpu ` hold the server's CPU time in each phase (the last from /proc, in clock ticks)."""
    initialize = {
        "protocolVersion": _raw.PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "b", "version": "0"},
    }
    with tempfile.TemporaryDirectory(prefix="bench-phases-") as scratch:
        marks = Path(scratch) / "phases"
        environ = {**os.environ, "BENCH_PHASES": str(marks)}
        start = time.time()
        client = _raw.RawClient(_sides.serve_argv(side_name, tools_dir, tools), environ=environ)
        try:
            client.request("initialize", initialize)
            answered = time.time()
            cpu = _cpu_ms(client.process.pid)
        finally:
            client.close()
        figures = [float(mark) for mark in marks.read_text().split()]
    walls = (start, *figures[0::2], answered)
    cpus = (0.0, *(mark * 1e3 for mark in figures[1::2]), cpu)
    phases = {phase: (walls[i + 1] - walls[i]) * 1e3 for i, phase in enumerate(PHASES)}
    phases.update({f"cpu {phase}": cpus[i + 1] - cpus[i] for i, phase in enumerate(PHASES)})
    return {**phases, "total": (answered - start) * 1e3, "cpu total": cpu}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.startup",
        description="What an MCP host waits for when it spawns a stdio server: each phase of spawn to initialize.",
    )
    parser.add_argument("--sides", default="toolkit,mcp", help="of toolkit, mcp, fastmcp, floor")
    parser.add_argument("--tools", default="1,501", help="tool counts: `add` alone (1), with 500 generated tools")
    parser.add_argument("--rounds", type=int, default=5)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Rounds of every side and tool count, interleaved, the order of the sides rotating; medians by phase."""
    from .__main__ import _compile  # byte-compiled, as `python -m benchmarks` measures

    args = _parser().parse_args(argv)
    sides, counts = args.sides.split(","), [int(n) for n in args.tools.split(",")]
    samples: dict[tuple[str, int], list[dict[str, float]]] = {(s, n): [] for s in sides for n in counts}
    with tempfile.TemporaryDirectory(prefix="bench-tools-") as tools_dir:
        _generate.write(Path(tools_dir), max(counts) - 1)
        _compile({"": sys.executable}, tools_dir)
        for round_ in range(args.rounds):
            turn = round_ % len(sides)
            for side in sides[turn:] + sides[:turn]:
                for count in counts:
                    samples[side, count].append(run_phases(side, tools_dir, count - 1))
            print(f"round {round_ + 1}: load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    for prefix, title in (("", "wall time"), ("cpu ", "the server's CPU time")):
        print(f"\n{title}, ms (medians):\n\n| side | tools | {' | '.join(PHASES)} | total |")
        print("| --- " * (len(PHASES) + 3) + "|")
        for (side, count), runs in samples.items():
            keys = [prefix + key for key in (*PHASES, "total")]
            cells = [f"{statistics.median(run[key] for run in runs):.1f}" for key in keys]
            print(f"| {side} | {count} | {' | '.join(cells)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
