"""`python -m benchmarks.handoff` measures every design of the sync hand-off and both tool calls, and says whether the
sync tool is within one hand-off of the async one, by the clock and in CPU."""

from __future__ import annotations

from benchmarks import handoff


def test_the_handoff_benchmark_measures_every_design_and_both_calls() -> None:
    samples = handoff.measure(1, 60)
    assert set(samples) == {"toolkit", "minimal", "executor", "anyio", "inline", "call add", "call add_async"}
    for name, values in samples.items():
        assert len(values) == 1, name
        wall, cpu = values[0]
        assert wall > 0, name
        assert cpu >= 0, name
    text = handoff.report(samples)
    assert text.count("within one hand-off: ") == 2
