"""`python -m benchmarks.memory` measures every row it names: each call of each row answers with the tool's sum (the
benchmark checks the last result), in both eras, for the sync tool, the async one and the sync one on the event loop,
beside the floor."""

from __future__ import annotations

from benchmarks import memory


def test_the_in_memory_benchmark_measures_every_row() -> None:
    figures = memory.measure(30)
    rows = ["floor", *(f"{name} {era}" for era in memory.ERAS for name in memory.TOOLS)]
    assert rows == list(figures)[: len(rows)]  # the official SDK's rows follow when it is installed
    assert all(cpu > 0 and rate > 0 for cpu, rate in figures.values()), figures
    table = "\n".join(memory._table({"this": [figures, figures]}))
    assert table.count("\n| add") == 2 * len(memory.TOOLS), table
