"""`python -m benchmarks.asgi` measures every row it names: each POST of each row is answered with the tool's sum
(the benchmark checks the last reply), in both eras, for a sync, an async and a progress-reporting tool."""

from __future__ import annotations

from benchmarks import asgi


def test_the_in_process_http_benchmark_measures_every_row() -> None:
    figures = asgi.measure(20)
    rows = [f"{name} {era}" for era in asgi.ERAS for name in ("floor", *asgi.TOOLS)]
    assert sorted(figures) == sorted(rows)
    assert all(value > 0 for value in figures.values()), figures
