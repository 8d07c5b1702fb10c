"""`python -m benchmarks.telemetry` measures every row it names, tracing off and on (each in a fresh process: the
"on" rows set OpenTelemetry's global provider), and each call of each row answers with the tool's sum (the
benchmark checks the last result)."""

from __future__ import annotations

from benchmarks import telemetry


def test_the_telemetry_benchmark_measures_every_row_off_and_on() -> None:
    figures = telemetry.run(1, 20)
    assert sorted(figures) == sorted(telemetry.ROWS)
    for row, modes in figures.items():
        assert sorted(modes) == ["off", "on"]
        assert all(len(values) == 1 and values[0] > 0 for values in modes.values()), (row, modes)
