"""Measuring this checkout's toolkit against another's (`--against PATH`), interleaved round by round.

Each round runs a benchmark module's `measure(calls)` in a fresh process whose `toolkit` is the one of a checkout
(a `git worktree` of an older commit, or `git archive` of one unpacked in a folder), and these benchmarks, which
the checkout may lack, from this one; the order of the checkouts alternates from round to round.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def checkouts(against: Path | None) -> dict[str, Path]:
    """The checkouts to measure, by label: this one, and the one `--against` named."""
    return {"this": ROOT} | ({"against": against.resolve()} if against is not None else {})


def measure_in(checkout: Path, module: str, calls: int) -> dict[str, Any]:
    """`benchmarks.<module>.measure(calls)`, run in a fresh process whose `toolkit` is the one of `checkout`."""
    code = (  # toolkit imported from the checkout first; these benchmarks (which it may lack) from this one
        f"import json, sys; sys.path.insert(0, {str(checkout)!r}); import toolkit; sys.path[0] = {str(ROOT)!r}; "
        f"from benchmarks.{module} import measure; print(json.dumps(measure({calls})))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(out.stderr)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def interleaved(module: str, against: Path | None, rounds: int, calls: int) -> dict[str, list[dict[str, Any]]]:
    """Every round's figures of each checkout (`{label: [round's figures, ...]}`), the order alternating."""
    runs: dict[str, list[dict[str, Any]]] = {label: [] for label in checkouts(against)}
    for index in range(rounds):
        order = list(checkouts(against).items())
        for label, checkout in order if index % 2 == 0 else order[::-1]:
            runs[label].append(measure_in(checkout, module, calls))
        print(f"round {index + 1}/{rounds}, load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    return runs


def arguments(argv: list[str], module: str, doc: str, calls: int, unit: str) -> argparse.Namespace:
    """The options of such a benchmark: `--rounds`, `--calls` (of `unit`s per row and round), `--against`."""
    parser = argparse.ArgumentParser(prog=f"python -m benchmarks.{module}", description=doc.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=calls, help=f"{unit} per row and round")
    parser.add_argument("--against", type=Path, help="another checkout, measured interleaved (the 'before')")
    return parser.parse_args(argv)
