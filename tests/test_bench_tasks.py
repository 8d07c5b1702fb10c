"""`python -m benchmarks.tasks` measures every row it names (a short run: the figures are not checked)."""

from __future__ import annotations

from benchmarks import tasks


def test_the_tasks_benchmark_measures_every_row() -> None:
    figures = tasks.measure(calls=5, rounds=1)
    assert sorted(figures) == sorted(
        [
            "plain call, µs",
            "as a task (create, poll, result), µs",
            "tasks created/s, memory store",
            "tasks created/s, SQLite store",
            "tasks created/s, Redis store",
        ]
    )
    assert all(len(values) == 1 and values[0] > 0 for values in figures.values()), figures
