"""`python -m benchmarks.middleware` measures every row it names, each call answered (the benchmark checks the last
reply); fastmcp's rows where the `bench` extra is installed."""

from __future__ import annotations

from benchmarks import middleware


def test_the_middleware_benchmark_measures_every_row() -> None:
    with_fastmcp = middleware.fastmcp_available()
    figures = middleware.measure(calls=10, rounds=1, with_fastmcp=with_fastmcp)
    kinds = ("none", "middleware", "tool_middleware")
    expected = [f"toolkit {where}, {kind}" for kind in kinds for where in ("memory", "HTTP CPU")]
    expected += ["fastmcp memory, none", "fastmcp memory, middleware"] if with_fastmcp else []
    assert sorted(figures) == sorted(expected)
    assert all(len(values) == 1 and values[0] > 0 for values in figures.values()), figures
