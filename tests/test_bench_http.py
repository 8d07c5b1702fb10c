"""`python -m benchmarks.http --quick` serves toolkit on uvicorn and loads it with the raw HTTP/1.1 generator (what
runs where wrk is not installed): every call of both eras answered with 200, and the idle-session memory measured."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_http_benchmark_loads_both_eras_with_the_raw_generator(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    command = [sys.executable, "-m", "benchmarks.http", "--quick", "--stacks", "h11", "--json", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "load: raw" in done.stdout
    run = json.loads(out.read_text())
    assert sorted(row["era"] for row in run["rows"]) == ["2025-11-25", "2026-07-28"]
    for row in run["rows"]:
        assert row["calls"] > 0, row
        assert row["errors"] == 0, row
        assert row["p50_ms"] <= row["p99_ms"], row
    assert run["memory"]["toolkit"] >= 0
