"""`python -m benchmarks`: every measure of issues 7 and 16, side by side, each in a fresh process, interleaved.

Each round runs every measurement once for every side, rotating the sides' order from round to round so no
framework always goes first (warm disk cache) or last; a measurement that returns several figures feeds
several rows. The tables show per-side medians with the range over rounds, and per-round ratios: "vs mcp" is
how many times better than mcp in the same round (above 1 is better, whatever the unit), "vs floor" the
share of the floor's performance.
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
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from . import _generate, _plan, _report, claims
from ._sides import BASELINE, FLOOR, FRAMEWORKS

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
PLOTS = ROOT / "docs" / "img"
WORKER_TIMEOUT = 1200  # fastmcp registering 10,000 tools on a busy machine takes minutes
DISTRIBUTIONS = {"toolkit": "mcp-toolkit", "mcp": "mcp", "fastmcp": "fastmcp", "pydantic": "pydantic"}


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one round, fewer calls: a smoke run under a minute")
    parser.add_argument("--rounds", type=int, help="rounds of every measure (default 5, or 1 with --quick)")
    parser.add_argument("--toolkit-only", action="store_true", help="measure toolkit and the floor only (no peers)")
    parser.add_argument("--frameworks", help=f"comma-separated subset of {','.join(FRAMEWORKS)}")
    parser.add_argument(
        "--measures", help="comma-separated row keys or measures, e.g. call-memory-sync,spawn-1,concurrency,long-run"
    )
    parser.add_argument(
        "--scale", action="store_true", help="only issue 16's scale rows (concurrency, size, 10,000 tools, long run)"
    )
    parser.add_argument(
        "--plots",
        nargs="?",
        const=str(PLOTS),
        metavar="DIR",
        help=f"draw the scale rows' plots as PNG into DIR (default {PLOTS.relative_to(ROOT)})",
    )
    parser.add_argument(
        "--check-claims",
        action="store_true",
        help="rerun the rows behind README.md's claims (toolkit and mcp) and say which claim no longer holds",
    )
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
    if args.check_claims:  # every claim is a ratio to mcp
        return ["toolkit", BASELINE]
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
    rows = _plan.scale_rows(quick=args.quick) if args.scale else _plan.rows(quick=args.quick)
    if args.check_claims:
        wanted = {key for claim in claims.CLAIMS if not claim.http for key in claim.rows}
        return [r for r in rows if r.key in wanted]
    if args.quick:
        rows = [r for r in rows if r.quick]
    if args.measures:
        keys = {k.strip() for k in args.measures.split(",")}
        # A measure's name picks all of its rows: `--measures long-run` is the whole long run.
        unknown = keys - {r.key for r in rows} - {r.measure for r in rows}
        if unknown:
            raise SystemExit(f"unknown measures: {', '.join(sorted(unknown))}")
        rows = [r for r in rows if r.key in keys or r.measure in keys]
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


def _measure(python: str, row: _plan.Row, side: str, tools_dir: str) -> dict[str, Any]:
    """Run one measurement in a fresh worker process and return the worker's JSON outcome.

    Raises:
        RuntimeError: the worker failed or did not finish in time.
    """
    params = {**row.params, "tools_dir": tools_dir}
    command = [python, "-m", "benchmarks._worker", row.measure, side, json.dumps(params)]
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=WORKER_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{row.measure} for {side} did not finish within {WORKER_TIMEOUT} s") from None
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise RuntimeError(f"{row.measure} {row.params} for {side} failed (exit {done.returncode}):\n{tail}")
    outcome: dict[str, Any] = json.loads(lines[-1])
    return outcome


def _value(row: _plan.Row, outcome: dict[str, Any]) -> float | None:
    value = outcome["value"] if row.metric is None else outcome["metrics"][row.metric]
    return None if value is None else float(value)


def _write_generated(directory: Path, rows: list[_plan.Row]) -> None:
    """The generated tools: issue 7's module (always: its size is part of every start-up row's meaning), and
    the module of 10,000 only when a selected row lists it."""
    _generate.write(directory, max(r.params.get("tools", 0) for r in _plan.issue7_rows(quick=False)))
    many = [r.params["tools"] for r in rows if r.measure == "many-tools"]
    if many:
        _generate.write(directory, max(many), _generate.MANY_MODULE)


def _compile(pythons: dict[str, str], tools_dir: str) -> None:
    """Byte-compile toolkit, the harness and the generated tools once, as installing a wheel would.

    The peers are installed in site-packages with their `.pyc` files; toolkit, run from its source tree, is not.
    Under `PYTHONDONTWRITEBYTECODE=1` (set on some machines, this project's included) every worker would
    compile toolkit's modules from source, about 40 ms of each import and spawn that no installed user pays.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    targets = [str(ROOT / "toolkit"), str(ROOT / "benchmarks"), tools_dir]
    for python in sorted(set(pythons.values())):
        subprocess.run([python, "-m", "compileall", "-q", *targets], env=env, check=True, stdout=subprocess.DEVNULL)


@dataclass
class _Run:
    """Everything one run measured: each row's samples per side (one per round), series, what failed or skipped."""

    samples: dict[str, dict[str, list[float | None]]]
    series: dict[str, dict[str, Any]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    """Wall time spent on each section's measurements, worker start-up included."""

    def record(self, group: list[_plan.Row], side: str, outcome: dict[str, Any] | None, progress: str) -> None:
        """File one worker's outcome (None: it failed) under every row that reads it."""
        skipped = outcome.get("skipped") if outcome else None
        if outcome and "series" in outcome:
            self.series.setdefault(group[0].measure, {})[side] = outcome["series"]
        for row in group:
            value = _value(row, outcome) if outcome and not skipped else None
            reason = outcome.get("missing", "not measured") if outcome and not skipped and value is None else skipped
            if reason is not None:
                self.skipped[f"{row.key} ({side})"] = str(reason)
            self.samples[row.key][side].append(value)
            shown = "skipped" if reason else ("failed" if value is None else _report.number(value))
            print(f"{progress}  {row.key:<18} {side:<8} {shown} {row.unit}", file=sys.stderr)


def _run(rows: list[_plan.Row], sides: list[str], pythons: dict[str, str], rounds: int) -> _Run:
    run = _Run({r.key: {s: [] for s in sides} for r in rows})
    # One worker run per measurement (measure and parameters), shared by the rows that read it.
    measurements: dict[tuple[str, str], list[_plan.Row]] = {}
    for row in rows:
        measurements.setdefault(row.measurement(), []).append(row)
    with tempfile.TemporaryDirectory(prefix="bench-tools-") as tools_dir:
        _write_generated(Path(tools_dir), rows)
        _compile(pythons, tools_dir)
        for round_index in range(rounds):
            shift = round_index % len(sides)
            order = sides[shift:] + sides[:shift]
            for group in measurements.values():
                first = group[0]
                if first.max_rounds is not None and round_index >= first.max_rounds:
                    continue
                for side in order:
                    if (side == FLOOR and not first.floor) or round_index >= first.side_rounds.get(side, rounds):
                        continue
                    started = time.perf_counter()
                    try:
                        outcome: dict[str, Any] | None = _measure(pythons[side], first, side, tools_dir)
                    except RuntimeError as error:
                        run.failures.append(str(error))
                        outcome = None
                    spent = time.perf_counter() - started
                    run.seconds[first.section] = run.seconds.get(first.section, 0.0) + spent
                    run.record(group, side, outcome, f"round {round_index + 1}/{rounds}")
    return run


def _print_tables(rows: list[_plan.Row], records: list[dict[str, Any]], sides: list[str], run: _Run) -> None:
    for section in dict.fromkeys(r.section for r in rows):
        chosen = [(r, rec) for r, rec in zip(rows, records, strict=True) if r.section == section]
        capped = {r.max_rounds for r, _ in chosen if r.max_rounds is not None}
        fewer = {f"{s} {n}" for r, _ in chosen for s, n in r.side_rounds.items() if s in sides}
        note = f"{', '.join(map(str, sorted(capped)))} round(s) at most, " if capped else ""
        note += f"{', '.join(sorted(fewer))} for the slowest side, " if fewer else ""
        print(f"\n{section} ({note}{run.seconds.get(section, 0):.0f} s):\n")
        print(_report.table([rec for _, rec in chosen], sides, [r for r, _ in chosen]))
    if "mcp" in sides:
        print(f"\nvs mcp: times better than mcp per round (above 1{_report.TIMES} is better); vs floor: share of floor")
    for what, reason in run.skipped.items():
        print(f"skipped {what}: {reason}")


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    sides, rows = _sides(args), _rows(args)
    pythons = _pythons(args, sides)
    rounds = args.rounds or (1 if args.quick else 5)
    started = time.perf_counter()
    run = _run(rows, sides, pythons, rounds)
    elapsed = time.perf_counter() - started

    records = [_report.summarize(row, run.samples[row.key], sides) for row in rows]
    versions = _versions({**pythons, "pydantic": pythons.get("toolkit", sys.executable)})
    machine = f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores"
    print(f"\n{machine}; " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    mode = ", quick" if args.quick else ""
    print(f"{rounds} round(s){mode}, {elapsed:.0f} s; medians ({_report.RANGE} over rounds).")
    # With --check-claims the claims below are the verdict: issue 7's own targets would only be a second one.
    _print_tables([replace(r, targets=()) for r in rows] if args.check_claims else rows, records, sides, run)

    report = {
        "machine": machine,
        "versions": versions,
        "rounds": rounds,
        "quick": args.quick,
        "seconds": elapsed,
        "rows": records,
        "series": run.series,
    }
    if args.json is not None:
        path = Path(args.json) if args.json else RESULTS / f"{datetime.now(timezone.utc):%Y%m%d-%H%M%S}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=2), encoding="utf-8")
        print(f"\nwrote {path}")
    if args.plots is not None:
        from . import _plots

        for path in _plots.draw(report, Path(args.plots)):
            print(f"drew {path}")
    for failure in run.failures:
        print(f"\nFAILED {failure}", file=sys.stderr)
    held = _check_claims(rows, run) if args.check_claims else True
    return 1 if run.failures or not held else 0


def _check_claims(rows: list[_plan.Row], run: _Run) -> bool:
    """Print README.md's claims against this run's per-round ratios; whether every measured one holds."""
    ratios = {}
    for row in rows:
        pairs = zip(run.samples[row.key]["toolkit"], run.samples[row.key][BASELINE], strict=False)
        ratios[row.key] = [_report.advantage(row, a, b) for a, b in pairs if a and b]
    text, held = claims.report(claims.judge([c for c in claims.CLAIMS if not c.http], ratios))
    print(text)
    return held


if __name__ == "__main__":
    raise SystemExit(main())
