"""`python -m benchmarks`: every measure of issue 7, side by side, each in a fresh process, interleaved.

Each round runs every row once for every side, rotating the sides' order from round to round so no
framework always goes first (warm disk cache) or last. The table shows per-side medians with the
range over rounds, and per-round ratios: "vs mcp" is how many times better than mcp in the same round
(above 1 is better, whatever the unit), "vs floor" the share of the floor's performance.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from . import _generate, _plan, _report
from ._sides import FLOOR, FRAMEWORKS

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
WORKER_TIMEOUT = 600
DISTRIBUTIONS = {"toolkit": "mcp-toolkit", "mcp": "mcp", "fastmcp": "fastmcp", "pydantic": "pydantic"}


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one round, fewer calls: a smoke run under a minute")
    parser.add_argument("--rounds", type=int, help="rounds of every measure (default 5, or 1 with --quick)")
    parser.add_argument("--toolkit-only", action="store_true", help="measure toolkit and the floor only (no peers)")
    parser.add_argument("--frameworks", help=f"comma-separated subset of {','.join(FRAMEWORKS)}")
    parser.add_argument("--measures", help="comma-separated row keys, e.g. call-memory-sync,spawn-1")
    parser.add_argument(
        "--python",
        action="append",
        default=[],
        metavar="SIDE=PATH",
        help="interpreter for one side, when the peers cannot share an environment (repeatable)",
    )
    parser.add_argument(
        "--json",
        nargs="?",
        const="",
        metavar="PATH",
        help="also write raw results as JSON (default path: benchmarks/results/<time>.json)",
    )
    return parser.parse_args(argv)


def _sides(args: argparse.Namespace) -> list[str]:
    if args.toolkit_only:
        chosen = ["toolkit"]
    elif args.frameworks:
        chosen = [f.strip() for f in args.frameworks.split(",")]
        unknown = set(chosen) - set(FRAMEWORKS)
        if unknown:
            raise SystemExit(f"unknown frameworks: {', '.join(sorted(unknown))}")
    else:
        chosen = list(FRAMEWORKS)
    return [*chosen, FLOOR]


def _rows(args: argparse.Namespace) -> list[_plan.Row]:
    rows = _plan.rows(quick=args.quick)
    if args.measures:
        keys = {k.strip() for k in args.measures.split(",")}
        unknown = keys - {r.key for r in rows}
        if unknown:
            raise SystemExit(f"unknown measures: {', '.join(sorted(unknown))}")
        rows = [r for r in rows if r.key in keys]
    return rows


def _pythons(args: argparse.Namespace, sides: list[str]) -> dict[str, str]:
    pythons = dict.fromkeys(sides, sys.executable)
    for item in args.python:
        side, _, path = item.partition("=")
        if side not in pythons or not path:
            raise SystemExit(f"--python wants SIDE=PATH with SIDE one of {', '.join(sides)}, got {item!r}")
        pythons[side] = path
    return pythons


def _versions(pythons: dict[str, str]) -> dict[str, str]:
    versions = {}
    for side, distribution in DISTRIBUTIONS.items():
        if side not in pythons:
            continue
        python = pythons[side]
        code = f"import importlib.metadata as m; print(m.version({distribution!r}))"
        if python == sys.executable:
            try:
                versions[side] = metadata.version(distribution)
            except metadata.PackageNotFoundError:
                continue
        else:
            done = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False)
            if done.returncode == 0:
                versions[side] = done.stdout.strip()
    return versions


def _measure(python: str, row: _plan.Row, side: str, tools_dir: str) -> tuple[float | None, str | None]:
    """Run one measurement in a fresh worker process: (value, None), (None, skip reason) or an error."""
    params = {**row.params, "tools_dir": tools_dir}
    command = [python, "-m", "benchmarks._worker", row.measure, side, json.dumps(params)]
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=WORKER_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{row.key} for {side} did not finish within {WORKER_TIMEOUT} s") from None
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise RuntimeError(f"{row.key} for {side} failed (exit {done.returncode}):\n{tail}")
    outcome = json.loads(lines[-1])
    if "skipped" in outcome:
        return None, str(outcome["skipped"])
    return float(outcome["value"]), None


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    sides, rows = _sides(args), _rows(args)
    pythons = _pythons(args, sides)
    rounds = args.rounds or (1 if args.quick else 5)
    samples: dict[str, dict[str, list[float | None]]] = {r.key: {s: [] for s in sides} for r in rows}
    failures: list[str] = []
    skipped: dict[str, str] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-tools-") as tools_dir:
        _generate.write(Path(tools_dir), max(r.params.get("tools", 0) for r in _plan.rows(quick=False)))
        for round_index in range(rounds):
            shift = round_index % len(sides)
            order = sides[shift:] + sides[:shift]
            for row in rows:
                for side in order:
                    if side == FLOOR and not row.floor:
                        continue
                    try:
                        value, reason = _measure(pythons[side], row, side, tools_dir)
                    except RuntimeError as error:
                        failures.append(str(error))
                        value, reason = None, None
                    if reason is not None:
                        skipped[f"{row.key} ({side})"] = reason
                    samples[row.key][side].append(value)
                    shown = "skipped" if reason else ("failed" if value is None else _report.number(value))
                    progress = f"round {round_index + 1}/{rounds}  {row.key:<18} {side:<8} {shown} {row.unit}"
                    print(progress, file=sys.stderr)
    elapsed = time.perf_counter() - started

    records = [_report.summarize(row, samples[row.key], sides) for row in rows]
    versions = _versions({**pythons, "pydantic": pythons.get("toolkit", sys.executable)})
    machine = f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores"
    print(f"\n{machine}; " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    mode = ", quick" if args.quick else ""
    print(f"{rounds} round(s){mode}, {elapsed:.0f} s; medians ({_report.RANGE} over rounds).\n")
    print(_report.table(records, sides, rows))
    if "mcp" in sides:
        print(f"\nvs mcp: times better than mcp per round (above 1{_report.TIMES} is better); vs floor: share of floor")
    for what, reason in skipped.items():
        print(f"skipped {what}: {reason}")

    if args.json is not None:
        path = Path(args.json) if args.json else RESULTS / f"{datetime.now(timezone.utc):%Y%m%d-%H%M%S}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        report = {
            "machine": machine,
            "versions": versions,
            "rounds": rounds,
            "quick": args.quick,
            "seconds": elapsed,
            "rows": records,
        }
        path.write_text(json.dumps(report, indent=2), encoding="utf-8")
        print(f"\nwrote {path}")
    for failure in failures:
        print(f"\nFAILED {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
